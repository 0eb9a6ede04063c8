"""What a judge's verdicts are worth: ranking, chance-corrected agreement and selective prediction.

Per judge, beside the report's detection metrics:

* **AUROC** and **AUPRC** (average precision) of the judge's *probability of "faulty"*: its
  confidence when it flags, one minus its confidence when it does not. AUPRC's reference value is
  the prevalence of faults among the trajectories the judge judged (what a judge that ranks at
  random reaches); AUROC's is 0.5.
* **Cohen's kappa**, **MCC** and **balanced accuracy** of its flags against the labels (reference
  values 0, 0 and 0.5: what flagging everything, or flagging at random, reaches).
* **Ties on the score**: the share of (faulty, clean) pairs whose probabilities of "faulty" are equal,
  and the range of AUROC over the ways of breaking those ties (every tied pair ordered against the
  judge, or every one in its favour: AUROC minus or plus half the tied share). AUROC itself counts a
  tied pair as one half, scikit-learn's value and the mean over uniformly random tie-breaking.
* **Selective prediction**: the judge keeps its most confident verdicts (its stated confidence) and
  abstains on the rest; verdicts of equal confidence are ordered uniformly at random, and every
  statistic is the expectation over that random order, in closed form. **Recall and risk at coverage
  q** keep exactly ``k = ceil(q n)`` of the ``n`` verdicts (the achieved coverage ``k / n`` is reported
  beside them and is within ``1 / n`` of ``q``): the tie groups above the cut whole, and each member of
  the group that straddles it with weight ``(k - kept above) / (group size)``, its chance of being
  kept. The risk (share of the kept verdicts that are wrong) is then its expectation exactly; the
  recall on the faults among the kept verdicts is the ratio of the expected found faults to the
  expected kept faults. **AURC** is the expected area under the risk-coverage curve, the mean over
  ``k = 1..n`` of the expected risk when the surest ``k`` are kept (group by group a closed form in
  harmonic numbers); without ties it is the usual AURC. **E-AURC** is AURC minus the AURC of the
  best ordering, every correct verdict before every wrong one (``(w - r (H(n) - H(r))) / n`` for
  ``r`` correct and ``w`` wrong verdicts, ``H`` the harmonic numbers): what the judge's ordering
  costs beyond its error rate.

The definitions of AUROC, AUPRC, kappa, MCC and balanced accuracy are scikit-learn's
(:func:`point_statistics` calls it). Their intervals come from the report's stratified paired
bootstrap: each statistic is written as a function of weighted counts per (label, flag, stated
confidence), one count column per distinct verdict of a judge, ties handled as scikit-learn handles
them, so that the bootstrap's shared resamples (same design cells, seed and replicates as the
report's) give every interval and every paired delta between judges at once. The count form at unit
weights equals scikit-learn's value to 1e-9 on the release's verdicts and this edition's (the tests
assert it per judge, and at random weights against scikit-learn's ``sample_weight``); the report uses
it, so that ``report`` loads neither scikit-learn nor scipy, and ``judge_statistics(..., check=True)``
(the book's chapter) compares it with scikit-learn's value on every build and stops if they differ.

The exact paired test beside paired discrimination (McNemar on fault/clean-parent pairs), the power
and equivalence behind a delta whose interval holds 0, multiplicity control over the deltas, and
the quality-cost front read those results (:func:`mcnemar_pairs`, :func:`delta_tests`,
:func:`pareto_front`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from trajectory_judge.analysis.core.bootstrap import (
    ONE_HOT_CELLS,
    BootstrapResult,
    Cells,
    Family,
    bootstrap_families,
    ordered_sum,
)
from trajectory_judge.analysis.core.confusion import confusion_statistics, ratio
from trajectory_judge.analysis.core.deltas import Delta, read_deltas
from trajectory_judge.analysis.core.names import delta_name, evaluate_names, pair_blocks, split_name
from trajectory_judge.analysis.core.registry import statistic_names
from trajectory_judge.models import DESIGN_CELLS, Label, Trajectory, Verdict

if TYPE_CHECKING:
    import pandas as pd

COVERAGES: tuple[float, ...] = (0.5, 0.8)
"""Coverages at which recall of the selective judge is reported."""

STATISTICS: tuple[str, ...] = (
    *statistic_names(),
    *(f"{m}:{q:g}" for q in COVERAGES for m in ("achieved_coverage", "recall_at_coverage", "risk_at_coverage")),
)
"""Per-judge statistics, each with an interval (``prevalence`` is AUPRC's reference value)."""

SKLEARN_STATISTICS: tuple[str, ...] = statistic_names(sklearn=True)
"""Statistics whose point value is scikit-learn's."""

DELTA_STATISTICS: tuple[str, ...] = statistic_names(delta=True)
"""Statistics compared between judges as paired deltas ``b - a``."""

LOWER_IS_BETTER: frozenset[str] = frozenset(
    {*statistic_names(lower_is_better=True), *(f"risk_at_coverage:{q:g}" for q in COVERAGES)}
)
"""Statistics on which a smaller value is better."""


def faulty_probability(verdict: Verdict) -> float:
    """The judge's probability of "faulty": its confidence when it flags, one minus it when it does not."""
    return verdict.confidence if verdict.faulty else 1.0 - verdict.confidence


def _cell(v: Verdict) -> tuple[int, float]:
    return int(v.faulty), round(v.confidence, 9)


def faulty_score(v: Verdict) -> float:
    """The probability of "faulty" rounded as the count form rounds it (its tie groups)."""
    c = round(v.confidence, 9)
    return c if v.faulty else round(1 - c, 9)


# --- plain form ------------------------------------------------------------------------------
Pair = tuple[Label, Verdict]


def risk_coverage(pairs: Sequence[Pair]) -> list[dict[str, float]]:
    """The risk-coverage curve where whole tie groups end: per distinct stated confidence (highest first),
    the share of verdicts at or above it (``coverage``), the share of those that are wrong (``risk``), the
    recall on the faults among them (``recall``, NaN when none is faulty) and the share the group adds
    (``added``). Between two of these points :func:`expected_risk_curve` gives the expected risk."""
    n = len(pairs)
    out, kept, wrong, faults, found = [], 0, 0, 0, 0
    for c in sorted({round(v.confidence, 9) for _, v in pairs}, reverse=True):
        group = [(lab, v) for lab, v in pairs if round(v.confidence, 9) == c]
        kept += len(group)
        wrong += sum(v.faulty != lab.faulty for lab, v in group)
        faults += sum(lab.faulty for lab, _ in group)
        found += sum(lab.faulty and v.faulty for lab, v in group)
        out.append(
            {
                "confidence": c,
                "coverage": kept / n,
                "risk": wrong / kept,
                "recall": found / faults if faults else math.nan,
                "added": len(group) / n,
            }
        )
    return out


def _confidence_groups(pairs: Sequence[Pair]) -> list[list[Pair]]:
    """The pairs gathered by stated confidence (rounded as the count form rounds it), highest first."""
    groups: dict[float, list[Pair]] = {}
    for lab, v in pairs:
        groups.setdefault(round(v.confidence, 9), []).append((lab, v))
    return [groups[c] for c in sorted(groups, reverse=True)]


def expected_risk_curve(pairs: Sequence[Pair]) -> list[tuple[float, float]]:
    """``(k / n, expected risk)`` for ``k = 1..n``: the share wrong among the surest ``k`` verdicts,
    averaged over every order of the verdicts of equal stated confidence (uniformly at random)."""
    n, out, kept, wrong = len(pairs), [], 0, 0
    for group in _confidence_groups(pairs):
        size, bad = len(group), sum(v.faulty != lab.faulty for lab, v in group)
        out += [((kept + j) / n, (wrong + j * bad / size) / (kept + j)) for j in range(1, size + 1)]
        kept, wrong = kept + size, wrong + bad
    return out


def aurc(pairs: Sequence[Pair]) -> float:
    """Area under the risk-coverage curve, the expectation over random tie-breaking: the mean of
    :func:`expected_risk_curve` (verdicts of equal confidence in uniformly random order)."""
    curve = expected_risk_curve(pairs)
    return math.fsum(r for _, r in curve) / len(curve)


def optimal_aurc(pairs: Sequence[Pair]) -> float:
    """AURC of the best ordering: every correct verdict kept before every wrong one."""
    n = len(pairs)
    right = sum(v.faulty == lab.faulty for lab, v in pairs)
    return math.fsum((k - right) / k for k in range(right + 1, n + 1)) / n


def e_aurc(pairs: Sequence[Pair]) -> float:
    """Excess AURC: :func:`aurc` minus :func:`optimal_aurc`."""
    return aurc(pairs) - optimal_aurc(pairs)


@dataclass(frozen=True)
class CoverageCut:
    """The judge keeping exactly its surest ``kept`` of ``n`` verdicts, ties at the cut broken at random:
    expected counts over the random order of the group that straddles the cut."""

    q: float
    """Nominal coverage."""
    n: int
    """Verdicts."""
    kept: int
    """Verdicts kept: ``ceil(q n)``."""
    wrong: float
    """Expected wrong verdicts among the kept."""
    faults: float
    """Expected faulty trajectories among the kept."""
    found: float
    """Expected flagged faults among the kept."""

    @property
    def coverage(self) -> float:
        """Achieved coverage ``kept / n``: within ``1 / n`` of :attr:`q`."""
        return self.kept / self.n

    @property
    def risk(self) -> float:
        """Expected share of the kept verdicts that are wrong."""
        return self.wrong / self.kept

    @property
    def recall(self) -> float:
        """Expected found faults over expected kept faults; NaN when no fault can be kept."""
        return self.found / self.faults if self.faults else math.nan


def kept_count(q: float, n: int) -> int:
    """How many of ``n`` verdicts a judge keeps at coverage ``q``: ``ceil(q n)``, the smallest count at
    or above ``q`` (a product that overshoots a whole number by rounding does not add one)."""
    return math.ceil(q * n - 1e-9)


def coverage_cut(pairs: Sequence[Pair], q: float) -> CoverageCut:
    """Keep exactly ``ceil(q n)`` verdicts, surest first: whole tie groups above the cut, and each
    member of the straddling group with weight ``(kept - kept above) / group size`` (its chance of
    being kept when the group is ordered at random)."""
    n = len(pairs)
    k = kept_count(q, n)
    above, wrong, faults, found = 0, 0.0, 0.0, 0.0
    for group in _confidence_groups(pairs):
        share = min(1.0, (k - above) / len(group))
        wrong += share * sum(v.faulty != lab.faulty for lab, v in group)
        faults += share * sum(lab.faulty for lab, _ in group)
        found += share * sum(lab.faulty and v.faulty for lab, v in group)
        above += len(group)
        if above >= k:
            break
    return CoverageCut(q, n, k, wrong, faults, found)


@dataclass(frozen=True)
class ScoreTies:
    """Ties of the probability of "faulty" between faulty and clean trajectories, and what they do to AUROC."""

    auroc: float
    """AUROC with a tied pair counted as one half (scikit-learn's; the mean over random tie-breaking)."""
    tied_pairs: float
    """Share of the (faulty, clean) pairs whose scores are equal."""


def score_ties(pairs: Sequence[Pair]) -> ScoreTies:
    """AUROC and its tied share, counted pair by pair on the scores rounded as the count form rounds them
    (NaN without both a faulty and a clean trajectory)."""
    pos = [faulty_score(v) for lab, v in pairs if lab.faulty]
    neg = [faulty_score(v) for lab, v in pairs if not lab.faulty]
    if not pos or not neg:
        return ScoreTies(math.nan, math.nan)
    above = sum(s > t for s in pos for t in neg)
    tied = sum(s == t for s in pos for t in neg)
    total = len(pos) * len(neg)
    return ScoreTies((above + tied / 2) / total, tied / total)


def point_statistics(pairs: Sequence[Pair]) -> dict[str, float | None]:
    """Every statistic of :data:`STATISTICS` on one judge's (label, verdict) pairs; scikit-learn's where it has one,
    the plain definitions above (:func:`aurc`, :func:`coverage_cut`, :func:`score_ties`) for the others.

    ``None`` where the statistic is undefined (one class only among the labels).
    """
    from sklearn.metrics import (
        average_precision_score,
        balanced_accuracy_score,
        cohen_kappa_score,
        matthews_corrcoef,
        roc_auc_score,
    )

    y = np.asarray([int(lab.faulty) for lab, _ in pairs])
    flags = np.asarray([int(v.faulty) for _, v in pairs])
    score = np.asarray([faulty_probability(v) for _, v in pairs])
    out: dict[str, float | None] = dict.fromkeys(STATISTICS)
    if not len(pairs):
        return out
    out["prevalence"] = float(y.mean())
    out["aurc"] = aurc(pairs)
    out["e_aurc"] = e_aurc(pairs)
    for q in COVERAGES:
        cut = coverage_cut(pairs, q)
        out[f"achieved_coverage:{q:g}"] = cut.coverage
        out[f"risk_at_coverage:{q:g}"] = cut.risk
        out[f"recall_at_coverage:{q:g}"] = None if math.isnan(cut.recall) else cut.recall
    if 0 < y.sum() < len(y):
        auroc, tied = float(roc_auc_score(y, score)), score_ties(pairs).tied_pairs
        out["auroc"], out["auroc_tied_pairs"] = auroc, tied
        out["auroc_ties_against"], out["auroc_ties_for"] = auroc - tied / 2, auroc + tied / 2
        out["auprc"] = float(average_precision_score(y, score))
        out["balanced_accuracy"] = float(balanced_accuracy_score(y, flags))
        out["mcc"] = float(matthews_corrcoef(y, flags))
        with np.errstate(divide="ignore", invalid="ignore"):
            k = float(cohen_kappa_score(y, flags))
        out["kappa"] = None if math.isnan(k) else k
    return out


# --- count form -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Groups:
    """The cells of one block gathered into groups of one key (distinct P(faulty), or distinct confidence),
    highest key first: group ``g`` is the cells ``order[starts[g]:starts[g + 1]]``."""

    order: np.ndarray
    starts: np.ndarray
    one_hot: np.ndarray | None
    """``(K, G)`` cell -> group, for a few cells (a product is then quicker than sorting)."""

    @classmethod
    def of(cls, keys: Sequence[float]) -> _Groups:
        order = sorted(range(len(keys)), key=lambda i: -keys[i])  # stable: ties keep the cells' order
        sorted_keys = [keys[i] for i in order]
        starts = [i for i in range(len(order)) if i == 0 or sorted_keys[i] != sorted_keys[i - 1]]
        one_hot = None
        if len(keys) <= ONE_HOT_CELLS:
            one_hot = np.zeros((len(keys), len(starts)))
            one_hot[order, np.cumsum([i in set(starts) for i in range(len(order))]) - 1] = 1.0
        return cls(np.asarray(order, dtype=np.intp), np.asarray(starts, dtype=np.intp), one_hot)

    def sum(self, x: np.ndarray) -> np.ndarray:
        """``(..., K)`` per cell -> ``(..., G)`` per group: the sum over each group's cells (counts: exact in any order)."""
        if self.one_hot is not None:
            return x @ self.one_hot
        return np.add.reduceat(x[..., self.order], self.starts, axis=-1)


@dataclass(frozen=True)
class _Block:
    """One judge's count columns: for each distinct (flag, confidence) verdict, the faulty and clean rows."""

    columns: slice
    flags: np.ndarray  # (K,) 0/1 per cell
    by_score: _Groups  # cell -> distinct P(faulty), highest first
    by_confidence: _Groups  # cell -> distinct confidence, highest first


@functools.cache
def _harmonic_table(size: int) -> np.ndarray:
    """``H(0..size - 1)``, the harmonic numbers, each added term by term with Neumaier's compensation
    (entry ``m`` depends on ``1/1 .. 1/m`` only, so the same bits in a table of any size)."""
    out = np.empty(size)
    total, carry = 0.0, 0.0
    for m in range(size):
        if m:
            term = 1.0 / m
            t = total + term
            carry += (total - t) + term if abs(total) >= term else (term - t) + total
            total = t
        out[m] = total + carry
    out.flags.writeable = False
    return out


def _harmonic(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The harmonic number ``H(x) = 1 + 1/2 + ... + 1/x`` of whole-number counts ``x``, read from ``table``."""
    return table[x.astype(np.intp)]


def _harmonic_up_to(part: np.ndarray) -> np.ndarray:
    """The table of harmonic numbers for every count ``part``'s rows can add up to; the counts must be whole (the
    bootstrap's weights are multiplicities)."""
    if not np.array_equal(part, np.rint(part)) or (part < 0).any():
        raise ValueError("the selective statistics need whole-number weights (multiplicities)")
    top = int(part.sum(axis=-1).max()) + 1 if part.size else 1
    return _harmonic_table(1 << max(top - 1, 1).bit_length())


def statistics_from_counts(sums: np.ndarray, block: _Block) -> dict[str, np.ndarray]:
    """The statistics of :data:`STATISTICS` from weighted column sums ``(..., k)`` of one block.

    The products with the one-hot matrices add counts (integers: exact in any order); what is summed over
    score or confidence groups is summed left to right (:func:`~trajectory_judge.analysis.core.bootstrap.ordered_sum`)."""
    part = sums[..., block.columns]
    pos, neg = part[..., 0::2], part[..., 1::2]  # (..., K)
    p, n_ = pos.sum(axis=-1), neg.sum(axis=-1)
    total = p + n_
    out: dict[str, np.ndarray] = {"prevalence": ratio(p, total)}
    # ranking: tie groups of P(faulty), highest first
    ps, ns = block.by_score.sum(pos), block.by_score.sum(neg)
    tps, fps = np.cumsum(ps, axis=-1), np.cumsum(ns, axis=-1)
    below = n_[..., None] - fps  # clean rows scored strictly lower
    out["auroc"] = ratio(ordered_sum(ps * (below + 0.5 * ns)), p * n_)
    precision = ratio(tps, tps + fps)
    out["auprc"] = ratio(ordered_sum(np.where(ps > 0, ps * np.nan_to_num(precision), 0.0)), p)
    # agreement of the flags
    tp, fp = pos @ block.flags, neg @ block.flags
    fn, tn = p - tp, n_ - fp
    agreement = confusion_statistics(tp, fp, fn, tn)
    out.update({k: agreement[k] for k in ("balanced_accuracy", "mcc", "kappa")})
    # ties of the score between faulty and clean rows (exact: products and sums of counts)
    tied = ratio(ordered_sum(ps * ns), p * n_)
    out["auroc_tied_pairs"] = tied
    out["auroc_ties_against"] = out["auroc"] - tied / 2
    out["auroc_ties_for"] = out["auroc"] + tied / 2
    # selective prediction: tie groups of stated confidence, highest first, in random order within a group
    correct = pos * block.flags + neg * (1 - block.flags)
    size = block.by_confidence.sum(pos + neg)  # (..., G) rows per group
    bad = size - block.by_confidence.sum(correct)  # wrong rows per group
    faulty = block.by_confidence.sum(pos)
    flagged = block.by_confidence.sum(pos * block.flags)
    kept, wrong = np.cumsum(size, axis=-1), np.cumsum(bad, axis=-1)  # through each group (whole numbers: exact)
    before, wrong_before = kept - size, wrong - bad
    # the expected risk with j of a group's rows kept is (wrong_before + j bad/size) / (before + j); its sum
    # over j = 1..size is bad + (wrong_before - before bad/size) (H(kept) - H(before))
    table = _harmonic_up_to(part)
    h = _harmonic(kept, table) - _harmonic(before, table)
    area = np.where(size > 0, bad + (wrong_before - before * np.nan_to_num(ratio(bad, size))) * h, 0.0)
    out["aurc"] = ratio(ordered_sum(area), total)
    right = total - wrong[..., -1]
    best = (total - right) - right * (_harmonic(total, table) - _harmonic(right, table))  # every correct row first
    out["e_aurc"] = out["aurc"] - ratio(best, total)
    faults_before, found_before = np.cumsum(faulty, axis=-1) - faulty, np.cumsum(flagged, axis=-1) - flagged
    for q in COVERAGES:
        k = np.ceil(q * total - 1e-9)  # rows kept: the count form of kept_count
        first = np.argmax(kept >= k[..., None], axis=-1)[..., None]  # the group that straddles the cut

        def at(x: np.ndarray, first: np.ndarray = first) -> np.ndarray:
            return np.take_along_axis(x, first, axis=-1)[..., 0]

        share = ratio(k - at(before), at(size))  # each of its rows is kept with this chance
        out[f"achieved_coverage:{q:g}"] = ratio(k, total)
        out[f"risk_at_coverage:{q:g}"] = ratio(at(wrong_before) + share * at(bad), k)
        out[f"recall_at_coverage:{q:g}"] = ratio(
            at(found_before) + share * at(flagged), at(faults_before) + share * at(faulty)
        )
    return out


def auprc_at_prevalence_from_counts(sums: np.ndarray, block: _Block, prevalence: float) -> np.ndarray:
    """AUPRC (average precision) of one block's ranking were a share ``prevalence`` of the judged runs faulty.

    Each faulty row weighs ``prevalence / p`` and each clean row ``(1 - prevalence) / n`` (``p`` faulty and ``n``
    clean rows in the sums): the precision at each cut is then ``prevalence TPR / (prevalence TPR + (1 -
    prevalence) FPR)`` and recall is unchanged, which is scikit-learn's ``average_precision_score`` with those
    sample weights. At the rows' own share of faults it is :func:`statistics_from_counts`' AUPRC."""
    part = sums[..., block.columns]
    pos, neg = part[..., 0::2], part[..., 1::2]
    p, n_ = pos.sum(axis=-1), neg.sum(axis=-1)
    ps, ns = block.by_score.sum(pos), block.by_score.sum(neg)
    tpr, fpr = ratio(np.cumsum(ps, axis=-1), p[..., None]), ratio(np.cumsum(ns, axis=-1), n_[..., None])
    found, raised = prevalence * tpr, (1 - prevalence) * fpr
    precision = ratio(found, found + raised)
    return ratio(ordered_sum(np.where(ps > 0, ps * np.nan_to_num(precision), 0.0)), p) * np.where(n_ > 0, 1.0, np.nan)


def auprc_at_prevalence_family(
    labels: Sequence[Label], verdicts: Mapping[str, Sequence[Verdict | None]], prevalence: float
) -> Family:
    """Every judge's :func:`auprc_at_prevalence_from_counts` as one family of the shared bootstrap, named
    ``judge|auprc``."""
    plan = make_statistics_plan(labels, verdicts)

    def statistic(sums: np.ndarray) -> np.ndarray:
        return np.stack(
            [auprc_at_prevalence_from_counts(sums, plan.blocks[(j,)], prevalence) for j in plan.judges], axis=-1
        )

    n = len(labels)
    return Family(np.zeros((n, 0)), statistic, tuple(f"{j}|auprc" for j in plan.judges), cells=plan.cells)


def _cells(labels: Sequence[Label], verdicts: Sequence[Verdict | None]) -> tuple[np.ndarray, list[tuple[int, float]]]:
    """Each row's count column (``2 * cell + 0`` faulty, ``+ 1`` clean; -1 without a verdict) and the cells,
    the distinct (flag, confidence) verdicts in sorted order."""
    keys = [None if v is None else _cell(v) for v in verdicts]
    cells = sorted({k for k in keys if k is not None})
    slot = {c: i for i, c in enumerate(cells)}
    index = np.full(len(labels), -1, dtype=np.intp)
    for i, (lab, k) in enumerate(zip(labels, keys, strict=True)):
        if k is not None:
            index[i] = 2 * slot[k] + (0 if lab.faulty else 1)
    return index, cells


# --- the bootstrap ----------------------------------------------------------------------------
@dataclass(frozen=True)
class StatisticsPlan:
    """Count columns of every judge (and of each compared pair's common subset) and the statistic names."""

    judges: list[str]
    cells: tuple[Cells, ...] = field(repr=False)
    """Per block, in the order of ``blocks``, the count column each row adds to."""
    blocks: dict[tuple[str, ...], _Block] = field(repr=False)
    names: tuple[str, ...]

    def counts(self, weights: np.ndarray) -> np.ndarray:
        """``(..., n)`` row weights -> ``(..., k)`` the count columns' sums, every block's after the last's."""
        return np.concatenate([c.counts(weights) for c in self.cells], axis=-1)

    def statistic(self, sums: np.ndarray) -> np.ndarray:
        """Column sums ``(..., k)`` -> every statistic ``(..., len(names))``."""
        return evaluate_names(self.names, self.blocks, lambda key: statistics_from_counts(sums, self.blocks[key]))


def make_statistics_plan(
    labels: Sequence[Label],
    verdicts: Mapping[str, Sequence[Verdict | None]],
    pairs: Sequence[tuple[str, str]] = (),
) -> StatisticsPlan:
    """Lay out the count columns of every judge in ``verdicts`` (aligned with ``labels``) and of every pair."""
    cols: list[Cells] = []
    blocks: dict[tuple[str, ...], _Block] = {}

    def add(key: tuple[str, ...], vs: Sequence[Verdict | None]) -> None:
        index, cells = _cells(labels, vs)
        start = sum(c.size for c in cols)
        cols.append(Cells.of(index, 2 * len(cells)))
        flags = np.asarray([f for f, _ in cells], dtype=float)
        score = [c if f else round(1 - c, 9) for f, c in cells]
        blocks[key] = _Block(
            slice(start, start + 2 * len(cells)), flags, _Groups.of(score), _Groups.of([c for _, c in cells])
        )

    judges = list(verdicts)
    for j in judges:
        add((j,), verdicts[j])
    names = [f"{j}|{m}" for j in judges for m in STATISTICS]
    for a, b in pairs:
        for key, vs in pair_blocks(verdicts, a, b):
            add(key, vs)
        names += [delta_name(a, b, m) for m in DELTA_STATISTICS]
    return StatisticsPlan(judges, tuple(cols), blocks, tuple(names))


def _structural(plan: StatisticsPlan, cells: Sequence[str]) -> np.ndarray:
    """Statistics of judges whose verdicts are constant within every design cell."""
    first = {c: i for i, c in reversed(list(enumerate(cells)))}
    leader = [first[c] for c in cells]
    constant = set()
    for j, c in zip(plan.judges, plan.cells):  # the judges' own blocks come first
        if np.array_equal(c.index, c.index[leader]):  # the same count column: the same row of counts
            constant.add(j)
    return np.asarray([split_name(n).reference is None and split_name(n).judge in constant for n in plan.names])


@dataclass(frozen=True)
class JudgeStatistics:
    """Every statistic of every judge with its interval, and the paired deltas, from one bootstrap."""

    values: dict[str, dict[str, float | None]]
    """judge -> statistic -> point value (scikit-learn's where it has one)."""
    intervals: dict[str, dict[str, tuple[float, float, str]]]
    """judge -> statistic -> (low, high, method), for every defined value."""
    deltas: tuple[Delta, ...]
    """Paired ``b - a`` of :data:`DELTA_STATISTICS` for every compared pair."""
    bootstrap: BootstrapResult = field(repr=False)
    """The replicates (the report's resamples: same strata, seed and replicates)."""

    def to_frame(self) -> pd.DataFrame:
        """One row per (judge, statistic): value, low, high, method."""
        import pandas as pd

        rows = [
            (j, m, v, *(self.intervals[j].get(m) or (math.nan, math.nan, "none")))
            for j, vals in self.values.items()
            for m, v in vals.items()
        ]
        return pd.DataFrame(rows, columns=["judge", "statistic", "value", "low", "high", "method"])


def statistics_family(plan: StatisticsPlan, cells: Sequence[str]) -> Family:
    """The statistics of ``plan`` as one family of the shared bootstrap (:func:`~.bootstrap.bootstrap_families`)."""
    n = len(plan.cells[0].index) if plan.cells else 0
    return Family(np.zeros((n, 0)), plan.statistic, plan.names, structural=_structural(plan, cells), cells=plan.cells)


def judge_statistics(
    labels: Sequence[Label],
    verdicts: Mapping[str, Sequence[Verdict | None]],
    cells: Sequence[str],
    *,
    pairs: Sequence[tuple[str, str]] = (),
    kinds: Mapping[tuple[str, str], str] | None = None,
    resamples: int = 10_000,
    seed: int = 7,
    batch: int | None = None,
    check: bool = False,
) -> JudgeStatistics:
    """Point values, intervals and paired deltas of :data:`STATISTICS`.

    The point values are the count form at unit weights; with ``check`` each is compared with
    :func:`point_statistics` (scikit-learn's value, or the plain definition where scikit-learn has none) and a
    difference over 1e-9 raises :class:`RuntimeError`.

    ``verdicts`` maps each judge to its verdict on each trajectory (aligned with ``labels`` and
    ``cells``, None where it did not judge). The resamples are drawn as the report draws them
    (:func:`trajectory_judge.analysis.core.plan.run_bootstraps`: design cells in design order, the same
    seed and replicates), so these intervals and the report's share their resamples; the report itself
    bootstraps both in one pass (:func:`read_statistics` reads its replicates).
    """
    plan = make_statistics_plan(labels, verdicts, pairs)
    (boot,) = bootstrap_families(
        [statistics_family(plan, cells)],
        strata=list(cells),
        resamples=resamples,
        rng=np.random.default_rng(seed),
        batch=batch,
        strata_order=DESIGN_CELLS,
    )
    return read_statistics(plan, boot, labels, verdicts, kinds=kinds, check=check)


def read_statistics(
    plan: StatisticsPlan,
    boot: BootstrapResult,
    labels: Sequence[Label],
    verdicts: Mapping[str, Sequence[Verdict | None]],
    *,
    kinds: Mapping[tuple[str, str], str] | None = None,
    check: bool = False,
) -> JudgeStatistics:
    """Values, intervals and paired deltas of ``plan``'s statistics from their replicates ``boot``."""
    idx = {name: i for i, name in enumerate(boot.names)}
    values: dict[str, dict[str, float | None]] = {}
    intervals: dict[str, dict[str, tuple[float, float, str]]] = {}
    for j in plan.judges:
        counted = {m: float(boot.estimate[idx[f"{j}|{m}"]]) for m in STATISTICS}
        vals: dict[str, float | None] = {m: None if math.isnan(x) else x for m, x in counted.items()}
        if check:
            plain = point_statistics([(lab, v) for lab, v in zip(labels, verdicts[j]) if v is not None])
            for m, v in plain.items():
                vec = counted[m]
                if (v is None) != math.isnan(vec) or (v is not None and not math.isclose(v, vec, abs_tol=1e-9)):
                    source = "scikit-learn's value" if m in SKLEARN_STATISTICS else "the plain definition"
                    raise RuntimeError(f"{j} {m}: count form gives {vec}, {source} is {v}")
        ivs = {}
        for m, v in vals.items():
            i = idx[f"{j}|{m}"]
            if v is not None:
                ivs[m] = (
                    (v, v, "structural")
                    if boot.method[i] == "structural"
                    else (float(boot.low[i]), float(boot.high[i]), boot.method[i])
                )
        values[j], intervals[j] = vals, ivs
    return JudgeStatistics(values, intervals, read_deltas(verdicts, boot, kinds or {}), boot)


# --- tests and fronts that read the results ----------------------------------------------------
@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on one judge's fault/clean-parent pairs, beside its paired discrimination."""

    judge: str
    n: int
    """Faults with a judged clean parent."""
    fault_only: int
    """Pairs where the judge flags the fault and not its parent."""
    parent_only: int
    """Pairs where it flags the parent and not the fault."""
    discrimination: float
    """``(fault_only - parent_only) / n``: paired discrimination."""
    pvalue: float
    """Exact two-sided p of McNemar's test (statsmodels, binomial on the discordant pairs)."""
    instances: int = 0
    """Instances (base runs) the pairs come from: the faults planted in one run share its clean parent."""
    pvalue_clustered: float = math.nan
    """Two-sided p of McNemar's test adjusted for pairs that share an instance (:func:`clustered_mcnemar_p`); NaN
    when fewer than :data:`MIN_DISCORDANT_INSTANCES` instances hold a discordant pair, where its chi-squared
    approximation cannot be trusted."""


MIN_DISCORDANT_INSTANCES = 10
"""The fewest instances holding a discordant pair for which :func:`mcnemar_pairs` gives the clustered p: the test's
reference distribution is asymptotic in the number of instances (with three, it gives 0.32 where the exact test
gives 1)."""


def clustered_mcnemar_p(fault_only: Sequence[int], parent_only: Sequence[int]) -> float:
    """Two-sided p of the clustered McNemar test of Durkalski et al. (2003): ``(b - c)**2`` over the sum, over
    instances, of the squared difference of their discordant counts, against chi-squared with one degree of
    freedom (``fault_only[k]`` and ``parent_only[k]`` are instance ``k``'s counts). With one pair per instance it
    is McNemar's chi-squared test without continuity correction; with no discordant pair, p is 1."""
    from scipy.stats import chi2

    d = np.asarray(fault_only, dtype=float) - np.asarray(parent_only, dtype=float)
    spread = float(np.sum(d**2))
    if spread == 0.0:
        return 1.0
    return float(chi2.sf(float(np.sum(d)) ** 2 / spread, 1))


def mcnemar_pairs(trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], judge: str) -> McNemar:
    """McNemar's exact test of "flags the fault" against "flags its clean parent" for ``judge``."""
    from statsmodels.stats.contingency_tables import mcnemar

    from trajectory_judge.analysis.core.paired import clean_parents

    parents = clean_parents(trajectories)
    by = {v.trajectory_id: v for v in verdicts if v.judge_id == judge}
    table = np.zeros((2, 2), dtype=int)
    per_instance: dict[str, list[int]] = {}
    for t in trajectories:
        p = parents.get(t.instance_id)
        if t.label is None or not t.label.faulty or p is None:
            continue
        if t.trajectory_id in by and p.trajectory_id in by:
            fault, parent = int(by[t.trajectory_id].faulty), int(by[p.trajectory_id].faulty)
            table[fault, parent] += 1
            counts = per_instance.setdefault(t.instance_id, [0, 0])
            counts[0] += fault and not parent
            counts[1] += parent and not fault
    n = int(table.sum())
    res = mcnemar(table, exact=True)
    b, c = int(table[1, 0]), int(table[0, 1])
    fault_only, parent_only = zip(*per_instance.values(), strict=True) if per_instance else ((), ())
    discordant = sum(f + p > 0 for f, p in zip(fault_only, parent_only, strict=True))
    return McNemar(
        judge,
        n,
        b,
        c,
        (b - c) / n if n else math.nan,
        float(res.pvalue),
        len(per_instance),
        clustered_mcnemar_p(fault_only, parent_only) if discordant >= MIN_DISCORDANT_INSTANCES else math.nan,
    )


@dataclass(frozen=True)
class DeltaTest:
    """What a paired delta's replicates say beyond its interval."""

    delta: Delta
    pvalue: float
    """Two-sided bootstrap p of ``delta = 0``: twice the smaller of ``(k + 1) / (B + 1)`` over the two sides, ``k`` the
    replicates at or beyond 0 on that side and ``B`` the replicates (never 0 with finitely many replicates); NaN for a
    delta without variance (:attr:`degenerate`)."""
    holm: float
    """Holm-adjusted p over the deltas tested together."""
    bh: float
    """Benjamini-Hochberg-adjusted p (false-discovery rate) over the same deltas."""
    se: float
    """Standard deviation of the replicates."""
    mde: float
    """Minimum detectable effect: ``(z(1 - alpha/2) + z(power)) * se``, the smallest true delta this
    design detects with the stated power at level alpha."""
    equivalent: bool
    """TOST at level alpha: the replicates' ``1 - 2 alpha`` interval lies inside ``(-margin, margin)``."""
    tost_low: float
    tost_high: float
    margin: float = math.nan
    """The equivalence margin its TOST used (the one for its metric)."""
    degenerate: bool = False
    """The replicates do not vary (both judges' flags fixed within every resampled cell): the delta is no test's
    subject, so it gets no p, no MDE and no TOST and is left out of the multiplicity adjustments."""


def delta_tests(
    boot: BootstrapResult,
    deltas: Sequence[Delta],
    *,
    margin: float | Mapping[str, float] = 0.05,
    alpha: float = 0.05,
    power: float = 0.8,
) -> list[DeltaTest]:
    """Bootstrap p, Holm and BH adjustments (statsmodels ``multipletests``), MDE and TOST of each delta.

    ``boot`` holds each delta's replicates as ``delta|a|b|metric``; ``margin`` is one equivalence margin, or one
    per metric. A delta whose replicates do not vary is marked :attr:`DeltaTest.degenerate` and tested for nothing.
    """
    from scipy.stats import norm
    from statsmodels.stats.multitest import multipletests

    from trajectory_judge.analysis.core.bootstrap import monte_carlo_p, percentile_interval

    if not deltas:
        return []
    p, se, lo, hi, flat = [], [], [], [], []
    for d in deltas:
        col = boot.distribution[:, boot.index(delta_name(d.a, d.b, d.metric))]
        col = col[~np.isnan(col)]
        b = len(col)
        below, above = monte_carlo_p(int(np.sum(col <= 0)), b), monte_carlo_p(int(np.sum(col >= 0)), b)
        flat.append(b < 2 or bool(np.all(col == col[0])))
        p.append(math.nan if flat[-1] else min(1.0, 2 * min(below, above)))
        se.append(float(np.std(col, ddof=1)) if b > 1 else math.nan)
        low, high = percentile_interval(col[:, None], 1 - 2 * alpha)
        lo.append(float(low[0]))
        hi.append(float(high[0]))
    tested = [i for i, f in enumerate(flat) if not f]
    holm, bh = [math.nan] * len(deltas), [math.nan] * len(deltas)
    if tested:
        for adjusted, method in ((holm, "holm"), (bh, "fdr_bh")):
            for i, q in zip(tested, multipletests([p[i] for i in tested], alpha=alpha, method=method)[1], strict=True):
                adjusted[i] = float(q)
    z = float(norm.ppf(1 - alpha / 2) + norm.ppf(power))
    out = []
    for i, d in enumerate(deltas):
        m = margin.get(d.metric, math.nan) if isinstance(margin, Mapping) else margin
        mde = math.nan if flat[i] else z * se[i]
        equivalent = not flat[i] and -m < lo[i] and hi[i] < m
        out.append(DeltaTest(d, p[i], holm[i], bh[i], se[i], mde, equivalent, lo[i], hi[i], m, flat[i]))
    return out


def pareto_front(quality: Mapping[str, float], cost: Mapping[str, float]) -> list[str]:
    """Judges no other judge beats on both axes (higher quality, lower cost), cheapest first."""
    out = []
    for j in quality:
        dominated = any(
            quality[k] >= quality[j] and cost[k] <= cost[j] and (quality[k] > quality[j] or cost[k] < cost[j])
            for k in quality
            if k != j
        )
        if not dominated:
            out.append(j)
    return sorted(out, key=lambda j: (cost[j], -quality[j]))
