"""The bootstrap's numbers do not depend on the block size or on BLAS: fixed child streams per chunk of
replicates, and exact sums (:mod:`trajectory_judge.analysis.core.bootstrap`).

The intervals at 400 and 4,000 trajectories (five Python judges, B = 300, seed 7) are recorded in
``tests/snapshots/scale_intervals.json``, written by this implementation with one block of every replicate.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from loop_reference import count_weights
from scale_judges import judge_all

from trajectory_judge.analysis.core.bootstrap import (
    CHUNK,
    ColumnSums,
    KeptCounts,
    block_bounds,
    block_weights,
    bootstrap,
    chunk_generator,
    ordered_sum,
    replicate_root,
    stratified_draws,
    stratified_indices,
)
from trajectory_judge.analysis.core.plan import make_plan, run_bootstraps
from trajectory_judge.testbed.dataset import build_dataset

ROOT = Path(__file__).resolve().parents[1]
RECORDED = json.loads((Path(__file__).parent / "snapshots" / "scale_intervals.json").read_text())
STRATA = ["b", "a", "a", "c", "b", "a", "c", "c", "c", "d"]  # "d" has one row


@pytest.fixture(scope="module")
def plans():
    """The plan of the five judges on 400 and on 4,000 built trajectories."""
    out = {}
    for n in (400, 4000):
        trajs = build_dataset(n, 7)
        out[n] = make_plan(trajs, judge_all(trajs))
    return out


def test_a_chunks_stream_is_the_spawned_child_of_the_root_drawn_from_the_generator():
    root = replicate_root(np.random.default_rng(3))
    assert root.entropy == replicate_root(np.random.default_rng(3)).entropy
    for c in (0, 1, 5):
        spawned = np.random.Generator(np.random.PCG64(replicate_root(np.random.default_rng(3)).spawn(c + 1)[c]))
        assert np.array_equal(chunk_generator(root, c).integers(0, 1000, 50), spawned.integers(0, 1000, 50))


def test_a_replicates_draws_do_not_depend_on_how_many_replicates_are_drawn():
    few = stratified_indices(STRATA, resamples=70, rng=np.random.default_rng(4), order=["c"])
    many = stratified_indices(STRATA, resamples=3 * CHUNK + 5, rng=np.random.default_rng(4), order=["c"])
    assert np.array_equal(few, many[:70])


@pytest.mark.parametrize("batch", [1, 7, CHUNK, 700, None])
def test_block_weights_are_the_counts_of_the_index_matrix_at_any_block_size(batch):
    idx = stratified_indices(STRATA, resamples=1300, rng=np.random.default_rng(5), order=["c"])
    whole = count_weights(idx, len(STRATA))
    seen = 0
    for start, stop, w in block_weights(STRATA, resamples=1300, rng=np.random.default_rng(5), order=["c"], batch=batch):
        assert start == seen and np.array_equal(w, whole[start:stop])
        seen = stop
    assert seen == 1300


def test_draws_stay_inside_their_stratum_and_keep_its_size():
    for members, d in stratified_draws(STRATA, resamples=200, rng=np.random.default_rng(2)):
        assert d.shape == (200, len(members)) and d.min() >= 0 and d.max() < len(members)


def test_blocks_hold_a_bounded_number_of_weights_and_any_batch():
    assert block_bounds(400, 300) == [(0, 300)]
    assert block_bounds(400, 10_000)[:2] == [(0, 2048), (2048, 4096)]  # BLOCK_REPLICATES
    assert block_bounds(100_000, 10_000)[:2] == [(0, 83), (83, 166)]  # 2**23 / 100,000
    assert block_bounds(10, 600, batch=7)[-1] == (595, 600)


@pytest.mark.parametrize("n", [400, 4000])
def test_intervals_at_400_and_4000_trajectories_are_the_recorded_ones_bit_for_bit(plans, n):
    rec = RECORDED[str(n)]
    boot = run_bootstraps(plans[n], resamples=rec["resamples"], seed=rec["seed"])[0]
    assert list(boot.names) == rec["names"] and list(boot.method) == rec["method"]
    assert [float(x).hex() for x in boot.estimate] == rec["estimate"]
    assert [float(x).hex() for x in boot.low] == rec["low"]
    assert [float(x).hex() for x in boot.high] == rec["high"]
    assert hashlib.sha256(boot.distribution.tobytes()).hexdigest() == rec["distribution_sha256"]


@pytest.mark.parametrize(
    ("n", "batch", "resamples"), [(400, 1, 300), (400, 7, 300), (4000, 100, 300), (400, 256, 1100)]
)
def test_block_size_does_not_change_the_intervals_bit_for_bit(plans, n, batch, resamples):
    boot = run_bootstraps(plans[n], resamples=resamples, seed=7, batch=batch)[0]
    whole = run_bootstraps(plans[n], resamples=resamples, seed=7, batch=resamples)[0]
    assert np.array_equal(boot.distribution, whole.distribution, equal_nan=True)
    assert np.array_equal(boot.low, whole.low, equal_nan=True) and np.array_equal(boot.high, whole.high, equal_nan=True)


def test_a_pass_read_from_kept_counts_has_the_bits_of_one_counted_afresh_and_the_kept_counts_stay_bounded(plans):
    kept = KeptCounts()
    first = run_bootstraps(plans[400], resamples=1100, seed=7, kept=kept)[0]
    held = kept.held
    assert held == 1100 * 400  # one byte per row and replicate: no stratum of 400 rows is drawn 256 times
    again = run_bootstraps(plans[400], resamples=1100, seed=7, kept=kept)[0]  # every chunk read from the first's
    assert kept.held == held
    fresh = run_bootstraps(plans[400], resamples=1100, seed=7)[0]
    for boot in (again, fresh):
        assert np.array_equal(boot.distribution, first.distribution, equal_nan=True)
    small = KeptCounts(limit=1 << 20)  # a pass of 400 rows x 1,100 replicates keeps 440 kB
    for seed in range(6):  # more passes than it holds
        run_bootstraps(plans[400], resamples=1100, seed=seed, kept=small)
    assert 1 << 19 < small.held <= 1 << 20
    larger = KeptCounts(limit=1 << 20)
    run_bootstraps(plans[400], resamples=1400, seed=7, kept=larger)  # 560 kB: more than half its limit, none kept
    assert larger.held == 0


def test_every_weighted_sum_has_the_same_bits_at_any_block_and_is_exact_on_integer_columns(plans):
    plan = plans[400]
    integral = np.equal(plan.data, np.round(plan.data)).all(axis=0)
    assert integral.sum() > 300 and not integral.all()
    sums = ColumnSums.of(plan.data)
    w = count_weights(stratified_indices(plan.cells, resamples=300, rng=np.random.default_rng(7)), 400)
    whole = sums(w)
    assert np.array_equal(whole[:, integral], (w @ plan.data)[:, integral])
    for b in (1, 7, 100):
        assert np.array_equal(np.vstack([sums(w[a : a + b]) for a in range(0, 300, b)]), whole)


def test_a_float_column_of_wide_range_is_cut_into_limbs_that_sum_exactly():
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.random(50) * 30, rng.random(50) * 1e-6, [0.0, -2.5, 1e-300, 7.0]])
    sums = ColumnSums.of(x[:, None])
    assert sums.rest  # more than one limb
    w = rng.integers(0, 3, size=(20, len(x))).astype(float)
    from fractions import Fraction

    for r in range(20):
        exact = sum(Fraction(int(a)) * Fraction(float(b)) for a, b in zip(w[r], x))
        got = sums(w[r : r + 1])[0, 0]
        assert abs(Fraction(float(got)) - exact) <= Fraction(np.spacing(abs(got)))


def test_ordered_sum_adds_left_to_right_whatever_the_layout():
    x = np.random.default_rng(9).random((300, 17)) * 10.0 ** np.arange(-8, 9)
    want = np.zeros(300)
    for j in range(17):
        want = want + x[:, j]
    assert np.array_equal(ordered_sum(x), want)
    assert np.array_equal(ordered_sum(np.asfortranarray(x)), want)
    assert np.array_equal(ordered_sum(x[:1]), want[:1])
    assert ordered_sum(np.zeros((3, 0))).shape == (3,)


def test_bootstrap_refuses_data_that_is_not_finite():
    data = np.ones((4, 2))
    data[1, 1] = np.nan
    with pytest.raises(ValueError, match="data must be finite"):
        bootstrap(data, lambda s: s, strata=["a"] * 4, resamples=5)


_BLAS_CODE = """
import hashlib, sys
import numpy as np
from scale_judges import judge_all
from trajectory_judge.analysis.core.plan import make_plan, run_bootstraps
from trajectory_judge.testbed.dataset import build_dataset
trajs = build_dataset(400, 7)
boot = run_bootstraps(make_plan(trajs, judge_all(trajs)), resamples=600, seed=7)[0]
print(hashlib.sha256(boot.distribution.tobytes() + boot.low.tobytes() + boot.high.tobytes()).hexdigest())
"""


@pytest.mark.slow  # two processes, one per BLAS setting
def test_the_replicates_are_the_same_bits_on_one_blas_thread_or_two():
    out = []
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
        run = subprocess.run([sys.executable, "-c", _BLAS_CODE], capture_output=True, text=True, env=env, check=True)
        out.append(run.stdout.strip())
    assert out[0] == out[1] and len(out[0]) == 64


def _release_report(release: Path, every: int, resamples: int, batch: int | None) -> str:
    from trajectory_judge.analysis.core.loading import load_slim_data
    from trajectory_judge.analysis.core.report import build_report

    d = load_slim_data(release)
    trajs = d.trajectories[::every]
    ids = {t.trajectory_id for t in trajs}
    verdicts = [v for v in d.verdicts if v.trajectory_id in ids]
    return build_report(trajs, verdicts, resamples=resamples, seed=7, pairs="compared", batch=batch).to_json()


def test_the_report_on_part_of_the_release_is_the_same_bytes_at_block_sizes_1_7_and_the_default(release):
    want = _release_report(release, 4, 400, None)
    assert _release_report(release, 4, 400, 1) == want
    assert _release_report(release, 4, 400, 7) == want


def test_the_report_on_the_release_is_the_same_bytes_at_another_block_size(release):
    assert _release_report(release, 1, 10_000, 700) == _release_report(release, 1, 10_000, None)


@pytest.mark.slow
def test_the_report_on_the_whole_release_is_the_same_bytes_at_block_sizes_1_7_and_the_default(release):
    # one replicate per block over eight chunks of replicates, and seven (the report's own 10,000 replicates at
    # another block size are the fast tier's): the cost of a block of one is per block, and what could differ, the
    # order of the sums, is the same in every chunk
    want = _release_report(release, 1, 8 * CHUNK, None)
    assert _release_report(release, 1, 8 * CHUNK, 1) == want and _release_report(release, 1, 8 * CHUNK, 7) == want


@pytest.mark.slow  # three reports, each in a process of its own
def test_report_json_on_the_release_is_the_same_bytes_on_one_blas_thread_two_or_the_default(release, tmp_path):
    out = []
    for threads in ("1", "2", None):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        env |= {"OPENBLAS_NUM_THREADS": threads} if threads else {}
        path = tmp_path / f"report-{threads}.json"
        code = "import sys; from trajectory_judge.cli import main; sys.exit(main(sys.argv[1:]))"
        args = ["report", "--data", str(release), "--json", str(path), "--statistics"]
        subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env=env, check=True)
        out.append(path.read_bytes())
    assert out[0] == out[1] == out[2]


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
    assert large < 2.5 * 256 * n * 8  # one block's weights, one chunk's and one stratum's draws
    assert large - small <= 2 * (large_dist - small_dist) + 2e6  # only the replicate values grow


_PEAK_OF_REPORT = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "trajectory_judge.cli", *sys.argv[1:]], check=True, capture_output=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.slow
def test_report_memory_does_not_grow_with_the_number_of_distinct_confidences(tmp_path):
    """Every verdict states a confidence of its own (the statistics have a cell per verdict): ``report`` at 10,000
    trajectories x 5 judges stays within the 1 GB bound at 100,000 scaled down to this size, plus the interpreter's
    own ~150 MB (before the cells were counted by grouping rows, a folder twice this size needed some 30 GB)."""
    from trajectory_judge.models import write_jsonl

    trajs = build_dataset(10_000, 7)
    verdicts = judge_all(trajs, "distinct")
    assert len({v.confidence for v in verdicts if v.judge_id == verdicts[0].judge_id}) == len(trajs)
    write_jsonl(tmp_path / "trajectories.jsonl", trajs)
    write_jsonl(tmp_path / "verdicts.jsonl", verdicts)
    del trajs, verdicts
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["report", "--data", str(tmp_path), "--resamples", "300", "--statistics"]
    args += ["--json", str(tmp_path / "report.json")]
    run = subprocess.run([sys.executable, "-c", _PEAK_OF_REPORT, *args], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    peak_mb = int(run.stdout.strip()) / 1024  # ru_maxrss is in KB on Linux
    assert peak_mb < 150 + 1024 * 10_000 / 100_000, peak_mb
    doc = json.loads((tmp_path / "report.json").read_text())
    assert all(doc["judges"][j]["auroc"]["value"] is not None for j in doc["judges"])
