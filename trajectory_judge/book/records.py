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

import json
import os
import shutil
from pathlib import Path

from trajectory_judge.fileio import FileRead, atomic_write_bytes, files_read, on_read

RECORDS_ENV = "TJ_BUILD_RECORDS"
"""Environment variable naming the build's records directory (set by the ``tj_records`` extension)."""

FILES_RECORD = "files.json"
"""A chapter's record of every data file it read (path, sha256, size), rewritten on each read."""

FRESH_EACH_RUN = ("tables", "figures")
"""Record folders a chapter empties when it starts executing in a build (no stale table outlives a rename)."""

_chapter: str | None = None


def set_chapter(name: str | None) -> None:
    """Name the chapter this kernel executes (a notebook stem such as ``results``)."""
    global _chapter
    if name is not None and (not name or "/" in name or name.startswith(".")):
        raise ValueError(f"chapter name {name!r}: a notebook stem such as 'results'")
    _chapter = name
    folder = records_dir()
    if folder is None:
        return
    for sub in FRESH_EACH_RUN:
        shutil.rmtree(folder / sub, ignore_errors=True)
    _record_files()
    on_read(_record_files)


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


def _record_files(_: FileRead | None = None) -> None:
    rows = [{"path": str(f.path), "sha256": f.sha256, "size": f.size} for f in files_read()]
    write_record(FILES_RECORD, json.dumps(rows, indent=1) + "\n")


def chapter_files(root: str | Path, chapter: str) -> list[FileRead]:
    """Every data file ``chapter`` read while it executed in the build whose records are under ``root``
    (``tj_records.records_root(app)``), by path; empty when it left no record."""
    path = Path(root) / chapter / FILES_RECORD
    if not path.is_file():
        return []
    rows = json.loads(path.read_text(encoding="utf-8"))
    return sorted(FileRead(Path(r["path"]), r["sha256"], int(r["size"])) for r in rows)
