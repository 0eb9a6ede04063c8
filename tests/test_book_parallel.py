"""Execution is a step of its own and the build renders (``execute_notebooks.execute_many``, ``book/_ext/tj_notebook_cache.py``).

Built end to end on a three-chapter book whose chapters read a value from their data folder and note
when they ran: the execute step runs them side by side, each once, runs none of them again while their
executions are current, and writes the same bytes when they are named again; a build on the data the committed notebooks record executes nothing; a build on another folder
executes each chapter once and shows that folder's value, and a build on the first data afterwards
shows the first value again; a committed notebook whose recorded digest differs from the data's is
never shown; a failing chapter stops the build with one line; a chapter myst-nb would execute while
reading fails the ``-W`` build.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # whole (three-chapter) book builds: .ci/run's slow tier

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """\
title: Cached book
author: test
copyright: "2026"
only_build_toc_files: true
exclude_patterns: [_build, "notebooks/*.ipynb", book/_ext, runs.log, tampered, data, other]
execute: {execute_notebooks: cache, timeout: 120, allow_errors: false}
sphinx:
  local_extensions: {tj_notebook_cache: book/_ext/%s}
"""

TOC = "format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/a\n  - file: notebooks/b\n  - file: notebooks/c\n"

CHAPTER = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation: {{extension: .md, format_name: myst}}
kernelspec: {{display_name: Python 3, language: python, name: python3}}
---

# Chapter {name}

```{{code-cell}} ipython3
import os, time
from myst_nb import glue
start = time.time()
{wait}{extra}
value = open(os.path.join(os.environ.get("TJ_DATA", "../data"), "value.txt")).read().strip()
with open("../runs.log", "a") as log:
    log.write(f"{name} {{start}} {{time.time()}} {{os.getpid()}}\\n")
glue("who", f"chapter {name} read {{value}}", display=False)
print(f"output of {name}: {{value}}")
```

Glued: {{glue:text}}`who`.
"""

SIDE_BY_SIDE = """\
with open("../started", "a") as log:
    log.write("{name}\\n")
deadline = time.time() + 60  # wait for another chapter to start, so that two executions side by side overlap
while time.time() < deadline and not set(open("../started").read().split()) - {{"{name}"}}:
    time.sleep(0.01)
"""
"""A chapter's wait for a second chapter to be running: executions side by side overlap; one after the other, they
cannot (the first waits out the minute and ends before the second starts)."""

TAMPER = """\
from pathlib import Path


def _tamper(app, env, docnames):
    p, once = Path(app.srcdir) / "notebooks" / "a.md", Path(app.srcdir) / "tampered"
    if once.exists():
        return
    once.write_text("")
    p.write_text(p.read_text() + "\\n```{code-cell} ipython3\\nprint('added while reading')\\n```\\n")


def setup(app):
    app.connect("env-before-read-docs", _tamper, priority=900)
    return {"parallel_read_safe": True}
"""


def _data(folder: Path, value: str) -> Path:
    (folder / "release").mkdir(parents=True, exist_ok=True)
    (folder / "trajectories.jsonl").write_text("")
    (folder / "release" / "verdicts.jsonl").write_text("")
    (folder / "value.txt").write_text(value + "\n")
    return folder


def _book(tmp_path: Path, failing: str | None = None, tamper: bool = False, side_by_side: bool = False) -> Path:
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    (book / "book").mkdir()
    shutil.copytree(ROOT / "book" / "_ext", book / "book" / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    extra = ", tamper: book/_ext/" if tamper else ""
    (book / "_config.yml").write_text(CONFIG % extra)
    if tamper:
        (book / "book" / "_ext" / "tamper.py").write_text(TAMPER)
    (book / "_toc.yml").write_text(TOC)
    (book / "intro.md").write_text("# Cached book\n\nThree chapters.\n")
    for name in "abc":
        extra = "raise RuntimeError('this chapter fails')" if name == failing else ""
        wait = SIDE_BY_SIDE.format(name=name) if side_by_side else ""
        (book / "notebooks" / f"{name}.md").write_text(CHAPTER.format(name=name, wait=wait, extra=extra))
    _data(book / "data", "1")
    return book


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TJ_DATA", "TJ_PAPER_DATA", "TJ_BOOK_JOBS")}
    env["PYTHONPATH"] = str(ROOT)
    return {**env, **extra}


def _execute(book: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "trajectory_judge.book", "execute", "--jobs", "2", *args]
    return subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300, env=_env(), check=False)


def _build(book: Path, *, all_pages: bool = True, **env: str) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "-W", "--keep-going"]
    cmd += ["--all"] if all_pages else []
    return subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300, env=_env(**env), check=False)


def _runs(book: Path) -> dict[str, tuple[float, float]]:
    """Chapter -> (start, end) of each execution since the log was last removed (asserting once each)."""
    log = book / "runs.log"
    runs: dict[str, tuple[float, float]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        name, start, end, _ = line.split()
        assert name not in runs, f"chapter {name} executed twice"
        runs[name] = (float(start), float(end))
    log.unlink(missing_ok=True)
    return runs


def _overlap(runs: dict[str, tuple[float, float]]) -> bool:
    spans = sorted(runs.values())
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


def _shown(book: Path, name: str) -> str:
    return (book / "_build" / "html" / "notebooks" / f"{name}.html").read_text(encoding="utf-8")


def _ok(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_the_execute_step_runs_chapters_side_by_side_once_each_and_writes_the_same_bytes_again(tmp_path):
    book = _book(tmp_path, side_by_side=True)
    _ok(_execute(book))
    runs = _runs(book)
    assert sorted(runs) == ["a", "b", "c"] and _overlap(runs)
    first = {n: (book / "notebooks" / f"{n}.ipynb").read_bytes() for n in "abc"}
    nb = json.loads(first["a"])
    assert len(nb["metadata"]["trajectory_judge"]["data_sha256"]) == 64
    assert str(tmp_path) not in first["a"].decode()  # no absolute path in a committed notebook
    _ok(_execute(book))
    assert _runs(book) == {}  # every execution is current: none runs again
    _ok(_execute(book, "a", "b", "c"))  # named chapters run whatever their state, to the same bytes
    assert sorted(_runs(book)) == ["a", "b", "c"]
    assert {n: (book / "notebooks" / f"{n}.ipynb").read_bytes() for n in "abc"} == first


def test_a_build_on_the_data_its_committed_notebooks_were_executed_on_executes_nothing(tmp_path):
    book = _book(tmp_path)
    _ok(_execute(book))
    _runs(book)
    done = _build(book)
    _ok(done)
    assert _runs(book) == {}  # no chapter executed
    assert done.stdout.count("Using cached notebook") == 3 and "Executing notebook" not in done.stdout
    for name in "abc":
        page = _shown(book, name)
        assert f"output of {name}: 1" in page and f"chapter {name} read 1" in page  # outputs and glue


def test_a_build_on_another_folder_shows_its_numbers_and_the_next_build_on_the_first_data_shows_those(tmp_path):
    book = _book(tmp_path)
    _ok(_execute(book))
    _runs(book)
    committed = {n: (book / "notebooks" / f"{n}.ipynb").read_bytes() for n in "abc"}
    other = _data(tmp_path / "other", "2")
    done = _build(book, TJ_DATA=str(other))
    _ok(done)
    runs = _runs(book)
    assert sorted(runs) == ["a", "b", "c"]  # each chapter once, by the execute step (myst-nb executed none)
    assert "Executing notebook" not in done.stdout
    assert all(f"output of {n}: 2" in _shown(book, n) for n in "abc")
    assert {n: (book / "notebooks" / f"{n}.ipynb").read_bytes() for n in "abc"} == committed  # inputs untouched
    again = _build(book, all_pages=False)  # an incremental build on the book's own data: read again, not stale
    _ok(again)
    assert _runs(book) == {} and all(f"output of {n}: 1" in _shown(book, n) for n in "abc")
    third = _build(book, all_pages=False, TJ_DATA=str(other))  # the other folder's executions were kept
    _ok(third)
    assert _runs(book) == {} and all(f"output of {n}: 2" in _shown(book, n) for n in "abc")


def test_a_committed_notebook_whose_recorded_digest_differs_from_the_data_is_never_shown(tmp_path):
    book = _book(tmp_path)
    _ok(_execute(book))
    _runs(book)
    (book / "data" / "value.txt").write_text("3\n")  # the data changed after the notebooks were executed
    _ok(_build(book))
    assert sorted(_runs(book)) == ["a", "b", "c"]
    assert all(f"output of {n}: 3" in _shown(book, n) for n in "abc")
    assert all(f"output of {n}: 1" not in _shown(book, n) for n in "abc")


def test_a_failing_chapter_stops_the_build_with_one_line_naming_it(tmp_path):
    book = _book(tmp_path, failing="b")
    done = _build(book)
    assert done.returncode != 0
    out = done.stdout + done.stderr
    line = next(ln for ln in out.splitlines() if "failed to execute" in ln)  # one line: how many, which, why
    assert line.count("notebooks/") == 1 and "notebooks/b.md" in line and "RuntimeError: this chapter fails" in line
    assert sorted(_runs(book)) == ["a", "c"]  # the others ran, once each; myst-nb executed none again


def test_a_chapter_myst_nb_executes_while_the_book_is_read_fails_the_warnings_as_errors_build(tmp_path):
    book = _book(tmp_path, tamper=True)
    _ok(_execute(book))
    _runs(book)
    done = _build(book)
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert "notebooks/a: executed again" in out
    assert "python -m trajectory_judge.book execute a" in out
    _runs(book)
    again = _build(book)  # myst-nb's own cache entry records no data digest: replaced by the execute step's
    _ok(again)
    assert sorted(_runs(book)) == ["a"] and "added while reading" in _shown(book, "a")
