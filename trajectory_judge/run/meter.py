"""Measuring a run's CPU time: the local server's (through ``/proc``) and the runner's own.

A run started against a server whose launch record names its PID reads that process's user+system
CPU seconds before and after (:class:`CpuMeter`); a PID that vanished or now runs another binary
gives ``None``, never a wrong number. The sums per kind of run are in :mod:`trajectory_judge.analysis.core.cost`.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import Any


def process_cpu_seconds(pid: int, binary: str | None = None) -> float | None:
    """User+system CPU seconds used so far by process ``pid`` (Linux ``/proc``).

    None when the process is gone, unreadable, or (with ``binary``) runs another executable,
    so a recycled PID is never counted.
    """
    try:
        if binary is not None and os.path.realpath(f"/proc/{pid}/exe") != os.path.realpath(binary):
            return None
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state is field 3 of proc(5)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15


def _own_cpu_seconds() -> float:
    """This process's CPU seconds and its ended children's (an isolated Python judge's process)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CpuMeter:
    """CPU seconds used by this process and by the local server between creation and :meth:`read`.

    ``launch`` is the server's launch record (written by ``python tools/serve.py start``, read by
    :func:`trajectory_judge.run.llm_paths.read_launch_info`); without a PID in it, or when that
    process has gone away or been replaced, the server's share is None.
    """

    def __init__(self, launch: dict[str, Any] | None) -> None:
        launch = launch or {}
        self.pid: int | None = launch.get("pid")
        self.binary: str | None = launch.get("binary")
        self._server0 = process_cpu_seconds(self.pid, self.binary) if self.pid else None
        self._client0 = _own_cpu_seconds()

    def read(self) -> dict[str, Any]:
        """``{"client": s, "server": s or None, "server_pid": pid or None}`` since creation."""
        server1 = process_cpu_seconds(self.pid, self.binary) if self.pid else None
        server = None if self._server0 is None or server1 is None else round(server1 - self._server0, 3)
        return {"client": round(_own_cpu_seconds() - self._client0, 3), "server": server, "server_pid": self.pid}
