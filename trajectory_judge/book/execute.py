"""Executing the book's notebooks reproducibly.

The book's notebooks are MyST markdown files paired with ``.ipynb`` (jupytext ``ipynb,md:myst``).
The ``.md`` is the source; :func:`execute` syncs it to the ``.ipynb``, runs it with nbclient and
writes the executed notebook so that re-running on unchanged data gives a byte-identical file
(stable cell ids, no timing metadata). The committed ``.ipynb`` are what nbval checks against
fresh runs.

    python -m trajectory_judge.book execute [--data DIR] [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

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


def read_source(md: Path):
    """The notebook a MyST source describes, with stable cell ids and normalised metadata."""
    import jupytext

    nb = jupytext.read(md, fmt="md:myst")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
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


def execute(md: Path, *, data: str | Path | None = None, timeout: int = 600) -> Path:
    """Run the notebook of ``md`` in ``notebooks/`` and write the executed ``.ipynb`` beside it.

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
        nb, timeout=timeout, kernel_name=KERNEL, record_timing=False,
        resources={"metadata": {"path": str(md.parent)}},
    )
    with _env(DATA_ENV, str(Path(data).resolve())), _env(PAPER_DATA_ENV, str(paper)):
        client.execute()
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    nb.metadata.pop("widgets", None)
    out = md.with_suffix(".ipynb")
    text = nbformat.writes(nb, version=4)
    out.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return out


def _config(repository: str, branch: str) -> int:
    """The ``config`` verb: write the derived config, or one line of error and exit status 2."""
    from trajectory_judge.book.config import write_local_config

    try:
        out = write_local_config(repository, branch)
    except (ValueError, FileNotFoundError) as exc:
        print(f"trajectory-judge book config: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out.name}: build with `jupyter-book build . --all -W --keep-going --config {out.name}`", file=sys.stderr)
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
    cf = sub.add_parser("config", help="write _config.local.yml naming the hosting repository (launch buttons)")
    cf.add_argument("--repository", required=True, help="https://github.com/OWNER/REPO")
    cf.add_argument("--branch", default="main", help="branch the launch buttons open (default main)")
    args = parser.parse_args(argv)
    if args.verb == "config":
        return _config(args.repository, args.branch)
    from nbclient.exceptions import CellExecutionError

    for md in notebook_sources(args.notebooks):
        try:
            out = execute(md, data=args.data, timeout=args.timeout)
        except CellExecutionError as exc:
            last = [ln for ln in str(exc).splitlines() if ln.strip()][-1]
            print(f"{md}: a cell failed, the .ipynb is left as it was\n  {last}", file=sys.stderr)
            return 1
        print(f"executed {out.relative_to(repo_root()) if out.is_relative_to(repo_root()) else out}", file=sys.stderr)
    return 0
