"""The checksum manifest of a data directory: ``SHA256SUMS`` in ``sha256sum`` format.

Loaders verify the files the manifest lists before reading them, so a book or report is never
computed from data that silently differs from what was committed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.models import DataError, read_text
from trajectory_judge.provenance.checksums import sha256_file
from trajectory_judge.provenance.outputs import DATA_FILES, MANIFEST, guard_output


def read_manifest(directory: str | Path) -> dict[str, str] | None:
    """File name -> digest, or None when the directory has no manifest."""
    path = Path(directory) / MANIFEST
    if not path.exists():
        return None
    out: dict[str, str] = {}
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or len(parts[0]) != 64 or any(c not in "0123456789abcdef" for c in parts[0].lower()):
            raise DataError(f"{path}:{lineno}: expected '<sha256>  <file name>'")
        name = parts[1].lstrip("*")
        if name in (".", "..") or "/" in name or "\\" in name:
            raise DataError(
                f"{path}:{lineno}: {name!r} is not a file name of this folder; a manifest lists only "
                "the files beside it (no directories, no '..')"
            )
        out[name] = parts[0].lower()
    return out


def manifest_text(directory: str | Path, names: Iterable[str] | None = None) -> str:
    """The manifest of ``names`` (default: :data:`DATA_FILES` and any other file already listed) present in ``directory``."""
    d = Path(directory)
    names = _listed(d) if names is None else names
    lines = [f"{sha256_file(d / n)}  {n}" for n in names if (d / n).is_file()]
    return "\n".join(lines) + "\n"


def _listed(directory: Path) -> tuple[str, ...]:
    """:data:`DATA_FILES`, then any other file the manifest of ``directory`` lists already."""
    try:
        listed = read_manifest(directory) or {}
    except DataError:  # an unreadable manifest is being replaced; keep only the data files
        listed = {}
    return (*DATA_FILES, *(n for n in listed if n not in DATA_FILES))


def write_manifest(directory: str | Path, names: Iterable[str] | None = None) -> Path:
    """(Re)write the manifest of ``directory`` (see :func:`manifest_text` for which files it lists)."""
    path = Path(directory) / MANIFEST
    names = tuple(names) if names is not None else _listed(Path(directory))
    guard_output(path, inputs=[Path(directory) / n for n in names if n != MANIFEST], own=(MANIFEST,))
    atomic_write_text(path, manifest_text(directory, names))
    return path


_VERIFIED: ContextVar[dict[tuple[str, int, int, int], str] | None] = ContextVar("verified", default=None)


@contextmanager
def hashing_once() -> Iterator[None]:
    """Within this block each file is hashed once: the digest is kept by path, inode, size and mtime.

    For one command that reads a folder through several loaders (``report``), each of which
    verifies what it reads; outside such a block every verification hashes afresh.
    """
    token = _VERIFIED.set({})
    try:
        yield
    finally:
        _VERIFIED.reset(token)


def _digest(path: Path) -> str:
    seen = _VERIFIED.get()
    if seen is None:
        return sha256_file(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in seen:
        seen[key] = sha256_file(path)
    return seen[key]


def verify_folder(directory: str | Path, required: tuple[str, ...] = ()) -> None:
    """Verify every file the manifest of ``directory`` pins, and that ``required`` and every data
    file present (:data:`DATA_FILES`) are pinned; as :func:`verify_manifest`, a :class:`DataError`
    names the first file that fails. A folder without a manifest is accepted as is.
    """
    d = Path(directory)
    listed = read_manifest(d)
    if listed is None:
        return
    present = tuple(n for n in DATA_FILES if n not in listed and (d / n).is_file())
    verify_manifest(d, (*listed, *(n for n in required if n not in listed), *present))


def verify_manifest(directory: str | Path, names: tuple[str, ...] | None = None) -> None:
    """Raise :class:`DataError` if a listed file is missing or differs from its digest.

    ``names`` limits the check to those files (each must then be listed). A directory without
    a manifest (a user's own verdicts, the release) is accepted as is.
    """
    d = Path(directory)
    listed = read_manifest(d)
    if listed is None:
        return
    for name in names if names is not None else tuple(listed):
        if name not in listed:
            if (d / name).exists():
                raise DataError(f"{d / MANIFEST}: {name} is not listed; run `trajectory-judge manifest --data {d}`")
            continue
        path = d / name
        if not path.is_file():
            raise DataError(f"{path}: listed in {MANIFEST} but missing")
        got = _digest(path)
        if got != listed[name]:
            raise DataError(
                f"{path}: checksum mismatch with {d / MANIFEST} (sha256 {got}, listed {listed[name]}); "
                f"the file changed after the manifest was written; if that is intended, run "
                f"`trajectory-judge manifest --data {d}`"
            )


def check_manifest(directory: str | Path) -> int:
    """``manifest --check``: 0 when every listed file verifies; 1 when there is no manifest or it lists nothing.

    A missing directory, or a listed file that is missing or differs, is a :class:`DataError`.
    """
    d = Path(directory)
    if not d.is_dir():
        raise DataError(f"{d}: no such directory")
    listed = read_manifest(d)
    if not listed:
        what = "has no " + MANIFEST if listed is None else f"{MANIFEST} lists no files"
        print(
            f"trajectory-judge manifest: error: {d} {what}; nothing to check "
            f"(write one with `trajectory-judge manifest --data {d}`)",
            file=sys.stderr,
        )
        return 1
    verify_folder(d)
    print(f"{d / MANIFEST}: all listed files verify ({len(listed)} files)")
    return 0
