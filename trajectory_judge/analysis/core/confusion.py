"""The statistics of a 2x2 confusion table, from its four counts: one place for κ, MCC and the rates.

:func:`confusion_statistics` takes the counts ``tp, fp, fn, tn`` (scalars, or arrays of any shape, such as one
value per bootstrap replicate; weights and expected proportions as well as whole counts) and returns precision,
recall, F1, balanced accuracy, Cohen's κ and Matthews' correlation, elementwise, with scikit-learn's
definitions: a ratio whose denominator is 0 is NaN, except MCC, which scikit-learn sets to 0 when the prediction
is constant but both classes occur. Every κ and MCC of the package (a judge against the labels, two judges
against each other, a judge at another prevalence, two seeds of one judge) derives from it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def ratio(num: ArrayLike, den: ArrayLike) -> np.ndarray:
    """``num / den`` where ``den > 0``, NaN elsewhere (no division is made there, so no warning)."""
    n, d = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    return np.divide(n, d, out=np.full(n.shape, np.nan), where=d > 0)


def confusion_statistics(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, *, constant_mcc: float = 0.0
) -> dict[str, np.ndarray]:
    """Precision, recall, F1, balanced accuracy, Cohen's κ and MCC of the confusion counts, elementwise.

    ``tp`` and ``fn`` are the positives flagged and missed, ``fp`` and ``tn`` the negatives flagged and passed.
    ``constant_mcc`` is the MCC of a constant prediction when both classes occur: scikit-learn's 0, or NaN to
    leave it undefined like the other ratios.
    """
    tp, fp, fn, tn = (np.asarray(x, dtype=float) for x in (tp, fp, fn, tn))
    p, n = tp + fn, fp + tn
    total = p + n
    recall, tnr = ratio(tp, p), ratio(tn, n)
    po = ratio(tp + tn, total)
    pe = ratio((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp), total * total)
    mcc = ratio(tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    return {
        "precision": ratio(tp, tp + fp),
        "recall": recall,
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
        "balanced_accuracy": (recall + tnr) / 2,
        "kappa": ratio(po - pe, 1 - pe),
        "mcc": np.where((p > 0) & (n > 0) & np.isnan(mcc), constant_mcc, mcc),
    }


def flag_counts(truth: ArrayLike, flags: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``tp, fp, fn, tn`` of boolean ``flags`` against boolean ``truth`` (summed over the last axis)."""
    t, f = np.asarray(truth, dtype=bool), np.asarray(flags, dtype=bool)
    return (t & f).sum(-1), (~t & f).sum(-1), (t & ~f).sum(-1), (~t & ~f).sum(-1)


__all__ = ["confusion_statistics", "flag_counts", "ratio"]
