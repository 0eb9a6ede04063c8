"""A build never shows the outputs of code that has changed since they were computed.

An execution records the digest of the package's source and of the book lock's pins beside the data's
(``execute_notebooks.code_digest``); the book's cache shows it only under both. End to end on a
one-chapter book whose chapter calls a function of a copy of the package: building again with nothing
changed executes nothing; editing that function's body makes the next ``-W`` build execute the chapter
and show the new output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajectory_judge.book.building import execute_notebooks as execute

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """\
title: Keyed book
author: test
copyright: "2026"
only_build_toc_files: true
exclude_patterns: [_build, "notebooks/*.ipynb", book/_ext, data, pkg, .ci]
execute: {execute_notebooks: cache, timeout: 120, allow_errors: false}
sphinx:
  local_extensions: {tj_notebook_cache: book/_ext/}
"""

CHAPTER = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# The chapter

```{code-cell} ipython3
from trajectory_judge.analysis.core.formatting import format_number
print("shown:", format_number(0.5))
```
"""


def _book(tmp_path: Path) -> Path:
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    shutil.copytree(ROOT / "book" / "_ext", book / "book" / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        ROOT / "trajectory_judge", book / "pkg" / "trajectory_judge", ignore=shutil.ignore_patterns("__pycache__")
    )
    (book / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "book.lock", book / ".ci" / "book.lock")
    (book / "_config.yml").write_text(CONFIG)
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/chapter\n")
    (book / "intro.md").write_text("# Keyed book\n\nOne chapter.\n")
    (book / "notebooks" / "chapter.md").write_text(CHAPTER)
    (book / "data" / "release").mkdir(parents=True)
    (book / "data" / "trajectories.jsonl").write_text("")
    (book / "data" / "release" / "verdicts.jsonl").write_text("")
    return book


def _build(book: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TJ_DATA", "TJ_PAPER_DATA", "TJ_BOOK_JOBS")}
    env["PYTHONPATH"] = str(book / "pkg")  # the copy's package, for the build and for the kernels it starts
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "-W", "--keep-going"]
    return subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300, env=env, check=False)


def _executed(done: subprocess.CompletedProcess) -> bool:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return "hold no execution of this data; executing them" in done.stdout + done.stderr


def _shown(book: Path) -> str:
    return (book / "_build" / "html" / "notebooks" / "chapter.html").read_text(encoding="utf-8")


def test_the_code_digest_follows_the_packages_source_and_the_locks_pins_not_its_comments(tmp_path):
    book = _book(tmp_path)
    before = execute.code_digest(book)
    lock = book / ".ci" / "book.lock"
    lock.write_text(lock.read_text(encoding="utf-8") + "    # a comment moves nothing\n", encoding="utf-8")
    assert execute.code_digest(book) == before
    lock.write_text(lock.read_text(encoding="utf-8").replace("numpy==", "numpy==0.0.0+x", 1), encoding="utf-8")
    assert execute.code_digest(book) != before


@pytest.mark.slow  # three builds of a one-chapter book
def test_editing_a_function_a_chapter_calls_makes_the_next_build_execute_it_and_nothing_else_does(tmp_path):
    book = _book(tmp_path)
    assert _executed(_build(book))  # nothing committed: the first build executes the chapter
    assert "shown: 0.500" in _shown(book)
    assert not _executed(_build(book))  # nothing changed: nothing executed
    source = book / "pkg" / "trajectory_judge" / "analysis" / "formatting.py"
    text = source.read_text(encoding="utf-8")
    head, sep, tail = text.partition("def format_number(")
    body_at = tail.index('"""', tail.index('"""') + 3) + 3  # after the docstring
    edited = head + sep + tail[:body_at] + '\n    return "edited"' + tail[body_at:]
    source.write_text(edited, encoding="utf-8")
    assert _executed(_build(book))  # the package changed: the chapter executes again
    assert "shown: edited" in _shown(book)
    assert not _executed(_build(book))
