"""Per-type recalls read as one family: the sup-t simultaneous band (``analysis/statistics/simultaneous.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.analysis.statistics.simultaneous import per_type_family

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def report():
    data = load_data(ROOT / "data")
    return build_report(data.trajectories, data.verdicts, resamples=2000, seed=7)


def test_a_family_of_many_cells_needs_a_larger_critical_value_than_one_cell(report):
    fam = per_type_family(report)
    one = per_type_family(report, [next(j for j in report.judges if j.startswith("outcome"))])
    assert fam.size > one.size >= 1
    assert fam.critical > one.critical > 1.5  # one judge's six cells already need more than one cell's 1.96 at most
    assert fam.critical > 2.3


def test_every_varying_cell_is_widened_and_every_fixed_cell_keeps_its_own_interval(report):
    fam = per_type_family(report)
    for c in fam.cells:
        assert c.sim_low <= c.value <= c.sim_high
        if c.in_family:
            assert c.sim_high - c.sim_low >= 0.999 * (c.high - c.low) or c.sim_high == 1.0 or c.sim_low == 0.0
        else:
            assert (c.sim_low, c.sim_high) == (c.low, c.high)


def test_the_band_covers_every_cell_together_in_the_share_of_replicates_it_names(report):
    fam = per_type_family(report)
    boot = report.bootstrap
    inside = np.ones(boot.distribution.shape[0], dtype=bool)
    for c in fam.cells:
        if c.in_family and c.sim_low > 0.0 and c.sim_high < 1.0:  # unclipped: the band is value ± critical × se
            col = boot.distribution[:, boot.index(f"{c.judge}|recall:{c.failure_type}")]
            inside &= (col >= c.sim_low - 1e-12) & (col <= c.sim_high + 1e-12)
    assert inside.mean() >= fam.level - 0.01
    assert list(fam.to_frame().columns)[:3] == ["judge", "failure_type", "value"]
