"""A data directory's append-only files: verdicts (and ensemble members) and run records.

- Verdicts are appended one JSON line at a time, each flushed and fsynced, keyed by
  ``(trajectory_id, judge_id)``; :func:`keys_on_disk` tells a rerun what to skip.
- A crash mid-write can leave a torn last line; :func:`repair_torn_tail` moves it to a file
  beside it (``verdicts.jsonl.torn-1``; never deleted) and keeps every complete line before it;
  a complete record that only lacks its newline is kept, the newline added.
- Every invocation of ``run`` or ``agent`` appends one metadata record to ``runs.jsonl``
  (whose torn last line is repaired the same way).
- One writer at a time: ``run`` and ``agent`` hold :func:`data_dir_lock` (an ``flock`` on
  ``DIR/.lock``, which names the holder's pid and start time) while they write.
- A line that cannot be written whole (a full disk) is cut back off, so the file keeps only
  complete lines.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trajectory_judge.fileio import atomic_write_text, fsync_dir
from trajectory_judge.models import DataError, Verdict, dumps, parse_jsonl

TRAJECTORIES = "trajectories.jsonl"


VERDICTS = "verdicts.jsonl"


MEMBERS = "members.jsonl"
"""The member verdicts of ensemble judges (self-consistency), one line per (trajectory, member id)."""


RUNS = "runs.jsonl"


LOCK = ".lock"
"""The lock file of a data directory: ``run`` and ``agent`` hold an exclusive ``flock`` on it."""


_HELD: dict[Path, tuple[int, int]] = {}
"""The data directories whose lock this process holds: the holding thread, and how many holders in it."""
_HELD_GUARD = threading.Lock()


@contextmanager
def data_dir_lock(data_dir: str | Path) -> Iterator[Path]:
    """Hold the data directory's writer lock, or raise :class:`DataError` naming the process that holds it.

    The lock is released by the kernel when the process ends, however it ends; the lock file
    stays (removing it would race with the next writer) and only ever holds the last pid. It is
    re-entrant in the thread that holds it: a writer called by another that holds the lock
    (``run_judges`` under the ``run`` command) shares it, and the lock is let go when the outermost
    holder ends; another thread of the same process is refused as another process is.
    """
    d = Path(data_dir)
    path = d / LOCK
    key, me = path.resolve(), threading.get_ident()
    with _HELD_GUARD:
        holder = _HELD.get(key, (None, 0))[0]
        if holder is not None and holder != me:
            raise DataError(f"{d} is being written by another thread of this process; wait for it to end, then rerun")
    with _flock(d, path) if holder is None else nullcontext():  # an inner holder shares the outer one's flock
        with _HELD_GUARD:
            _HELD[key] = (me, _HELD.get(key, (me, 0))[1] + 1)
        try:
            yield path
        finally:
            with _HELD_GUARD:
                depth = _HELD[key][1] - 1
                if depth:
                    _HELD[key] = (me, depth)
                else:
                    del _HELD[key]


@contextmanager
def _flock(d: Path, path: Path) -> Iterator[None]:
    """The ``flock`` itself, held on a file descriptor of its own until the block ends."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        os.close(fd)
        try:
            info = json.loads(holder)
            who = f"pid {info['pid']} (started {info['started']})"
        except (ValueError, KeyError, TypeError):
            who = "another process"
        raise DataError(f"{d} is being written by {who}; wait for it to end or stop it, then rerun") from None
    try:
        stamp = json.dumps({"pid": os.getpid(), "started": datetime.now(UTC).isoformat(timespec="seconds")})
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (stamp + "\n").encode(), 0)
        except OSError:  # a full disk: the lock holds all the same, only unnamed
            pass
        yield
    finally:
        os.close(fd)


def append_line(fd: int, data: bytes) -> None:
    """Append ``data`` to the file open at ``fd``; if it cannot all be written, cut off what was."""
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        with suppress(OSError):  # if even this fails, the repair on resume handles what is left
            os.ftruncate(fd, start)
        raise


def append_durably(path: str | Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created if need be) whole or not at all (:func:`append_line`), then fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        append_line(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


# --- the verdict file ------------------------------------------------------------------
def set_aside_path(path: str | Path, kind: str) -> Path:
    """The first free ``NAME.KIND-N`` beside ``path`` (N = 1, 2, ...): where a repaired last line's bytes go."""
    path = Path(path)
    n = 1
    while (aside := path.with_name(f"{path.name}.{kind}-{n}")).exists():
        n += 1
    return aside


def _set_aside(path: Path, tail: bytes, kind: str) -> Path:
    """Write ``tail`` to a new file beside ``path`` (created exclusively, fsynced); return it."""
    while True:
        aside = set_aside_path(path, kind)
        try:
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # pragma: no cover - another process took the name first
            continue
    try:
        append_line(fd, tail)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        aside.unlink(missing_ok=True)
        raise
    os.close(fd)
    return aside


def _last_line_start(fh: Any, size: int) -> int:
    """The offset at which the last line of the open file ``fh`` (``size`` bytes) starts."""
    pos, chunk = size, 1 << 16
    while pos > 0:
        lo = max(0, pos - chunk)
        fh.seek(lo)
        i = fh.read(pos - lo).rfind(b"\n")
        if i >= 0:
            return lo + i + 1
        pos = lo
    return 0


def _what_tail_is(tail: bytes, model: type[BaseModel] | None) -> str:
    """``record`` (a complete record of the file), ``foreign`` (complete JSON, not one) or ``torn`` (not JSON)."""
    try:
        obj = json.loads(tail)
    except ValueError:
        return "torn"
    try:
        if model is None:
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        else:
            model.model_validate_json(tail)
    except ValueError:
        return "foreign"
    return "record"


def repair_torn_tail(path: str | Path, model: type[BaseModel] | None = Verdict) -> str | None:
    """Make ``path`` end with a complete line; return a message if something was repaired.

    A last line without its newline that is a complete record (a ``model``; ``None`` accepts any
    JSON object) is kept, and its newline added. Any other unterminated last line, torn by a crash
    mid-write (not JSON: ``torn``) or not a record of this file (``foreign``), is moved to a new file
    beside it, ``NAME.torn-N`` or ``NAME.foreign-N``, byte for byte: copied there and fsynced first,
    then cut off, so a crash in between leaves the bytes in both files, never in neither. The
    message names that file. Every complete line before it is kept.
    """
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return None
    with open(path, "rb+") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return None
        start = _last_line_start(fh, size)
        fh.seek(start)
        tail = fh.read()
        kind = _what_tail_is(tail, model)
        if kind == "record":
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            return f"{path}: the last line lacked its newline; added it"
        aside = _set_aside(path, tail, kind)
        fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
    fsync_dir(path.parent)
    what = (
        "a torn last line (not JSON: a crash mid-write)"
        if kind == "torn"
        else f"a last line that is not {'a JSON object' if model is None else 'a ' + model.__name__}"
    )
    return (
        f"{path}: moved {what}, {len(tail)} bytes without a newline, to {aside}; every complete line before it is kept"
    )


def keys_on_disk(path: str | Path) -> set[tuple[str, str]]:
    """The ``(trajectory_id, judge_id)`` keys already in a verdict file (empty if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return set()
    return {(v.trajectory_id, v.judge_id) for v in parse_jsonl(path, Verdict)}


class VerdictWriter:
    """Append-only verdict file: every line goes to the operating system whole as it is written, then is fsynced.

    ``write`` hands each complete line to the kernel at once (a crash of this process loses
    nothing written); a line that cannot be written whole (a full disk) is cut back off and the
    error raised. The fsync that makes it durable against a machine crash is issued by a
    background thread right after every write, so a slow disk (about 4 ms per fsync here) does
    not slow the loop; one fsync covers every line written before it, and :meth:`close` waits for
    the last one. With ``background_sync=False`` each ``write`` fsyncs before returning. Either
    way, a verdict lost to a machine crash is simply not on disk, and a rerun judges it again.
    """

    def __init__(self, path: str | Path, *, background_sync: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = self._open()
        self._lock = threading.Lock()
        self._background = background_sync
        self._dirty = threading.Event()
        self._closing = False
        self._sync_error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if background_sync:
            self._thread = threading.Thread(target=self._syncer, name="verdict-fsync", daemon=True)
            self._thread.start()

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)

    def _syncer(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._closing:
                return
            try:
                with self._lock:
                    if self._fd is not None:
                        os.fsync(self._fd)
            except OSError as exc:  # pragma: no cover - disk failure
                self._sync_error = exc
                return

    def write(self, verdict: Verdict) -> None:
        """Append one verdict: written whole now (or not at all), fsynced now or by the background syncer."""
        self.write_line(dumps(verdict))

    def write_line(self, line: str) -> None:
        """Append one JSON line (without its newline) as :meth:`write` appends a verdict."""
        if self._sync_error is not None:  # pragma: no cover
            raise OSError(f"{self.path}: fsync failed: {self._sync_error}")
        self._reopen_if_replaced()
        assert self._fd is not None, "write after close"
        append_line(self._fd, (line + "\n").encode("utf-8"))
        if self._background:
            self._dirty.set()
        else:
            os.fsync(self._fd)

    def _reopen_if_replaced(self) -> None:
        # another process may have replaced the file (an atomic rewrite): keep appending to the
        # file at the path, not to the orphaned one, and say so
        assert self._fd is not None, "write after close"
        try:
            replaced = os.stat(self.path).st_ino != os.fstat(self._fd).st_ino
        except FileNotFoundError:
            replaced = True
        if replaced:
            print(
                f"trajectory-judge: warning: {self.path} was replaced or removed by another process "
                "while this run appended to it; reopening it (check that no verdicts were lost)",
                file=sys.stderr,
            )
            with self._lock:
                old, self._fd = self._fd, self._open()
                os.fsync(old)
                os.close(old)

    def close(self) -> None:
        """Wait for the syncer, fsync once more, close."""
        if self._fd is None:
            return
        if self._thread is not None:
            self._closing = True
            self._dirty.set()
            self._thread.join()
        fd, self._fd = self._fd, None
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def __enter__(self) -> VerdictWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append_run_record(data_dir: str | Path, record: dict[str, Any]) -> None:
    """Append one metadata line to ``DATA_DIR/runs.jsonl`` (whole or not at all, fsynced).

    A torn last line left by an earlier crash is repaired first, like a torn verdict line.
    """
    path = Path(data_dir) / RUNS
    msg = repair_torn_tail(path, None)
    if msg:
        print(f"trajectory-judge: {msg}", file=sys.stderr)
    append_durably(path, (json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))


def append_run_record_or_warn(data_dir: Path, record: dict[str, Any]) -> None:
    """:func:`append_run_record`, with a warning on stderr when the disk refuses it: what was written matters
    more than the record of writing it."""
    try:
        append_run_record(data_dir, record)
    except OSError as exc:
        print(f"trajectory-judge: warning: could not append to {data_dir / RUNS}: {exc}", file=sys.stderr)


RETRIED = "retried.jsonl"
"""Verdicts set aside by ``run --retry-unparseable`` (kept, never deleted), beside the verdicts."""


def set_aside_unparseable(
    path: str | Path,
    mpath: str | Path,
    judge_ids: Sequence[str],
    ensembles: Mapping[str, Sequence[str]],
    trajectory_ids: Sequence[str],
) -> int:
    """Move the unparseable verdicts of ``judge_ids`` on ``trajectory_ids`` out of the verdict files;
    return the (trajectory, judge) pairs moved.

    A plain judge's verdict is moved when its response did not parse; an ensemble's verdict is
    moved with all its members when any member's did (or its own error says so). The lines moved
    are appended to ``retried.jsonl`` (fsynced) before each file is rewritten without them
    (atomically), so a crash between the two leaves a verdict in both files, never in neither.
    """
    path, mpath = Path(path), Path(mpath)
    if not path.exists():
        return 0
    wanted, scope = set(judge_ids), set(trajectory_ids)
    owner = {m: e for e, ms in ensembles.items() for m in ms}
    verdicts = parse_jsonl(path, Verdict)
    members = parse_jsonl(mpath, Verdict) if ensembles and mpath.exists() else []
    retry = {
        (v.trajectory_id, v.judge_id)
        for v in verdicts
        if v.judge_id in wanted and v.trajectory_id in scope and v.unparseable
    }
    retry |= {
        (m.trajectory_id, owner[m.judge_id])
        for m in members
        if m.judge_id in owner and m.trajectory_id in scope and m.unparseable
    }
    if not retry:
        return 0
    keep_v = [v for v in verdicts if (v.trajectory_id, v.judge_id) not in retry]
    keep_m = [m for m in members if (m.trajectory_id, owner.get(m.judge_id)) not in retry]
    moved = [v for v in verdicts if (v.trajectory_id, v.judge_id) in retry]
    moved += [m for m in members if (m.trajectory_id, owner.get(m.judge_id)) in retry]
    append_durably(path.with_name(RETRIED), "".join(dumps(v) + "\n" for v in moved).encode("utf-8"))
    if len(keep_m) != len(members):
        atomic_write_text(mpath, "".join(dumps(m) + "\n" for m in keep_m))
    atomic_write_text(path, "".join(dumps(v) + "\n" for v in keep_v))
    return len(retry)
