"""The build's shared results (``trajectory_judge.book.build.shared_results``): keyed by the data and the package
source, safe with two writers, never used outside a build, emptied at the start of every build."""

from __future__ import annotations

import multiprocessing
import shutil
import sys
from pathlib import Path

import pytest

from trajectory_judge.book.build import shared_results as buildcache
from trajectory_judge.book.build.shared_results import CACHE_ENV, cached
from trajectory_judge.fileio import files_read
from trajectory_judge.models import read_text

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "verdicts.jsonl").write_text('{"v": 1}\n')
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def _counting(folder: Path, calls: list[int]):
    def compute():
        calls.append(1)
        return read_text(folder / "verdicts.jsonl")

    return compute


def test_a_second_chapter_reuses_the_result_and_records_the_files_it_read(data, cache):
    calls: list[int] = []
    assert cached("x", _counting(data, calls), args=(1,), folders=[data]) == '{"v": 1}\n'
    assert cached("x", _counting(data, calls), args=(1,), folders=[data]) == '{"v": 1}\n'
    assert len(calls) == 1 and len(list(cache.glob("x-*.pickle"))) == 1
    assert (data / "verdicts.jsonl").resolve() in {r.path for r in files_read()}


def test_a_changed_data_file_is_computed_again(data, cache):
    calls: list[int] = []
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    (data / "verdicts.jsonl").write_text('{"v": 2}\n')
    assert cached("x", _counting(data, calls), args=(1,), folders=[data]) == '{"v": 2}\n'
    (data / "members.jsonl").write_text("")  # a new file in the folder counts too
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    assert len(calls) == 3


def test_a_changed_package_source_is_computed_again(data, cache, tmp_path, monkeypatch):
    pkg = tmp_path / "pkg" / "trajectory_judge"
    shutil.copytree(ROOT / "trajectory_judge", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(buildcache, "__file__", str(pkg / "book" / "buildcache.py"))
    calls: list[int] = []
    buildcache.source_digest.cache_clear()
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    with open(pkg / "analysis" / "metrics.py", "a") as f:
        f.write("\n# one more line\n")
    buildcache.source_digest.cache_clear()
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    buildcache.source_digest.cache_clear()
    assert len(calls) == 2


def test_other_arguments_are_another_result(data, cache):
    calls: list[int] = []
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    cached("x", _counting(data, calls), args=(2,), folders=[data])
    assert len(calls) == 2


def test_outside_a_build_it_only_computes(data, monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    calls: list[int] = []
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    assert len(calls) == 2 and not any(tmp_path.rglob("*.pickle"))


def test_a_damaged_entry_is_computed_again_and_replaced_whole(data, cache):
    calls: list[int] = []
    cached("x", _counting(data, calls), args=(1,), folders=[data])
    (entry,) = cache.glob("x-*.pickle")
    entry.write_bytes(b"not a pickle")
    assert cached("x", _counting(data, calls), args=(1,), folders=[data]) == '{"v": 1}\n'
    assert len(calls) == 2
    assert cached("x", _counting(data, calls), args=(1,), folders=[data]) == '{"v": 1}\n' and len(calls) == 2


def _writer(folder: str, cache_dir: str, out) -> None:
    import os

    os.environ[CACHE_ENV] = cache_dir
    big = "y" * 5_000_000  # large enough that a torn write would show
    out.put(
        cached("big", lambda: big + read_text(Path(folder) / "verdicts.jsonl"), args=(), folders=[Path(folder)])
        == big + '{"v": 1}\n'
    )


def test_two_chapters_writing_the_same_result_at_once_leave_one_whole_entry(data, cache):
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(data), str(cache), out)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [out.get(timeout=5) for _ in procs] == [True, True]
    assert [p.name for p in cache.iterdir()] == [next(cache.glob("big-*.pickle")).name]  # no temporary left
    calls: list[int] = []
    assert cached("big", lambda: calls.append(1), args=(), folders=[data]).endswith('{"v": 1}\n') and not calls


def test_every_build_starts_with_an_empty_cache_named_for_the_kernels(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import tj_execute

    class App:
        outdir = str(tmp_path / "_build" / "html")

    stale = tmp_path / "_build" / ".tj-cache" / "editions-old.pickle"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"from the previous build")
    monkeypatch.setenv(CACHE_ENV, "")
    tj_execute._empty_cache(App, None)
    import os

    assert os.environ[CACHE_ENV] == str(tmp_path / "_build" / ".tj-cache")
    assert stale.parent.is_dir() and not any(stale.parent.iterdir())
