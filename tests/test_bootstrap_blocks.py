"""The bootstrap resamples in blocks: the same draws as drawing every replicate at once, bounded memory.

The intervals at 400 and 4,000 trajectories (five Python judges, B = 300, seed 7) were recorded in
``tests/snapshots/scale_intervals.json`` by the implementation that drew every replicate up front.
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from scale_judges import judge_all

from trajectory_judge.analysis.bootstrap import (
    block_bounds,
    block_draws,
    block_weights,
    bootstrap,
    count_weights,
    distinct_columns,
    draw_weights,
    replicate_sums,
    stratified_draws,
    stratified_indices,
)
from trajectory_judge.analysis.plan import make_plan, run_bootstrap
from trajectory_judge.models import DESIGN_CELLS
from trajectory_judge.testbed.dataset import build_dataset

RECORDED = json.loads((Path(__file__).parent / "snapshots" / "scale_intervals.json").read_text())


@pytest.fixture(scope="module")
def plans():
    """The plan of the five judges on 400 and on 4,000 built trajectories."""
    out = {}
    for n in (400, 4000):
        trajs = build_dataset(n, 7)
        out[n] = make_plan(trajs, judge_all(trajs))
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 1000, 100_000])
def test_splitting_one_integers_call_into_several_gives_the_same_numbers_and_state(k):
    whole = np.random.default_rng(11)
    once = whole.integers(0, k, size=(40, k)) if k < 1000 else whole.integers(0, k, size=5 * k + 3)
    split = np.random.default_rng(11)
    rows = once.reshape(-1) if once.ndim == 1 else once
    cuts = (0, 1, 4, 17, len(rows)) if once.ndim == 2 else (0, 1, 3, k, 5 * k + 3)
    parts = [split.integers(0, k, size=(b - a, k) if once.ndim == 2 else b - a) for a, b in zip(cuts, cuts[1:])]
    assert np.array_equal(np.concatenate(parts), once)
    assert split.bit_generator.state == whole.bit_generator.state


@pytest.mark.parametrize("batch", [1, 256, 300, 512, None])
def test_block_draws_are_the_draws_made_at_once_and_leave_the_generator_where_they_do(batch):
    strata = ["b", "a", "a", "c", "b", "a", "c", "c", "c", "d"]  # "d" has one row
    at_once = np.random.default_rng(4)
    full = stratified_draws(strata, resamples=1300, rng=at_once, order=["c"])
    blocked = np.random.default_rng(4)
    seen = 0
    for start, stop, draws in block_draws(strata, resamples=1300, rng=blocked, order=["c"], batch=batch):
        assert start == seen
        for (members, d), (m_full, d_full) in zip(draws, full, strict=True):
            assert np.array_equal(members, m_full) and np.array_equal(d, d_full[start:stop])
        seen = stop
    assert seen == 1300
    assert blocked.bit_generator.state == at_once.bit_generator.state


@pytest.mark.parametrize("batch", [1, 700, None])
def test_block_weights_are_the_counts_of_the_index_matrix(batch):
    strata = ["b", "a", "a", "c", "b", "a", "c", "c", "c", "d"]
    idx = stratified_indices(strata, resamples=1300, rng=np.random.default_rng(5), order=["c"])
    whole = count_weights(idx, len(strata))
    for start, stop, w in block_weights(strata, resamples=1300, rng=np.random.default_rng(5), order=["c"], batch=batch):
        assert np.array_equal(w, whole[start:stop])


def test_blocks_are_aligned_near_the_budget_and_a_short_rest_joins_the_block_before():
    assert block_bounds(400, 300) == [(0, 300)]
    assert block_bounds(4000, 10_000)[:2] == [(0, 2304), (2304, 4608)]  # 2**23 / 4,000 = 2,097, rounded up
    assert block_bounds(4000, 10_000)[-1] == (9216, 10_000)
    assert block_bounds(100_000, 10_000)[-1] == (9728, 10_000)  # 256 each, the rest of 16 joins the last
    assert block_bounds(100_000, 10_000)[0] == (0, 256)
    assert block_bounds(10, 600, batch=7) == [(0, 256), (256, 600)]


@pytest.mark.parametrize("n", [400, 4000])
def test_intervals_at_400_and_4000_trajectories_are_the_recorded_ones_bit_for_bit(plans, n):
    rec = RECORDED[str(n)]
    boot = run_bootstrap(plans[n], resamples=rec["resamples"], seed=rec["seed"])
    assert list(boot.names) == rec["names"] and list(boot.method) == rec["method"]
    assert [float(x).hex() for x in boot.estimate] == rec["estimate"]
    assert [float(x).hex() for x in boot.low] == rec["low"]
    assert [float(x).hex() for x in boot.high] == rec["high"]
    assert hashlib.sha256(boot.distribution.tobytes()).hexdigest() == rec["distribution_sha256"]


@pytest.mark.parametrize(("n", "batch", "resamples"), [(400, 1, 300), (4000, 256, 300), (400, 256, 1100)])
def test_block_size_does_not_change_the_intervals_bit_for_bit(plans, n, batch, resamples):
    rec = RECORDED[str(n)]
    boot = run_bootstrap(plans[n], resamples=resamples, seed=7, batch=batch)
    whole = run_bootstrap(plans[n], resamples=resamples, seed=7, batch=resamples)
    assert np.array_equal(boot.distribution, whole.distribution)
    assert np.array_equal(boot.low, whole.low) and np.array_equal(boot.high, whole.high)
    if resamples == rec["resamples"]:
        assert [float(x).hex() for x in boot.low] == rec["low"]


def test_weighted_count_sums_of_every_block_are_exact(plans):
    plan = plans[400]
    integral = np.equal(plan.data, np.round(plan.data)).all(axis=0)
    assert integral.sum() > 300 and not integral.all()
    distinct, inverse = distinct_columns(plan.data)
    full = stratified_draws(plan.cells, resamples=300, rng=np.random.default_rng(7), order=DESIGN_CELLS)
    whole = replicate_sums(distinct, inverse, draw_weights(full, 400, 0, 300))
    for start, stop, draws in block_draws(
        plan.cells, resamples=300, rng=np.random.default_rng(7), order=DESIGN_CELLS, batch=1
    ):
        part = replicate_sums(distinct, inverse, draw_weights(draws, 400, 0, stop - start))
        assert np.array_equal(part[:, integral], whole[start:stop, integral])


def _peak(n: int, resamples: int, batch: int) -> tuple[int, int]:
    rng = np.random.default_rng(0)
    data = np.column_stack([rng.integers(0, 2, n), np.ones(n)]).astype(float)
    strata = np.repeat(np.arange(8), n // 8)
    tracemalloc.start()
    try:
        res = bootstrap(
            data, lambda s: s[..., :1] / s[..., 1:2], strata=strata, resamples=resamples, rng=1, batch=batch
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, res.distribution.nbytes


def test_bootstrap_peak_memory_is_bounded_and_does_not_grow_with_resamples():
    n = 16_000  # 1,536 replicates at once would hold 197 MB of draws and as many of weights
    small, small_dist = _peak(n, 300, 256)
    large, large_dist = _peak(n, 1536, 256)
    assert large < 2.5 * 256 * n * 8  # one block's weights, one stratum's draws and counts
    assert large - small <= 2 * (large_dist - small_dist) + 2e6  # only the replicate values grow
