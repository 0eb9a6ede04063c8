"""The build's records: what a chapter leaves beside its outputs, and what the process has read."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from trajectory_judge.book.building import records
from trajectory_judge.models import read_text

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_chapter():
    yield
    records.set_chapter(None)


def test_read_text_records_each_file_with_the_sha256_of_its_bytes(tmp_path):
    records.set_chapter("results")  # the kernel logs what it reads from its chapter's first cell on
    f = tmp_path / "v.jsonl"
    f.write_bytes(b'{"a": 1}\r\n')
    assert read_text(f) == '{"a": 1}\n'  # universal newlines, as before
    (rec,) = [r for r in records.files_read() if r.path == f.resolve()]
    assert rec.sha256 == hashlib.sha256(b'{"a": 1}\r\n').hexdigest() and rec.size == 10


def test_records_are_written_only_during_a_build_and_only_for_a_named_chapter(tmp_path, monkeypatch):
    monkeypatch.delenv(records.RECORDS_ENV, raising=False)
    records.set_chapter("results")
    assert records.write_record("x.json", "{}") is None  # nbval, execute, Binder: nothing written
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path))
    records.set_chapter(None)
    assert records.write_record("x.json", "{}") is None
    records.set_chapter("results")
    out = records.write_record("tables/t.csv", "a,b\n")
    assert out == tmp_path / "results" / "tables" / "t.csv" and out.read_text() == "a,b\n"


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden"])
def test_a_chapter_name_is_a_notebook_stem(bad):
    with pytest.raises(ValueError):
        records.set_chapter(bad)


def test_every_chapter_names_itself_by_its_own_stem():
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        names = re.findall(r'^setup\("([^"]+)"\)', md.read_text(encoding="utf-8"), flags=re.M)
        assert names == [md.stem], md.name


def test_the_downloadable_executed_notebook_gets_the_committed_cell_ids(tmp_path):
    import json
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from tj_sources import stabilise

    committed = json.loads((ROOT / "notebooks" / "results.ipynb").read_text(encoding="utf-8"))
    drawn = json.loads(json.dumps(committed))
    for i, cell in enumerate(drawn["cells"]):
        cell["id"] = f"{i * 7919:08x}"  # ids as myst-nb draws them: new on every read
    path = tmp_path / "results.ipynb"
    path.write_text(json.dumps(drawn, indent=1, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    assert stabilise(path) is True
    again = json.loads(path.read_text(encoding="utf-8"))
    assert [c["id"] for c in again["cells"]] == [c["id"] for c in committed["cells"]]
    assert stabilise(path) is False  # a second pass changes nothing
