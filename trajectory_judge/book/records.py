"""What a chapter leaves for the build beside its outputs: the records directory.

During ``jupyter-book build`` the Sphinx extension ``book/_ext/tj_records.py`` sets
:data:`RECORDS_ENV` to a folder under the build directory before any notebook executes; every
kernel inherits it. A chapter names itself once, in its first cell (``setup("results")``), and
whatever it records (:func:`write_record`) goes to ``RECORDS_DIR/<chapter>/``, where the extension
picks it up when it writes the pages (provenance lines, downloads, the execution page).

Outside a build (nbval, ``python -m trajectory_judge.book execute``, Binder, Colab) the variable is
unset and nothing is written, so the committed notebooks stay byte-identical.
"""

from __future__ import annotations

import os
from pathlib import Path

from trajectory_judge.fileio import atomic_write_bytes

RECORDS_ENV = "TJ_BUILD_RECORDS"
"""Environment variable naming the build's records directory (set by the ``tj_records`` extension)."""

_chapter: str | None = None


def set_chapter(name: str | None) -> None:
    """Name the chapter this kernel executes (a notebook stem such as ``results``)."""
    global _chapter
    if name is not None and (not name or "/" in name or name.startswith(".")):
        raise ValueError(f"chapter name {name!r}: a notebook stem such as 'results'")
    _chapter = name


def chapter() -> str | None:
    """The chapter this kernel executes, as named by :func:`set_chapter` (``None`` before)."""
    return _chapter


def records_dir() -> Path | None:
    """This chapter's records folder during a build, or ``None`` (no build, or no chapter named)."""
    root = os.environ.get(RECORDS_ENV)
    if not root or _chapter is None:
        return None
    return Path(root) / _chapter


def write_record(relpath: str, data: str | bytes) -> Path | None:
    """Write ``data`` atomically to ``relpath`` in this chapter's records folder; ``None`` outside a build."""
    folder = records_dir()
    if folder is None:
        return None
    target = folder / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, data.encode("utf-8") if isinstance(data, str) else data)
    return target
