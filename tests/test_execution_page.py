"""The execution page's record and tables (fast: no build; the built page is checked in test_book_html.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from trajectory_judge.book.build import records
from trajectory_judge.book.build.execution_page import (
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


def test_total_is_the_sum_of_run_times_and_the_slowest_chapter_is_named():
    a = chapter_run("notebooks/a", "A", {"runtime": 2.0, "succeeded": True, "method": "direct"}, _record("a"))
    b = chapter_run("notebooks/b", "B", {"runtime": 6.0, "succeeded": True, "method": "direct"}, _record("b"))
    rep = _report(a, b)
    assert rep.total_seconds == 8.0 and rep.slowest is b
    assert rep.summary() == (
        "All 2 chapters executed in this build, taking 8.0 s of execution between them; "
        "the slowest, B, took 6.0 s (75% of the total)."
    )
    assert list(rep.to_frame().index) == ["A", "B"]


def test_a_cached_a_failed_and_an_unrecorded_chapter_are_said_so():
    ran = chapter_run("notebooks/a", "A", {"runtime": 1.0, "succeeded": True, "method": "direct"}, _record("a"))
    cached = chapter_run(
        "notebooks/b",
        "B",
        {"runtime": 0.5, "succeeded": True, "method": "cache", "mtime": 100.0},
        _record("b"),
        started=200.0,
    )  # myst-nb's cache hit keeps the time of the run it cached
    failed = chapter_run("notebooks/c", "C", {"runtime": 0.2, "succeeded": False, "method": "direct"}, _record("c"))
    silent = chapter_run("notebooks/d", "D", {"runtime": 0.3, "succeeded": True, "method": "direct"}, None)
    rep = _report(ran, cached, failed, silent)
    assert list(rep.to_frame()["Result"]) == ["executed", "from cache", "failed", "executed"]
    text = rep.summary()
    assert text.startswith("3 of the 4 chapters executed in this build, taking 1.5 s") and rep.slowest is ran
    assert "B was not executed: its outputs came from an earlier build (the execution cache" in text
    assert "C failed." in text and "D left no kernel record" in text


def test_a_file_read_by_several_chapters_is_listed_once_with_its_short_sha256():
    f = ("/b/data/t.jsonl", "c" * 64, 10)
    runs = [
        chapter_run(
            f"notebooks/{n}",
            n,
            {"runtime": 1.0, "succeeded": True, "method": "direct"},
            _record(n, files=[f]),
            [("", Path("/b"))],
        )
        for n in ("A", "B")
    ]
    frame = _report(*runs).files_frame()
    assert list(frame.index) == ["data/t.jsonl"]
    assert frame.iloc[0].tolist() == ["c" * 12, 10, "every chapter"]


def test_versions_that_differ_between_kernels_are_each_listed_with_who_saw_them():
    a = chapter_run(
        "notebooks/a", "A", {"runtime": 1.0, "succeeded": True, "method": "direct"}, _record("a", numpy="2.4.6")
    )
    b = chapter_run(
        "notebooks/b", "B", {"runtime": 1.0, "succeeded": True, "method": "direct"}, _record("b", numpy="2.5.0")
    )
    env = _report(a, b).environment_frame()
    numpy = env.loc[["numpy"]]
    assert numpy["Version"].tolist() == ["2.4.6", "2.5.0"] and numpy["Reported by"].tolist() == ["A", "B"]
    assert env.loc["Python", "Reported by"] == "every chapter"
    assert env.loc[LOCK_ROW, "Version"] == "ab" * 32


def test_the_chapters_table_renders_as_a_book_table_with_human_headers():
    a = chapter_run("notebooks/a", "A", {"runtime": 2.345, "succeeded": True, "method": "direct"}, _record("a"))
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


def test_a_record_left_by_another_build_or_a_chapter_not_read_again_is_not_shown_as_this_builds():
    old = dict(_record("a", files=[("/b/x", "d" * 64, 1)]), build="earlier")
    stale = chapter_run(
        "notebooks/a",
        "A",
        {"runtime": 1.0, "succeeded": True, "method": "direct", "mtime": 300.0},
        old,
        build="now",
        started=200.0,
    )
    assert stale.result == "executed" and not stale.recorded and stale.files == ()
    earlier = chapter_run(
        "notebooks/a",
        "A",
        {"runtime": 1.0, "succeeded": True, "method": "direct", "mtime": 100.0},
        dict(old, build="now"),
        build="now",
        started=200.0,
    )
    assert earlier.result == "from an earlier build" and not earlier.recorded
    assert "came from an earlier build" in _report(earlier).summary()


def test_the_wall_time_of_reading_is_said_and_whether_chapters_ran_side_by_side():
    runs = [
        chapter_run(f"notebooks/{n}", n, {"runtime": 4.0, "succeeded": True, "method": "direct"}, _record(n))
        for n in "AB"
    ]
    assert _report(*runs).summary().endswith("(50% of the total).")
    side = ExecutionReport(tuple(runs), None, "x", reading_seconds=5.0).summary()
    assert side.endswith(
        "Reading the book’s documents, which executes them, took the build 5.0 s of wall time, as chapters executed side by side."
    )
    serial = ExecutionReport(tuple(runs), None, "x", reading_seconds=9.0).summary()
    assert serial.endswith("took the build 9.0 s of wall time.")


def test_how_the_kernels_started_is_said_only_when_the_warm_process_launched_them():
    runs = [
        chapter_run(f"notebooks/{n}", n, {"runtime": 4.0, "succeeded": True, "method": "direct"}, _record(n))
        for n in "AB"
    ]
    forked = ExecutionReport(tuple(runs), None, "x", kernels=(2, 0)).summary()
    assert forked.endswith(
        "forked from one process that had imported the book’s libraries once, instead of"
        " starting Python and importing them anew."
    )
    assert (
        ExecutionReport(tuple(runs), None, "x", kernels=(1, 1))
        .summary()
        .endswith("; 1 kernel started anew all the same.")
    )
    assert (
        "could not launch the kernels; 2 kernels started anew"
        in ExecutionReport(tuple(runs), None, "x", kernels=(0, 2)).summary()
    )
    for quiet in (None, (0, 0)):
        assert "kernel" not in ExecutionReport(tuple(runs), None, "x", kernels=quiet).summary()


def test_a_chapter_that_reused_a_shared_result_from_the_build_cache_is_said_so(tmp_path, monkeypatch):
    from trajectory_judge.book.build import shared_results as buildcache

    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "rec"))
    monkeypatch.setenv(buildcache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(records, "_shared", {})
    records.set_chapter("results")
    assert buildcache.cached("editions", lambda: 1, args=(), folders=[]) == 1
    first = json.loads((tmp_path / "rec" / "results" / records.KERNEL_RECORD).read_text())
    assert first["shared"] == {"editions": "computed"}
    monkeypatch.setattr(records, "_shared", {})  # the next chapter's kernel
    records.set_chapter("analysis")
    assert buildcache.cached("editions", lambda: 2, args=(), folders=[]) == 1
    rec = json.loads((tmp_path / "rec" / "analysis" / records.KERNEL_RECORD).read_text())
    assert rec["shared"] == {"editions": "reused"}
    runs = [
        chapter_run(f"notebooks/{n}", n, {"runtime": 1.0, "succeeded": True, "method": "direct"}, r)
        for n, r in (("results", first), ("analysis", rec))
    ]
    rep = _report(*runs)
    assert list(rep.to_frame()["Shared results"]) == ["computed here", "reused"]
    assert (
        "analysis reused the verified verdicts and their bootstrapped reports from the build’s cache" in rep.summary()
    )
