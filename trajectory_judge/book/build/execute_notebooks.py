"""Executing the book's notebooks reproducibly.

The book's notebooks are MyST markdown files paired with ``.ipynb`` (jupytext ``ipynb,md:myst``).
The ``.md`` is the source; :func:`execute` syncs it to the ``.ipynb``, runs it with nbclient and
writes the executed notebook so that re-running on unchanged data gives a byte-identical file
(stable cell ids, no timing metadata). The committed ``.ipynb`` are what nbval checks against
fresh runs.

    python -m trajectory_judge.book execute [--data DIR] [--out DIR] [NOTEBOOK ...]

With ``--out`` the executed notebooks go to that folder and the committed ones stay as they are:
the quick way to check that every chapter runs on a folder of one's own (``--data mine/``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from trajectory_judge.book.paths import DATA_ENV, PAPER_DATA_ENV, data_dir, notebooks_dir, paper_data_dir, repo_root

KERNEL = "python3"
"""The kernel every notebook runs on."""


PAIRING = "ipynb,md:myst"
"""The jupytext pairing of every notebook."""


def notebook_sources(names: Sequence[str] = ()) -> list[Path]:
    """The MyST sources of the notebooks: all of ``notebooks/*.md``, or the named ones.

    A name may be a stem (``testbed``) or a path to the ``.md`` or ``.ipynb``.
    """
    if not names:
        return sorted(notebooks_dir().glob("*.md"))
    out = []
    for name in names:
        p = Path(name)
        md = p.with_suffix(".md") if p.suffix in (".md", ".ipynb") else notebooks_dir() / f"{name}.md"
        if not md.exists():
            raise FileNotFoundError(f"no notebook source {md}")
        out.append(md.resolve())
    return out


COLAB_SETUP_ID = "colab-setup"
"""The cell id of the Colab set-up cell (:func:`trajectory_judge.book.build.hosting.colab_cell`)."""


def is_colab_setup(cell) -> bool:
    """Whether ``cell`` is the Colab set-up cell that opens a chapter."""
    from trajectory_judge.book.build.hosting import COLAB_MARKER

    source = cell.get("source", "")  # a string in memory, a list of lines in a notebook file
    return cell.get("cell_type") == "code" and "".join(source).startswith(COLAB_MARKER)


def stable_cell_ids(cells) -> None:
    """Give ``cells`` the ids of the committed notebooks: ``colab-setup`` for the Colab set-up cell
    (its own id, so that adding it moves no other cell's), ``cell-000``, ``cell-001``, ... for the rest."""
    i = 0
    for cell in cells:
        if is_colab_setup(cell):
            cell["id"] = COLAB_SETUP_ID
        else:
            cell["id"] = f"cell-{i:03d}"
            i += 1


def read_source(md: Path):
    """The notebook a MyST source describes, with stable cell ids and normalised metadata."""
    import jupytext

    nb = jupytext.read(md, fmt="md:myst")
    stable_cell_ids(nb.cells)
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    kernelspec = nb.metadata.get("kernelspec") or {"display_name": "Python 3", "language": "python", "name": KERNEL}
    nb.metadata = {"jupytext": {"formats": PAIRING}, "kernelspec": kernelspec}
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


@contextmanager
def _env(var: str, value: str | None) -> Iterator[None]:
    old = os.environ.get(var)
    if value is not None:
        os.environ[var] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = old


def execute(md: Path, *, data: str | Path | None = None, timeout: int = 600, out_dir: str | Path | None = None) -> Path:
    """Run the notebook of ``md`` in ``notebooks/`` and write the executed ``.ipynb`` beside it
    (or into ``out_dir``, leaving the committed one as it is).

    ``data`` sets ``TJ_DATA`` for the kernel; by default it is the data of the book holding the
    notebook (or, for a notebook outside any book, of the book around the working directory).
    ``TJ_PAPER_DATA`` is set the same way to that book's paper verdicts.
    The output is deterministic: stable cell ids, no timing or execution metadata, so an unchanged
    notebook on unchanged data writes the same bytes.
    """
    import nbformat
    from nbclient import NotebookClient

    md = Path(md).resolve()
    if data is None:
        try:
            data = data_dir(md.parent)
        except FileNotFoundError:
            data = data_dir()
    try:  # the paper's verdicts of the book holding the notebook, else of the book around the working directory
        paper = paper_data_dir(md.parent)
    except FileNotFoundError:
        paper = paper_data_dir()
    nb = read_source(md)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL,
        record_timing=False,
        resources={"metadata": {"path": str(md.parent)}},
    )
    with _env(DATA_ENV, str(Path(data).resolve())), _env(PAPER_DATA_ENV, str(paper)):
        client.execute()
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    nb.metadata.pop("widgets", None)
    out = md.with_suffix(".ipynb") if out_dir is None else Path(out_dir) / f"{md.stem}.ipynb"
    text = nbformat.writes(nb, version=4)
    out.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return out


def sync_ipynb_cell(md: Path, index: int) -> bool:
    """Give the executed ``.ipynb`` of ``md`` the source of its code cell ``index`` from the ``.md``.

    Only the source changes (outputs stay), so a cell that prints nothing where the book runs (the
    Colab set-up) follows its ``.md`` without executing the notebook again. Returns whether the
    file was rewritten; :class:`ValueError` when the two do not hold that cell at the same place.
    """
    import nbformat

    from trajectory_judge.fileio import atomic_write_text

    md = Path(md)
    want = [c for c in read_source(md).cells if c.cell_type == "code"]
    out = md.with_suffix(".ipynb")
    nb = nbformat.read(out, as_version=4)
    have = [c for c in nb.cells if c.cell_type == "code"]
    if len(want) != len(have) or want[index].metadata.get("tags") != have[index].metadata.get("tags"):
        raise ValueError(f"{out}: its cells differ from {md.name}; execute it again")
    if have[index].source == want[index].source:
        return False
    have[index].source = want[index].source
    text = nbformat.writes(nb, version=4)
    atomic_write_text(out, text if text.endswith("\n") else text + "\n")
    return True


def name_repository(url: str, branch: str = "main", book: str | Path | None = None) -> list[Path]:
    """Name the hosting repository in ``_config.yml`` and in every notebook's set-up cell, ``.md``
    and executed ``.ipynb`` (:func:`trajectory_judge.book.build.hosting.set_repository`); the files rewritten."""
    from trajectory_judge.book.build.hosting import set_repository

    root = Path(book) if book is not None else repo_root()
    written = set_repository(url, branch, book=root)
    for md in sorted((root / "notebooks").glob("*.md")):
        if md.with_suffix(".ipynb").exists() and sync_ipynb_cell(md, 0):
            written.append(md.with_suffix(".ipynb"))
    return written


def _config(repository: str, branch: str) -> int:
    """The ``config`` verb: name the hosting repository, or one line of error and exit status 2."""
    try:
        written = name_repository(repository, branch)
    except (ValueError, FileNotFoundError) as exc:
        print(f"trajectory-judge book config: error: {exc}", file=sys.stderr)
        return 2
    root = repo_root()
    names = ", ".join(str(p.relative_to(root)) for p in written) or "nothing (already so)"
    print(f"hosting repository {repository} ({branch}); rewrote {names}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m trajectory_judge.book execute [--data DIR] [--timeout S] [NOTEBOOK ...]`` or
    ``python -m trajectory_judge.book config --repository URL [--branch B]``."""
    parser = argparse.ArgumentParser(prog="python -m trajectory_judge.book", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    ex = sub.add_parser("execute", help="sync each notebook's .md to .ipynb and execute it in place")
    ex.add_argument("notebooks", nargs="*", help="stems or paths (default: every notebooks/*.md)")
    ex.add_argument("--data", default=None, help=f"data directory for the kernel (sets {DATA_ENV})")
    ex.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    ex.add_argument("--out", default=None, help="write the executed notebooks into this folder (default: in place)")
    cf = sub.add_parser("config", help="name the hosting repository (buttons, Binder badge, Colab set-up)")
    cf.add_argument("--repository", required=True, help="https://github.com/OWNER/REPO")
    cf.add_argument("--branch", default="main", help="branch the buttons open and Colab clones (default main)")
    args = parser.parse_args(argv)
    if args.verb == "config":
        return _config(args.repository, args.branch)
    from nbclient.exceptions import CellExecutionError

    if args.out is not None:
        out_dir = Path(args.out).resolve()
        if out_dir == notebooks_dir().resolve():
            print(
                "trajectory-judge book execute: error: --out is the notebooks folder; omit it to execute in place",
                file=sys.stderr,
            )
            return 2
        out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for md in notebook_sources(args.notebooks):
        try:
            out = execute(md, data=args.data, timeout=args.timeout, out_dir=args.out)
        except CellExecutionError as exc:
            last = [ln for ln in str(exc).splitlines() if ln.strip()][-1]
            print(f"{md}: a cell failed, the .ipynb is left as it was\n  {last}", file=sys.stderr)
            failed += 1
            continue
        print(f"executed {out.relative_to(repo_root()) if out.is_relative_to(repo_root()) else out}", file=sys.stderr)
    return 1 if failed else 0
