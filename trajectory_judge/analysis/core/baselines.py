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

from trajectory_judge.analysis.core import metrics as M
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
    labels = [t.label for t in trajectories if t.label is not None]
    # the same verdict on every trajectory; detection reads its flag only. Its fields are constants of
    # this function, so it is built without validation (which would build the model's validator first)
    verdict = Verdict.model_construct(
        trajectory_id=next((t.trajectory_id for t in trajectories if t.label is not None), "none"),
        judge_id=f"baseline:{name}",
        faulty=flags,
        confidence=1.0,
        latency_s=0.0,
        prompt_tokens=0,
        completion_tokens=0,
    )
    pairs = [(lab, verdict) for lab in labels]
    det = M.detection(pairs)
    return Baseline(name, flags, len(pairs), sum(lab.faulty for lab, _ in pairs), {m: det[m] for m in BASELINE_METRICS})


def baselines(trajectories: Sequence[Trajectory]) -> tuple[Baseline, ...]:
    """Every baseline of :data:`BASELINES` on ``trajectories``."""
    return tuple(baseline(trajectories, name) for name in BASELINES)


def flag_everything(rows: Sequence[Baseline]) -> Baseline:
    """The flag-everything baseline among ``rows``."""
    return next(b for b in rows if b.flags)


@dataclass(frozen=True)
class AnchorReading:
    """Each judge's F1 read against flagging everything on the trajectories that judge judged.

    A judge that judged only part of the design has its own anchor: on 30 faults and 2 clean runs,
    flagging everything scores F1 0.968, far above its value on the whole design."""

    f1: dict[str, float]
    """Judge -> F1 (judges without an F1 left out)."""
    anchor: dict[str, float]
    """Judge -> F1 of flagging everything on that judge's trajectories."""
    own: dict[str, Baseline]
    """Judge -> its flag-everything baseline, for the judges whose trajectories differ from the design's."""
    digits: int = 3
    """Precision at which a judge counts as above its anchor."""

    @property
    def above(self) -> list[str]:
        """Judges whose F1 exceeds their own anchor at :attr:`digits`."""
        return [j for j, v in self.f1.items() if round(v, self.digits) > round(self.anchor[j], self.digits)]


def read_against_anchors(
    design: Sequence[Baseline],
    judges: Mapping[str, tuple[float | None, Sequence[Baseline]]],
    *,
    digits: int = 3,
) -> AnchorReading:
    """Read every judge (id -> (F1, its own baselines)) against flagging everything on what it judged;
    judges whose own baselines are empty are read against ``design``'s."""
    every = flag_everything(design)
    f1: dict[str, float] = {}
    anchor: dict[str, float] = {}
    own: dict[str, Baseline] = {}
    for j, (value, rows) in judges.items():
        if value is None:
            continue
        mine = flag_everything(rows) if rows else every
        f1[j], anchor[j] = float(value), mine.metrics["f1"] or 0.0
        if (mine.n, mine.faults) != (every.n, every.faults):
            own[j] = mine
    return AnchorReading(f1, anchor, own, digits)


def baselines_frame(rows: Sequence[Baseline]) -> pd.DataFrame:
    """One row per baseline: n and the :data:`BASELINE_METRICS`."""
    import pandas as pd

    data = {b.name: {"n": b.n, **b.metrics} for b in rows}
    return pd.DataFrame.from_dict(data, orient="index", columns=["n", *BASELINE_METRICS]).rename_axis("baseline")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _whom(n: int) -> str:
    return "the one judge" if n == 1 else ("both judges" if n == 2 else f"all {n} judges")


def own_anchor_clause(
    reading: AnchorReading, *, name: Callable[[str], str] = str, number: Callable[[float | None], str] | None = None
) -> str:
    """The judges that judged only part of the design, each with its own anchor, as one clause
    ("" when every judge judged the whole design)."""
    if not reading.own:
        return ""
    num = number or (lambda v: "n/a" if v is None else f"{v:.{reading.digits}f}")
    parts = [
        f"{name(j)} judged {_count(b.faults, 'fault')} and {_count(b.n - b.faults, 'clean run')}, where flagging "
        f"everything has F1 {num(b.metrics['f1'])}"
        for j, b in reading.own.items()
    ]
    return "; ".join(parts)


def baseline_sentence(
    rows: Sequence[Baseline],
    f1: Mapping[str, float | None],
    *,
    own: Mapping[str, Sequence[Baseline]] | None = None,
    name: Callable[[str], str] = str,
    digits: int = 3,
) -> str:
    """What the baselines mean for the F1 and recall of the judges in ``f1`` (judge id -> F1), in words.
    ``own`` gives each judge's baselines on the trajectories it judged: each judge is compared with
    flagging everything on those."""
    every = flag_everything(rows)
    nothing = next(b for b in rows if not b.flags)
    clean = every.n - every.faults

    def num(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.{digits}f}"

    text = (
        f"On this design ({_count(every.faults, 'fault')}, {_count(clean, 'clean run')}) a judge that flags every "
        f"trajectory has recall {num(every.metrics['recall'])} and F1 {num(every.metrics['f1'])} without detecting "
        f"anything, at a false-alarm rate of {num(every.metrics['false_alarm_rate'])}; one that flags nothing "
        f"has recall and F1 {num(nothing.metrics['f1'])}"
    )
    reading = read_against_anchors(rows, {j: (v, (own or {}).get(j, ())) for j, v in f1.items()}, digits=digits)
    if reading.own:
        text += ". Each judge is read against flagging everything on the trajectories it judged: " + own_anchor_clause(
            reading, name=name, number=num
        )
    scored, above = reading.f1, reading.above
    anchor = "its own anchor" if reading.own else "that of flagging everything"
    if not scored:
        return text + "."
    if not above:
        return text + f". The F1 of {_whom(len(scored))} here is at or below {anchor}."
    names = ", ".join(name(j) for j in above)
    if len(above) == len(scored):
        return (
            text
            + f". The F1 of {_whom(len(scored))} here is above {'its own anchor' if reading.own else 'it'} ({names})."
        )
    verb = "has" if len(above) == 1 else "have"
    return (
        text + f". Of the {len(scored)} judges here, only {names} {verb} an F1 above {anchor if reading.own else 'it'}."
    )
