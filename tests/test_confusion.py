"""One function from confusion counts to the rates and agreement statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from trajectory_judge.analysis.core.confusion import confusion_statistics, flag_counts

CONFUSION_STATISTICS = ("precision", "recall", "f1", "balanced_accuracy", "kappa", "mcc")
"""What :func:`confusion_statistics` returns, in this order."""

SKLEARN = {
    "precision": precision_score,
    "recall": recall_score,
    "f1": f1_score,
    "balanced_accuracy": balanced_accuracy_score,
    "kappa": cohen_kappa_score,
    "mcc": matthews_corrcoef,
}


@pytest.mark.parametrize("seed", range(5))
def test_every_statistic_is_scikit_learns_on_random_flags(seed):
    rng = np.random.default_rng(seed)
    truth, flags = rng.random(60) < 0.4, rng.random(60) < 0.5
    got = confusion_statistics(*flag_counts(truth, flags))
    assert tuple(got) == CONFUSION_STATISTICS
    for name, reference in SKLEARN.items():  # the reference: scikit-learn's value on the same flags
        assert float(got[name]) == pytest.approx(reference(truth, flags), abs=1e-12), name


def test_statistics_are_elementwise_over_a_replicate_axis():
    rng = np.random.default_rng(1)
    truth, flags = rng.random((4, 50)) < 0.3, rng.random((4, 50)) < 0.3
    together = confusion_statistics(*flag_counts(truth, flags))
    for r in range(4):
        alone = confusion_statistics(*flag_counts(truth[r], flags[r]))
        assert all(together[k][r] == alone[k] for k in CONFUSION_STATISTICS)


def test_a_constant_prediction_has_scikit_learns_mcc_of_zero_or_an_undefined_one():
    truth, flags = np.array([1, 1, 0, 0], bool), np.ones(4, bool)
    assert float(confusion_statistics(*flag_counts(truth, flags))["mcc"]) == matthews_corrcoef(truth, flags) == 0.0
    assert math.isnan(confusion_statistics(*flag_counts(truth, flags), constant_mcc=math.nan)["mcc"])
    assert math.isnan(confusion_statistics(0, 0, 0, 0)["kappa"])  # nothing counted: no statistic
