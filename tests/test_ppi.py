"""PPI++ for a mean: the power-tuned weight, and the two estimates it runs between (classical and PPI)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from trajectory_judge.analysis.statistics.ppi import power_tuning, ppi_mean

Z = NormalDist().inv_cdf(0.975)
Y, F, FU = [1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1]


def test_power_tuned_estimate_matches_a_hand_computed_case():
    # by hand: cov(y, f) over the 4 labelled (divisor 4) = 0.125; var(f) over all 10 flags (divisor 9) = 2.4 / 9;
    # lam = 0.125 / ((1 + 4/6) * 2.4/9) = 0.28125; theta = 0.75 - lam * (0.5 - 4/6) = 0.796875;
    # var(y - lam f) = 0.136962890625 (divisor 4), var(f~) = 2/9 (divisor 6):
    # se^2 = 0.136962890625 / 4 + lam^2 * (2/9) / 6 = 0.03717041015625
    assert power_tuning(Y, F, FU) == pytest.approx(0.28125)
    m = ppi_mean(Y, F, FU)
    assert m.lam == pytest.approx(0.28125) and m.estimate == pytest.approx(0.796875)
    assert m.standard_error**2 == pytest.approx(0.03717041015625)
    assert (m.low, m.high) == pytest.approx((0.796875 - Z * m.standard_error, 0.796875 + Z * m.standard_error))
    assert m.method == "normal" and (m.labelled, m.unlabelled) == (4, 6)


def test_lambda_zero_is_the_classical_interval_of_the_labels_alone():
    # closed form: mean 0.75, standard error sqrt(0.75 * 0.25 / 4)
    m = ppi_mean(Y, F, FU, lam=0.0)
    se = math.sqrt(0.75 * 0.25 / 4)
    assert m.estimate == pytest.approx(0.75) and m.standard_error == pytest.approx(se)
    assert (m.low, m.high) == pytest.approx((0.75 - Z * se, 0.75 + Z * se))


def test_lambda_one_is_the_original_prediction_powered_interval():
    # closed form: mean(f~) + mean(y - f) = 4/6 + 1/4; se^2 = var(y - f)/4 + var(f~)/6 = 0.1875/4 + (2/9)/6
    m = ppi_mean(Y, F, FU, lam=1.0)
    se = math.sqrt(0.1875 / 4 + (2 / 9) / 6)
    assert m.estimate == pytest.approx(4 / 6 + 0.25) and m.standard_error == pytest.approx(se)
    assert (m.low, m.high) == pytest.approx((m.estimate - Z * se, m.estimate + Z * se))


def test_power_tuning_keeps_a_poor_judge_from_widening_the_labels_interval():
    # flags independent of the labels: PPI (lam 1) is wider than the labels alone; PPI++ is not (its lam is near 0)
    rng = np.random.default_rng(3)
    y, f, fu = rng.random(40) < 0.3, rng.random(40) < 0.5, rng.random(400) < 0.5
    width = {lam: ppi_mean(y, f, fu, lam=lam).high - ppi_mean(y, f, fu, lam=lam).low for lam in (0.0, 1.0, None)}
    assert width[1.0] > 1.3 * width[0.0]
    assert width[None] <= 1.01 * width[0.0]


def test_lambda_is_clipped_to_zero_and_one():
    assert power_tuning([1, 0, 1, 0], [0, 1, 0, 1], [0, 1]) == 0.0  # flags anti-correlated with the labels
    # flags that match the labels and almost never vary elsewhere: cov 0.25 over var(f) = 2 * 402 / 404 / 403 -> 1
    assert power_tuning([1, 0, 1, 0], [1, 0, 1, 0], [1] * 400) == 1.0
    assert power_tuning([1, 1, 0], [1, 1, 1], [1, 1]) == 0.0  # flags that never vary carry nothing


def test_labels_all_alike_give_the_exact_binomial_interval_not_a_point():
    # 20 of 20 faulty: Clopper-Pearson (0.025 ** (1/20), 1), never a zero-width normal interval
    m = ppi_mean([1] * 20, [1] * 19 + [0], [1] * 40)
    assert m.lam == 0 and m.method == "clopper-pearson"
    assert (m.low, m.high) == pytest.approx((0.025 ** (1 / 20), 1.0))


def test_bad_shapes_are_refused_with_what_is_needed():
    with pytest.raises(ValueError, match="one prediction per label"):
        ppi_mean([1, 0], [1], [0])
    with pytest.raises(ValueError, match="at least two labelled traces"):
        ppi_mean([1], [1], [0])
