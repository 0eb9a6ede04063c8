"""Stratified paired percentile bootstrap, vectorised over replicates (Appendix F).

Shaped like :func:`scipy.stats.bootstrap`: data first, options keyword-only, validation in its
own function, and a frozen result that keeps the replicate distribution.

The unit of resampling is the row (a trajectory). Rows are resampled with replacement within
their stratum (the design cell), so every stratum keeps its size in every replicate. A
replicate is written as a vector of integer multiplicities ``w`` (how often each row was drawn), and a
statistic is any function of the weighted column sums ``w @ data``: counts, and ratios of
counts, for all judges at once. All statistics read the same weights, so the resample is shared, which
is what makes between-column deltas paired.

Two rules make every digit independent of how the replicates are processed:

* **The draws do not depend on the blocks.** The replicates are cut into fixed chunks of
  :data:`CHUNK` replicates, and chunk ``c`` draws from its own stream, the ``c``-th child of one
  :class:`numpy.random.SeedSequence` whose entropy is drawn from ``rng`` (:func:`chunk_generator`).
  Replicate ``b``'s draws are therefore a function of the seed, the strata and ``b`` alone; the blocks
  a caller processes at a time (``batch``, which bounds memory) only decide which chunks are counted together.
* **Every sum is exact.** A weighted sum of integer-valued columns (the counts) is an integer, and
  every partial sum is an integer below ``2**53``, so it is exact in float64 whatever order BLAS adds
  it in, on one thread or more. A float column (a confidence, a latency) is first written exactly as
  a few integer-valued *limbs* on a fixed binary grid (:class:`ColumnSums`); each limb's sum is exact,
  and the limbs are recombined element by element in a fixed order. What a statistic then sums over
  a small axis of those sums (bins, types, score groups) it sums left to right (:func:`ordered_sum`).

Interval methods, in order of precedence:

* ``structural``: the caller marks a statistic as structural (for instance every quality
  metric of a judge whose verdict is constant within each stratum) and its replicate
  distribution has no spread (relative 1e-9); the interval is reported as ``low = high = estimate``.
* ``clopper-pearson``: the statistic is a proportion (the caller supplies successes and trials)
  observed at exactly 0 or 1, where the percentile bootstrap collapses to a point.
* ``bootstrap``: the percentile interval of the replicate distribution (NaN replicates, from a
  zero denominator in a replicate, are ignored).
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


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
    """Interval method per statistic: ``bootstrap``, ``clopper-pearson`` or ``structural``."""
    distribution: np.ndarray = field(repr=False)
    """Replicate values, shape ``(resamples, len(names))``."""
    confidence_level: float = 0.95
    """Two-sided coverage of the intervals."""

    def index(self, name: str) -> int:
        """Column of a statistic by name."""
        return self.names.index(name)

    def part(self, start: int, stop: int) -> BootstrapResult:
        """The statistics of columns ``start:stop`` alone (the same replicates)."""
        s = slice(start, stop)
        return BootstrapResult(
            self.names[s],
            self.estimate[s],
            self.low[s],
            self.high[s],
            self.method[s],
            self.distribution[:, s],
            self.confidence_level,
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic: estimate, low, high, method."""
        import pandas as pd

        return pd.DataFrame(
            {"estimate": self.estimate, "low": self.low, "high": self.high, "method": list(self.method)},
            index=pd.Index(self.names, name="statistic"),
        )


def _check_finite(data: Any) -> None:
    data = np.asarray(data, dtype=float)
    for j in range(0, data.shape[1], 64):  # a few columns at a time: no flag per element of the whole matrix
        if not np.isfinite(data[:, j : j + 64]).all():
            raise ValueError("data must be finite: a NaN or infinite value has no weighted sum")


def _validate(
    n: int, strata: Any, resamples: int, confidence_level: float, batch: int | None, rng: Any
) -> tuple[np.ndarray, np.random.Generator]:
    strata = np.asarray(strata)
    if strata.shape != (n,):
        raise ValueError(f"strata must have one entry per row ({n}), got shape {strata.shape}")
    if not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    if batch is not None and (not isinstance(batch, (int, np.integer)) or batch < 1):
        raise ValueError(f"batch must be a positive integer or None, got {batch!r}")
    if not (rng is None or isinstance(rng, (int, np.integer, np.random.Generator))):
        raise ValueError(f"rng must be a numpy Generator or an integer seed, got {type(rng).__name__}")
    return strata, np.random.default_rng(rng)  # a Generator is returned as it is


def strata_members(strata: Sequence[Any], order: Sequence[Any] | None = None) -> list[np.ndarray]:
    """Row indices of each stratum, strata in ``order`` first, then the rest sorted."""
    strata = list(strata)
    seen = list(dict.fromkeys(strata))
    keys = [s for s in (order or ()) if s in seen] + sorted(s for s in seen if s not in (order or ()))
    return [np.flatnonzero(np.asarray([s == k for s in strata])) for k in keys]


CHUNK = 64
"""Replicates drawn from one child stream (:func:`chunk_generator`): a fixed number, whatever the blocks."""


def replicate_root(rng: np.random.Generator) -> np.random.SeedSequence:
    """The root of the replicates' streams: a :class:`~numpy.random.SeedSequence` of 128 bits drawn from ``rng``
    (so an integer seed and ``default_rng`` of it give the same replicates)."""
    return np.random.SeedSequence([int(x) for x in rng.integers(0, 2**32, size=4, dtype=np.uint64)])


def chunk_generator(root: np.random.SeedSequence, chunk: int) -> np.random.Generator:
    """The stream of chunk ``chunk`` (replicates ``chunk * CHUNK`` onwards): ``root.spawn(chunk + 1)[chunk]``,
    made without spawning the others."""
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, chunk), pool_size=root.pool_size)
    return np.random.Generator(np.random.PCG64(child))


def chunk_bounds(resamples: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each chunk of :data:`CHUNK` replicates (the last may be shorter)."""
    return [(a, min(a + CHUNK, resamples)) for a in range(0, resamples, CHUNK)]


def _chunk_draws(
    groups: Sequence[np.ndarray], root: np.random.SeedSequence, chunk: int, rows: int
) -> Iterator[np.ndarray]:
    """Each stratum's draws for the first ``rows`` replicates of one chunk, ``(rows, size)`` positions among its
    rows, strata in order. A whole chunk is always drawn, so a replicate's draws do not depend on ``resamples``."""
    gen = chunk_generator(root, chunk)
    for members in groups:
        yield gen.integers(0, len(members), size=(CHUNK, len(members)))[:rows]


def stratified_draws(
    strata: Sequence[Any], *, resamples: int, rng: np.random.Generator, order: Sequence[Any] | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each stratum's rows and its draws, ``(resamples, size)`` positions among those rows: the random
    numbers :func:`stratified_indices` and :func:`block_weights` are made of, chunk by chunk."""
    groups = strata_members(strata, order)
    root = replicate_root(rng)
    chunks = [list(_chunk_draws(groups, root, c, b - a)) for c, (a, b) in enumerate(chunk_bounds(resamples))]
    return [(members, np.concatenate([d[i] for d in chunks])) for i, members in enumerate(groups)]


def _chunk_weights(
    groups: Sequence[np.ndarray],
    n: int,
    root: np.random.SeedSequence,
    chunk: int,
    rows: int,
    out: np.ndarray | None = None,
    kept: KeptCounts | None = None,
    memo: tuple[Any, ...] | None = None,
) -> np.ndarray:
    """The multiplicities of one chunk's replicates, ``(rows, n)`` (into ``out`` if given), one stratum's draws
    held at a time; with ``kept`` and ``memo`` (the pass's key, :func:`_pass_key`) counted once and kept there."""
    w = np.zeros((rows, n)) if out is None else out
    key = None if memo is None else (*memo, chunk, rows)
    if kept is not None and key is not None and (held := kept.get(key)) is not None:
        w[...] = held
        return w
    offset = np.arange(rows)[:, None]
    for members, d in zip(groups, _chunk_draws(groups, root, chunk, rows)):
        k = len(members)
        d += offset * k  # in place: each replicate's draws, offset to its own row
        counts = np.bincount(d.ravel(), minlength=rows * k).reshape(rows, k)
        if members[-1] - members[0] == k - 1:  # the stratum's rows are contiguous: a slice, not a scatter
            w[:, members[0] : members[0] + k] = counts
        else:
            w[:, members] = counts
    if kept is not None and key is not None:
        kept.put(key, w.astype(_count_type(groups)))
    return w


MEMO_BYTES = 1 << 24
"""Counted chunks a :class:`KeptCounts` holds at most by default (16 MB)."""


class KeptCounts:
    """Counted chunks of replicates kept for the next pass over the same units, strata and seed, by whoever made this
    object and passes it to :func:`bootstrap` (a chapter bootstraps one sample many times, at one seed; a report
    keeps the counts of its own passes, :attr:`~trajectory_judge.analysis.core.report.Report.counts`).

    At most ``limit`` bytes are held, the least recently used dropped first, and nothing of a pass whose counts would
    not fit in half of it, so that a large sample's memory stays that of one block. A kept chunk holds the same
    integers as a chunk counted again, so what is kept changes no digit, only the time."""

    def __init__(self, limit: int = MEMO_BYTES) -> None:
        self.limit = limit
        self._chunks: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self.held = 0
        """Bytes held."""

    def get(self, key: tuple[Any, ...]) -> np.ndarray | None:
        """The chunk kept under ``key``, or None."""
        kept = self._chunks.get(key)
        if kept is not None:
            self._chunks.move_to_end(key)
        return kept

    def put(self, key: tuple[Any, ...], counts: np.ndarray) -> None:
        """Keep ``counts``, then drop the least recently used until at most :attr:`limit` bytes are held."""
        if key not in self._chunks:
            self._chunks[key] = counts
            self.held += counts.nbytes
        while self.held > self.limit:
            self.held -= self._chunks.popitem(last=False)[1].nbytes


def _count_type(groups: Sequence[np.ndarray]) -> type[np.unsignedinteger[Any]]:
    """The smallest unsigned integer that holds a multiplicity: a row is drawn at most its stratum's size times."""
    largest = max((len(m) for m in groups), default=0)
    return np.uint8 if largest <= 0xFF else np.uint16 if largest <= 0xFFFF else np.uint32


def _pass_key(
    groups: Sequence[np.ndarray], n: int, root: np.random.SeedSequence, resamples: int, kept: KeptCounts | None
) -> tuple[Any, ...] | None:
    """What a pass's counts are a function of (the seed's root, the units and their strata), or ``None`` for a
    pass not to keep (no ``kept``, or counts larger than half its limit)."""
    if kept is None or resamples * n * np.dtype(_count_type(groups)).itemsize > kept.limit // 2:
        return None
    digest = hashlib.blake2b(digest_size=16)
    for members in groups:
        digest.update(np.asarray(members, dtype=np.int64).tobytes())
        digest.update(b"/")
    return (repr(root.entropy), tuple(root.spawn_key), root.pool_size, n, digest.hexdigest())


BLOCK_ELEMENTS = 1 << 23
"""Weights held at once when resampling in blocks: a block of replicates holds at most about this many
(64 MB of float64 weights), whatever ``resamples``."""

BLOCK_REPLICATES = 2048
"""Replicates of a block at most: more only makes the block's arrays outgrow the processor's caches."""


def block_bounds(n: int, resamples: int, batch: int | None = None) -> list[tuple[int, int]]:
    """``(start, stop)`` of each block of replicates: ``batch`` replicates, or :data:`BLOCK_REPLICATES` and at
    most about :data:`BLOCK_ELEMENTS` weights of ``n`` rows each (at least one replicate)."""
    step = batch if batch is not None else max(1, min(BLOCK_REPLICATES, BLOCK_ELEMENTS // max(n, 1)))
    return [(a, min(a + step, resamples)) for a in range(0, resamples, step)]


def cluster_index(strata: Sequence[Any], clusters: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """Each row's cluster as an index (clusters numbered in the order they first appear) and each cluster's
    stratum; :class:`ValueError` when a cluster's rows lie in two strata (a cluster is drawn whole)."""
    if len(clusters) != len(strata):
        raise ValueError(f"clusters must have one entry per row ({len(strata)}), got {len(clusters)}")
    number: dict[Any, int] = {}
    of_row = np.fromiter((number.setdefault(c, len(number)) for c in clusters), dtype=np.intp, count=len(clusters))
    stratum: list[Any] = [None] * len(number)
    seen = [False] * len(number)
    for i, s in zip(of_row, strata):
        if not seen[i]:
            stratum[i], seen[i] = s, True
        elif stratum[i] != s:
            raise ValueError("a cluster's rows must lie in one stratum: it is drawn whole")
    return of_row, stratum


def block_weights(
    strata: Sequence[Any],
    *,
    resamples: int,
    rng: np.random.Generator,
    order: Sequence[Any] | None = None,
    batch: int | None = None,
    clusters: Sequence[Any] | None = None,
    kept: KeptCounts | None = None,
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Rows ``start:stop`` of each row's multiplicity in each replicate, block by block (:func:`block_bounds`).

    Each chunk of :data:`CHUNK` replicates is drawn from its own stream and counted once; a block copies
    the rows of the chunks it covers, so a block holds its weights and one chunk's. With ``clusters`` (one
    key per row) whole clusters are drawn, within each stratum, and every row weighs as often as its
    cluster was drawn: a cluster bootstrap, exact in integers as the rows' is. With ``kept`` the counted chunks
    are kept there for a later pass over the same units at the same seed (:class:`KeptCounts`)."""
    n, root = len(strata), replicate_root(rng)
    if clusters is not None:
        of_row, cluster_strata = cluster_index(strata, clusters)
        groups = strata_members(cluster_strata, order)
        m = len(cluster_strata)
        for start, stop, cw in _blocks(groups, m, root, resamples, batch, n, kept):
            yield start, stop, cw[:, of_row]
        return
    yield from _blocks(strata_members(strata, order), n, root, resamples, batch, n, kept)


def _blocks(
    groups: Sequence[np.ndarray],
    n: int,
    root: np.random.SeedSequence,
    resamples: int,
    batch: int | None,
    rows: int,
    kept: KeptCounts | None,
) -> Iterator[tuple[int, int, np.ndarray]]:
    """:func:`block_weights` over ``n`` units drawn by ``groups`` (rows, or clusters), blocks sized for ``rows``."""
    held: tuple[int, np.ndarray] | None = None  # the last chunk counted: consecutive blocks may share it
    memo = _pass_key(groups, n, root, resamples, kept)
    for start, stop in block_bounds(rows, resamples, batch):
        w = np.empty((stop - start, n))
        for c in range(start // CHUNK, (stop - 1) // CHUNK + 1):
            lo, hi = c * CHUNK, min((c + 1) * CHUNK, resamples)
            if start <= lo and hi <= stop:  # the whole chunk in this block: counted in place
                _chunk_weights(groups, n, root, c, hi - lo, out=w[lo - start : hi - start], kept=kept, memo=memo)
                continue
            if held is None or held[0] != c:
                held = None  # before the next chunk's, so that one chunk is held at a time
                held = (c, _chunk_weights(groups, n, root, c, hi - lo, kept=kept, memo=memo))
            a, b = max(lo, start), min(hi, stop)
            w[a - start : b - start] = held[1][a - lo : b - lo]
        yield start, stop, w
        del w  # before the next block's, so that one block is held at a time


def stratified_indices(
    strata: Sequence[Any], *, resamples: int, rng: np.random.Generator, order: Sequence[Any] | None = None
) -> np.ndarray:
    """Resampled row indices, shape ``(resamples, n)``; each row draws every stratum's size from it."""
    draws = stratified_draws(strata, resamples=resamples, rng=rng, order=order)
    if not draws:
        return np.zeros((resamples, 0), dtype=np.intp)
    return np.concatenate([members[d] for members, d in draws], axis=1)


def _limb_layout(
    limbs_of: Callable[[int], tuple[list[np.ndarray], float]], d: int, bits: int
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]], dict[tuple[int, int], int], np.ndarray]:
    """Where the limbs of ``d`` distinct columns go: each column's leading limb's worth, per further level the
    columns that have one (with their columns and worth), the column of each (column, level), and each limb
    column's largest magnitude."""
    scale, count, tops = np.ones(d), np.ones(d, dtype=np.intp), []
    for j in range(d):
        limbs, scale[j] = limbs_of(j)
        count[j] = len(limbs)
        tops.append([int(np.max(np.abs(limb), initial=0)) for limb in limbs])
    rest, slots = [], {(j, 0): j for j in range(d)}
    width = d
    for level in range(1, int(count.max(initial=1))):
        have = np.flatnonzero(count > level)
        slots |= {(int(j), level): width + i for i, j in enumerate(have)}
        rest.append((have, np.arange(width, width + len(have)), scale[have] * 2.0 ** (-level * bits)))
        width += len(have)
    top = np.zeros(width, dtype=np.int64)
    for (j, level), c in slots.items():
        top[c] = tops[j][level]
    return scale, rest, slots, top


def _digit_places(need: np.ndarray, bits: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per place of ``bits``-bit digits, lowest first: the limbs with a digit there (``need`` digits each), the
    digits' columns and the place's worth; every limb's lowest digit comes first, in the limbs' order."""
    places, at = [], 0
    for place in range(int(need.max())):
        have = np.flatnonzero(need > place)
        places.append((have, np.arange(at, at + len(have)), float(2 ** (place * bits))))
        at += len(have)
    return places


def _columns_of(data: np.ndarray | Sequence[np.ndarray], rows: np.ndarray | None) -> Callable[[int], np.ndarray]:
    """Column ``j`` of ``data`` (an array, or blocks of columns side by side), rows in the order ``rows``."""
    blocks = [data] if isinstance(data, np.ndarray) else list(data)
    starts = np.cumsum([0, *(np.shape(b)[1] for b in blocks)])

    def column(j: int) -> np.ndarray:
        i = int(np.searchsorted(starts, j, side="right")) - 1
        col = np.asarray(blocks[i][:, j - starts[i]], dtype=float)
        return np.ascontiguousarray(col if rows is None else col[rows])

    return column


def _distinct(column: Callable[[int], np.ndarray], k: int) -> tuple[list[int], np.ndarray]:
    """The first of each set of equal columns among ``column(0) ... column(k - 1)``, and each column's among them."""
    # a column's digest -> the distinct columns with it; columns are the same when their bytes are (the digest
    # only narrows the search)
    slots: dict[bytes, list[int]] = {}
    keep: list[int] = []
    inverse = np.empty(k, dtype=np.intp)
    for j in range(k):
        col = column(j).tobytes()
        same = slots.setdefault(hashlib.blake2b(col, digest_size=16).digest(), [])
        found = next((s for s in same if column(keep[s]).tobytes() == col), None)
        if found is None:
            found = len(keep)
            same.append(found)
            keep.append(j)
        inverse[j] = found
    return keep, inverse


def distinct_columns(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``data`` and, for each column of ``data``, its index among them
    (``data == distinct[:, inverse]``). A report's columns repeat: every judge has the labels'
    counts, and most confusion cells are zero."""
    keep, inverse = _distinct(_columns_of(data, None), data.shape[1])
    return data[:, keep], inverse


MAX_LIMBS = 3
"""Limbs a float column is written in at most (:class:`ColumnSums`); a column whose values span more binary
places than they hold is rounded to the finest grid they allow (a relative 2**-100 or so of its largest value)."""


def limb_bits(n: int) -> int:
    """Bits per limb for ``n`` rows: a replicate's weights sum to ``n``, so a sum of ``n`` weighted limbs below
    ``2**bits`` stays below ``2**53``, where float64 holds every integer."""
    return 53 - max(n, 1).bit_length()


def _limbs(x: np.ndarray, bits: int) -> tuple[list[np.ndarray], int]:
    """``x`` as integer-valued limbs ``L_0 ... L_{m-1}`` (most significant first, each below ``2**bits`` in
    magnitude) with ``x == sum_l L_l * 2**(e - l * bits)``; returns the limbs and ``e``, the first limb's scale."""
    nz = x[x != 0]
    mant, exp = np.frexp(np.abs(nz))  # |x| = mant * 2**exp, 0.5 <= mant < 1
    sig = np.ldexp(mant, 53).astype(np.int64)  # the 53-bit significand, exactly
    low = np.frexp((sig & -sig).astype(float))[1] - 1  # its lowest set bit
    top, grid = int(exp.max()), int((exp - 53 + low).min())  # |x| < 2**top; every x a multiple of 2**grid
    count = min(MAX_LIMBS, -(-(top - grid) // bits))
    grid = top - count * bits if top - grid > count * bits else grid
    sign, rest = np.sign(x), np.round(np.ldexp(np.abs(x), -grid))  # |x| on the grid: exact unless rounded
    out = []
    for level in range(count - 1, -1, -1):  # the grid's digits in base 2**bits, from the top
        digit = np.floor(np.ldexp(rest, -level * bits))
        rest = rest - np.ldexp(digit, level * bits)  # exact: the lower places of a 53-bit significand
        out.append(sign * digit)
    return out, grid + (count - 1) * bits


@dataclass(frozen=True)
class ColumnSums:
    """``weights @ data`` for replicates of integer weights summing to the number of rows, with every sum
    exact (or, for a float column, the same bits) whatever the order BLAS adds in, the block or the threads.

    The distinct columns of ``data`` (:func:`distinct_columns`) are written as integer-valued limbs: a column
    of integers below :func:`limb_bits` is its own one limb; a float column is put on the finest binary grid
    its values lie on and cut into at most :data:`MAX_LIMBS` limbs (:func:`_limbs`). One matrix product sums
    every limb exactly, and each float column is rebuilt from its limbs' sums, most significant first, element
    by element: the same operations on the same exact integers, so the same bits.

    The product itself is made in float32 where that is cheaper (:func:`_digits`): each limb is cut again into
    digits small enough that every partial sum of a replicate is an integer below ``2**24``, exact in float32
    in any order, and each limb's sum is put back together from its digits' sums in float64, exactly. The
    limbs' sums, and so every bit of the result, are the same either way."""

    limbs: np.ndarray = field(repr=False)
    """``(n, m)`` integer-valued limbs; the first ``d`` are the distinct columns' leading limbs (``(0, m)`` when
    :attr:`digits` stand for them)."""
    scale: np.ndarray = field(repr=False)
    """``(d,)`` the power of two each distinct column's leading limb is worth."""
    rest: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] = field(repr=False)
    """Per further limb, in order: the distinct columns that have it, its columns in ``limbs`` and its scale."""
    inverse: np.ndarray = field(repr=False)
    """For each column of ``data``, its distinct column."""
    scaled: np.ndarray = field(repr=False)
    """The distinct columns whose leading limb is worth another power of two than 1."""
    digits: np.ndarray | None = field(default=None, repr=False)
    """``(n, q)`` float32 digits of the limbs (:func:`_digits`), or None to multiply the limbs in float64."""
    places: tuple[tuple[np.ndarray, np.ndarray, float], ...] = field(default=(), repr=False)
    """Per place of the digits, lowest first: the limbs that have a digit there, its columns and its worth."""

    @classmethod
    def of(cls, data: np.ndarray | Sequence[np.ndarray], rows: np.ndarray | None = None) -> ColumnSums:
        """The limbs of ``data`` (``(n, k)``, finite; or blocks of its columns side by side), its rows taken in the
        order ``rows`` if given. A column is read at a time: besides ``data``, only the limbs (or digits) are held."""
        blocks = [data] if isinstance(data, np.ndarray) else list(data)
        n = len(rows) if rows is not None else np.shape(blocks[0])[0] if blocks else 0
        column = _columns_of(blocks, rows)
        keep, inverse = _distinct(column, sum(np.shape(b)[1] for b in blocks))
        d, bits = len(keep), limb_bits(n)

        def limbs_of(j: int) -> tuple[list[np.ndarray], float]:
            x = column(keep[j])
            if np.all(np.abs(x) < 2.0**bits) and np.array_equal(x, np.round(x)):
                return [x], 1.0
            limbs, e = _limbs(x, bits)
            return limbs, 2.0**e

        # first pass: how many limbs each column has and how large they are; the limbs are made again below
        scale, rest, slots, top = _limb_layout(limbs_of, d, bits)
        width = len(top)
        digit_bits = 24 - max(n, 1).bit_length()
        need = np.maximum(1, -(-np.asarray([int(t).bit_length() for t in top], dtype=np.intp) // max(digit_bits, 1)))
        places: list[tuple[np.ndarray, np.ndarray, float]] = []
        if digit_bits >= 1 and width > 0 and need.sum() <= 2 * width:  # float32 digits at most twice the columns
            places = _digit_places(need, digit_bits)
            matrix, digits = np.zeros((0, width)), np.empty((n, int(need.sum())), dtype=np.float32)
            where = {(int(c), p): int(cols[i]) for p, (have, cols, _) in enumerate(places) for i, c in enumerate(have)}
        else:
            matrix, digits = np.empty((n, width)), None
        # second pass: every limb into its column of the matrix, or cut into its digits
        for j in range(d):
            for level, limb in enumerate(limbs_of(j)[0]):
                c = slots[(j, level)]
                if digits is None:
                    matrix[:, c] = limb
                    continue
                whole, sign = np.abs(limb).astype(np.int64), np.sign(limb)
                for place in range(int(need[c])):
                    digits[:, where[(c, place)]] = sign * ((whole >> (place * digit_bits)) & ((1 << digit_bits) - 1))
        return cls(matrix, scale, tuple(rest), inverse, np.flatnonzero(scale != 1.0), digits, tuple(places))

    def _product(self, weights: np.ndarray) -> np.ndarray:
        """``weights @ limbs``, every element exact."""
        if self.digits is None:
            return weights @ self.limbs  # integers below 2**53 throughout: exact in any order
        q = weights.astype(np.float32) @ self.digits  # integers below 2**24 throughout: exact in any order
        m = self.limbs.shape[1]
        p = q[:, :m].astype(np.float64)  # every limb's lowest digit comes first
        for limbs, at, worth in self.places[1:]:
            p[:, limbs] += q[:, at] * worth  # integers below 2**53: exact
        return p

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        """``(B, n)`` integer weights -> ``(B, k)`` column sums."""
        p = self._product(weights)
        s = p[:, : len(self.scale)]  # the integer columns' sums as they are
        scaled = self.scaled
        s[:, scaled] = s[:, scaled] * self.scale[scaled]  # a power of two: exact
        for cols, at, scale in self.rest:  # a float column's further limbs, most significant first
            s[:, cols] = s[:, cols] + p[:, at] * scale
        return s[:, self.inverse]


ONE_HOT_CELLS = 64
"""A grouping of the rows (:class:`Cells`) of at most this many cells is counted as that many one-hot columns
of the shared product; a larger one (a judge's distinct confidences, which can be one per row) by sorting, so
that neither its memory nor its time grows with the rows times the cells."""

STATISTIC_ELEMENTS = 1 << 20
"""Counts a family with a large grouping holds at once: its statistic is evaluated that many counts' worth of
replicates at a time (each replicate's value is its own, so the blocks change no digit)."""


@dataclass(frozen=True)
class Cells:
    """A grouping of the rows: the cell each row counts in, and how many cells there are; a replicate's count of
    a cell is the sum of its rows' weights (integers: exact in any order)."""

    index: np.ndarray = field(repr=False)
    """``(n,)`` the cell of each row, ``-1`` for a row in none."""
    size: int
    """Number of cells (``index < size``)."""
    order: np.ndarray = field(repr=False)
    """The rows in some cell, sorted by cell (stably)."""
    starts: np.ndarray = field(repr=False)
    """Where each non-empty cell's rows begin in ``order``."""
    present: np.ndarray = field(repr=False)
    """The non-empty cells, in order."""

    @classmethod
    def of(cls, index: Any, size: int) -> Cells:
        """The grouping that puts row ``i`` in cell ``index[i]`` (``-1``: none) of ``size``."""
        index = np.asarray(index, dtype=np.intp)
        if index.ndim != 1 or (len(index) and (index.min() < -1 or index.max() >= size)):
            raise ValueError(f"cells must be a 1-D array of cells in [0, {size}) or -1")
        order = np.argsort(index, kind="stable")
        order = order[index[order] >= 0]
        cell = index[order]
        starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]) if len(cell) else np.zeros(0, dtype=np.intp)
        return cls(index, int(size), order, starts, cell[starts])

    def one_hot(self) -> np.ndarray:
        """``(n, size)`` indicator columns: row ``i`` has a 1 in the column of its cell."""
        out = np.zeros((len(self.index), self.size))
        out[self.order, self.index[self.order]] = 1.0
        return out

    def counts(self, weights: np.ndarray) -> np.ndarray:
        """``(..., n)`` weights -> ``(..., size)`` the weight of each cell (``weights @ self.one_hot()``)."""
        out = np.zeros((*weights.shape[:-1], self.size))
        if len(self.order):
            out[..., self.present] = np.add.reduceat(weights[..., self.order], self.starts, axis=-1)
        return out


def ordered_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The sum over ``axis``, added left to right whatever the array's layout (numpy's ``sum`` adds in pairs,
    in an order that can depend on the shape of the other axes)."""
    x = np.asarray(x)
    if x.shape[axis] == 0:
        return np.zeros(np.delete(x.shape, axis % x.ndim), dtype=x.dtype)
    return np.take(np.cumsum(x, axis=axis), -1, axis=axis)


def clopper_pearson(successes: float, trials: float, confidence_level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for ``successes`` out of ``trials``: the beta quantiles of ``scipy.stats.beta``.

    At 0 or ``trials`` successes, the only case the report needs, the one bound is a beta quantile with a
    parameter of 1, in closed form, written the way scipy's Boost backend evaluates it (bit for bit, so the
    report needs no scipy).
    """
    alpha = 1 - confidence_level
    k, n = successes, trials
    if k == 0 and n > 0:
        # Beta(1, n) at 1 - alpha/2: Boost swaps to Beta(n, 1) at q = 1 - (1 - alpha/2) and returns 1 - q**(1/n) as -expm1
        return 0.0, -math.expm1(math.log(1 - (1 - alpha / 2)) / float(n))
    if k == n and n > 0:
        return (alpha / 2) ** (1 / float(n)), 1.0  # Beta(n, 1) at alpha/2: its cdf is x**n
    from scipy.stats import beta

    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def monte_carlo_p(extreme: int | np.ndarray, draws: int) -> Any:
    """``(k + 1) / (B + 1)``: the Monte-Carlo p-value when ``k`` of ``B`` resampled or permuted draws are at least as
    extreme as the observation (never 0, the observation counted as one of the draws); a float for a count ``k``, an
    array of p-values for an array of counts."""
    return (extreme + 1) / (draws + 1)


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
        flat = spread[j] <= 1e-9 * max(1.0, abs(estimate[j]))  # the sums are exact: a margin for a ratio's rounding
        if structural is not None and structural[j] and flat:
            methods[j], low[j], high[j] = "structural", estimate[j], estimate[j]
        elif exact is not None and np.isfinite(exact[1][j]) and exact[1][j] > 0 and estimate[j] in (0.0, 1.0):
            methods[j] = "clopper-pearson"
            low[j], high[j] = clopper_pearson(exact[0][j], exact[1][j], confidence_level)
    return tuple(methods)


@dataclass(frozen=True)
class Family:
    """Statistics of one data matrix, bootstrapped with others on the same replicates (:func:`bootstrap_families`)."""

    data: np.ndarray = field(repr=False)
    """``(n, k)`` columns whose weighted sums the statistics read."""
    statistic: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    """Sums ``(..., k)`` -> statistics ``(..., m)``."""
    names: tuple[str, ...] | None = None
    """One name per statistic (None: their positions)."""
    exact: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    """(successes, trials) per statistic, NaN where it is not a proportion."""
    structural: np.ndarray | None = field(default=None, repr=False)
    """Per statistic, whether the caller knows it cannot vary (see the module docstring)."""
    cells: tuple[Cells, ...] = field(default=(), repr=False)
    """Groupings of the rows whose weighted count per cell the statistic reads after the sums of ``data``'s
    columns, grouping after grouping (as if each were ``size`` one-hot columns of ``data``)."""

    @property
    def width(self) -> int:
        """Columns the statistic reads: ``data``'s and one per cell of every grouping."""
        return int(self.data.shape[1]) + sum(c.size for c in self.cells)


def _family_inputs(families: Sequence[Family], rows: np.ndarray) -> tuple[list[np.ndarray], list[list[slice | Cells]]]:
    """The blocks of columns of the shared product (rows as the caller has them) and each family's input as
    pieces: a slice of the product's sums, or a grouping counted apart (more than :data:`ONE_HOT_CELLS` cells),
    its rows in the order ``rows``."""
    blocks: list[np.ndarray] = []
    pieces: list[list[slice | Cells]] = []
    at = 0
    for f in families:
        data = np.asarray(f.data, dtype=float)
        blocks.append(data)
        own: list[slice | Cells] = [slice(at, at + data.shape[1])]
        at += data.shape[1]
        for c in f.cells:
            if c.size <= ONE_HOT_CELLS:
                blocks.append(c.one_hot())
                own.append(slice(at, at + c.size))
                at += c.size
            else:
                own.append(Cells.of(c.index[rows], c.size))
        merged: list[slice | Cells] = []
        for p in own:  # adjacent slices as one, so that a family of columns alone reads a view of the sums
            last = merged[-1] if merged else None
            if isinstance(p, slice) and isinstance(last, slice) and last.stop == p.start:
                merged[-1] = slice(last.start, p.stop)
            elif not (isinstance(p, slice) and p.start == p.stop):
                merged.append(p)
        pieces.append(merged)
    return blocks, pieces


def _family_input(pieces: Sequence[slice | Cells], sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
    if len(pieces) == 1 and isinstance(pieces[0], slice):
        return sums[..., pieces[0]]
    parts = [sums[..., p] if isinstance(p, slice) else p.counts(weights) for p in pieces]
    if not parts:
        return np.zeros((*sums.shape[:-1], 0))
    return np.concatenate(parts, axis=-1)


def _evaluate(
    family: Family, pieces: Sequence[slice | Cells], sums: np.ndarray, weights: np.ndarray, out: np.ndarray
) -> None:
    """``family``'s statistics of one block's replicates into ``out``; a family that counts a large grouping apart
    reads it a few replicates at a time (:data:`STATISTIC_ELEMENTS`)."""
    if all(isinstance(p, slice) for p in pieces):
        out[:] = family.statistic(_family_input(pieces, sums, weights))
        return
    step = max(1, STATISTIC_ELEMENTS // max(family.width, 1))
    for a in range(0, len(out), step):
        b = min(a + step, len(out))
        out[a:b] = family.statistic(_family_input(pieces, sums[a:b], weights[a:b]))


def bootstrap_families(
    families: Sequence[Family],
    *,
    strata: Any,
    resamples: int = 10_000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
    batch: int | None = None,
    strata_order: Sequence[Any] | None = None,
    clusters: Any = None,
    kept: KeptCounts | None = None,
) -> tuple[BootstrapResult, ...]:
    """:func:`bootstrap` of several families of statistics on one shared resample: the replicates are drawn,
    weighed and summed once (repeated columns across the families once too), and each family's statistics
    read their own columns of the sums. The result per family is the one :func:`bootstrap` gives it alone.
    With ``clusters`` (one key per row) whole clusters are resampled (:func:`block_weights`); with ``kept`` the
    counts of the draws are kept for, or read from, another pass (:class:`KeptCounts`)."""
    if not families:
        raise ValueError("no family of statistics to bootstrap")
    shapes = [np.shape(f.data) for f in families]
    if any(len(sh) != 2 for sh in shapes) or len({sh[0] for sh in shapes}) > 1:
        raise ValueError(f"data must be 2-D (rows, columns) arrays of equal rows, got shapes {shapes}")
    n = shapes[0][0]
    if any(c.index.shape != (n,) for f in families for c in f.cells):
        raise ValueError(f"a grouping of the rows must give every one of the {n} rows a cell (or -1)")
    for f in families:
        _check_finite(f.data)
    strata, gen = _validate(n, strata, resamples, confidence_level, batch, rng)
    # rows grouped by stratum, in the order the draws take them: each replicate's weights are the same
    # multiplicities of the same rows, laid out in contiguous runs, and the sums are exact in any order of rows
    rows = np.concatenate(strata_members(strata, strata_order)) if len(strata) else np.arange(0)
    strata = strata[rows]
    if clusters is not None:
        clusters = np.asarray(clusters)[rows] if len(rows) else np.asarray(clusters)
    blocks, pieces = _family_inputs(families, rows)
    sums = ColumnSums.of(blocks, rows)
    del blocks
    ones = np.ones((1, n))
    whole = sums(ones)
    estimates = [
        np.asarray(f.statistic(_family_input(p, whole, ones)[0]), dtype=float) for f, p in zip(families, pieces)
    ]
    dists = [np.empty((resamples, len(e))) for e in estimates]
    draws = block_weights(
        strata, resamples=resamples, rng=gen, order=strata_order, batch=batch, clusters=clusters, kept=kept
    )
    for start, stop, w in draws:
        s = sums(w)
        for f, ps, dist in zip(families, pieces, dists):
            _evaluate(f, ps, s, w, dist[start:stop])
        del s, w
    out = []
    for f, estimate, dist in zip(families, estimates, dists):
        low, high = percentile_interval(dist, confidence_level)
        method = _methods(estimate, dist, low, high, f.exact, f.structural, confidence_level)
        names = tuple(f.names) if f.names is not None else tuple(str(i) for i in range(len(estimate)))
        if len(names) != len(estimate):
            raise ValueError(f"{len(names)} names for {len(estimate)} statistics")
        out.append(BootstrapResult(names, estimate, low, high, method, dist, confidence_level))
    return tuple(out)


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
    kept: KeptCounts | None = None,
) -> BootstrapResult:
    """Stratified percentile bootstrap of statistics of weighted column sums.

    ``data`` is ``(n, k)``; ``statistic`` maps sums of shape ``(..., k)`` to ``(..., m)``.
    ``exact`` gives (successes, trials) per statistic (NaN where it is not a proportion) and
    ``structural`` a boolean per statistic; see the module docstring for how they are used.
    Replicates are drawn and weighed a block at a time (:func:`block_bounds`; ``batch`` replicates,
    or None for blocks of about :data:`BLOCK_ELEMENTS` weights), so memory does not grow with
    ``resamples`` times the rows. The draws are fixed per chunk of :data:`CHUNK` replicates and every sum
    is exact (:class:`ColumnSums`), so the result does not depend on ``batch`` or on BLAS, to the bit;
    nor on ``kept``, the counts of an earlier pass at the same seed (:class:`KeptCounts`), which saves their time.
    """
    data = np.asarray(data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"data must be a 2-D (rows, columns) array, got shape {data.shape}")
    family = Family(data, statistic, tuple(names) if names is not None else None, exact, structural)
    return bootstrap_families(
        [family],
        strata=strata,
        resamples=resamples,
        confidence_level=confidence_level,
        rng=rng,
        batch=batch,
        strata_order=strata_order,
        kept=kept,
    )[0]
