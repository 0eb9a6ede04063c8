"""How each table and figure was made: the tag a computing function leaves, the records, the line."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import pkgutil
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest

import trajectory_judge.book as book_pkg
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.book.building import records
from trajectory_judge.book.building.provenance_lines import (
    BuildState,
    display_path,
    provenance_html,
    short_commit,
    site_data_path,
)
from trajectory_judge.book.render.style import by_source
from trajectory_judge.models import read_text
from trajectory_judge.provenance.computed import computed, computes

ROOT = Path(__file__).resolve().parents[1]


@computes
def _inner(n: int) -> pd.DataFrame:
    return pd.DataFrame({"judge": ["a"] * n, "recall": [0.5] * n})


@computes
def _outer(n: int) -> pd.DataFrame:
    return _inner(n).rename(columns={"recall": "loud_recall"})


@pytest.fixture(autouse=True)
def _no_chapter():
    yield
    records.set_chapter(None)


def test_a_frame_names_the_function_that_returned_it():
    info = computed(_inner(2))
    assert info is not None and info.made_by == f"{__name__}._inner"


def test_the_outermost_computing_function_names_the_table():
    assert computed(_outer(1)).made_by == f"{__name__}._outer"


def test_the_name_survives_how_chapters_reshape_a_frame():
    frame = _outer(3)
    for shaped in (
        frame.loc[[0, 1], ["loud_recall"]],
        frame.assign(x=1).fillna(0),
        frame.set_index("judge"),
        by_source({"release": frame, "edition": _outer(2)}),
    ):
        assert computed(shaped).made_by == f"{__name__}._outer"
    assert computed(pd.DataFrame({"a": [1]})) is None


def is_tagging(func) -> bool:
    """True when ``func`` is decorated with :func:`~trajectory_judge.provenance.computed.computes`."""
    return isinstance(getattr(func, "__tj_computes__", None), str)


def test_every_book_function_that_returns_a_frame_or_a_figure_names_itself():
    untagged = []
    for mod in pkgutil.iter_modules(book_pkg.__path__):
        if mod.name in ("tables", "provenance", "records", "figures", "page", "__main__"):
            continue  # the book's machinery, not a chapter's computation
        module = importlib.import_module(f"trajectory_judge.book.{mod.name}")
        for name, func in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(func) or func.__module__ != module.__name__:
                continue
            ret = str(inspect.signature(func).return_annotation)
            if _a_result(name, ret) and name not in ("by_source", "with_source") and not is_tagging(func):
                untagged.append(f"{module.__name__}.{name}")
    for name, func in vars(Report).items():  # what a chapter's cell shows straight from a report
        if (
            not name.startswith("_")
            and inspect.isfunction(func)
            and _a_result(name, str(inspect.signature(func).return_annotation))
        ) and not is_tagging(func):
            untagged.append(f"Report.{name}")
    assert untagged == [], "decorate with trajectory_judge.provenance.computed.computes"


def _a_result(name: str, ret: str) -> bool:
    return "DataFrame" in ret or "Series" in ret or name.endswith(("_figure", "_frame"))


STATE = BuildState("0.1.0", "0123456789ab", "https://github.com/o/r/blob/main/")


def test_the_line_names_function_files_short_sha_version_commit_and_notebook():
    sha = "ab" * 32
    line = provenance_html(
        "trajectory_judge.book.chapters.results.main_table",
        [{"path": "data/verdicts.jsonl", "sha256": sha, "size": 9}],
        STATE,
        "results",
    )
    assert line.startswith('<details class="tj-provenance"><summary>How this was made</summary>')
    assert "<code>trajectory_judge.book.chapters.results.main_table</code>" in line
    assert f'data-path="data/verdicts.jsonl" data-sha256="{sha}"' in line and f">{sha[:12]}</code>" in line
    assert "trajectory-judge 0.1.0, commit <code>0123456789ab</code>" in line
    assert '<a href="https://github.com/o/r/blob/main/notebooks/results.ipynb">notebooks/results.ipynb</a>' in line
    assert line.count("\n") == 3  # one folded paragraph


def test_a_line_without_a_named_function_says_so():
    line = provenance_html(None, [], BuildState("0.1.0", "unknown", ""), "testbed")
    body = line.split("<p>", 1)[1]
    assert body.startswith("Computed in a cell") and "data-sha256" not in body  # no function and no file to name
    assert "no data file" in body
    assert "<code>notebooks/testbed.ipynb</code>" in line


def test_paths_are_shown_from_the_book_root_or_as_folder_and_name(tmp_path):
    assert display_path(ROOT / "data" / "verdicts.jsonl", ROOT) == "data/verdicts.jsonl"
    assert display_path(tmp_path / "mine" / "verdicts.jsonl", ROOT) == "mine/verdicts.jsonl"


def test_a_readers_folder_named_like_the_books_own_never_shares_a_download_address(tmp_path):
    """A reader's ``data/`` outside the book is shown as ``data/...`` too, but its copy in the site is
    addressed by its checksum, so it never takes, or is taken for, the book's ``data/`` file."""
    book = site_data_path(ROOT / "data" / "trajectories.jsonl", "ab" * 32, ROOT)
    theirs = site_data_path(tmp_path / "data" / "trajectories.jsonl", "cd" * 32, ROOT)
    other = site_data_path(tmp_path / "x" / "data" / "trajectories.jsonl", "ef" * 32, ROOT)
    assert book == "data/trajectories.jsonl"
    assert theirs == "outside/" + "cd" * 8 + "/trajectories.jsonl"
    assert len({book, theirs, other}) == 3
    assert (
        display_path(tmp_path / "data" / "trajectories.jsonl", ROOT) == "data/trajectories.jsonl"
    )  # shown by its folder


def test_the_commit_is_shown_by_its_first_twelve_digits_and_keeps_its_dirty_mark():
    head = "0123456789abcdef0123456789abcdef01234567"
    assert short_commit(head) == "0123456789ab"
    assert short_commit(head + ", with uncommitted changes") == "0123456789ab, with uncommitted changes"
    assert short_commit("not a git checkout") == "not a git checkout"


def test_a_table_records_its_values_only_during_a_build(tmp_path, monkeypatch):
    from trajectory_judge.book.render.tables import table

    monkeypatch.chdir(ROOT / "notebooks")
    monkeypatch.delenv(records.RECORDS_ENV, raising=False)
    records.set_chapter("results")
    table(_outer(2), name="tbl-x", caption="X")
    assert not any(tmp_path.iterdir())
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path))
    records.set_chapter("results")
    data = tmp_path / "verdicts.jsonl"
    data.write_bytes(b"{}\n")
    read_text(data)
    frame = _outer(2).assign(n=[3, 4])
    table(frame, name="tbl-x", caption="X", decimals={"loud_recall": 2})
    folder = tmp_path / "results" / "tables"
    back = pd.read_csv(StringIO((folder / "tbl-x.csv").read_text()), index_col=0)
    pd.testing.assert_frame_equal(back, frame)
    doc = json.loads((folder / "tbl-x.json").read_text())
    assert doc["made_by"] == f"{__name__}._outer" and doc["caption"] == "X" and doc["decimals"] == {"loud_recall": 2}
    assert doc["data"] == [["a", 0.5, 3], ["a", 0.5, 4]] and doc["columns"] == ["judge", "loud_recall", "n"]
    # the data files read by the time the table was shown, with the sha256 of their bytes
    assert {
        "path": f"{data.parent.name}/verdicts.jsonl",
        "sha256": hashlib.sha256(b"{}\n").hexdigest(),
        "size": 3,
    } in doc["files"]


def test_a_chapter_records_every_file_it_reads(tmp_path, monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path))
    records.set_chapter("seeds")
    f = tmp_path / "members.jsonl"
    f.write_text("{}\n")
    read_text(f)
    got = records.chapter_files(tmp_path, "seeds")
    assert [r for r in got if r.path == f.resolve()] == [r for r in records.files_read() if r.path == f.resolve()]
    assert records.chapter_files(tmp_path, "nochapter") == []
