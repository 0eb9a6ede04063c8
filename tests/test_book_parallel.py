"""The book's notebooks execute side by side (``book/_ext/tj_execute.py``), each once, as myst-nb would.

Built end to end on a three-chapter book whose chapters note when they ran: with two kernels their
runs overlap and each chapter runs once (myst-nb takes the run instead of executing again); with
``TJ_BOOK_JOBS=1`` they run one after another; myst-nb's per-document execution data is there either
way; and a failing cell still fails a ``-W`` build.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import tj_execute  # noqa: E402

CONFIG = """\
title: Parallel book
author: test
copyright: "2026"
only_build_toc_files: true
exclude_patterns: [_build, "notebooks/*.ipynb", book/_ext, runs.log]
execute: {execute_notebooks: force, timeout: 120, allow_errors: false}
sphinx:
  local_extensions: {tj_execute: book/_ext/}
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
time.sleep(1.5)
{extra}
with open("../runs.log", "a") as log:
    log.write(f"{name} {{start}} {{time.time()}} {{os.getpid()}}\\n")
glue("who", "chapter {name} ran", display=False)
print("output of {name}")
```

Glued: {{glue:text}}`who`.
"""


def _book(tmp_path: Path, failing: str | None = None) -> Path:
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    (book / "book").mkdir()
    shutil.copytree(ROOT / "book" / "_ext", book / "book" / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "_config.yml").write_text(CONFIG)
    (book / "_toc.yml").write_text(TOC)
    (book / "intro.md").write_text("# Parallel book\n\nThree chapters.\n")
    for name in "abc":
        extra = "raise RuntimeError('this chapter fails')" if name == failing else ""
        (book / "notebooks" / f"{name}.md").write_text(CHAPTER.format(name=name, extra=extra))
    return book


def _build(book: Path, jobs: str) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "--all", "-W", "--keep-going"]
    env = {**os.environ, tj_execute.JOBS_ENV: jobs}
    return subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300, env=env)


def _runs(book: Path) -> dict[str, tuple[float, float]]:
    runs: dict[str, tuple[float, float]] = {}
    for line in (book / "runs.log").read_text().splitlines():
        name, start, end, _ = line.split()
        assert name not in runs, f"chapter {name} executed twice"
        runs[name] = (float(start), float(end))
    return runs


def _exec_data(book: Path) -> dict[str, dict]:
    from myst_nb.sphinx_ import NbMetadataCollector

    with open(book / "_build" / ".doctrees" / "environment.pickle", "rb") as f:
        env = pickle.load(f)
    return {d: NbMetadataCollector.get_exec_data(env, d) for d in ("notebooks/a", "notebooks/b", "notebooks/c")}


def _overlap(runs: dict[str, tuple[float, float]]) -> bool:
    spans = sorted(runs.values())
    return any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:]))


@pytest.mark.slow
def test_with_two_kernels_the_chapters_run_side_by_side_each_once_with_their_outputs(tmp_path):
    book = _book(tmp_path)
    done = _build(book, "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tj_execute: executing 3 notebooks, 2 at a time" in done.stdout
    assert "runs not used" not in done.stdout  # myst-nb took every run instead of executing again
    runs = _runs(book)
    assert sorted(runs) == ["a", "b", "c"] and _overlap(runs)
    for name in "abc":
        page = (book / "_build" / "html" / "notebooks" / f"{name}.html").read_text()
        assert f"output of {name}" in page and f"chapter {name} ran" in page  # outputs and glue
    data = _exec_data(book)
    for name in runs:  # myst-nb's execution data: each chapter's own run
        d = data[f"notebooks/{name}"]
        assert d["succeeded"] and d["method"] == "force" and 1.5 <= d["runtime"] < 60


@pytest.mark.slow
def test_with_one_job_the_chapters_run_one_after_another(tmp_path):
    book = _book(tmp_path)
    done = _build(book, "1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tj_execute" not in done.stdout
    runs = _runs(book)
    assert sorted(runs) == ["a", "b", "c"] and not _overlap(runs)
    assert all(d["succeeded"] for d in _exec_data(book).values())


@pytest.mark.slow
def test_a_failing_cell_still_fails_the_warnings_as_errors_build(tmp_path):
    book = _book(tmp_path, failing="b")
    done = _build(book, "2")
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert "notebooks/b.md" in out and "Executing notebook failed: CellExecutionError" in out
    assert sorted(_runs(book)) == ["a", "c"]  # the others ran, once each


def test_the_run_key_ignores_cell_ids_but_not_a_cell_source_or_an_option():
    import nbformat

    def nb(src: str, cid: str):
        cell = nbformat.v4.new_code_cell(src)
        cell["id"] = cid
        return nbformat.v4.new_notebook(cells=[cell])

    key = tj_execute.run_key(nb("x = 1", "aaaa"), "/d", 600, False, True, False, {})
    assert key == tj_execute.run_key(nb("x = 1", "bbbb"), "/d", 600, False, True, False, {})
    assert key != tj_execute.run_key(nb("x = 2", "aaaa"), "/d", 600, False, True, False, {})
    assert key != tj_execute.run_key(nb("x = 1", "aaaa"), "/e", 600, False, True, False, {})
    assert key != tj_execute.run_key(nb("x = 1", "aaaa"), "/d", 30, False, True, False, {})


def test_the_jobs_are_the_environment_variable_else_the_setting_else_the_cpus(monkeypatch):
    class App:
        class config:
            tj_execute_jobs = 0

    monkeypatch.setenv(tj_execute.JOBS_ENV, "3")
    assert tj_execute.jobs(App) == 3
    monkeypatch.delenv(tj_execute.JOBS_ENV)
    App.config.tj_execute_jobs = 1
    assert tj_execute.jobs(App) == 1
    App.config.tj_execute_jobs = 0
    assert tj_execute.jobs(App) == len(os.sched_getaffinity(0))
    monkeypatch.setenv(tj_execute.JOBS_ENV, "many")
    from sphinx.errors import ConfigError

    with pytest.raises(ConfigError, match="TJ_BOOK_JOBS='many'"):
        tj_execute.jobs(App)
