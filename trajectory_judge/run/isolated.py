"""A Python judge in a process of its own, handed only its view.

The runner already hands every judge a label-free copy of the trajectory under an opaque id
(:mod:`~trajectory_judge.judges.blind`). In the runner's process, though, a judge can still reach what
the runner holds: walking the caller's frames, or the garbage collector's objects, finds the labelled
trajectories. :class:`Isolated` closes that door. It starts a fresh interpreter (not a fork, which would
copy the runner's memory), sends it the pickled judge once, then each view as JSON, and reads back each
verdict as JSON. Nothing else crosses: the child never sees a label, a real id or the folder's path.

The judge is pickled, so its class must be importable by name in the child: defined in a module (a
file on ``sys.path``), not in a script's ``__main__`` or a notebook cell. Such a judge is refused
before anything starts, in one line that says so. The child's CPU time is counted as the runner's own
once the child has ended (``RUSAGE_CHILDREN``), which is why :func:`run_judges` closes its isolated
judges before it writes the run record.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from typing import IO, Any

from trajectory_judge.backends.errors import JudgeClientError
from trajectory_judge.models import Trajectory, Verdict

_HEADER = struct.Struct(">Q")


def _send(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes | None:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    body = stream.read(size)
    return body if len(body) == size else None


class IsolationError(JudgeClientError):
    """A judge that cannot be isolated, or whose process ended: the run stops, as on a failed client."""


class JudgeRaised(RuntimeError):
    """The isolated judge raised: the message is the exception's line, a note holds the child's traceback."""


def check_isolatable(judge: Any) -> bytes:
    """``judge`` pickled for the child, or :class:`IsolationError` saying why it cannot be."""
    cls = type(judge)
    if cls.__module__ in ("__main__", "__mp_main__", "builtins"):
        raise IsolationError(
            f"{cls.__name__} is defined in __main__ (a script or a notebook), so a process of its own cannot "
            f"import it: define it in a module of its own, or pass isolate=False"
        )
    try:
        return pickle.dumps(judge, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # pickling runs arbitrary code of the judge's
        raise IsolationError(
            f"{cls.__name__} cannot be sent to a process of its own ({type(exc).__name__}: {exc}); "
            f"pass isolate=False to judge in this process"
        ) from exc


class Isolated:
    """``judge`` run in a fresh interpreter that is handed only the judge's view (see the module's text).

    Calls from several threads are answered one at a time. Use as a context manager, or :meth:`close`.
    """

    def __init__(self, judge: Any, payload: bytes | None = None) -> None:
        """``payload``: the judge as :func:`check_isolatable` pickled it, if the caller already did."""
        payload = check_isolatable(judge) if payload is None else payload
        self.judge_id: str = judge.judge_id
        self.name = type(judge).__name__
        self._lock = threading.Lock()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TJ_")}  # the child needs no folder of ours
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the judge's module, wherever it was found
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "trajectory_judge.run.isolated"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in, self._out = self._proc.stdin, self._proc.stdout
        try:
            _send(self._in, payload)
            self._answer()  # the child says it has the judge (or why not)
        except BaseException:
            self.close()
            raise

    def _answer(self) -> bytes:
        body = _receive(self._out)
        if body is None:
            code = self._proc.wait()
            raise IsolationError(f"the process judging with {self.name} ended (exit code {code})")
        kind, text = body[:1], body[1:]
        if kind == b"E":
            child = text.decode("utf-8", "replace").rstrip()
            exc = JudgeRaised(child.rsplit("\n", 1)[-1])  # the exception's own line, as the child printed it
            exc.add_note(f"in the process judging with {self.name}:\n{child}")
            raise exc
        return text

    def judge(self, traj: Trajectory) -> Verdict:
        """The child's verdict on ``traj`` (the view the runner hands every judge)."""
        with self._lock:
            if self._proc.poll() is not None:
                raise IsolationError(f"the process judging with {self.name} has ended")
            _send(self._in, traj.model_dump_json().encode("utf-8"))
            return Verdict.model_validate_json(self._answer())

    def close(self) -> None:
        """End the child and wait for it (its CPU time then counts as this process's children's)."""
        with self._lock:
            if self._proc.poll() is None:
                with contextlib.suppress(OSError):  # a child that ended has closed its end
                    self._in.close()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._out.close()

    def __enter__(self) -> Isolated:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """The child: unpickle the judge, then answer each view with a verdict until stdin closes."""
    payload = _receive(stdin)
    if payload is None:
        return 0
    try:
        judge = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - unpickling runs the judge's own code; the parent reports it
        _send(stdout, b"E" + traceback.format_exc().encode("utf-8"))
        return 1
    _send(stdout, b"O")
    while (body := _receive(stdin)) is not None:
        try:
            view = Trajectory.model_validate_json(body)
            verdict = judge.judge(view)
            if not isinstance(verdict, Verdict):
                raise TypeError(f"judge() returned {type(verdict).__name__}, not a Verdict")
            _send(stdout, b"O" + verdict.model_dump_json().encode("utf-8"))
        except Exception:  # noqa: BLE001 - whatever the judge raises costs its trajectory, in the parent
            _send(stdout, b"E" + traceback.format_exc().encode("utf-8"))
    return 0


if __name__ == "__main__":
    # the protocol owns stdout; what a judge prints goes to stderr, where the user sees it
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.exit(_serve(sys.stdin.buffer, out))
