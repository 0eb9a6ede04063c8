"""Per-judge metrics of §5: detection, localisation, typing, calibration and cost.

Two forms of every metric live here and are tested to agree:

* the *plain* form (:func:`judge_metrics` and friends) reads a list of ``(label, verdict)``
  pairs and is the definition;
* the *count* form (:func:`count_columns`, :func:`metrics_from_counts`) writes each
  trajectory as a row of indicator columns, so that any multiset of trajectories is summarised
  by a weighted column sum and every metric (ratios included) is a function of those sums.
  The bootstrap uses it to evaluate all replicates at once.

Conventions, each chosen because it reproduces the published tables:

* A judge is scored only on the trajectories it judged.
* Localisation is scored where the trajectory is faulty, the judge flagged it, and both label
  and verdict carry a step; its denominator is reported as ``step_exact_n``. No scored case
  gives ``None`` (the outcome judge never names a step).
* Typing is a confusion over genuinely faulty trajectories with a type: true type x (predicted type or
  ``missed``), 6x7 on the testbed; ``missed`` = not flagged, or flagged without a type. The types are the
  folder's (``types``, the testbed's six by default); a predicted type outside them is a column of its
  own in the plain form and ``other type`` in the count form, never a class. Macro-F1 is the mean over
  the true classes present of ``2 * C[t, t] / (row_t + predicted_t)``, where ``predicted_t``
  counts predictions of ``t`` (``missed`` is a column, never a class). This gives the published
  0.667 / 0.300 / 0.606 / 0.311 / 0.583; dividing by seven classes instead gives 0.571 for the
  rule engine.
* Calibration scores confidence as the probability that the verdict is correct
  (``verdict.faulty == label.faulty``). ECE uses ten equal-width bins, right-closed as in the
  calibration literature (Naeini et al. 2015; Guo et al. 2017): bin ``k`` (0-based) holds
  ``(k/10, (k+1)/10]`` and a confidence of exactly 0 goes to the first bin. A confidence on an
  edge (0.7, 0.8, 0.9, which our judges state often) belongs to the bin it closes. Bins are
  population-weighted, which equals
  ``sum_k |correct_k - confidence_k| / n`` in sums. Brier is the mean of
  ``(confidence - correct)^2`` (identical to the Brier score of the implied P(faulty)).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from trajectory_judge.analysis.core.bootstrap import ordered_sum
from trajectory_judge.analysis.core.confusion import confusion_statistics, ratio
from trajectory_judge.analysis.core.registry import metric_names
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Label, Verdict, stratum, type_order

METRICS: tuple[str, ...] = metric_names()
"""The per-judge headline metrics, in report order."""


COST_METRICS: tuple[str, ...] = metric_names(cost=True)
"""Metrics of cost rather than quality."""


MISSED = "missed"
"""The confusion column for a faulty trajectory left unflagged or flagged without a type."""

OTHER_TYPE = "other type"
"""The count form's confusion column for a predicted type that is none of the folder's types."""

Types = tuple[str, ...]
"""The failure types a metric is computed over, in table order (the folder's; the testbed's six by default)."""


N_BINS = 10
"""Equal-width confidence bins for ECE."""


Pair = tuple[Label, Verdict]


# --- plain form ---------------------------------------------------------------------------
def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def confidence_bin(confidence: float) -> int:
    """Bin index of a confidence: bin ``k`` holds ``(k/10, (k+1)/10]``, and 0 is in bin 0.

    The product is rounded to 9 places first, so that 0.7 (``7.000000000000001`` tenths in
    binary floating point) lands in the bin it closes, ``(0.6, 0.7]``.
    """
    k = math.ceil(round(confidence * N_BINS, 9)) - 1
    return min(max(k, 0), N_BINS - 1)


def is_correct(label: Label, verdict: Verdict) -> bool:
    """The verdict is correct when its faulty flag equals the label's."""
    return verdict.faulty == label.faulty


def predicted_type(verdict: Verdict) -> str:
    """The type a verdict names, or ``missed`` when unflagged or flagged without a type."""
    if verdict.faulty and verdict.failure_type is not None:
        return verdict.failure_type
    return MISSED


def detection(pairs: Sequence[Pair]) -> dict[str, float | None]:
    """Precision, recall, F1, silent and loud recall, false-alarm rate on clean."""
    tp = sum(1 for lab, v in pairs if v.faulty and lab.faulty)
    fp = sum(1 for lab, v in pairs if v.faulty and not lab.faulty)
    fn = sum(1 for lab, v in pairs if not v.faulty and lab.faulty)
    by: dict[str, list[bool]] = {"clean": [], "silent": [], "loud": []}
    for lab, v in pairs:
        by[stratum(lab)].append(v.faulty)
    return {
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "silent_recall": _ratio(sum(by["silent"]), len(by["silent"])),
        "loud_recall": _ratio(sum(by["loud"]), len(by["loud"])),
        "false_alarm_rate": _ratio(sum(by["clean"]), len(by["clean"])),
    }


def per_type_recall(pairs: Sequence[Pair], types: Types = TESTBED_FAILURE_TYPES) -> dict[str, float | None]:
    """Recall on each failure type of ``types`` (``None`` where the judge saw none)."""
    out: dict[str, float | None] = {}
    for t in types:
        flags = [v.faulty for lab, v in pairs if lab.faulty and lab.failure_type == t]
        out[t] = _ratio(sum(flags), len(flags))
    return out


def localisation(pairs: Sequence[Pair]) -> dict[str, float | int | None]:
    """Exact and within-one step match over detected faults where both sides carry a step."""
    scored = [
        (lab.failure_step, v.failure_step)
        for lab, v in pairs
        if lab.faulty and v.faulty and lab.failure_step is not None and v.failure_step is not None
    ]
    n = len(scored)
    return {
        "step_exact": _ratio(sum(1 for a, b in scored if a == b), n),
        "step_exact_n": n,
        "step_within_one": _ratio(sum(1 for a, b in scored if abs(a - b) <= 1), n),
    }


def confusion(pairs: Sequence[Pair], types: Types = TESTBED_FAILURE_TYPES) -> dict[str, dict[str, int]]:
    """True type -> predicted type (or ``missed``) -> count, over genuinely faulty trajectories with a type.

    Rows are ``types``; columns are ``types``, then any other type a verdict names, then ``missed``."""
    scored = [(lab, v) for lab, v in pairs if lab.faulty and lab.failure_type in types]
    others = type_order(p for _, v in scored if (p := predicted_type(v)) != MISSED and p not in types)
    cols = (*types, *others, MISSED)
    out: dict[str, dict[str, int]] = {t: {p: 0 for p in cols} for t in types}
    for lab, v in scored:
        out[str(lab.failure_type)][predicted_type(v)] += 1
    return out


def macro_f1(matrix: dict[str, dict[str, int]]) -> float | None:
    """Mean per-class F1 over the true classes present (the matrix's rows); ``missed`` is a column, not a class."""
    f1s = []
    for t in matrix:
        true_t = sum(matrix[t].values())
        if not true_t:
            continue
        pred_t = sum(matrix[r].get(t, 0) for r in matrix)
        f1s.append(2 * matrix[t][t] / (true_t + pred_t))
    return sum(f1s) / len(f1s) if f1s else None


def calibration_bins(pairs: Sequence[Pair]) -> list[dict[str, float | int | None]]:
    """Per bin: edges, population, mean stated confidence, observed accuracy."""
    by_bin: list[list[tuple[float, bool]]] = [[] for _ in range(N_BINS)]
    for lab, v in pairs:
        by_bin[confidence_bin(v.confidence)].append((v.confidence, is_correct(lab, v)))
    rows = []
    for k, inside in enumerate(by_bin):
        n = len(inside)
        rows.append(
            {
                "bin": k,
                "low": k / N_BINS,
                "high": (k + 1) / N_BINS,
                "n": n,
                "confidence": _ratio(sum(c for c, _ in inside), n),
                "accuracy": _ratio(sum(ok for _, ok in inside), n),
            }
        )
    return rows


def calibration(pairs: Sequence[Pair]) -> dict[str, float | None]:
    """ECE (ten equal-width bins, population-weighted) and Brier score."""
    n = len(pairs)
    gap = 0.0
    for row in calibration_bins(pairs):
        if row["n"]:
            gap += abs(row["accuracy"] - row["confidence"]) * row["n"]  # type: ignore[operator]
    brier = sum((v.confidence - is_correct(lab, v)) ** 2 for lab, v in pairs)
    return {"ece": _ratio(gap, n), "brier": _ratio(brier, n)}


def confidence_support(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """Distinct stated confidences (rounded to 6 places, as strings) and their counts."""
    counts = Counter(round(v.confidence, 6) for v in verdicts)
    return {repr(c): counts[c] for c in sorted(counts)}


def cost(verdicts: Sequence[Verdict]) -> dict[str, float | None]:
    """Mean latency and token counts per trajectory."""
    n = len(verdicts)
    return {
        "s_per_traj": _ratio(sum(v.latency_s for v in verdicts), n),
        "prompt_tokens_mean": _ratio(sum(v.prompt_tokens for v in verdicts), n),
        "completion_tokens_mean": _ratio(sum(v.completion_tokens for v in verdicts), n),
    }


def judge_metrics(pairs: Sequence[Pair], types: Types = TESTBED_FAILURE_TYPES) -> dict[str, float | None]:
    """Every headline metric, per-type recall (``recall:TYPE`` for each of ``types``) and ``loud_minus_silent``."""
    out: dict[str, float | None] = {}
    out.update(detection(pairs))
    out.update(localisation(pairs))
    out["type_macro_f1"] = macro_f1(confusion(pairs, types))
    out.update(calibration(pairs))
    out.update(cost([v for _, v in pairs]))
    res: dict[str, float | None] = {m: out[m] for m in METRICS}
    for t, r in per_type_recall(pairs, types).items():
        res[f"recall:{t}"] = r
    lo, si = res["loud_recall"], res["silent_recall"]
    res["loud_minus_silent"] = None if lo is None or si is None else lo - si
    return res


# --- count form ---------------------------------------------------------------------------
def _predicted(types: Types, other: bool) -> tuple[str, ...]:
    return (*types, OTHER_TYPE, MISSED) if other else (*types, MISSED)


def _conf_cols(types: Types, other: bool) -> tuple[str, ...]:
    return tuple(f"conf:{t}>{p}" for t in types for p in _predicted(types, other))


@lru_cache(maxsize=64)
def count_names(types: Types = TESTBED_FAILURE_TYPES, other: bool = False) -> tuple[str, ...]:
    """Indicator columns of the count form over ``types``, one row per trajectory; with ``other``, a confusion
    column for predicted types outside ``types`` (needed only when some verdict names one)."""
    return (
        "n",
        "tp",
        "fp",
        "fn",
        "n_clean",
        "n_silent",
        "n_loud",
        "flag_silent",
        "flag_loud",
        *(f"n:{t}" for t in types),
        *(f"flag:{t}" for t in types),
        "step_scored",
        "step_exact",
        "step_within",
        *_conf_cols(types, other),
        *(f"bin_n:{k}" for k in range(N_BINS)),
        *(f"bin_conf:{k}" for k in range(N_BINS)),
        *(f"bin_correct:{k}" for k in range(N_BINS)),
        "brier",
        "latency",
        "prompt",
        "completion",
    )


COST_COUNTS: frozenset[str] = frozenset({"latency", "prompt", "completion"})
"""Count columns that carry cost rather than judgement."""


@lru_cache(maxsize=64)
def _index(types: Types, other: bool = False) -> dict[str, int]:
    return {name: i for i, name in enumerate(count_names(types, other))}


def needs_other(labels: Sequence[Label], verdicts: Iterable[Verdict | None], types: Types) -> bool:
    """Whether some verdict on a fault of ``types`` names a type outside them (the count form's ``other type``)."""
    return any(
        v is not None and v.faulty and v.failure_type is not None and v.failure_type not in types
        for lab, v in zip(labels, verdicts)
        if lab.faulty and lab.failure_type in types
    )


def count_columns(
    labels: Sequence[Label],
    verdicts: Sequence[Verdict | None],
    types: Types = TESTBED_FAILURE_TYPES,
    other: bool = False,
) -> np.ndarray:
    """An ``(n, len(count_names(types, other)))`` matrix; rows without a verdict are all zero.

    A predicted type outside ``types`` needs ``other`` (:func:`needs_other`)."""
    ix = _index(types, other)
    out = np.zeros((len(labels), len(ix)))
    for i, (lab, v) in enumerate(zip(labels, verdicts, strict=True)):
        if v is None:
            continue
        row = out[i]
        s = stratum(lab)
        row[ix["n"]] = 1
        row[ix["tp"]] = v.faulty and lab.faulty
        row[ix["fp"]] = v.faulty and not lab.faulty
        row[ix["fn"]] = (not v.faulty) and lab.faulty
        row[ix[f"n_{s}"]] = 1
        if s != "clean":
            row[ix[f"flag_{s}"]] = v.faulty
        if lab.faulty and lab.failure_type in types:
            pred = predicted_type(v)
            pred = pred if pred == MISSED or pred in types else OTHER_TYPE
            row[ix[f"n:{lab.failure_type}"]] = 1
            row[ix[f"flag:{lab.failure_type}"]] = v.faulty
            row[ix[f"conf:{lab.failure_type}>{pred}"]] = 1
        if lab.faulty and v.faulty and lab.failure_step is not None and v.failure_step is not None:
            row[ix["step_scored"]] = 1
            row[ix["step_exact"]] = lab.failure_step == v.failure_step
            row[ix["step_within"]] = abs(lab.failure_step - v.failure_step) <= 1
        k = confidence_bin(v.confidence)
        ok = is_correct(lab, v)
        row[ix[f"bin_n:{k}"]] = 1
        row[ix[f"bin_conf:{k}"]] = v.confidence
        row[ix[f"bin_correct:{k}"]] = ok
        row[ix["brier"]] = (v.confidence - ok) ** 2
        row[ix["latency"]] = v.latency_s
        row[ix["prompt"]] = v.prompt_tokens
        row[ix["completion"]] = v.completion_tokens
    return out


def metrics_from_counts(
    sums: np.ndarray, types: Types = TESTBED_FAILURE_TYPES, other: bool = False
) -> dict[str, np.ndarray]:
    """The keys of :func:`judge_metrics` from column sums of shape ``(..., len(count_names(types, other)))``.

    Undefined values (a zero denominator) are NaN. What is summed over types or bins is summed left to
    right (:func:`~trajectory_judge.analysis.core.bootstrap.ordered_sum`), so a replicate's value does not depend
    on how many replicates are evaluated together.
    """
    c = {name: sums[..., i] for i, name in enumerate(count_names(types, other))}
    tp, fp, fn, n = c["tp"], c["fp"], c["fn"], c["n"]
    rates = confusion_statistics(tp, fp, fn, c["n_clean"] - fp)
    out: dict[str, np.ndarray] = {
        **{m: rates[m] for m in ("precision", "recall", "f1")},
        "silent_recall": ratio(c["flag_silent"], c["n_silent"]),
        "loud_recall": ratio(c["flag_loud"], c["n_loud"]),
        "false_alarm_rate": ratio(fp, c["n_clean"]),
        "step_exact": ratio(c["step_exact"], c["step_scored"]),
        "step_exact_n": c["step_scored"],
        "step_within_one": ratio(c["step_within"], c["step_scored"]),
    }
    n_t, ix, k = len(types), _index(types, other), len(_predicted(types, other))
    start = ix["step_within"] + 1
    mat = sums[..., start : start + n_t * k].reshape(*sums.shape[:-1], n_t, k)
    true = mat.sum(axis=-1)
    pred = mat[..., :n_t].sum(axis=-2)
    diag = np.diagonal(mat[..., :n_t], axis1=-2, axis2=-1)
    present = true > 0
    f1_t = np.where(present, ratio(2 * diag, true + pred), 0.0)
    out["type_macro_f1"] = ratio(ordered_sum(f1_t), present.sum(axis=-1).astype(float))
    b0 = ix["bin_n:0"]
    bin_conf = sums[..., b0 + N_BINS : b0 + 2 * N_BINS]
    bin_correct = sums[..., b0 + 2 * N_BINS : b0 + 3 * N_BINS]
    out["ece"] = ratio(ordered_sum(np.abs(bin_correct - bin_conf)), n)
    out["brier"] = ratio(c["brier"], n)
    out["s_per_traj"] = ratio(c["latency"], n)
    out["prompt_tokens_mean"] = ratio(c["prompt"], n)
    out["completion_tokens_mean"] = ratio(c["completion"], n)
    out = {m: out[m] for m in METRICS}
    for t in types:
        out[f"recall:{t}"] = ratio(c[f"flag:{t}"], c[f"n:{t}"])
    out["loud_minus_silent"] = out["loud_recall"] - out["silent_recall"]
    return out


def proportion_counts(
    sums: np.ndarray, types: Types = TESTBED_FAILURE_TYPES, other: bool = False
) -> dict[str, tuple[float, float]]:
    """(successes, trials) of every metric that is a simple proportion, from one sum vector."""
    c = {name: float(sums[i]) for i, name in enumerate(count_names(types, other))}
    out = {
        "precision": (c["tp"], c["tp"] + c["fp"]),
        "recall": (c["tp"], c["tp"] + c["fn"]),
        "silent_recall": (c["flag_silent"], c["n_silent"]),
        "loud_recall": (c["flag_loud"], c["n_loud"]),
        "false_alarm_rate": (c["fp"], c["n_clean"]),
        "step_exact": (c["step_exact"], c["step_scored"]),
        "step_within_one": (c["step_within"], c["step_scored"]),
    }
    for t in types:
        out[f"recall:{t}"] = (c[f"flag:{t}"], c[f"n:{t}"])
    return out
