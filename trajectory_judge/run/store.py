"""A data directory's append-only files: verdicts (and ensemble members) and run records.

- Verdicts are appended one JSON line at a time, each flushed and fsynced, keyed by
  ``(trajectory_id, judge_id)``; :func:`keys_on_disk` tells a rerun what to skip.
- A crash mid-write can leave a torn last line; :func:`repair_torn_tail` truncates it away
  and keeps every complete line before it.
- Every invocation of ``run`` or ``agent`` appends one metadata record to ``runs.jsonl``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trajectory_judge.models import Verdict, dumps, parse_jsonl

TRAJECTORIES = "trajectories.jsonl"


VERDICTS = "verdicts.jsonl"


MEMBERS = "members.jsonl"
"""The member verdicts of ensemble judges (self-consistency), one line per (trajectory, member id)."""


RUNS = "runs.jsonl"


# --- the verdict file ------------------------------------------------------------------
def repair_torn_tail(path: str | Path, model: type[BaseModel] = Verdict) -> str | None:
    """Make ``path`` end with a complete line; return a message if something was repaired.

    A last line without a newline is either a complete record (a newline is added) or torn
    by a crash mid-write (it is truncated away).
    """
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return None
    with open(path, "rb+") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return None
        # find the start of the last line
        pos, chunk = size, 1 << 16
        start = 0
        while pos > 0:
            lo = max(0, pos - chunk)
            fh.seek(lo)
            buf = fh.read(pos - lo)
            i = buf.rfind(b"\n")
            if i >= 0:
                start = lo + i + 1
                break
            pos = lo
        fh.seek(start)
        tail = fh.read()
        try:
            model.model_validate_json(tail)
        except ValueError:
            fh.truncate(start)
            fh.flush()
            os.fsync(fh.fileno())
            return f"{path}: repaired a torn last line ({len(tail)} bytes, a crash mid-write) by truncating it"
        fh.write(b"\n")
        fh.flush()
        os.fsync(fh.fileno())
        return f"{path}: the last line lacked its newline; added it"


def keys_on_disk(path: str | Path) -> set[tuple[str, str]]:
    """The ``(trajectory_id, judge_id)`` keys already in a verdict file (empty if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return set()
    return {(v.trajectory_id, v.judge_id) for v in parse_jsonl(path, Verdict)}


class VerdictWriter:
    """Append-only verdict file: every line is flushed as it is written and then fsynced.

    ``write`` hands each complete line to the operating system at once (a crash of this process
    loses nothing written). The fsync that makes it durable against a machine crash is issued by
    a background thread right after every write, so a slow disk (about 4 ms per fsync here) does
    not slow the loop; one fsync covers every line written before it, and :meth:`close` waits for
    the last one. With ``background_sync=False`` each ``write`` fsyncs before returning. Either
    way, a verdict lost to a machine crash is simply not on disk, and a rerun judges it again.
    """

    def __init__(self, path: str | Path, *, background_sync: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8", newline="\n")
        self._background = background_sync
        self._dirty = threading.Event()
        self._closing = False
        self._sync_error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if background_sync:
            self._thread = threading.Thread(target=self._syncer, name="verdict-fsync", daemon=True)
            self._thread.start()

    def _syncer(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._closing:
                return
            try:
                os.fsync(self._fh.fileno())
            except ValueError:  # pragma: no cover - the file was just swapped by _reopen_if_replaced
                continue
            except OSError as exc:  # pragma: no cover - disk failure
                self._sync_error = exc
                return

    def write(self, verdict: Verdict) -> None:
        """Append one verdict: written and flushed now, fsynced now or by the background syncer."""
        if self._sync_error is not None:  # pragma: no cover
            raise OSError(f"{self.path}: fsync failed: {self._sync_error}")
        self._reopen_if_replaced()
        self._fh.write(dumps(verdict) + "\n")
        self._fh.flush()
        if self._background:
            self._dirty.set()
        else:
            os.fsync(self._fh.fileno())

    def _reopen_if_replaced(self) -> None:
        # another process may have replaced the file (an atomic rewrite): keep appending to the
        # file at the path, not to the orphaned one, and say so
        try:
            replaced = os.stat(self.path).st_ino != os.fstat(self._fh.fileno()).st_ino
        except FileNotFoundError:
            replaced = True
        if replaced:
            print(f"trajectory-judge: warning: {self.path} was replaced or removed by another process "
                  "while this run appended to it; reopening it (check that no verdicts were lost)",
                  file=sys.stderr)
            old = self._fh
            self._fh = open(self.path, "a", encoding="utf-8", newline="\n")
            old.flush()
            os.fsync(old.fileno())
            old.close()

    def close(self) -> None:
        """Wait for the syncer, fsync once more, close."""
        if self._fh.closed:
            return
        if self._thread is not None:
            self._closing = True
            self._dirty.set()
            self._thread.join()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()

    def __enter__(self) -> "VerdictWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append_run_record(data_dir: str | Path, record: dict[str, Any]) -> None:
    """Append one metadata line to ``DATA_DIR/runs.jsonl`` (flushed and fsynced)."""
    path = Path(data_dir) / RUNS
    repair_runs = path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n")
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        if repair_runs:
            fh.write("\n")
        fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
