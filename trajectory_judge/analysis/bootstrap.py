"""Stratified paired percentile bootstrap, vectorised over replicates (Appendix F).

Shaped like :func:`scipy.stats.bootstrap`: data first, options keyword-only, validation in its
own function, and a frozen result that keeps the replicate distribution.

The unit of resampling is the row (a trajectory). Rows are resampled with replacement within
their stratum (the design cell), so every stratum keeps its size in every replicate. A
replicate is written as a vector of multiplicities ``w`` (how often each row was drawn), and a
statistic is any function of the weighted column sums ``w @ data``: counts, and ratios of
counts, for all judges at once. A block of replicates' ``(b, n)`` weight matrix times the
``(n, k)`` data gives those replicates without a Python loop, and because all statistics read the
same weights the resample is shared, which is what makes between-column deltas paired. The blocks
(:func:`block_weights`) hold a bounded number of weights whatever ``B`` and draw exactly the numbers
of drawing every replicate at once (:func:`stratified_draws`), so the result does not depend on them.

Interval methods, in order of precedence:

* ``structural``: the caller marks a statistic as structural (for instance every quality
  metric of a judge whose verdict is constant within each stratum) and its replicate
  distribution has no spread beyond floating-point summation noise (relative 1e-9); the
  interval is reported as ``low = high = estimate``.
* ``clopper-pearson``: the statistic is a proportion (the caller supplies successes and trials)
  observed at exactly 0 or 1, where the percentile bootstrap collapses to a point.
* ``bootstrap``: the percentile interval of the replicate distribution (NaN replicates, from a
  zero denominator in a replicate, are ignored).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

METHODS: tuple[str, ...] = ("bootstrap", "clopper-pearson", "structural")
"""Interval methods, as named in the report."""


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimates, intervals and the full replicate distribution of named statistics."""

    names: tuple[str, ...]
    """Statistic names, one per column of ``distribution``."""
    estimate: np.ndarray = field(repr=False)
    """Value of each statistic on the original sample (all weights 1)."""
    low: np.ndarray = field(repr=False)
    """Lower interval bound per statistic."""
    high: np.ndarray = field(repr=False)
    """Upper interval bound per statistic."""
    method: tuple[str, ...] = field(repr=False)
    """Interval method per statistic (one of :data:`METHODS`)."""
    distribution: np.ndarray = field(repr=False)
    """Replicate values, shape ``(resamples, len(names))``."""
    confidence_level: float = 0.95
    """Two-sided coverage of the intervals."""

    def index(self, name: str) -> int:
        """Column of a statistic by name."""
        return self.names.index(name)

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic: estimate, low, high, method."""
        import pandas as pd

        return pd.DataFrame(
            {"estimate": self.estimate, "low": self.low, "high": self.high, "method": list(self.method)},
            index=pd.Index(self.names, name="statistic"),
        )


def _validate(
    data: Any,
    strata: Any,
    resamples: int,
    confidence_level: float,
    batch: int | None,
    rng: Any,
) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    data = np.asarray(data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"data must be a 2-D (rows, columns) array, got shape {data.shape}")
    strata = np.asarray(strata)
    if strata.shape != (data.shape[0],):
        raise ValueError(f"strata must have one entry per row ({data.shape[0]}), got shape {strata.shape}")
    if not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    if batch is not None and (not isinstance(batch, (int, np.integer)) or batch < 1):
        raise ValueError(f"batch must be a positive integer or None, got {batch!r}")
    if not isinstance(rng, np.random.Generator):
        if rng is None or isinstance(rng, (int, np.integer)):
            rng = np.random.default_rng(rng)
        else:
            raise ValueError(f"rng must be a numpy Generator or an integer seed, got {type(rng).__name__}")
    return data, strata, rng


def strata_members(strata: Sequence[Any], order: Sequence[Any] | None = None) -> list[np.ndarray]:
    """Row indices of each stratum, strata in ``order`` first, then the rest sorted."""
    strata = list(strata)
    seen = list(dict.fromkeys(strata))
    keys = [s for s in (order or ()) if s in seen] + sorted(s for s in seen if s not in (order or ()))
    return [np.flatnonzero(np.asarray([s == k for s in strata])) for k in keys]


def stratified_draws(
    strata: Sequence[Any], *, resamples: int, rng: np.random.Generator, order: Sequence[Any] | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each stratum's rows and its draws, ``(resamples, size)`` positions among those rows: the random
    numbers :func:`stratified_indices` is made of, drawn in the same order."""
    return [
        (members, rng.integers(0, len(members), size=(resamples, len(members))))
        for members in strata_members(strata, order)
    ]


BLOCK_ELEMENTS = 1 << 23
"""Weights held at once when resampling in blocks: a block of replicates holds about this many
(64 MB of float64 weights, as many draws of its largest stratum at a time), whatever ``resamples``."""

BLOCK_ALIGN = 256
"""Blocks are a multiple of this many replicates, and none is shorter (a short rest joins the block
before it). OpenBLAS then sums each replicate's row as it does in one product of all replicates, on
one thread or more, so the float columns' sums (confidence, Brier, latency) keep their last bits."""


def block_bounds(n: int, resamples: int, batch: int | None = None) -> list[tuple[int, int]]:
    """``(start, stop)`` of each block of replicates: about :data:`BLOCK_ELEMENTS` weights of ``n``
    rows each (or ``batch`` replicates), rounded up to a multiple of :data:`BLOCK_ALIGN`."""
    want = batch if batch is not None else BLOCK_ELEMENTS // max(n, 1)
    step = max(BLOCK_ALIGN, -(-want // BLOCK_ALIGN) * BLOCK_ALIGN)
    starts = list(range(0, resamples, step))
    if len(starts) > 1 and resamples - starts[-1] < BLOCK_ALIGN:
        starts.pop()
    return [(a, b) for a, b in zip(starts, [*starts[1:], resamples])]


def stratum_starts(
    groups: Sequence[np.ndarray], *, resamples: int, rng: np.random.Generator, elements: int = 1 << 20
) -> list[Mapping[str, Any]]:
    """The generator's state where each stratum's draws begin in :func:`stratified_draws`.

    Walks every stratum but the last through its ``(resamples, size)`` draws in slices of about
    ``elements`` numbers, keeping none of them. Splitting one ``Generator.integers`` call into
    consecutive calls of fewer rows gives the same numbers and the same final state (numpy keeps the
    half-used 32-bit word in the bit generator's state, not in the call); the tests pin that."""
    starts = []
    for i, members in enumerate(groups):
        starts.append(rng.bit_generator.state)
        if i == len(groups) - 1:
            break
        k = len(members)
        step = max(1, elements // k)
        for s in range(0, resamples, step):
            rng.integers(0, k, size=(min(step, resamples - s), k))
    return starts


DRAW_ELEMENTS = 1 << 20
"""Draws of one stratum held at once while a block's weights are counted (8 MB of int64)."""


def _blocks(
    strata: Sequence[Any],
    resamples: int,
    rng: np.random.Generator,
    order: Sequence[Any] | None,
    batch: int | None,
    elements: int | None = None,
) -> Iterator[tuple[int, int, Iterator[tuple[np.ndarray, np.ndarray, int]]]]:
    """Per block, ``(start, stop, draws)``: ``draws`` gives ``(members, d, row)`` per stratum and, with
    ``elements``, per slice of about that many of its draws (rows ``row:row + len(d)`` of the block);
    consecutive slices of one ``integers`` call give its numbers (:func:`stratum_starts`)."""
    groups = strata_members(strata, order)
    states = stratum_starts(groups, resamples=resamples, rng=rng)

    def draws(start: int, stop: int) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        for i, members in enumerate(groups):
            k, rows = len(members), stop - start
            step = rows if elements is None else max(1, elements // max(k, 1))
            rng.bit_generator.state = states[i]
            for row in range(0, rows, step):
                yield members, rng.integers(0, k, size=(min(step, rows - row), k)), row
            states[i] = rng.bit_generator.state

    for start, stop in block_bounds(sum(len(m) for m in groups), resamples, batch):
        yield start, stop, draws(start, stop)
    rng.bit_generator.state = states[-1]


def block_draws(
    strata: Sequence[Any],
    *,
    resamples: int,
    rng: np.random.Generator,
    order: Sequence[Any] | None = None,
    batch: int | None = None,
) -> Iterator[tuple[int, int, list[tuple[np.ndarray, np.ndarray]]]]:
    """:func:`stratified_draws` a block of replicates at a time (:func:`block_bounds`): ``(start, stop,
    draws)`` where each stratum's draws are rows ``start:stop`` of its draws there, the same numbers.

    A first pass records where each stratum's draws begin (:func:`stratum_starts`); each block then
    continues every stratum from where its previous block stopped. ``rng`` ends where
    :func:`stratified_draws` leaves it."""
    for start, stop, draws in _blocks(strata, resamples, rng, order, batch):
        yield start, stop, [(members, d) for members, d, _ in draws]


def block_weights(
    strata: Sequence[Any],
    *,
    resamples: int,
    rng: np.random.Generator,
    order: Sequence[Any] | None = None,
    batch: int | None = None,
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Rows ``start:stop`` of ``count_weights(stratified_indices(...))``, block by block, drawing and
    counting a slice of one stratum's draws at a time (:data:`DRAW_ELEMENTS`): a block holds its weights
    and a few megabytes of draws."""
    n = len(strata)
    for start, stop, draws in _blocks(strata, resamples, rng, order, batch, DRAW_ELEMENTS):
        w = np.zeros((stop - start, n))
        for members, d, row in draws:
            k, m = len(members), len(d)
            d += np.arange(m)[:, None] * k  # in place: each replicate's draws, offset to its own row
            w[row : row + m, members] = np.bincount(d.ravel(), minlength=m * k).reshape(m, k)
            del d
        yield start, stop, w
        del w  # before the next block's, so that one block is held at a time


def stratified_indices(
    strata: Sequence[Any], *, resamples: int, rng: np.random.Generator, order: Sequence[Any] | None = None
) -> np.ndarray:
    """Resampled row indices, shape ``(resamples, n)``; each row draws every stratum's size from it."""
    return np.concatenate(
        [members[d] for members, d in stratified_draws(strata, resamples=resamples, rng=rng, order=order)], axis=1
    )


def draw_weights(draws: Sequence[tuple[np.ndarray, np.ndarray]], n: int, start: int, stop: int) -> np.ndarray:
    """``count_weights(stratified_indices(...)[start:stop], n)`` from the draws, without the index matrix."""
    w = np.zeros((stop - start, n))
    for members, d in draws:
        part, k = d[start:stop], len(members)
        flat = (np.arange(len(part))[:, None] * k + part).ravel()
        w[:, members] = np.bincount(flat, minlength=len(part) * k).reshape(len(part), k)
    return w


def count_weights(indices: np.ndarray, n: int) -> np.ndarray:
    """Multiplicity of each of ``n`` rows in each replicate: ``(B, m)`` indices -> ``(B, n)`` counts."""
    b = indices.shape[0]
    flat = (np.arange(b)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def distinct_columns(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``data`` and, for each column of ``data``, its index among them
    (``data == distinct[:, inverse]``). A report's columns repeat: every judge has the labels'
    counts, and most confusion cells are zero."""
    # a column's digest -> the distinct columns with it; one column is copied at a time, and columns are
    # the same when their bytes are (the digest only narrows the search)
    slots: dict[bytes, list[int]] = {}
    keep: list[int] = []
    inverse = np.empty(data.shape[1], dtype=np.intp)
    for j in range(data.shape[1]):
        col = np.ascontiguousarray(data[:, j]).tobytes()
        same = slots.setdefault(hashlib.blake2b(col, digest_size=16).digest(), [])
        found = next((s for s in same if np.ascontiguousarray(data[:, keep[s]]).tobytes() == col), None)
        if found is None:
            found = len(keep)
            same.append(found)
            keep.append(j)
        inverse[j] = found
    return data[:, keep], inverse


def replicate_sums(distinct: np.ndarray, inverse: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``weights @ data``, ``(B, k)``, multiplying only the distinct columns of ``data`` (:func:`distinct_columns`)
    and spreading them back. Each sum is the same dot product over the same rows in the same order,
    so the result is the full product in exact arithmetic, to the last bit on integer-valued columns, and the same bits
    on every call (BLAS fixes no summation order, so float columns may differ from its full product in the last bits)."""
    return (weights @ distinct)[:, inverse]


def clopper_pearson(successes: float, trials: float, confidence_level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for ``successes`` out of ``trials``.

    The bounds are beta quantiles, computed as the inverse regularised incomplete beta function
    (what ``scipy.stats.beta.ppf`` evaluates). At 0 or ``trials`` successes, the only case the
    report needs, the one bound is a beta quantile with a parameter of 1, in closed form, written
    the way scipy's Boost backend evaluates it (bit for bit, so the report needs no scipy); otherwise
    ``scipy.special.betaincinv``.
    """
    alpha = 1 - confidence_level
    k, n = successes, trials
    if k == 0 and n > 0:
        # Beta(1, n) at 1 - alpha/2: Boost swaps to Beta(n, 1) at q = 1 - (1 - alpha/2) and returns 1 - q**(1/n) as -expm1
        return 0.0, -math.expm1(math.log(1 - (1 - alpha / 2)) / float(n))
    if k == n and n > 0:
        return (alpha / 2) ** (1 / float(n)), 1.0  # Beta(n, 1) at alpha/2: its cdf is x**n
    from scipy.special import betaincinv

    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    return low, high


def percentile_interval(distribution: np.ndarray, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds per column, ignoring NaN replicates."""
    q = [50 * (1 - confidence_level), 100 - 50 * (1 - confidence_level)]
    low = np.full(distribution.shape[1], np.nan)
    high = np.full(distribution.shape[1], np.nan)
    has_nan = np.isnan(distribution).any(axis=0)
    if (~has_nan).any():
        low[~has_nan], high[~has_nan] = np.percentile(
            distribution[:, ~has_nan], q, axis=0, overwrite_input=True
        )  # a copy
    for j in np.flatnonzero(has_nan):
        col = distribution[:, j]
        if not np.isnan(col).all():
            low[j], high[j] = np.nanpercentile(col, q)
    return low, high


def _methods(
    estimate: np.ndarray,
    distribution: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    exact: tuple[np.ndarray, np.ndarray] | None,
    structural: np.ndarray | None,
    confidence_level: float,
) -> tuple[str, ...]:
    methods = ["bootstrap"] * len(estimate)
    spread = np.nanmax(distribution, axis=0, initial=-np.inf) - np.nanmin(distribution, axis=0, initial=np.inf)
    for j in range(len(estimate)):
        flat = spread[j] <= 1e-9 * max(1.0, abs(estimate[j]))  # summation-order noise only
        if structural is not None and structural[j] and flat:
            methods[j], low[j], high[j] = "structural", estimate[j], estimate[j]
        elif exact is not None and np.isfinite(exact[1][j]) and exact[1][j] > 0 and estimate[j] in (0.0, 1.0):
            methods[j] = "clopper-pearson"
            low[j], high[j] = clopper_pearson(exact[0][j], exact[1][j], confidence_level)
    return tuple(methods)


def bootstrap(
    data: Any,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    strata: Any,
    names: Sequence[str] | None = None,
    resamples: int = 10_000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    strata_order: Sequence[Any] | None = None,
    exact: tuple[np.ndarray, np.ndarray] | None = None,
    structural: np.ndarray | None = None,
) -> BootstrapResult:
    """Stratified percentile bootstrap of statistics of weighted column sums.

    ``data`` is ``(n, k)``; ``statistic`` maps sums of shape ``(..., k)`` to ``(..., m)``.
    ``exact`` gives (successes, trials) per statistic (NaN where it is not a proportion) and
    ``structural`` a boolean per statistic; see the module docstring for how they are used.
    Replicates are drawn and weighed a block at a time (:func:`block_bounds`; ``batch`` replicates,
    or None for blocks of about :data:`BLOCK_ELEMENTS` weights), so memory does not grow with
    ``resamples`` times the rows. The draws are those of :func:`stratified_draws` whatever the block,
    and the blocks are aligned so that the sums keep their bits: the result does not depend on ``batch``.
    """
    data, strata, gen = _validate(data, strata, resamples, confidence_level, batch, rng)
    estimate = np.asarray(statistic(data.sum(axis=0)), dtype=float)
    distinct, inverse = distinct_columns(data)
    distribution = np.empty((resamples, len(estimate)))
    for start, stop, w in block_weights(strata, resamples=resamples, rng=gen, order=strata_order, batch=batch):
        distribution[start:stop] = statistic(replicate_sums(distinct, inverse, w))
        del w
    low, high = percentile_interval(distribution, confidence_level)
    method = _methods(estimate, distribution, low, high, exact, structural, confidence_level)
    names = tuple(names) if names is not None else tuple(str(i) for i in range(len(estimate)))
    if len(names) != len(estimate):
        raise ValueError(f"{len(names)} names for {len(estimate)} statistics")
    return BootstrapResult(names, estimate, low, high, method, distribution, confidence_level)


def bootstrap_loop(
    n: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    strata: Any,
    resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    strata_order: Sequence[Any] | None = None,
) -> np.ndarray:
    """Reference implementation: one Python call of ``statistic(indices)`` per replicate.

    ``statistic`` receives the resampled row indices of one replicate. With the same seed it
    sees exactly the resamples :func:`bootstrap` weights, so the two distributions agree.
    """
    _, strata, gen = _validate(np.zeros((n, 1)), strata, resamples, 0.95, None, rng)
    indices = stratified_indices(strata, resamples=resamples, rng=gen, order=strata_order)
    return np.asarray([np.asarray(statistic(row), dtype=float) for row in indices])
