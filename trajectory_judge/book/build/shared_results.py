"""Results computed once per build and shared by the chapters that need them.

Six chapters open with :func:`trajectory_judge.book.chapters.editions.load_editions`: both verdict sets
loaded and verified, and both bootstrapped reports (1.3 s of each chapter's run). During
``jupyter-book build`` the ``tj_execute`` extension sets :data:`CACHE_ENV` to an empty folder under
the build directory, emptied at the start of every build; :func:`cached` keeps a result there under
a key made of everything it depends on: its name and arguments, the sha256 of every file in the data
folders it reads, the sha256 of the package's source, and the versions of Python and the numerical
libraries. A changed data file or a changed line of the package is another key, so it is computed
again; a result is never keyed by a notebook's text.

Entries are written whole (a temporary file, then :func:`os.replace`), so chapters executing side by
side may write the same entry at once: each reader sees one whole entry or none. An entry that does
not load is computed again. The data files a result read are recorded again on every reuse
(:func:`trajectory_judge.fileio.note_read`), so a chapter's provenance names them either way.

Outside a build (nbval, ``python -m trajectory_judge.book execute``, Binder, Colab) the variable is
unset and :func:`cached` simply computes.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from trajectory_judge.book.build.records import note_shared
from trajectory_judge.fileio import atomic_write_bytes, files_read, note_read

CACHE_ENV = "TJ_BUILD_CACHE"
"""Environment variable naming the build's cache folder (set, and emptied, by the ``tj_execute`` extension)."""

T = TypeVar("T")

LIBRARIES = ("numpy", "pandas", "scipy", "pydantic")
"""Libraries whose version is part of every key."""


@cache
def source_digest() -> str:
    """sha256 over the package's Python source (every ``trajectory_judge/**/*.py``, by relative path)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def folder_digest(folders: Iterable[Path]) -> str:
    """sha256 over every file under ``folders`` (relative path and bytes), in a fixed order."""
    h = hashlib.sha256()
    for folder in sorted({Path(f).resolve() for f in folders}):
        h.update(str(folder).encode() + b"\0")
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = [sys.version]
    for lib in LIBRARIES:
        try:
            out.append(f"{lib}=={version(lib)}")
        except PackageNotFoundError:
            out.append(f"{lib} absent")
    return ";".join(out)


def cache_key(name: str, args: Any, folders: Iterable[Path]) -> str:
    """The key of ``name(args)`` reading ``folders``: its data, the package's source and the library versions."""
    h = hashlib.sha256()
    for part in (name, repr(args), folder_digest(folders), source_digest(), _versions()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def cache_dir() -> Path | None:
    """The build's cache folder, or ``None`` outside a build."""
    raw = os.environ.get(CACHE_ENV, "").strip()
    return Path(raw) if raw else None


def cached(name: str, compute: Callable[[], T], *, args: Any, folders: Iterable[Path]) -> T:
    """``compute()``, or during a build the result an earlier chapter of this build computed with the
    same ``name``, ``args``, data under ``folders``, package source and library versions."""
    root = cache_dir()
    if root is None:
        return compute()
    folders = list(folders)
    entry = root / f"{name}-{cache_key(name, args, folders)[:40]}.pickle"
    try:
        reads, value = pickle.loads(entry.read_bytes())
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - a damaged entry (unpickling raises any kind): computed again below, replaced whole
        pass
    else:
        for path in reads:  # the files it read, recorded for this chapter's provenance as if read now
            p = Path(path)
            if p.is_file():
                note_read(p, p.read_bytes())
        note_shared(name, reused=True)  # the execution page says this chapter reused it
        return value
    before = {r.path: r for r in files_read()}
    value = compute()
    reads = sorted(str(r.path) for r in files_read() if before.get(r.path) is not r)  # a new record: read by compute()
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(entry, pickle.dumps((reads, value), protocol=pickle.HIGHEST_PROTOCOL))
    note_shared(name, reused=False)
    return value
