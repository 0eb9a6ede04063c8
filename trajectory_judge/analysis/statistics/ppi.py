"""Prediction-powered inference for a mean, power-tuned (PPI++; Angelopoulos, Duchi and Zrnic, 2023).

``n`` traces carry a label ``y`` and a prediction ``f`` (the judge's flag); ``N`` more carry only the
prediction ``f~``. For any ``lam``,

    theta(lam) = lam * mean(f~) + mean(y - lam * f)

is unbiased for the mean label, with variance ``var(y - lam f) / n + lam**2 var(f~) / N``. ``lam = 0``
is the classical estimate (the labels' mean, the predictions unused); ``lam = 1`` is the original
prediction-powered estimate (Angelopoulos et al., 2023, "Prediction-powered inference"), which with a poor
predictor is wider than the labels alone. PPI++ takes the ``lam`` that minimises the variance,

    lam* = cov(y, f) / ((1 + n / N) var(f)),

estimated from the data and clipped to [0, 1] (the paper's choice for the mean: the covariance over the
labelled traces, the predictions' variance over all of them), and a normal interval
``theta +- z * sqrt(var(y - lam f) / n + lam**2 var(f~) / N)`` with both variances over their own sample
(divisor the sample size). Asymptotically the tuned estimate is never wider than the classical one.

A normal interval has zero width when the labels are all one value and ``lam`` is 0 (the labels' mean,
observed as 0 or 1, has an estimated variance of 0; ``lam`` is then 0 whatever the flags, as the labels do
not covary with them): then the interval is the labels' exact Clopper-Pearson interval, never a point.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from trajectory_judge.analysis.core.bootstrap import clopper_pearson


@dataclass(frozen=True)
class MeanEstimate:
    """A mean label estimated from labels and predictions, with its two-sided interval (before any clipping)."""

    estimate: float
    """``theta(lam)``."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    lam: float
    """The weight of the predictions: 0 classical, 1 prediction-powered, in between power-tuned."""
    standard_error: float
    """The estimate's estimated standard error (0 when the interval is the exact binomial one)."""
    method: str
    """``normal``, or ``clopper-pearson`` where the normal interval would have zero width."""
    labelled: int
    """``n``, the traces with a label."""
    unlabelled: int
    """``N``, the traces with a prediction only."""


def _arrays(
    labels: ArrayLike, flags_labelled: ArrayLike, flags_unlabelled: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, f, fu = (np.asarray(a, dtype=float) for a in (labels, flags_labelled, flags_unlabelled))
    if y.ndim != 1 or f.shape != y.shape:
        raise ValueError("prediction-powered inference needs one prediction per label")
    if len(y) < 2 or fu.ndim != 1 or len(fu) < 1:
        raise ValueError("prediction-powered inference needs at least two labelled traces and one unlabelled trace")
    return y, f, fu


def power_tuning(labels: ArrayLike, flags_labelled: ArrayLike, flags_unlabelled: ArrayLike) -> float:
    """PPI++'s ``lam``: ``cov(y, f) / ((1 + n / N) var(f))`` clipped to [0, 1]; 0 when the predictions do not
    vary (they then carry nothing the labels do not)."""
    y, f, fu = _arrays(labels, flags_labelled, flags_unlabelled)
    n, big_n = len(y), len(fu)
    var_f = float(np.var(np.concatenate([f, fu]), ddof=1))
    if var_f == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    return float(min(1.0, max(0.0, cov / ((1 + n / big_n) * var_f))))


def ppi_mean(
    labels: ArrayLike,
    flags_labelled: ArrayLike,
    flags_unlabelled: ArrayLike,
    *,
    lam: float | None = None,
    confidence_level: float = 0.95,
) -> MeanEstimate:
    """The mean label with its interval at weight ``lam`` (None: PPI++'s :func:`power_tuning`)."""
    y, f, fu = _arrays(labels, flags_labelled, flags_unlabelled)
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    w = power_tuning(y, f, fu) if lam is None else float(lam)
    n, big_n = len(y), len(fu)
    estimate = float(w * fu.mean() + np.mean(y - w * f))
    se = float(np.sqrt(np.var(y - w * f) / n + w**2 * np.var(fu) / big_n))
    if se == 0 and np.all(y == y[0]) and y[0] in (0.0, 1.0):
        low, high = clopper_pearson(float(y.sum()), float(n), confidence_level)
        return MeanEstimate(estimate, low, high, w, 0.0, "clopper-pearson", n, big_n)
    z = NormalDist().inv_cdf(0.5 + confidence_level / 2)
    return MeanEstimate(estimate, estimate - z * se, estimate + z * se, w, se, "normal", n, big_n)
