"""Baselines: judges that ignore their input, the floor any detection score is read against.

"Flag everything" says *faulty* for every trajectory, "flag nothing" for none. They are computed
from the labels of the design, never stored as verdicts. On a design with more faults than clean
runs, flagging everything earns recall 1 and an F1 of ``2F / (2F + C)`` (F faults, C clean runs)
while detecting nothing; a judge's F1 is evidence of detection only above it. They name no step or
type and state no confidence, so they have detection metrics only. Their values are fixed by the
design: under the design-conditioned bootstrap they have no sampling variance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trajectory_judge.analysis import metrics as M
from trajectory_judge.models import Trajectory, Verdict

if TYPE_CHECKING:
    import pandas as pd

BASELINE_METRICS: tuple[str, ...] = ("precision", "recall", "f1", "silent_recall", "loud_recall", "false_alarm_rate")
"""The metrics a baseline has (detection only)."""

BASELINES: dict[str, bool] = {"flag everything": True, "flag nothing": False}
"""Baseline name -> the verdict it gives every trajectory (faulty or not)."""


@dataclass(frozen=True)
class Baseline:
    """One input-blind judge scored on a set of labelled trajectories."""

    name: str
    """``flag everything`` or ``flag nothing``."""
    flags: bool
    """The verdict it gives every trajectory."""
    n: int
    """Trajectories scored."""
    faults: int
    """Faulty trajectories among them."""
    metrics: dict[str, float | None]
    """The :data:`BASELINE_METRICS` (None where undefined: precision when nothing is flagged)."""


def baseline(trajectories: Sequence[Trajectory], name: str) -> Baseline:
    """Score the baseline ``name`` (a key of :data:`BASELINES`) with the report's own metric definitions."""
    flags = BASELINES[name]
    pairs = [
        (
            t.label,
            Verdict(
                trajectory_id=t.trajectory_id,
                judge_id=f"baseline:{name}",
                faulty=flags,
                confidence=1.0,
                latency_s=0.0,
                prompt_tokens=0,
                completion_tokens=0,
            ),
        )
        for t in trajectories
        if t.label is not None
    ]
    det = M.detection(pairs)
    return Baseline(name, flags, len(pairs), sum(lab.faulty for lab, _ in pairs), {m: det[m] for m in BASELINE_METRICS})


def baselines(trajectories: Sequence[Trajectory]) -> tuple[Baseline, ...]:
    """Every baseline of :data:`BASELINES` on ``trajectories``."""
    return tuple(baseline(trajectories, name) for name in BASELINES)


def baselines_frame(rows: Sequence[Baseline]) -> pd.DataFrame:
    """One row per baseline: n and the :data:`BASELINE_METRICS`."""
    import pandas as pd

    data = {b.name: {"n": b.n, **b.metrics} for b in rows}
    return pd.DataFrame.from_dict(data, orient="index", columns=["n", *BASELINE_METRICS]).rename_axis("baseline")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def baseline_sentence(
    rows: Sequence[Baseline], f1: Mapping[str, float | None], *, name: Callable[[str], str] = str, digits: int = 3
) -> str:
    """What the baselines mean for the F1 and recall of the judges in ``f1`` (judge id -> F1), in words."""
    every = next(b for b in rows if b.flags)
    nothing = next(b for b in rows if not b.flags)
    clean = every.n - every.faults
    floor = every.metrics["f1"] or 0.0

    def num(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.{digits}f}"

    text = (
        f"On this design ({_count(every.faults, 'fault')}, {_count(clean, 'clean run')}) a judge that flags every "
        f"trajectory has recall {num(every.metrics['recall'])} and F1 {num(every.metrics['f1'])} without detecting "
        f"anything, at a false-alarm rate of {num(every.metrics['false_alarm_rate'])}; one that flags nothing "
        f"has recall and F1 {num(nothing.metrics['f1'])}"
    )
    scored = {j: v for j, v in f1.items() if v is not None}
    above = [j for j, v in scored.items() if round(v, digits) > round(floor, digits)]
    if not scored:
        return text + "."
    if not above:
        whom = (
            "the one judge"
            if len(scored) == 1
            else ("both judges" if len(scored) == 2 else f"all {len(scored)} judges")
        )
        return text + f". The F1 of {whom} here is at or below that of flagging everything."
    names = ", ".join(name(j) for j in above)
    if len(above) == len(scored):
        whom = (
            "the one judge"
            if len(scored) == 1
            else ("both judges" if len(scored) == 2 else f"all {len(scored)} judges")
        )
        return text + f". The F1 of {whom} here is above it ({names})."
    return (
        text
        + f". Of the {len(scored)} judges here, only {names} {'has' if len(above) == 1 else 'have'} an F1 above it."
    )
