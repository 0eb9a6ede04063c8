"""Where the fault sits: recall by the fault's step and by the trajectory's length, and on the counterfactual set.

On the judged set the testbed labels each fault with its step and each trajectory has its number of
steps, so recall can be split both ways (:func:`recall_by`); but each failure type sits at one step and
two types shorten the run, so there a split by position is a split by types (:func:`types_by`
says which). The counterfactual set (:mod:`trajectory_judge.testbed.counterfactual`) plants one fault
at every step of the same instances, so there position is the only thing that varies
(:func:`counterfactual_recall`): the trajectory analogue of a judge's position bias.

Recalls and paired differences are :class:`~trajectory_judge.analysis.paper.claims.Estimate` from the stratified
bootstrap (:func:`~trajectory_judge.analysis.core.bootstrap.bootstrap`), Clopper-Pearson where a proportion is 0 or 1.
Whether position matters is tested by permutation (:func:`spread_permutation`) and by Cochran's Q
(:func:`cochran_q`); what the design can detect at all, before any verdict, is :func:`position_power`.
:func:`position_study` computes every record of the book's chapter at once, the fault rate of the
organic episodes from the rule engine's flags among them.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from trajectory_judge.analysis.core.bootstrap import BootstrapResult, bootstrap, monte_carlo_p
from trajectory_judge.analysis.core.loading import Dataset, judge_order
from trajectory_judge.analysis.paper.claims import Estimate
from trajectory_judge.models import Episode, Trajectory, Verdict, design_cell

if TYPE_CHECKING:
    from trajectory_judge.analysis.statistics.prevalence import Prevalence

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


PERMUTATIONS = 10_000
"""Shuffles of the permutation test of the spread (:func:`spread_permutation`)."""

POWER_ASSUMPTION = (
    "flags independent between an instance's steps and the compared recalls centred on 0.5 (the worst case for "
    "independent flags, with the most instances flagged at one step and not the other); a judge whose flags agree "
    "between the steps of one instance gives a paired test more power"
)
"""What :func:`position_power` assumes, in words: the chapter prints it beside the detectable difference."""


@dataclass(frozen=True)
class PositionPower:
    """What the counterfactual design can detect, from its size alone (no verdict is read): ``instances``
    complete instances, ``positions`` steps, two-sided tests at ``alpha``, under :data:`POWER_ASSUMPTION`.

    ``pair_detectable`` is the closed form of the paired (McNemar) test of two steps' recalls; the powers are
    simulated with a fixed seed against recall rising linearly by ``rise`` from the first step to the last
    (0.5 at the middle), flags independent."""

    instances: int
    """Complete instances (each judged at every step)."""
    positions: int
    """Steps the fault is planted at."""
    alpha: float
    """Two-sided level of every test."""
    target: float
    """The power a detectable difference is detected with."""
    pair_detectable: float
    """Smallest difference between two pre-specified steps' recalls the paired test detects with ``target`` power
    (NaN when no difference up to 1 is: too few instances)."""
    any_pair_detectable: float
    """The same with the level split over every pair of steps (Bonferroni): no pair chosen in advance."""
    rise: float
    """The alternative of the simulated powers: recall rises by this much, linearly, from the first step to the last."""
    cochran_power: float
    """Share of simulated judges with that rise whose Cochran's Q is significant at ``alpha``."""
    permutation_power: float
    """Share of them whose spread's permutation p-value is at most ``alpha`` (``null_draws`` shuffles each)."""
    rise_detectable: float
    """Smallest linear rise from first to last step Cochran's Q detects with ``target`` power (simulation; NaN when
    none up to 1 is)."""
    blind_spread95: float
    """The 95th percentile of the spread (largest minus smallest recall) of a position-blind judge of recall 0.5 at
    this size: what chance alone gives."""
    simulations: int
    """Simulated judges per power."""
    null_draws: int
    """Shuffles per simulated judge in ``permutation_power``."""
    seed: int
    """Seed of every simulation."""


def detectable_difference(n: int, *, alpha: float = 0.05, power: float = 0.8, base: float = 0.5) -> float:
    """Smallest difference ``d`` between two recalls, ``base - d/2`` and ``base + d/2`` on the same ``n`` instances,
    that a two-sided paired test (McNemar's, normal approximation) at ``alpha`` detects with ``power``, flags
    independent between the two (Connor, 1987): ``d * sqrt(n) = z(1 - alpha/2) * sqrt(psi) + z(power) *
    sqrt(psi - d**2)``, where ``psi = p1 (1 - p2) + p2 (1 - p1)`` is the share of discordant instances. At
    ``base`` 0.5 ``psi`` is the largest it can be for a given ``d``, so this is the worst case for independent
    flags. NaN when no ``d`` the recalls allow is detected (too few instances)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    if n < 1 or not 0 < base < 1:
        raise ValueError(f"need n >= 1 and 0 < base < 1, got n={n}, base={base}")
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)

    def gap(d: float) -> float:
        p1, p2 = base - d / 2, base + d / 2
        psi = p1 * (1 - p2) + p2 * (1 - p1)
        return d * math.sqrt(n) - za * math.sqrt(psi) - zb * math.sqrt(max(psi - d * d, 0.0))

    top = 2 * min(base, 1 - base)
    if gap(top) <= 0:
        return math.nan
    return float(brentq(gap, 1e-9, top, xtol=1e-10))


def linear_recalls(k: int, rise: float, base: float = 0.5) -> np.ndarray:
    """Recall at each of ``k`` steps rising linearly by ``rise`` from the first to the last, ``base`` at the middle."""
    return base + rise * (np.arange(k) / max(k - 1, 1) - 0.5)


def _cochran_p(flags: np.ndarray) -> np.ndarray:
    """:func:`cochran_q`'s p-value over the leading axes of ``(..., units, conditions)`` flags (1 where undefined)."""
    from scipy.stats import chi2

    k = flags.shape[-1]
    cols, rows = flags.sum(axis=-2), flags.sum(axis=-1)
    total = cols.sum(axis=-1)
    den = k * total - (rows**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (k - 1) * (k * (cols**2).sum(axis=-1) - total**2) / den
    return np.where(den > 0, chi2.sf(np.where(den > 0, q, 0.0), k - 1), 1.0)


@lru_cache(maxsize=32)
def position_power(
    n: int,
    k: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    rise: float = 0.2,
    simulations: int = 1_000,
    null_draws: int = 199,
    seed: int = 7,
) -> PositionPower:
    """What a counterfactual set of ``n`` complete instances and ``k`` steps can detect (:class:`PositionPower`),
    before any judge has read it: the closed forms of :func:`detectable_difference`, and by simulation (seeded)
    the power of Cochran's Q and of the spread's permutation test against recall rising linearly by ``rise``,
    the rise Cochran's Q detects with ``power``, and the spread a position-blind judge shows by chance."""
    if n < 1 or k < 2:
        raise ValueError(f"need at least 1 instance and 2 steps, got n={n}, k={k}")
    rng = np.random.default_rng(seed)
    u = rng.random((simulations, n, k))  # one draw for every alternative (common random numbers)
    flags = u < linear_recalls(k, rise)
    cochran = float((_cochran_p(flags) < alpha).mean())
    obs = _spread_of(flags.sum(axis=1), n)
    null = _null_spreads(flags.sum(axis=2), k, null_draws, rng)  # (simulations, null_draws)
    perm_p = monte_carlo_p((null >= obs[:, None] - 1e-12).sum(axis=1), null_draws)

    def q_power(r: float) -> float:
        return float((_cochran_p(u < linear_recalls(k, r)) < alpha).mean())

    lo, hi = 0.0, 1.0
    if q_power(hi) < power:
        rise_detectable = math.nan
    else:
        for _ in range(14):  # to within 1e-4; common random numbers keep the power monotone enough to bisect
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if q_power(mid) >= power else (mid, hi)
        rise_detectable = hi
    pairs = k * (k - 1) // 2
    return PositionPower(
        instances=n,
        positions=k,
        alpha=alpha,
        target=power,
        pair_detectable=detectable_difference(n, alpha=alpha, power=power),
        any_pair_detectable=detectable_difference(n, alpha=alpha / pairs, power=power),
        rise=rise,
        cochran_power=cochran,
        permutation_power=float((perm_p <= alpha).mean()),
        rise_detectable=rise_detectable,
        blind_spread95=blind_spread_quantile(n, k, 0.95),
        simulations=simulations,
        null_draws=null_draws,
        seed=seed,
    )


def blind_spread_quantile(n: int, k: int, q: float, recall: float = 0.5) -> float:
    """The ``q`` quantile of the spread of ``k`` recalls on ``n`` instances of a judge blind to the step, flags
    independent at ``recall``: exactly, from the range of ``k`` independent binomial counts,
    ``P(range <= t) = sum_a P(a <= X <= a + t)**k - P(a + 1 <= X <= a + t)**k``."""
    from scipy.stats import binom

    pmf = binom.pmf(np.arange(n + 1), n, recall)
    cum = np.concatenate([[0.0], np.cumsum(pmf)])  # cum[j] = P(X < j)
    a = np.arange(n + 1)
    for t in range(n + 1):
        top = np.minimum(a + t + 1, n + 1)
        below = float(((cum[top] - cum[a]) ** k - (cum[top] - cum[a + 1]) ** k).sum())  # P(range <= t)
        if below >= q - 1e-12:
            return t / n
    return 1.0


def _spread_of(col_sums: np.ndarray, n: int) -> np.ndarray:
    return (col_sums.max(axis=-1) - col_sums.min(axis=-1)) / n


@lru_cache(maxsize=16)
def _subsets(k: int, r: int) -> np.ndarray:
    """The ``C(k, r)`` ways to place ``r`` flags on ``k`` steps, as 0/1 rows."""
    return np.asarray([[j in c for j in range(k)] for c in itertools.combinations(range(k), r)], dtype=np.int64)


def _null_spreads(row_totals: np.ndarray, k: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Spreads of ``draws`` shuffles of each instance's flags over its ``k`` steps, for each leading index of
    ``row_totals`` (``(..., n)``: the flags per instance). Shuffling an instance with ``r`` flags puts them on
    a uniformly random ``r`` of its steps; the instances with ``r`` flags, shuffled independently, fall on the
    ``C(k, r)`` placings in multinomial counts. So the column sums are drawn from those counts: the same
    distribution as shuffling every instance, at a cost that does not grow with the instances."""
    totals = np.asarray(row_totals, dtype=np.int64)
    n = totals.shape[-1]
    lead = totals.shape[:-1]
    sums = np.zeros((*lead, draws, k), dtype=np.int64)
    for r in range(1, k):  # an instance flagged at no step or at every step looks the same however shuffled
        m = (totals == r).sum(axis=-1)
        if not m.any():
            continue
        placings = _subsets(k, r)
        c = len(placings)
        counts = rng.multinomial(np.broadcast_to(m[..., None], (*lead, draws)), np.full(c, 1 / c))
        sums += counts @ placings
    return _spread_of(sums, n)


def spread_permutation(
    flags: np.ndarray, *, permutations: int = PERMUTATIONS, seed: int = 7
) -> tuple[float, float, float]:
    """The permutation test that recall does not depend on the step, on a binary ``(instances, steps)`` array:
    the observed spread (largest minus smallest recall), its p-value ``(1 + #{null >= observed}) / (1 +
    permutations)`` and the null's 95th percentile (the smallest spread that 95% of shuffles do not exceed: what a
    position-blind judge with these instances' flag counts shows by chance). If the step does not matter to a
    judge, its flags are exchangeable over an instance's steps, so the null shuffles each instance's flags over
    its steps (:func:`_null_spreads`)."""
    x = np.asarray(flags, dtype=np.int64)
    n, k = x.shape
    observed = float(_spread_of(x.sum(axis=0), n))
    null = _null_spreads(x.sum(axis=1), k, permutations, np.random.default_rng(seed))
    p = monte_carlo_p(int((null >= observed - 1e-12).sum()), permutations)
    return observed, p, float(np.quantile(null, 0.95, method="inverted_cdf"))  # a spread the shuffles attain


@dataclass(frozen=True)
class Counterfactual:
    """One judge on the counterfactual set: per position, recall and exact-step localisation, and the
    paired differences between positions, over the instances it judged completely.

    The spread (largest minus smallest recall) carries a permutation test and no interval: a percentile
    bootstrap interval of a maximum minus a minimum is biased upward, and where the recalls are equal (the
    spread's value under "the step does not matter") nearly every replicate's spread is above 0, so the
    interval excludes the very value it should test (the coin-flip control's interval did not hold 0). The
    permutation null asks the question directly: what spread a judge to which the step does not matter shows
    on the same instances by chance."""

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
    spread: float
    """Largest minus smallest recall over the positions."""
    spread_p: float
    """Permutation p-value of the spread (:func:`spread_permutation`), ``(k + 1) / (B + 1)``."""
    spread_null95: float
    """The 95th percentile of the spread under the permutation null: what chance gives at these instances."""
    permutations: int
    """Shuffles of the permutation test (``B``)."""
    last_minus_first: Estimate
    """Recall at the last position minus recall at the first, paired over instances."""
    cochran_q: float
    """Cochran's Q of the instances-by-positions flags: the exact-design test that recall is the same at every
    position (NaN when every instance gets one flag at every position)."""
    cochran_p: float
    """Its p-value (chi-square, positions minus one degrees of freedom); 1 when Q is undefined."""
    power: PositionPower
    """What the design detects at this judge's number of complete instances (:func:`position_power`)."""


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


def _by_instance(
    trajectories: Sequence[Trajectory],
) -> tuple[dict[str, dict[int | None, Trajectory]], tuple[int, ...]]:
    """The set's runs per instance, keyed by the step the fault is planted at (None for the clean run), and the steps."""
    by_instance: dict[str, dict[int | None, Trajectory]] = defaultdict(dict)
    for t in trajectories:
        m = _AT.search(t.trajectory_id)
        by_instance[t.instance_id][int(m.group(1)) if m else None] = t
    return by_instance, tuple(sorted({k for d in by_instance.values() for k in d if k is not None}))


def design_size(trajectories: Sequence[Trajectory]) -> tuple[int, int]:
    """The counterfactual set's instances and the steps a fault is planted at: what :func:`position_power` reads."""
    by_instance, positions = _by_instance(trajectories)
    return len(by_instance), len(positions)


def counterfactual_recall(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    *,
    resamples: int = 10_000,
    seed: int = 7,
    permutations: int = PERMUTATIONS,
) -> list[Counterfactual]:
    """Per judge, on the counterfactual set: instances are the unit, resampled within their kind (refund or
    escalation), so every difference between two positions is paired on the same instances; the spread is
    tested by ``permutations`` shuffles of each instance's flags over its steps."""
    by_instance, positions = _by_instance(trajectories)
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
        out.append(_judge_counterfactual(judge, complete, positions, verdict, resamples, seed, permutations))
    return out


def _judge_counterfactual(
    judge: str,
    complete: Sequence[Mapping[int | None, Trajectory]],
    positions: tuple[int, ...],
    verdict: Mapping[tuple[str, str], Verdict],
    resamples: int,
    seed: int,
    permutations: int,
) -> Counterfactual:
    k = len(positions)
    at = [[verdict[(judge, d[p].trajectory_id)] for p in positions] for d in complete]
    flag = np.asarray([[v.faulty for v in row] for row in at], float)
    exact = np.asarray([[v.faulty and v.failure_step == p for v, p in zip(row, positions)] for row in at], float)
    alarm = np.asarray([[verdict[(judge, d[None].trajectory_id)].faulty] for d in complete], float)
    data = np.hstack([flag, exact, alarm])
    n = len(complete)

    def statistic(sums: np.ndarray) -> np.ndarray:
        r = sums[..., :k] / n
        rest = sums[..., k:] / n
        return np.concatenate([r, rest, r[..., -1:] - r[..., :1]], axis=-1)

    successes = np.concatenate([data.sum(axis=0), [np.nan]])
    trials = np.concatenate([np.full(data.shape[1], float(n)), [np.nan]])
    res = bootstrap(
        data,
        statistic,
        strata=[_instance_stratum(d[None]) for d in complete],
        resamples=resamples,
        rng=seed,
        exact=(successes, trials),
    )
    details = [f"{int(s)} of {n} instances" for s in data.sum(axis=0)] + [""]
    q, p = cochran_q(flag)
    spread, spread_p, null95 = spread_permutation(flag, permutations=permutations, seed=seed)
    est = _estimates(res, successes, np.full(len(details), n), details)
    return Counterfactual(
        judge=judge,
        instances=n,
        positions=positions,
        recall=tuple(est[:k]),
        exact_step=tuple(est[k : 2 * k]),
        false_alarm=est[2 * k],
        spread=spread,
        spread_p=spread_p,
        spread_null95=null95,
        permutations=permutations,
        last_minus_first=est[2 * k + 1],
        cochran_q=q,
        cochran_p=p,
        power=position_power(n, k, seed=seed),
    )


def sample_labels(faulty: Sequence[bool], k: int, seed: int = 7) -> list[bool | None]:
    """``k`` of the labels kept at random (seeded), the rest hidden: a user who labelled a few traces."""
    import random

    keep = set(random.Random(f"labels-{seed}").sample(range(len(faulty)), k))
    return [bool(f) if i in keep else None for i, f in enumerate(faulty)]


@dataclass(frozen=True)
class PositionStudy:
    """Where the fault sits, on every set at once: recall by step and length on the judged sets, the
    counterfactual set's records and what its size can detect, and the rule engine's flags on the organic
    episodes turned into a fault rate (:func:`~trajectory_judge.analysis.statistics.prevalence.prevalence_from_data`)."""

    types: dict[str, dict[int, tuple[str, ...]]]
    """Per split (:data:`AXES`), the failure types of each group (this edition's judged set)."""
    recalls: dict[str, list[GroupRecall]]
    """Recall per judge and group, for the paper's verdicts (``release``) and this edition's (``edition``)."""
    counterfactual: list[Counterfactual]
    """Per judge, the counterfactual set's records."""
    power: PositionPower
    """What the counterfactual set can detect at its full size, before any verdict."""
    trajectories: int
    """Trajectories of the counterfactual set."""
    instances: int
    """Instances of the counterfactual set (each a clean run and a fault at every step)."""
    permutations: int
    """Shuffles of the permutation test of the spread."""
    prevalence: Prevalence
    """The fault rate of the organic episodes from the rule
    engine's flags, a few episodes labelled at random."""
    true_rate: float
    """The organic episodes' labelled fault rate."""
    episodes: int
    """Organic episodes."""
    faulty: int
    """Organic episodes labelled faulty."""
    caught: int
    """Faulty organic episodes the rule engine flags."""


def position_study(
    paper: Dataset,
    ours: Dataset,
    cf: Dataset,
    episodes: Sequence[Episode],
    *,
    resamples: int,
    seed: int,
    labelled: int,
    calibration: Dataset | None = None,
) -> PositionStudy:
    """:class:`PositionStudy` on the paper's and this edition's data, the counterfactual set and the organic
    episodes (the rule engine judges them, ``labelled`` of them labelled at random for PPI). ``calibration``
    is the labelled folder whose rule-engine verdicts calibrate the prevalence (``ours`` by default; the book
    passes its own planted set, which holds the rule engine's verdicts whatever folder it is built on)."""
    from trajectory_judge.analysis.statistics.prevalence import prevalence_from_data
    from trajectory_judge.judges.programmatic import ProgrammaticJudge

    types = {axis: types_by(ours.trajectories, axis) for axis in AXES}
    recalls = {
        source: [
            r for axis in AXES for r in recall_by(d.trajectories, d.verdicts, axis, resamples=resamples, seed=seed)
        ]
        for source, d in (("release", paper), ("edition", ours))
    }
    cfs = counterfactual_recall(cf.trajectories, cf.verdicts, resamples=resamples, seed=seed, permutations=resamples)
    total, k = design_size(cf.trajectories)
    rules = ProgrammaticJudge()
    organic = [e.trajectory for e in episodes]
    user = [rules.judge(t) for t in organic]
    faulty = [bool(t.label and t.label.faulty) for t in organic]
    prev = prevalence_from_data(
        ours if calibration is None else calibration,
        "programmatic",
        user,
        labels=sample_labels(faulty, labelled, seed),
        resamples=resamples,
        seed=seed,
    )
    return PositionStudy(
        types=types,
        recalls=recalls,
        counterfactual=cfs,
        power=position_power(total, k, seed=seed),
        trajectories=len(cf.trajectories),
        instances=len({t.instance_id for t in cf.trajectories}),
        permutations=resamples,
        prevalence=prev,
        true_rate=sum(faulty) / len(faulty),
        episodes=len(organic),
        faulty=sum(faulty),
        caught=sum(v.faulty and f for v, f in zip(user, faulty)),
    )
