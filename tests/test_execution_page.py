"""The execution page's record and tables (fast: no build; the built page is checked in test_book_html.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from trajectory_judge.book.building import records
from trajectory_judge.book.building.execution_page import (
    LOCK_ROW,
    ExecutionReport,
    build_commit,
    chapter_run,
    display_name,
    file_sha256,
    read_kernel_records,
)
from trajectory_judge.book.render.tables import table
from trajectory_judge.models import read_text

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_chapter():
    yield
    records.set_chapter(None)


def _record(chapter: str, files=(), python="3.11.7", **packages) -> dict:
    return {
        "chapter": chapter,
        "python": python,
        "packages": {"numpy": "2.4.6", **packages},
        "files": [{"path": p, "sha256": s, "size": n} for p, s, n in files],
    }


def _report(*runs, lock="ab" * 32) -> ExecutionReport:
    return ExecutionReport(tuple(runs), lock, "0" * 40)


def test_a_chapter_kernel_records_every_file_it_reads_as_it_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "rec"))
    data = tmp_path / "v.jsonl"
    data.write_bytes(b"{}\n")
    records.set_chapter("results")
    path = tmp_path / "rec" / "results" / records.KERNEL_RECORD
    assert json.loads(path.read_text())["chapter"] == "results"  # written at setup(), before any read
    read_text(data)
    rec = json.loads(path.read_text())
    (entry,) = [f for f in rec["files"] if f["path"] == str(data.resolve())]
    assert entry["sha256"] == hashlib.sha256(b"{}\n").hexdigest() and entry["size"] == 3
    assert set(rec["packages"]) == set(records.KEY_PACKAGES) and rec["python"]


def test_outside_a_build_the_kernel_writes_no_record(tmp_path, monkeypatch):
    monkeypatch.delenv(records.RECORDS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    records.set_chapter("results")
    read_text(Path(__file__))
    assert list(tmp_path.iterdir()) == []


def test_kernel_records_are_read_per_chapter_and_a_torn_one_counts_as_none(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / records.KERNEL_RECORD).write_text(json.dumps(_record("results")))
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / records.KERNEL_RECORD).write_text('{"chapter": "au')
    assert list(read_kernel_records(tmp_path)) == ["results"]


def test_files_are_named_relative_to_the_book_or_a_named_folder_never_by_absolute_path(tmp_path):
    book, mine = tmp_path / "book", tmp_path / "mine"
    places = [("", book), ("$TJ_DATA", mine)]
    assert display_name(book / "data" / "t.jsonl", places) == "data/t.jsonl"
    assert display_name(mine / "verdicts" / "x.jsonl", places) == "$TJ_DATA/verdicts/x.jsonl"
    assert display_name(tmp_path / "elsewhere" / "y.jsonl", places) == "y.jsonl"


OK = {"succeeded": True}


def _run(name, origin="executed", runtime=None, record=..., places=()):
    record = _record(name) if record is ... else record
    return chapter_run(f"notebooks/{name}", name, OK, record, places, origin=origin, runtime=runtime)


def test_total_is_the_sum_of_run_times_and_the_slowest_chapter_is_named():
    a, b = _run("A", runtime=2.0), _run("B", runtime=6.0)
    rep = ExecutionReport((a, b), "ab" * 32, "0" * 40, execute_seconds=5.0, digest="f" * 64)
    assert rep.total_seconds == 8.0 and rep.slowest is b
    assert rep.summary() == (
        "All 2 chapters were executed for this build on data/ (sha256 ffffffffffff). Executing took 8.0 s"
        " between them; the slowest, B, 6.0 s (75%), in 5.0 s of wall time, side by side."
    )
    assert list(rep.to_frame().index) == ["A", "B"]


def test_committed_chapters_are_said_to_be_shown_as_committed_on_the_data_they_name_and_nothing_executed():
    rep = ExecutionReport((_run("A", "committed"), _run("B", "committed")), None, "x", digest="e" * 64)
    assert list(rep.to_frame()["Outputs"]) == ["committed notebook", "committed notebook"]
    assert rep.to_frame()["Run time (s)"].isna().all() and rep.executed == ()
    text = rep.summary()
    assert text.startswith("All 2 chapters were shown as committed: their notebooks were executed on the very data")
    assert "(sha256 eeeeeeeeeeee)" in text and text.endswith("Nothing executed in this build.")


def test_an_earlier_builds_execution_a_failed_and_an_unrecorded_chapter_are_said_so():
    ran = _run("A", runtime=1.0)
    cached = _run("B", "cached", runtime=0.5)  # executed for an earlier build on the same data
    failed = chapter_run("notebooks/C", "C", {"succeeded": False}, _record("C"), origin="executed", runtime=0.2)
    silent = _run("D", runtime=0.3, record=None)
    rep = _report(ran, cached, failed, silent)
    assert list(rep.to_frame()["Outputs"]) == [
        "executed for this build",
        "an earlier build’s execution",
        "failed",
        "executed for this build",
    ]
    text = rep.summary()
    assert text.startswith("A, C and D were executed for this build") and rep.slowest is ran
    assert "B was shown from an earlier build’s execution of the same data" in text
    assert "Executing took 1.5 s between them" in text
    assert "C failed." in text and "D left no kernel record" in text


def test_a_chapter_myst_nb_executed_while_reading_is_said_so_and_an_unknown_origin_is_refused():
    rep = _report(_run("A", "committed"), _run("B", "read", runtime=2.0))
    assert "B was executed by myst-nb while the book was read, because the cache missed" in rep.summary()
    with pytest.raises(ValueError, match="origin 'forked'"):
        _run("C", "forked")


def test_a_file_read_by_several_chapters_is_listed_once_with_its_short_sha256():
    f = ("/b/data/t.jsonl", "c" * 64, 10)
    runs = [_run(n, record=_record(n, files=[f]), places=[("", Path("/b"))]) for n in ("A", "B")]
    frame = _report(*runs).files_frame()
    assert list(frame.index) == ["data/t.jsonl"]
    assert frame.iloc[0].tolist() == ["c" * 12, 10, "every chapter"]


def test_versions_that_differ_between_kernels_are_each_listed_with_who_saw_them():
    a = _run("A", record=_record("a", numpy="2.4.6"))
    b = _run("B", record=_record("b", numpy="2.5.0"))
    env = _report(a, b).environment_frame()
    numpy = env.loc[["numpy"]]
    assert numpy["Version"].tolist() == ["2.4.6", "2.5.0"] and numpy["Reported by"].tolist() == ["A", "B"]
    assert env.loc["Python", "Reported by"] == "every chapter"
    assert env.loc[LOCK_ROW, "Version"] == "ab" * 32


def test_the_chapters_table_renders_as_a_book_table_with_human_headers():
    a = _run("A", runtime=2.345)
    out = table(
        _report(a).to_frame(),
        name="t",
        caption="c",
        head=None,
        decimals={"Run time (s)": 1},
        counts=["Data files read"],
    ).html
    assert 'class="tj-table' in out and ">Run time (s)<" in out and ">2.3<" in out and ">0<" in out


def test_the_lock_hash_and_commit_are_read_from_the_repository():
    assert (
        file_sha256(ROOT / ".ci" / "requirements.lock")
        == hashlib.sha256((ROOT / ".ci" / "requirements.lock").read_bytes()).hexdigest()
    )
    assert file_sha256(ROOT / "no-such-file") is None
    head = build_commit(ROOT)
    assert head == "not a git checkout" or len(head.split(",")[0]) == 40


def test_records_pack_with_portable_paths_and_unpack_under_another_books_folders(tmp_path):
    book, mine = tmp_path / "book", tmp_path / "mine"
    (book / "data").mkdir(parents=True)
    mine.mkdir()
    rec = tmp_path / "rec" / "results"
    (rec / "tables").mkdir(parents=True)
    (rec / "tables" / "t.csv").write_text("a\n1\n")
    kernel = _record(
        "results", files=[(str(book / "data" / "v.jsonl"), "a" * 64, 3), (str(mine / "x.jsonl"), "b" * 64, 4)]
    )
    (rec / records.KERNEL_RECORD).write_text(json.dumps(kernel))
    packed = records.pack(rec, [("", book), ("$TJ_DATA", mine)])
    assert sorted(packed) == [records.KERNEL_RECORD, "tables/t.csv"] and packed["tables/t.csv"] == "a\n1\n"
    paths = [f["path"] for f in json.loads(packed[records.KERNEL_RECORD])["files"]]
    assert paths == ["data/v.jsonl", "$TJ_DATA/x.jsonl"]  # no absolute path in a committed notebook
    other, theirs = tmp_path / "clone", tmp_path / "theirs"
    records.unpack(packed, tmp_path / "out" / "results", [("", other), ("$TJ_DATA", theirs)])
    back = json.loads((tmp_path / "out" / "results" / records.KERNEL_RECORD).read_text())
    assert [f["path"] for f in back["files"]] == [str(other / "data" / "v.jsonl"), str(theirs / "x.jsonl")]
    assert (tmp_path / "out" / "results" / "tables" / "t.csv").read_text() == "a\n1\n"
    with pytest.raises(ValueError, match="not a path inside"):
        records.unpack({"../escape": "x"}, tmp_path / "out" / "results", [])
