"""A delta under dependence is the report's delta with a second interval beside it."""

from __future__ import annotations

import math

import pytest

from trajectory_judge.analysis.core.deltas import Delta
from trajectory_judge.analysis.statistics.dependence import DeltaUnderDependence


def test_a_delta_under_dependence_keeps_the_reports_delta_and_compares_the_widths():
    mine = Delta("a", "b", "recall", 0.2, 0.1, 0.3, "same model", 40)
    d = DeltaUnderDependence(**vars(mine), clustered_low=0.05, clustered_high=0.35)
    assert isinstance(d, Delta) and (d.kind, d.n, d.low, d.high) == ("same model", 40, 0.1, 0.3)
    assert d.width_ratio == pytest.approx(1.5)  # 0.30 wide against 0.20: drawing whole runs widens it


def test_a_zero_width_interval_has_no_width_ratio():
    assert math.isnan(
        DeltaUnderDependence("a", "b", "f1", 0.0, 0.0, 0.0, clustered_low=0, clustered_high=0).width_ratio
    )
