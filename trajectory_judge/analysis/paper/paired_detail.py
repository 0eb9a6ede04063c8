"""Paired discrimination in detail, as records: per judge and group of faults (:func:`paired_detail`), a
judge's paired value on one group with its interval (:func:`paired_estimate`), and the quantities the
camera-ready abstract quotes (:func:`camera_ready`).

The paired chapter prints these records and the claims register checks the camera-ready abstract
against the same ones, so a paired value carries one interval wherever it is printed: the report's
procedure (faults resampled within their design cell, the report's replicates and seed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import pandas as pd

from trajectory_judge.analysis.core.paired import PAIRED_GROUPS, REPLY_GROUPS, paired_discrimination, unchanged_types
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import estimates as E
from trajectory_judge.analysis.paper.claims import Estimate
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Trajectory, Verdict, folder_types

DETAIL_GROUPS: tuple[str, ...] = (*PAIRED_GROUPS[:5], *REPLY_GROUPS, *PAIRED_GROUPS[5:])
"""The groups of :func:`paired_detail`, in the order tables list them."""


@dataclass(frozen=True)
class PairedRow:
    """One judge's paired discrimination on one group of faults."""

    judge: str
    """The judge id."""
    group: str
    """The group of faults (one of :data:`DETAIL_GROUPS`)."""
    n: int
    """Faults in the group whose clean parent the judge also judged."""
    fault_rate: float
    """The judge's flag rate on those faults."""
    parent_rate: float
    """Its flag rate on their clean parents (the group's anchor)."""
    paired: float
    """``fault_rate - parent_rate``: paired discrimination."""
    disagree: int
    """Faults the judge judged unlike their parent."""


@dataclass(frozen=True)
class PairedDetail:
    """Paired discrimination of every judge on every non-empty group, judges in report order."""

    rows: tuple[PairedRow, ...]
    """One row per judge and non-empty group."""

    def to_frame(self) -> pd.DataFrame:
        """Columns judge, group, n, fault_rate, parent_rate, paired, disagree (one row per record)."""
        cols = [f for f in PairedRow.__dataclass_fields__]
        return pd.DataFrame([asdict(r) for r in self.rows], columns=cols)


def paired_detail(trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> PairedDetail:
    """Per judge and group: faults with a judged clean parent, flag rate on them and on their parents, the
    difference and the faults judged unlike their parent.

    The groups of :func:`~trajectory_judge.analysis.core.paired.paired_discrimination` with its reply groups
    (whether the outcome view, goal and final answer, equals the parent's, whatever the judge's own view):
    the report's computation, judges in report order.
    """
    from trajectory_judge.analysis.core.loading import judge_order

    by_judge: dict[str, dict[str, Verdict]] = {}
    for v in verdicts:
        by_judge.setdefault(v.judge_id, {})[v.trajectory_id] = v
    rows: list[PairedRow] = []
    reached: dict[tuple[str, str], bool] = {}
    for judge in judge_order(verdicts):
        groups = paired_discrimination(judge, trajectories, by_judge[judge], reached=reached, reply_groups=True)
        for g, p in groups.items():
            if p.n:
                rows.append(PairedRow(judge, g, p.n, p.fault_rate, p.parent_rate, p.value, p.disagree))  # type: ignore[arg-type]
    return PairedDetail(tuple(rows))


def reply_unchanged_types(trajectories: Sequence[Trajectory]) -> list[str]:
    """Failure types whose every fault with a clean parent shows the outcome view (goal, final answer) of that parent."""
    return unchanged_types(trajectories, "outcome")


_GROUPS: dict[str, Callable[[Trajectory, Trajectory], bool]] = {
    "all": lambda t, p: True,
    "loud": lambda t, p: not t.label.outcome_correct,  # type: ignore[union-attr]
    "silent": lambda t, p: t.label.outcome_correct,  # type: ignore[union-attr]
}


def paired_estimate(
    rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], judge: str, group: str
) -> Estimate | None:
    """``judge``'s paired discrimination on ``group`` (``all``, ``loud``, ``silent`` or a failure type) with its 95%
    interval by the report's procedure (faults resampled within their design cell, the report's replicates and
    seed); ``None`` when no fault of the group has its clean parent judged by ``judge``."""
    if group in _GROUPS:
        pick: Callable[[Trajectory, Trajectory], bool] = _GROUPS[group]
    elif group in folder_types(trajectories) or group in TESTBED_FAILURE_TYPES:
        pick = lambda t, p: t.label.failure_type == group  # type: ignore[union-attr]
    else:
        raise ValueError(f"unknown paired group {group!r}: use all, loud, silent or a failure type")
    value = rep.judges[judge].paired_discrimination.get(group) if judge in rep.judges else None
    if value is None or value.value is None or not value.n:
        return None
    return E.paired_group(rep, trajectories, verdicts, judge, pick)


def reply_unchanged_paired(
    rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], judge: str
) -> Estimate | None:
    """``judge``'s paired discrimination pooled over the faults of the reply-unchanged types
    (:func:`reply_unchanged_types`), with the report's interval; ``None`` when it judged no such pair."""
    four = set(reply_unchanged_types(trajectories))
    jr = rep.judges.get(judge)
    if not four or jr is None or not any(p.n for t, p in jr.paired_discrimination.items() if t in four):
        return None
    return E.paired_group(
        rep, trajectories, verdicts, judge, lambda t, p: t.label is not None and t.label.failure_type in four
    )


CAMERA_READY_KEYS: tuple[str, ...] = (
    "n_reply_unchanged_types",
    "outcome_recall_reply_unchanged_min",
    "outcome_recall_reply_unchanged_max",
    "outcome_paired_reply_unchanged",
    "outcome_paired_loud",
    "outcome_paired_silent",
    "outcome_loud_recall",
    "outcome_silent_recall",
    "step_recall_reply_unchanged",
    "step_clean_flagged",
    "step_clean_n",
    "step_clean_flagged_ci_high",
    "step_paired_reply_unchanged",
    "claim_sentences",
    "claim_always_flagged_sentences",
    "claim_other_flagged",
    "claim_other_n",
)
"""The quantities of :class:`CameraReady`, in the order the paired chapter's table lists them."""


@dataclass(frozen=True)
class CameraReady:
    """The quantities the camera-ready abstract quotes, for one outcome judge and one step judge."""

    outcome: str
    """The outcome judge's id."""
    step: str
    """The step judge's id."""
    reply_unchanged: tuple[str, ...]
    """Failure types whose every fault shows the outcome view of its clean parent."""
    values: Mapping[str, float | int | None] = field(repr=False)
    """Each of :data:`CAMERA_READY_KEYS` -> its value (counts as integers); ``None`` when the verdicts cannot give it."""
    paired: Mapping[str, Estimate | None] = field(repr=False)
    """``outcome_paired_loud`` and ``outcome_paired_silent`` -> the record with its interval
    (:func:`paired_estimate`); empty when computed without the verdicts."""

    def estimate(self, key: str) -> Estimate | None:
        """One quantity as a record: a paired value with its interval, any other value as its own interval."""
        if key in self.paired:
            return self.paired[key]
        v = self.values[key]
        return None if v is None else Estimate.exact(v)

    def to_frame(self) -> pd.DataFrame:
        """One row per quantity: value, low, high, method, n (missing as NaN and None)."""
        rows = []
        for k in CAMERA_READY_KEYS:
            e = self.estimate(k)
            rows.append(
                {
                    "quantity": k,
                    **(e.to_dict() if e else dict.fromkeys(("value", "low", "high", "method", "n", "detail"))),
                }
            )
        return pd.DataFrame(rows).set_index("quantity")


def _over(
    four: Sequence[str], values: Mapping[str, float | None], pick: Callable[[list[float]], float]
) -> float | None:
    got = [v for t in four if (v := values.get(t)) is not None]
    return None if not four or len(got) < len(four) else float(pick(got))


def camera_ready(
    rep: Report, trajectories: Sequence[Trajectory], outcome: str, step: str, verdicts: Sequence[Verdict] = ()
) -> CameraReady:
    """The quantities the camera-ready abstract quotes (:data:`CAMERA_READY_KEYS`), from a report: outcome judge
    ``outcome``, step judge ``step``.

    Recall and paired discrimination of the outcome judge on the reply-unchanged types and by outcome
    survival; the step judge's recall there, its clean flags and their exact upper bound; its detection of
    each invented promise. Given the ``verdicts``, the paired values by outcome survival carry their interval
    (:func:`paired_estimate`, the records the claims register checks).
    """
    four = reply_unchanged_types(trajectories)
    out_j, step_j = rep.judges[outcome], rep.judges[step]
    claims = rep.claim_table(step)
    always = claims[claims["recall"] == 1.0]
    rest = claims.drop(always.index)
    pd_out = {t: p.value for t, p in out_j.paired_discrimination.items()}
    pd_step = {t: p.value for t, p in step_j.paired_discrimination.items()}
    false_alarms = step_j.metrics.get("false_alarm_rate")
    ci = step_j.intervals.get("false_alarm_rate")
    has_claims = bool(len(claims))
    values: dict[str, float | int | None] = {
        "n_reply_unchanged_types": len(four),
        "outcome_recall_reply_unchanged_min": _over(four, out_j.per_type_recall, min),
        "outcome_recall_reply_unchanged_max": _over(four, out_j.per_type_recall, max),
        "outcome_paired_reply_unchanged": _over(four, pd_out, lambda xs: max(map(abs, xs))),
        "outcome_paired_loud": out_j.paired_discrimination["loud"].value,
        "outcome_paired_silent": out_j.paired_discrimination["silent"].value,
        "outcome_loud_recall": out_j.metrics.get("loud_recall"),
        "outcome_silent_recall": out_j.metrics.get("silent_recall"),
        "step_recall_reply_unchanged": _over(four, step_j.per_type_recall, min),
        "step_clean_flagged": None if false_alarms is None else round(false_alarms * step_j.strata.get("clean", 0)),
        "step_clean_n": int(step_j.strata.get("clean", 0)),
        "step_clean_flagged_ci_high": None if ci is None else ci.high,
        "step_paired_reply_unchanged": _over(four, pd_step, min),
        "claim_sentences": len(claims) if has_claims else None,
        "claim_always_flagged_sentences": len(always) if has_claims else None,
        "claim_other_flagged": int(rest["flagged"].sum()) if has_claims else None,
        "claim_other_n": int(rest["n"].sum()) if has_claims else None,
    }
    paired = (
        {k: paired_estimate(rep, trajectories, verdicts, outcome, g) for k, g in PAIRED_KEYS.items()}
        if verdicts
        else {}
    )
    return CameraReady(outcome, step, tuple(four), values, paired)


PAIRED_KEYS: dict[str, str] = {"outcome_paired_loud": "loud", "outcome_paired_silent": "silent"}
"""The camera-ready quantities that are paired values with an interval, and their group."""
