"""Where the fault sits: recall by the fault's step and by the trajectory's length, and on the counterfactual set.

On the judged set the testbed labels each fault with its step and each trajectory has its number of
steps, so recall can be split both ways (:func:`recall_by`); but each failure type sits at one step and
two types shorten the run, so there a split by position is a split by types (:func:`types_by`
says which). The counterfactual set (:mod:`trajectory_judge.testbed.counterfactual`) plants one fault
at every step of the same instances, so there position is the only thing that varies
(:func:`counterfactual_recall`): the trajectory analogue of a judge's position bias.

Every number is an :class:`~trajectory_judge.analysis.claims.Estimate` from the stratified bootstrap
(:func:`~trajectory_judge.analysis.bootstrap.bootstrap`), Clopper-Pearson where a proportion is 0 or 1.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from trajectory_judge.analysis.bootstrap import BootstrapResult, bootstrap
from trajectory_judge.analysis.claims import Estimate
from trajectory_judge.analysis.loading import judge_order
from trajectory_judge.models import Trajectory, Verdict, design_cell

AXES: dict[str, str] = {"position": "the step the fault sits at", "length": "the trajectory's number of steps"}
"""The two ways :func:`recall_by` splits the faults, in words."""

_AT = re.compile(r"-at(\d+)$")


def _group(t: Trajectory, axis: str) -> int:
    if axis == "position":
        assert t.label is not None and t.label.failure_step is not None
        return t.label.failure_step
    if axis == "length":
        return len(t.steps)
    raise ValueError(f"axis must be one of {', '.join(AXES)}, got {axis!r}")


@dataclass(frozen=True)
class GroupRecall:
    """One judge's recall on the faults of one group (a step, or a length)."""

    judge: str
    """The judge id."""
    axis: str
    """``position`` or ``length``."""
    group: int
    """The step index or the number of steps."""
    recall: Estimate
    """Share of the group's faults the judge flags."""


def types_by(trajectories: Sequence[Trajectory], axis: str) -> dict[int, tuple[str, ...]]:
    """The failure types of each group's faults (in the taxonomy's order): what a split by ``axis`` also splits."""
    from trajectory_judge.models import type_order

    seen: dict[int, set[str]] = defaultdict(set)
    for t in trajectories:
        if t.label is not None and t.label.faulty and t.label.failure_type is not None:
            seen[_group(t, axis)].add(t.label.failure_type)
    return {g: type_order(seen[g]) for g in sorted(seen)}


def _estimates(
    res: BootstrapResult, successes: np.ndarray, trials: np.ndarray, details: Sequence[str]
) -> list[Estimate]:
    return [
        Estimate(float(res.estimate[j]), float(res.low[j]), float(res.high[j]), res.method[j], int(trials[j]), d)
        for j, d in enumerate(details)
    ]


def _constant_within(num: np.ndarray, den: np.ndarray, strata: Sequence[str]) -> np.ndarray:
    """Per column, whether the judge's flag is the same on every judged row of each stratum (a recall
    that no resample can move: the book marks it structural, not as a zero-width interval)."""
    labels = np.asarray(strata)
    out = np.ones(num.shape[1], dtype=bool)
    for s in set(strata):
        rows = labels == s
        for j in range(num.shape[1]):
            judged = num[rows & (den[:, j] > 0), j]
            if len(judged) and judged.min() != judged.max():
                out[j] = False
    return out


def _ratio_statistic(sums: np.ndarray) -> np.ndarray:
    half = sums.shape[-1] // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums[..., :half] / sums[..., half:]


def recall_by(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    axis: str,
    *,
    resamples: int = 10_000,
    seed: int = 7,
) -> list[GroupRecall]:
    """Each judge's recall per group of ``axis`` on the faults it judged, one bootstrap for all of them.

    Trajectories are resampled within their design cell and group, so every group keeps its size.
    """
    faults = [t for t in trajectories if t.label is not None and t.label.faulty]
    if axis == "position":  # a fault labelled by its outcome only has no step to sit at
        faults = [t for t in faults if t.label is not None and t.label.failure_step is not None]
    judges = judge_order(verdicts)
    flagged = {(v.judge_id, v.trajectory_id): v.faulty for v in verdicts}
    groups = sorted({_group(t, axis) for t in faults})
    keys = [(j, g) for j in judges for g in groups]
    num = np.zeros((len(faults), len(keys)))
    den = np.zeros_like(num)
    for i, t in enumerate(faults):
        g = _group(t, axis)
        for c, (j, gg) in enumerate(keys):
            if gg == g and (j, t.trajectory_id) in flagged:
                den[i, c] = 1
                num[i, c] = flagged[(j, t.trajectory_id)]
    keep = den.sum(axis=0) > 0
    keys = [k for k, ok in zip(keys, keep) if ok]
    num, den = num[:, keep], den[:, keep]
    strata = [f"{design_cell(t.label)}|{_group(t, axis)}" for t in faults]
    s, n = num.sum(axis=0), den.sum(axis=0)
    res = bootstrap(
        np.hstack([num, den]),
        _ratio_statistic,
        strata=strata,
        resamples=resamples,
        rng=seed,
        exact=(s, n),
        structural=_constant_within(num, den, strata),
    )
    details = [f"{int(a)} of {int(b)} faults" for a, b in zip(s, n)]
    return [GroupRecall(j, axis, g, e) for (j, g), e in zip(keys, _estimates(res, s, n, details))]


@dataclass(frozen=True)
class Counterfactual:
    """One judge on the counterfactual set: per position, recall and exact-step localisation, and the
    paired differences between positions, over the instances it judged completely."""

    judge: str
    """The judge id."""
    instances: int
    """Instances whose clean run and every mutant the judge judged."""
    positions: tuple[int, ...]
    """The steps the fault was planted at."""
    recall: tuple[Estimate, ...]
    """Share of the instances whose mutant at each position the judge flags."""
    exact_step: tuple[Estimate, ...]
    """Share of them it flags at the planted step."""
    false_alarm: Estimate
    """Share of the same instances' clean runs it flags."""
    spread: Estimate
    """Largest minus smallest recall over the positions, with its paired interval."""
    last_minus_first: Estimate
    """Recall at the last position minus recall at the first, paired over instances."""
    cochran_q: float
    """Cochran's Q of the instances-by-positions flags: the exact-design test that recall is the same at every
    position (NaN when every instance gets one flag at every position)."""
    cochran_p: float
    """Its p-value (chi-square, positions minus one degrees of freedom); 1 when Q is undefined."""


def cochran_q(flags: np.ndarray) -> tuple[float, float]:
    """Cochran's Q test for equal proportions over the columns of a binary ``(units, conditions)`` array
    (Cochran, 1950; the statistic statsmodels' ``cochrans_q`` computes): Q and its chi-square p-value."""
    from scipy.stats import chi2

    x = np.asarray(flags, dtype=float)
    k = x.shape[1]
    cols, rows, total = x.sum(axis=0), x.sum(axis=1), x.sum()
    den = k * total - (rows**2).sum()
    if den == 0:
        return float("nan"), 1.0
    q = (k - 1) * (k * (cols**2).sum() - total**2) / den
    return float(q), float(chi2.sf(q, k - 1))


def _instance_stratum(clean: Trajectory) -> str:
    return "refund" if any(s.call.tool == "issue_refund" for s in clean.steps) else "escalation"


def counterfactual_recall(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    *,
    resamples: int = 10_000,
    seed: int = 7,
) -> list[Counterfactual]:
    """Per judge, on the counterfactual set: instances are the unit, resampled within their kind (refund or
    escalation), so every difference between two positions is paired on the same instances."""
    by_instance: dict[str, dict[int | None, Trajectory]] = defaultdict(dict)
    for t in trajectories:
        m = _AT.search(t.trajectory_id)
        by_instance[t.instance_id][int(m.group(1)) if m else None] = t
    positions = tuple(sorted({k for d in by_instance.values() for k in d if k is not None}))
    verdict = {(v.judge_id, v.trajectory_id): v for v in verdicts}
    out = []
    for judge in judge_order(verdicts):
        complete = [
            d
            for d in by_instance.values()
            if None in d
            and all(k in d for k in positions)
            and all((judge, t.trajectory_id) in verdict for t in d.values())
        ]
        if not complete:
            continue
        out.append(_judge_counterfactual(judge, complete, positions, verdict, resamples, seed))
    return out


def _judge_counterfactual(
    judge: str,
    complete: Sequence[Mapping[int | None, Trajectory]],
    positions: tuple[int, ...],
    verdict: Mapping[tuple[str, str], Verdict],
    resamples: int,
    seed: int,
) -> Counterfactual:
    k = len(positions)
    flag = np.asarray([[verdict[(judge, d[p].trajectory_id)].faulty for p in positions] for d in complete], float)
    exact = np.asarray(
        [
            [
                verdict[(judge, d[p].trajectory_id)].faulty and verdict[(judge, d[p].trajectory_id)].failure_step == p
                for p in positions
            ]
            for d in complete
        ],
        float,
    )
    alarm = np.asarray([[verdict[(judge, d[None].trajectory_id)].faulty] for d in complete], float)
    data = np.hstack([flag, exact, alarm])
    n = len(complete)

    def statistic(sums: np.ndarray) -> np.ndarray:
        r = sums[..., :k] / n
        rest = sums[..., k:] / n
        extra = np.stack([r.max(axis=-1) - r.min(axis=-1), r[..., -1] - r[..., 0]], axis=-1)
        return np.concatenate([r, rest, extra], axis=-1)

    successes = np.concatenate([data.sum(axis=0), [np.nan, np.nan]])
    trials = np.concatenate([np.full(data.shape[1], float(n)), [np.nan, np.nan]])
    res = bootstrap(
        data,
        statistic,
        strata=[_instance_stratum(d[None]) for d in complete],
        resamples=resamples,
        rng=seed,
        exact=(successes, trials),
    )
    details = [f"{int(s)} of {n} instances" for s in data.sum(axis=0)] + ["", ""]
    q, p = cochran_q(flag)
    est = _estimates(res, successes, np.full(len(details), n), details)
    return Counterfactual(
        judge=judge,
        instances=n,
        positions=positions,
        recall=tuple(est[:k]),
        exact_step=tuple(est[k : 2 * k]),
        false_alarm=est[2 * k],
        spread=est[2 * k + 1],
        last_minus_first=est[2 * k + 2],
        cochran_q=q,
        cochran_p=p,
    )
