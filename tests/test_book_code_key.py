"""A chapter is executed again when, and only when, code it ran has changed since.

A chapter's code key is the digest of the package modules its kernel imported and of the book lock's
pins (``execute_notebooks.CodeKey``); the keys of all chapters live in one file beside the notebooks
(``notebooks/code-keys.json``), not in the notebooks. The execute step runs the chapters whose key no
longer holds, and the book's cache shows an execution only while its key holds. End to end on a
two-chapter book whose one chapter calls a function of a copy of the package: editing a module neither
chapter imports executes nothing and rewrites no file; editing that function executes that chapter
alone, in the execute step or in the build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
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

HEAD = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

"""

FORMATS = (
    HEAD
    + """# Formats

```{code-cell} ipython3
from trajectory_judge.analysis.core.formatting import format_number
print("shown:", format_number(0.5))
```
"""
)
"""A chapter that imports one module of the package (and the packages above it)."""

PLAIN = HEAD + '# Plain\n\n```{code-cell} ipython3\nprint("plain:", 1 + 1)\n```\n'
"""A chapter that imports nothing of the package."""


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
    toc = "format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/formats\n  - file: notebooks/plain\n"
    (book / "_toc.yml").write_text(toc)
    (book / "intro.md").write_text("# Keyed book\n\nTwo chapters.\n")
    (book / "notebooks" / "formats.md").write_text(FORMATS)
    (book / "notebooks" / "plain.md").write_text(PLAIN)
    (book / "data" / "release").mkdir(parents=True)
    (book / "data" / "trajectories.jsonl").write_text("")
    (book / "data" / "release" / "verdicts.jsonl").write_text("")
    return book


def _scratch_package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""A package."""\n')
    (pkg / "sub" / "used.py").write_text('def f():\n    """Used."""\n    return 1\n')
    (pkg / "other.py").write_text('def g():\n    """Not imported."""\n    return 2\n')
    return pkg


def test_a_code_key_follows_the_modules_it_names_and_the_locks_pins_not_other_modules_or_comments(tmp_path):
    book, pkg = _book(tmp_path), _scratch_package(tmp_path)
    key = execute.CodeKey.of(["sub/used.py", "__init__.py", "sub/used.py"], book, package=pkg)
    assert key.modules == ("__init__.py", "sub/used.py") and key.holds(book, package=pkg)
    (pkg / "other.py").write_text('def g():\n    """Not imported; edited."""\n    return 3\n')
    assert key.holds(book, package=pkg)  # a module the chapter did not import
    lock = book / ".ci" / "book.lock"
    lock.write_text(lock.read_text(encoding="utf-8") + "    # a comment moves nothing\n", encoding="utf-8")
    assert key.holds(book, package=pkg)
    (pkg / "sub" / "used.py").write_text('def f():\n    """Used."""\n    return 2\n')
    assert not key.holds(book, package=pkg)  # a function the chapter imported
    key = execute.CodeKey.of(key.modules, book, package=pkg)
    lock.write_text(lock.read_text(encoding="utf-8").replace("numpy==", "numpy==0.0.0+x", 1), encoding="utf-8")
    assert not key.holds(book, package=pkg)  # a pin
    key = execute.CodeKey.of(key.modules, book, package=pkg)
    (pkg / "sub" / "used.py").unlink()
    assert not key.holds(book, package=pkg)  # a module removed since


def test_the_kernel_probe_names_the_package_modules_imported_and_no_other(tmp_path):
    program = "import trajectory_judge.analysis.core.formatting\n" + execute.MODULES_PROBE
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=tmp_path)
    modules = execute.imported_modules(run.stdout)
    assert {"__init__.py", "analysis/__init__.py", "analysis/core/formatting.py"} <= set(modules)
    assert not any(m.startswith("run/") for m in modules) and modules == sorted(modules)
    bare = subprocess.run([sys.executable, "-c", execute.MODULES_PROBE], capture_output=True, text=True, check=True)
    assert execute.imported_modules(bare.stdout) == []  # a chapter that never imports the package


def test_the_keys_file_is_sorted_merged_and_rewritten_only_when_a_key_changes(tmp_path):
    a, b = execute.CodeKey(("x.py",), "1" * 64), execute.CodeKey((), "2" * 64)
    assert execute.write_code_keys(tmp_path, {"b": b, "a": a})
    path = tmp_path / execute.CODE_KEYS
    text = path.read_text(encoding="utf-8")
    assert list(json.loads(text)) == ["a", "b"] and text.endswith("}\n")
    assert not execute.write_code_keys(tmp_path, {"a": a})  # the same key: the file is left as it is
    c = execute.CodeKey(("y.py",), "3" * 64)
    assert execute.write_code_keys(tmp_path, {"a": c})
    assert execute.read_code_keys(tmp_path) == {"a": c, "b": b}  # the other chapter's key is kept


def _executed_in_place(book: Path, name: str) -> None:
    """Write ``name``'s notebook as the execute step would on an unchanged source and data, without a kernel."""
    md = book / "notebooks" / f"{name}.md"
    nb = execute.read_source(md)
    nb.metadata[execute.METADATA_KEY] = {"data_sha256": execute.data_digest(execute.data_folders(book)), "records": {}}
    nbformat.write(nb, md.with_suffix(".ipynb"))
    execute.write_code_keys(md.parent, {name: execute.CodeKey.of(["__init__.py"], book)})


def test_the_execute_step_picks_the_chapters_whose_source_data_or_code_key_moved(tmp_path):
    book = _book(tmp_path)
    notebooks = book / "notebooks"
    sources = execute.notebook_sources([str(notebooks / "formats.md"), str(notebooks / "plain.md")])
    assert execute.stale(sources) == sources  # nothing executed yet
    for name in ("formats", "plain"):
        _executed_in_place(book, name)
    assert execute.stale(sources) == []
    execute.write_code_keys(notebooks, {"plain": execute.CodeKey(("__init__.py",), "0" * 64)})
    assert execute.stale(sources) == [notebooks / "plain.md"]  # its key no longer holds
    _executed_in_place(book, "plain")
    (notebooks / "formats.md").write_text(FORMATS.replace("0.5", "0.25"))
    assert execute.stale(sources) == [notebooks / "formats.md"]  # its source changed
    _executed_in_place(book, "formats")
    (book / "data" / "trajectories.jsonl").write_text("\n")
    assert execute.stale(sources) == sources  # the data changed
    assert execute.stale(sources, out_dir=tmp_path / "elsewhere") == sources  # no execution there


# --- end to end ----------------------------------------------------------------------------------


def _env(book: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TJ_DATA", "TJ_PAPER_DATA", "TJ_BOOK_JOBS")}
    env["PYTHONPATH"] = str(book / "pkg")  # the copy's package, for the build and for the kernels it starts
    return env


def _execute(book: Path) -> str:
    cmd = [sys.executable, "-m", "trajectory_judge.book", "execute", "--jobs", "1"]
    done = subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300, env=_env(book), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def _build(book: Path) -> str:
    """The build's log; it must pass with warnings as errors."""
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "--all", "-W", "--keep-going"]
    done = subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300, env=_env(book), check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done.stdout + done.stderr


def _files(book: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((book / "notebooks").glob("*")) if p.suffix != ".md"}


def _shown(book: Path) -> str:
    return (book / "_build" / "html" / "notebooks" / "formats.html").read_text(encoding="utf-8")


def _edit_function(book: Path, returned: str) -> None:
    source = book / "pkg" / "trajectory_judge" / "analysis" / "core" / "formatting.py"
    text = source.read_text(encoding="utf-8")
    head, sep, tail = text.partition("def format_number(")
    body_at = tail.index('"""', tail.index('"""') + 3) + 3  # after the docstring
    source.write_text(head + sep + tail[:body_at] + f"\n    return {returned!r}" + tail[body_at:], encoding="utf-8")


@pytest.mark.slow  # executes two chapters and builds the book three times
def test_an_edit_executes_exactly_the_chapters_that_import_the_edited_module(tmp_path):
    book = _book(tmp_path)
    assert "executing 2 chapters" in _execute(book)
    keys = execute.read_code_keys(book / "notebooks")
    assert "analysis/core/formatting.py" in keys["formats"].modules and keys["plain"].modules == ()
    recorded = json.loads((book / "notebooks" / "formats.ipynb").read_text(encoding="utf-8"))["metadata"]
    assert sorted(recorded[execute.METADATA_KEY]) == ["data_sha256", "records"]  # the code key is not in it
    committed = _files(book)
    assert "hold no execution" not in _build(book)  # the committed executions are shown
    assert "shown: 0.500" in _shown(book)

    runner = book / "pkg" / "trajectory_judge" / "run" / "runner.py"  # a module neither chapter imports
    runner.write_text(runner.read_text(encoding="utf-8").replace('"""', '"""Edited. ', 1), encoding="utf-8")
    assert "nothing to execute" in _execute(book)
    assert _files(book) == committed  # no notebook, and not the keys file, rewritten
    assert "hold no execution" not in _build(book)

    _edit_function(book, "edited")
    assert "executing 1 chapter," in _execute(book)
    after = _files(book)
    assert after["plain.ipynb"] == committed["plain.ipynb"] and after["formats.ipynb"] != committed["formats.ipynb"]
    keys_after = execute.read_code_keys(book / "notebooks")
    assert keys_after["plain"] == keys["plain"] and keys_after["formats"] != keys["formats"]
    assert "hold no execution" not in _build(book)
    assert "shown: edited" in _shown(book)

    _edit_function(book, "edited again")  # and no execute step: the build executes that chapter alone
    log = _build(book)
    assert re.search(r"tj_notebook_cache: 1 \w+", log)  # the count of chapters the build executed
    assert "formats.ipynb in" in log and "plain.ipynb in" not in log
    assert "shown: edited again" in _shown(book)
