"""Where the book finds its data: the book's own folder, found from where the notebook runs.

The book is the folder holding ``_config.yml``. A notebook runs with its own folder as working
directory (``notebooks/``), so the book is the nearest folder at or above the working directory
that holds ``_config.yml``, never the folder the package happens to be installed in: two clones
sharing one environment each read their own ``data/``.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "TJ_DATA"
"""Environment variable naming the data directory of the whole book."""

PAPER_DATA_ENV = "TJ_PAPER_DATA"
"""Environment variable naming the directory of the paper's verdicts (default ``data/release``)."""

BOOK_CONFIG = "_config.yml"
"""The file that marks the book's root folder."""


def repo_root(start: str | Path | None = None) -> Path:
    """The book's root: the nearest folder at or above ``start`` (default: the working directory)
    holding ``_config.yml``.

    Raises :class:`FileNotFoundError` when there is none.
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / BOOK_CONFIG).is_file():
            return folder
    raise FileNotFoundError(f"no {BOOK_CONFIG} at or above {here}: run from inside the book's folder")


def notebooks_dir(start: str | Path | None = None) -> Path:
    """The folder of the book's notebooks."""
    return repo_root(start) / "notebooks"


def data_dir(start: str | Path | None = None) -> Path:
    """The book's data directory: ``$TJ_DATA`` (a relative path from the book's root), else ``data/``.

    Raises :class:`FileNotFoundError` naming the directory and the variable when it does not exist.
    """
    return _resolve(DATA_ENV, "data", "trajectories.jsonl", start)


def own_folder(start: str | Path | None = None) -> str | None:
    """The name of the folder the book is built on when ``$TJ_DATA`` names one other than the
    book's own ``data/`` (a reader's experiment folder), else ``None`` (this edition's run).

    A folder whose ``SHA256SUMS`` is the book's own (a copy of ``data/``) holds this edition's run too."""
    try:
        here = data_dir(start)
        own = (repo_root(start) / "data").resolve()
    except FileNotFoundError:
        return None
    if here == own:
        return None
    sums = here / "SHA256SUMS"
    if sums.is_file() and (own / "SHA256SUMS").is_file() and sums.read_bytes() == (own / "SHA256SUMS").read_bytes():
        return None
    return here.name


def paper_data_dir(start: str | Path | None = None) -> Path:
    """The paper's verdicts: ``$TJ_PAPER_DATA`` (a relative path from the book's root), else ``data/release``.

    The directory holds the release's verdicts and ``order.txt``; they are scored against the
    trajectories of ``data/`` (see :func:`trajectory_judge.analysis.core.loading.load_paper_data`).
    Raises :class:`FileNotFoundError` naming the directory and the variable when it does not exist.
    """
    return _resolve(PAPER_DATA_ENV, "data/release", "verdicts.jsonl and order.txt", start)


def paper_trajectories_dir(start: str | Path | None = None) -> Path:
    """Where the paper's verdicts find their trajectories: this book's own ``data/``.

    Outside any book (a notebook copied elsewhere and run with ``TJ_PAPER_DATA`` set), the folder
    above the paper's verdicts, which is ``data/`` for the default ``data/release``.
    """
    try:
        return _resolve("", "data", "trajectories.jsonl", start)
    except FileNotFoundError:
        return paper_data_dir(start).parent


def _resolve(env: str, default: str, holds: str, start: str | Path | None) -> Path:
    raw = os.environ.get(env, "").strip() if env else ""
    path = Path(raw) if raw else Path(default)
    if not path.is_absolute():
        path = repo_root(start) / path
    path = path.resolve()
    if not path.is_dir():
        hint = f"set {env} to a folder with {holds}" if env else f"it should hold {holds}"
        raise FileNotFoundError(f"data directory {path} does not exist ({hint})")
    return path
