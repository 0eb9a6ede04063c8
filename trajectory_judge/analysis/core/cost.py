"""Compute spent on an edition: wall and CPU time per kind of run, from ``runs.jsonl``.

Per-verdict cost (seconds and tokens) lives in the verdicts and in :mod:`trajectory_judge.analysis.core.metrics`;
this module sums what whole runs cost. Wall time is what every run record has (``wall_s``). CPU
time is measured, not estimated: a run started against a local server whose launch record names
its PID reads that process's user+system CPU seconds from ``/proc`` before and after, and its own
from ``getrusage`` (:class:`CpuMeter`); a run of Python judges has no server, and its own CPU time
is all it spent. Records written before this existed carry no CPU time; the
summary says how many runs it could count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from trajectory_judge.models import DataError, JudgeSpec, read_text
from trajectory_judge.provenance.manifest import verify_manifest

if TYPE_CHECKING:
    import pandas as pd

    from trajectory_judge.analysis.core.report import Report

RUNS = "runs.jsonl"


def _lines(path: Path) -> tuple[list[str], bool]:
    """The lines of ``path`` and whether its last one is cut short (no newline and not valid JSON)."""
    text = read_text(path)
    lines = text.split("\n")
    torn = False
    if not text.endswith("\n") and lines[-1].strip():
        try:
            json.loads(lines[-1])
        except json.JSONDecodeError:
            torn = True
    return (lines[:-1] if torn else lines), torn


class RunRecords(NamedTuple):
    """The run records of a folder, read once."""

    records: list[dict[str, Any]]
    """The records of ``runs.jsonl``, in order ([] when absent)."""
    torn: int | None
    """Line number of a last line torn by a crash mid-append (left out of :attr:`records`), else None."""


def read_run_records(data_dir: str | Path) -> list[dict[str, Any]]:
    """The records of ``DIR/runs.jsonl`` ([] when absent): :func:`run_records`' records."""
    return run_records(data_dir).records


def run_records(data_dir: str | Path) -> RunRecords:
    """The records of ``DIR/runs.jsonl`` and its torn last line, if any, from one reading of the file.

    The file is checksum-verified when the folder's manifest pins it. A last line cut short by a
    crash (no newline, not valid JSON) is left out; any other bad
    line, or a field of the wrong shape (:func:`check_run_record`), raises :class:`DataError`
    naming file and line.
    """
    path = Path(data_dir) / RUNS
    if not path.exists():
        return RunRecords([], None)
    verify_manifest(data_dir, (RUNS,))
    out = []
    lines, torn = _lines(path)
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
        try:
            check_run_record(rec)
        except ValueError as exc:
            raise DataError(f"{path}:{lineno}: invalid run record: {exc}") from None
        out.append(rec)
    return RunRecords(out, len(lines) + 1 if torn else None)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _expect(ok: bool, field: str, what: str, value: Any) -> None:
    if not ok:
        raise ValueError(f"field {field!r}: expected {what}, got {json.dumps(value)[:60]}")


def check_run_record(rec: dict[str, Any]) -> None:
    """Raise ValueError naming the field when a field the analysis reads has the wrong shape.

    Every field is optional and may be null; fields the analysis does not read are not checked.
    """
    for key in ("kind", "model", "agent_model", "judge_model_name"):
        _expect(rec.get(key) is None or isinstance(rec[key], str), key, "text", rec.get(key))
    for key in ("wall_s", "written"):
        _expect(rec.get(key) is None or _is_num(rec[key]), key, "a number", rec.get(key))
    judges = rec.get("judges")
    _expect(
        judges is None or (isinstance(judges, list) and all(isinstance(j, str) for j in judges)),
        "judges",
        "a list of judge ids",
        judges,
    )
    for j in judges or []:
        try:
            JudgeSpec.parse(j)
        except ValueError as exc:
            raise ValueError(f"field 'judges': {exc}") from None
    for key, inner in (("per_judge", ("verdicts",)), ("rechecked", ("same", "different"))):
        val = rec.get(key)
        _expect(val is None or isinstance(val, dict), key, "an object keyed by judge id", val)
        for judge, tally in (val or {}).items():
            _expect(
                isinstance(tally, dict) and all(tally.get(k) is None or _is_num(tally[k]) for k in inner),
                f"{key}.{judge}",
                f"an object with numbers as {' and '.join(inner)}",
                tally,
            )
    cpu = rec.get("cpu_s")
    _expect(cpu is None or isinstance(cpu, dict), "cpu_s", "an object (server, client)", cpu)
    for key in ("server", "client"):
        val = (cpu or {}).get(key)
        _expect(val is None or _is_num(val), f"cpu_s.{key}", "a number of seconds", val)


def run_task(rec: dict[str, Any]) -> str:
    """What a run did, as a label: ``outcome+step+reply · MODEL``, ``organic agent · MODEL``; the heads are
    joined by ``, `` instead when one holds a ``+`` of its own (``step, selfcons3+rubric, step+rubric · MODEL``)."""
    if rec.get("kind") in ("organic", "agent") or "agent_model" in rec:
        return f"organic agent · {rec.get('agent_model') or rec.get('model')}"
    heads = [JudgeSpec.parse(j).head for j in rec.get("judges") or []]
    model = (
        rec.get("judge_model_name") or rec.get("model") or ("Python judge" if rec.get("backend") == "python" else None)
    )
    sep = ", " if any("+" in h for h in heads) else "+"
    return f"{sep.join(heads) or '?'} · {model}"


def _written(rec: dict[str, Any]) -> int:
    per = rec.get("per_judge") or {}
    return int(sum(p.get("verdicts", 0) for p in per.values())) if per else int(rec.get("written") or 0)


@dataclass(frozen=True)
class ComputeRow:
    """The runs of one kind: how many, what they wrote, their wall time and measured CPU time."""

    task: str
    runs: int
    written: int
    """Verdicts (judge runs; one per judge and trajectory) or episodes (agent runs)."""
    wall_h: float
    cpu_h: float | None
    """CPU hours (:func:`cpu_seconds`), summed over the runs that measured them; None when none did."""
    cpu_runs: int
    """Runs whose record measured all the CPU time they spent (:func:`cpu_seconds`)."""


@dataclass(frozen=True)
class ComputeSpent:
    """Wall and CPU time of every run of a data directory, per kind of run."""

    rows: tuple[ComputeRow, ...]

    @property
    def runs(self) -> int:
        return sum(r.runs for r in self.rows)

    @property
    def wall_h(self) -> float:
        return sum(r.wall_h for r in self.rows)

    @property
    def cpu_h(self) -> float | None:
        measured = [r.cpu_h for r in self.rows if r.cpu_h is not None]
        return sum(measured) if measured else None

    @property
    def cpu_runs(self) -> int:
        return sum(r.cpu_runs for r in self.rows)

    def to_frame(self) -> pd.DataFrame:
        """One row per kind of run and a ``total`` row; hours rounded to 0.01, NaN CPU hours where unmeasured."""
        import pandas as pd

        cols = ["task", "runs", "written", "wall_h", "cpu_h", "cpu_runs"]
        rows = [[r.task, r.runs, r.written, r.wall_h, r.cpu_h, r.cpu_runs] for r in self.rows]
        if rows:
            rows.append(["total", self.runs, sum(r.written for r in self.rows), self.wall_h, self.cpu_h, self.cpu_runs])
        df = pd.DataFrame(rows, columns=cols).astype({"wall_h": float, "cpu_h": float})
        return df.round({"wall_h": 2, "cpu_h": 2}).set_index("task")

    def sentence(self) -> str:
        """The totals in words, saying how much of the wall time has a CPU measurement."""
        if not self.rows:
            return "There are no run records, so the compute spent is not known"
        text = f"The {_runs(self.runs)} took {self.wall_h:.2f} h of wall time"
        if not self.cpu_runs:
            return text + "; none of their records measured CPU time"
        cpu = self.cpu_h or 0.0
        used = f"{cpu:.2f} CPU hours" if cpu >= 0.01 else f"{cpu * 3600:.1f} CPU seconds"
        text += f"; the {_runs(self.cpu_runs)} that measured it used {used} (server and client)"
        rest = self.runs - self.cpu_runs
        return text + (f", and the other {_runs(rest)} did not measure it" if rest else "")


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def cpu_seconds(rec: dict[str, Any]) -> float | None:
    """The CPU seconds a run spent, when its record measured all of them, else None.

    A run against a local server whose CPU was read counts the server's and its own; a run of
    judges in Python (``backend: python``) has no server, so its own CPU time is all of it; a run
    against a server it could not measure (a hosted API, a server it did not launch) counts none.
    """
    cpu = rec.get("cpu_s") or {}
    if cpu.get("server") is not None:
        return float(cpu["server"]) + float(cpu.get("client") or 0.0)
    if rec.get("backend") == "python" and cpu.get("client") is not None:
        return float(cpu["client"])
    return None


def compute_spent(data_dir: str | Path, records: Sequence[dict[str, Any]] | None = None) -> ComputeSpent:
    """Sum the run records of ``data_dir`` (``records`` when the caller has read them) per :func:`run_task`, in
    order of first appearance."""
    acc: dict[str, list[float]] = {}
    for rec in read_run_records(data_dir) if records is None else records:
        a = acc.setdefault(run_task(rec), [0, 0, 0.0, 0.0, 0])
        cpu = cpu_seconds(rec)
        a[0] += 1
        a[1] += _written(rec)
        a[2] += float(rec.get("wall_s") or 0.0) / 3600
        if cpu is not None:
            a[3] += cpu / 3600
            a[4] += 1
    return ComputeSpent(
        tuple(ComputeRow(t, int(a[0]), int(a[1]), a[2], a[3] if a[4] else None, int(a[4])) for t, a in acc.items())
    )


def total_hours(rep: Report) -> float:
    """Judge time over every verdict of a report, in hours."""
    seconds: float = 0
    for j, jr in rep.judges.items():
        per_traj = jr.metrics["s_per_traj"]
        if per_traj is None:
            raise ValueError(f"judge {j!r} has no seconds per trajectory")
        seconds += per_traj * jr.n
    return float(seconds / 3600)
