"""How much each verdict of the claims register rests on the rule's free choices, and the verdicts adjusted for
multiplicity (:func:`robustness`).

The rule (:data:`~trajectory_judge.analysis.paper.claims.RULE`) fixes choices another careful reader could make otherwise:
the interval method, its level, how a fraction in words is read, and, where a claim allows it, the paired or the raw
quantity and the baseline it compares with. Each row is judged again under every alternative of :data:`ALTERNATIVES`,
one choice at a time, by the same rule; a row whose verdict no alternative changes is *robust*, else *fragile*,
with the alternatives that flip it. Each checkable row also gets one p-value (:func:`p_value`, stated in
:data:`P_VALUES`) and a verdict with Holm's adjustment over the whole register beside its raw one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from trajectory_judge.analysis.core.bootstrap import clopper_pearson, monte_carlo_p
from trajectory_judge.analysis.paper.claims import (
    BORNE_OUT,
    CONFIRMED,
    CONSISTENT,
    NOT_BORNE_OUT,
    NOT_CHECKABLE,
    Claim,
    Estimate,
    Register,
    Stated,
    sampled,
    tolerance_band,
    verdict,
)

ROBUST, FRAGILE = "robust", "fragile"
"""A row's robustness: no alternative changes its verdict, or one at least does."""

LEVELS: tuple[float, ...] = (0.90, 0.99)
"""The other confidence levels a row is judged at (the rule's is 95%)."""

SEEDS: tuple[int, ...] = (8, 9)
"""The other fixed bootstrap seeds a row is judged at (the book's is 7): the whole register is recomputed on a
report bootstrapped at each (:func:`seed_registers`)."""

FAMILY_ALPHA = 0.05
"""The familywise error rate Holm's adjustment controls over the register's checkable rows."""

ALTERNATIVES = (
    "Each row is judged again, one choice at a time, under the alternatives the rule could reasonably have taken: "
    "the exact (Clopper\u2013Pearson) interval where the quantity is a proportion; the bias-corrected interval "
    "(bias correction from the bootstrap replicates), called BCa where the quantity is a mean of one value per unit, "
    "whose jackknife acceleration has a closed form, and BC where there is no acceleration to add; the percentile "
    "interval where the rule used another; the levels 90% and 99%; the bootstrap drawn again at "
    f"{' and '.join(f'seed {s}' for s in SEEDS)}; a fraction in words read literally as well as to one significant "
    "figure; the raw quantity beside the paired one, or another baseline, where the claim allows both. A row that "
    "counts intervals (the quality axes whose difference excludes zero) is counted again under each. A row whose "
    "verdict none of them changes is *robust*; otherwise it is *fragile*, and the alternatives that flip it are "
    "named. A quantity without sampling variance has no alternative interval."
)
"""The alternatives, stated once (the audit chapter prints it under the rule)."""

P_VALUES = (
    "Each checkable row has one p-value, from the test its verdict rests on. A stated value is *not borne out* by "
    "rejecting that the quantity lies in the band, and *confirmed* by rejecting that it lies outside it (two one-sided "
    "tests, one at each edge); a row consistent with its claim rejects neither and takes the smaller p-value. A "
    "direction rejects that the quantity sits at the boundary. From the bootstrap replicates a one-sided p-value is "
    "twice the share, counted as (k + 1)/(B + 1), of replicates on the far side of the edge or boundary; for an exact "
    "interval, twice the binomial tail; a quantity without sampling variance has p = 0 when its verdict rejects and 1 "
    "otherwise. Holm's method adjusts them over every checkable row, controlling the familywise error rate at 5%; "
    "the adjusted verdict keeps a rejection whose adjusted p-value is below 0.05 and otherwise withdraws it: a "
    "confirmed or contradicted value is then only consistent with its claim, a direction inconclusive."
)
"""How a row's p-value is obtained and adjusted, stated once."""


@dataclass(frozen=True)
class Alternative:
    """A row judged under one alternative choice."""

    choice: str
    """``interval``, ``level``, ``seed``, ``reading``, ``quantity`` or ``baseline``."""
    name: str
    """The alternative in words (``Clopper\u2013Pearson``, ``99%``, ``a third read literally``)."""
    stated: Stated
    """What the claim states under it."""
    estimate: Estimate
    """The estimate under it."""
    verdict: str
    """The rule's verdict under it."""
    reason: str
    """The rule's reason under it."""


@dataclass(frozen=True)
class Robustness:
    """One register row: its verdict, the alternatives it was judged under, its p-value and its adjusted verdict."""

    key: str
    """The claim's key."""
    verdict: str
    """The rule's verdict."""
    alternatives: tuple[Alternative, ...]
    """Every alternative the row was judged under."""
    p_value: float | None
    """The row's p-value (None when the data cannot give the quantity)."""
    adjusted_p: float | None
    """Holm-adjusted over the register's checkable rows."""
    adjusted: str
    """The verdict with the adjustment."""

    @property
    def flips(self) -> tuple[Alternative, ...]:
        """The alternatives under which the verdict differs."""
        return tuple(a for a in self.alternatives if a.verdict != self.verdict)

    @property
    def status(self) -> str:
        """:data:`ROBUST`, :data:`FRAGILE`, or empty when the data cannot give the quantity."""
        if self.p_value is None:
            return ""
        return FRAGILE if self.flips else ROBUST

    def flipped_by(self) -> str:
        """The alternatives that flip the verdict, each with the verdict it gives (``99%: borne out``)."""
        return "; ".join(f"{a.name}: {a.verdict}" for a in self.flips)


# --- intervals ------------------------------------------------------------------------------------
def _finite(replicates: np.ndarray) -> np.ndarray:
    r = np.asarray(replicates, dtype=float)
    return r[~np.isnan(r)]


def proportion_counts(e: Estimate) -> tuple[int, int] | None:
    """``(successes, trials)`` when the estimate is a proportion of units, else None."""
    u = e.units
    if u is None or len(u) == 0 or not np.isin(u, (0.0, 1.0)).all():
        return None
    return int(u.sum()), len(u)


def percentile(e: Estimate, level: float) -> tuple[float, float] | None:
    """The percentile interval of the estimate's replicates at ``level``."""
    if e.replicates is None:
        return None
    r = _finite(e.replicates)
    if not len(r):
        return None
    lo, hi = np.percentile(r, [50 * (1 - level), 100 - 50 * (1 - level)])
    return float(lo), float(hi)


def exact(e: Estimate, level: float) -> tuple[float, float] | None:
    """The Clopper-Pearson interval at ``level`` of a proportion."""
    kn = proportion_counts(e)
    return None if kn is None else clopper_pearson(kn[0], kn[1], level)


def acceleration(units: np.ndarray | None) -> float:
    """The jackknife acceleration of a mean of ``units`` (closed form: leaving unit i out moves the mean by
    (mean - u_i)/(n - 1)); zero without units."""
    if units is None or len(units) < 2:
        return 0.0
    d = np.asarray(units, dtype=float) - float(np.mean(units))
    s2 = float((d**2).sum())
    return 0.0 if s2 == 0 else float((d**3).sum()) / (6 * s2**1.5)


def bca(e: Estimate, level: float) -> tuple[float, float] | None:
    """The BCa interval at ``level``: the bias correction from the share of replicates below the estimate (a tie
    counting half), the acceleration from :func:`acceleration`; None when every replicate lies on one side."""
    from scipy.stats import norm

    if e.replicates is None:
        return None
    r = _finite(e.replicates)
    tie = np.isclose(r, e.value, rtol=1e-12, atol=1e-12)
    below = float(np.mean((r < e.value) & ~tie) + 0.5 * np.mean(tie)) if len(r) else 0.0
    if not 0 < below < 1 or tie.all():
        return None
    z0, a = float(norm.ppf(below)), acceleration(e.units)
    z = norm.ppf([(1 - level) / 2, (1 + level) / 2])
    q = norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    lo, hi = np.percentile(r, 100 * q)
    return float(lo), float(hi)


def _with(e: Estimate, iv: tuple[float, float] | None, method: str) -> Estimate | None:
    return None if iv is None else dataclasses.replace(e, low=iv[0], high=iv[1], method=method)


def _bias_corrected(e: Estimate) -> tuple[str, Estimate | None]:
    """The bias-corrected interval, named for what it is: BCa with an acceleration, BC without one."""
    bc = acceleration(e.units) == 0
    return ("BC", _with(e, bca(e, 0.95), "bc")) if bc else ("BCa", _with(e, bca(e, 0.95), "bca"))


def interval_alternatives(e: Estimate) -> list[tuple[str, str, Estimate]]:
    """``(choice, name, estimate)`` for every other interval method and level the estimate allows; for a count of
    intervals (:attr:`~trajectory_judge.analysis.paper.claims.Estimate.parts`), the count again under each alternative its
    parts allow (a part without that alternative keeps its own interval)."""
    if e.parts:
        return _count_alternatives(e)
    if e.method not in ("bootstrap", "clopper-pearson") or e.replicates is None:
        return []
    own = exact if e.method == "clopper-pearson" else percentile
    methods = {"bootstrap": ("percentile", percentile), "clopper-pearson": ("Clopper\u2013Pearson", exact)}
    out: list[tuple[str, str, Estimate | None]] = [
        (
            "interval",
            name,
            _with(e, f(e, 0.95), m),
        )
        for m, (name, f) in methods.items()
        if m != e.method
    ]
    out.append(("interval", *_bias_corrected(e)))
    out += [("level", f"{level:.0%}", _with(e, own(e, level), e.method)) for level in LEVELS]
    return [(c, n, x) for c, n, x in out if x is not None]


def _count_alternatives(e: Estimate) -> list[tuple[str, str, Estimate]]:
    per_part = [{name: (c, x) for c, name, x in interval_alternatives(p.estimate)} for p in e.parts]
    names = list(dict.fromkeys(name for alts in per_part for name in alts))
    out = []
    for name in names:
        choice = next(alts[name][0] for alts in per_part if name in alts)
        estimates = [alts[name][1] if name in alts else p.estimate for p, alts in zip(e.parts, per_part)]
        out.append((choice, name, e.recount(estimates)))
    return out


# --- p-values and the adjustment --------------------------------------------------------------------
def _tail(r: np.ndarray, mask: np.ndarray) -> float:
    return monte_carlo_p(int(mask.sum()), len(r))


def _rejects(stated: Stated, v: str) -> bool:
    return v in (CONFIRMED, NOT_BORNE_OUT) if stated.value is not None else v in (BORNE_OUT, NOT_BORNE_OUT)


def _tails(e: Estimate, a: float, b: float) -> tuple[float, float, float, float] | None:
    """One-sided p-values at the edges ``a`` <= ``b``: that the quantity is above ``b``, below ``a``, and (for the
    equivalence test) that it is above ``a`` and below ``b``; None without replicates or counts."""
    from scipy.stats import binom

    kn = proportion_counts(e)
    if e.method == "clopper-pearson" and kn is not None:
        k, n = kn
        clip = lambda x: min(max(x, 0.0), 1.0)
        return (
            float(binom.sf(k - 1, n, clip(b))),  # evidence the quantity is above b
            float(binom.cdf(k, n, clip(a))),  # evidence it is below a
            float(binom.sf(k - 1, n, clip(a))) if a > 0 else 0.0,  # evidence it is above a
            float(binom.cdf(k, n, clip(b))) if b < 1 else 0.0,  # evidence it is below b
        )
    if e.method == "bootstrap" and e.replicates is not None and len(_finite(e.replicates)):
        r = _finite(e.replicates)
        return _tail(r, r <= b), _tail(r, r >= a), _tail(r, r < a), _tail(r, r > b)  # the band is closed
    return None


def p_value(stated: Stated, e: Estimate | None) -> float | None:
    """The row's p-value (:data:`P_VALUES`); None when the data cannot give the quantity."""
    v = verdict(stated, e)[0]
    if e is None or math.isnan(e.value):
        return None
    if stated.value is None:
        tails = _tails(e, stated.boundary, stated.boundary)
        return (0.0 if _rejects(stated, v) else 1.0) if tails is None else min(1.0, 2 * tails[0], 2 * tails[1])
    a, b = tolerance_band(stated, e)
    tails = _tails(e, a, b)
    if tails is None:
        return 0.0 if _rejects(stated, v) else 1.0
    up, down, above_a, below_b = tails
    outside = min(1.0, 2 * up, 2 * down)  # that the quantity lies in the band
    inside = min(1.0, 2 * max(above_a, below_b))  # that it lies outside it
    return {CONFIRMED: inside, NOT_BORNE_OUT: outside}.get(v, min(inside, outside))


def holm(p: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (statsmodels' ``multipletests``)."""
    from statsmodels.stats.multitest import multipletests

    if not p:
        return []
    return [float(x) for x in multipletests(list(p), alpha=FAMILY_ALPHA, method="holm")[1]]


def _adjusted(stated: Stated, v: str, p_adj: float | None) -> str:
    if p_adj is None or not _rejects(stated, v) or p_adj < FAMILY_ALPHA:
        return v
    return CONSISTENT if stated.value is not None else NOT_CHECKABLE


# --- the rows -------------------------------------------------------------------------------------------------
def alternatives(claim: Claim, seeds: Mapping[str, Register] | None = None) -> tuple[Alternative, ...]:
    """``claim`` judged under every alternative of :data:`ALTERNATIVES` that applies to it; ``seeds`` holds the
    register recomputed at each other bootstrap seed, by name (:func:`seed_registers`)."""
    s, e = claim.stated, claim.estimate
    if e is None:
        return ()
    tried: list[tuple[str, str, Stated, Estimate]] = [(c, n, s, x) for c, n, x in interval_alternatives(e)]
    if sampled(e) or e.parts:
        for name, other in (seeds or {}).items():
            x = other[claim.key].estimate if claim.key in {c.key for c in other} else None
            if x is not None:
                tried.append(("seed", name, s, x))
    if s.in_words:
        literal = Stated(s.text, value=s.value, in_words=True)  # the fraction itself, on a proportion's scale
        tried.append(("reading", f"{s.text} read literally", literal, e))
    for var in claim.variants:
        tried.append((var.choice, var.name, var.stated or s, var.estimate or e))
    return tuple(Alternative(c, n, st, x, *verdict(st, x)) for c, n, st, x in tried)


def robustness(claims: Iterable[Claim], seeds: Mapping[str, Register] | None = None) -> dict[str, Robustness]:
    """Every claim's :class:`Robustness`, keyed by claim, the adjustment over all checkable claims together;
    ``seeds`` the register at each other bootstrap seed (:func:`seed_registers`; none: no seed alternative)."""
    items = list(claims)
    p = {c.key: p_value(c.stated, c.estimate) for c in items}
    keys = [k for k, x in p.items() if x is not None]
    adj = dict(zip(keys, holm([p[k] for k in keys])))  # type: ignore[misc]
    return {
        c.key: Robustness(
            c.key,
            c.verdict,
            alternatives(c, seeds),
            p[c.key],
            adj.get(c.key),
            _adjusted(c.stated, c.verdict, adj.get(c.key)),
        )
        for c in items
    }


def seed_registers(build: Callable[[int], Register], own: int, seeds: Sequence[int] = SEEDS) -> dict[str, Register]:
    """The register rebuilt by ``build`` at each of ``seeds`` other than ``own`` (the seed of the register being
    judged), by name (``seed 8``)."""
    return {f"seed {s}": build(s) for s in seeds if s != own}
