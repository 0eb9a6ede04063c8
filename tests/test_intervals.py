"""One interval type and one rounding for the report's JSON."""

from __future__ import annotations

import math

from trajectory_judge.analysis.core.deltas import Delta, Gap
from trajectory_judge.analysis.core.intervals import Interval, rounded


def test_the_json_rounds_to_six_decimals_writes_nan_as_null_and_never_a_negative_zero():
    assert rounded(0.1234565001) == 0.123457 and rounded(None) is None and rounded(math.nan) is None
    assert math.copysign(1.0, rounded(-1e-9)) == 1.0  # -0.0 would print as "-0.0"


def test_an_interval_writes_its_method_only_when_it_has_one():
    assert Interval(0.1, 0.2, "bootstrap").to_dict() == {"low": 0.1, "high": 0.2, "method": "bootstrap"}
    assert Interval(0.1, math.nan).to_dict() == {"low": 0.1, "high": None}


def test_a_delta_and_a_gap_write_the_reports_keys_in_the_reports_order():
    d = Delta("a", "b", "f1", 0.05, -0.01, 0.11, "reference", 40).to_dict()
    assert list(d) == ["a", "b", "kind", "n", "metric", "value", "low", "high"]
    assert list(Gap("a", "loud_minus_silent", 0.3, 0.2, 0.4).to_dict()) == ["judge", "metric", "value", "low", "high"]
