"""Whole-file writes that either happen completely or not at all.

Every file the tool writes whole (a report, a manifest, a dataset, a fetched release file, a pidfile)
goes through :func:`atomic_open`: the bytes go to a temporary file in the same directory, are
fsynced, and replace the target with ``os.replace``. A full disk, a crash or a kill leaves the
previous file intact and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, NamedTuple


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` atomically.

    The one way this package writes a whole file: the data go to a hidden temporary file in the
    same folder, which is flushed, fsynced and moved into place with :func:`os.replace`. An error
    (a full disk, Ctrl-C) removes the temporary file and leaves the previous ``path`` untouched.
    The new file gets ordinary permissions (0666 less the umask), not the 0600 of ``mkstemp``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files; mode {mode!r} is not 'w' or 'wb'")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # pragma: no cover - a name collision
            continue
    try:
        text: dict[str, Any] = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make the entries of ``directory`` (a new or renamed file) durable, where the platform allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory fds
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


def write_text_if_changed(path: str | Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless the file already holds exactly it; whether it was written."""
    path = Path(path)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    atomic_write_text(path, text)
    return True


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def user_cache_dir(name: str, env: str) -> Path:
    """``$env`` if set, else ``$XDG_CACHE_HOME/trajectory-judge/<name>`` (``~/.cache`` by default)."""
    if os.environ.get(env):
        return Path(os.environ[env])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "trajectory-judge" / name


# --- what this process reads -----------------------------------------------------------------
class FileRead(NamedTuple):
    """A data file this process read: its resolved path, the sha256 of its bytes and their number."""

    path: Path
    sha256: str
    size: int


READ_EVENT = "trajectory_judge.read"
"""The auditing event (:func:`sys.audit`) raised for each data file read, with the :class:`FileRead` fields as its
arguments. Nothing here keeps it: a process that wants to know what it read adds an audit hook (the book's
kernels do: :class:`trajectory_judge.book.building.records.ReadLog`)."""


def note_read(path: str | Path, sha256: str, size: int) -> FileRead:
    """Announce that ``path`` was read (:data:`READ_EVENT`): its SHA-256 (hex) and size in bytes."""
    record = FileRead(Path(path).resolve(), sha256, size)
    sys.audit(READ_EVENT, *record)
    return record
