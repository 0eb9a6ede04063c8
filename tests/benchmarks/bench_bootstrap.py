"""Time the vectorised bootstrap against a plain Python loop over replicates, on the same input.

    python tests/benchmarks/bench_bootstrap.py [--data DIR] [--resamples 10000] [--loop-resamples 300]

The vectorised run covers all metrics of all judges and all pairwise deltas at ``--resamples``.
The loop (one call of the plain metric functions per replicate) is run at ``--loop-resamples``
and its time extrapolated linearly to ``--resamples``; pass ``--loop-resamples`` equal to
``--resamples`` to measure it in full (about five minutes at 10,000). Both are then
compared on the same seed at ``--loop-resamples`` replicates: same indices, same numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for the loop reference

from loop_reference import bootstrap_loop, loop_statistic

from trajectory_judge.analysis.core.bootstrap import bootstrap
from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.core.plan import make_plan, run_bootstraps
from trajectory_judge.models import DESIGN_CELLS

DEFAULT_DATA = Path(
    os.environ.get("TJ_RELEASE_DIR", Path(__file__).resolve().parents[2] / ".." / "shared" / "upstream-release")
)


def main() -> None:
    """Run the benchmark and print the timings."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="directory with trajectories.jsonl and verdicts.jsonl")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--loop-resamples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    data = load_data(args.data)
    plan = make_plan(data.trajectories, data.verdicts)
    print(
        f"input: {len(plan.labels)} trajectories, {len(plan.judges)} judges, "
        f"{plan.data.shape[1]} count columns, {len(plan.names)} statistics"
    )

    t0 = time.perf_counter()
    run_bootstraps(plan, resamples=args.resamples, seed=args.seed)[0]
    vec = time.perf_counter() - t0

    t0 = time.perf_counter()
    loop = bootstrap_loop(
        len(plan.labels),
        loop_statistic(plan),
        strata=plan.cells,
        resamples=args.loop_resamples,
        rng=np.random.default_rng(args.seed),
        strata_order=DESIGN_CELLS,
    )
    loop_t = time.perf_counter() - t0
    loop_full = loop_t * args.resamples / args.loop_resamples

    check = bootstrap(
        plan.data,
        plan.statistic,
        strata=plan.cells,
        names=plan.names,
        resamples=args.loop_resamples,
        rng=np.random.default_rng(args.seed),
        strata_order=DESIGN_CELLS,
    ).distribution
    same_nan = np.array_equal(np.isnan(loop), np.isnan(check))
    max_diff = float(np.nanmax(np.abs(loop - check)))

    print(f"vectorised: B={args.resamples:>6}  {vec:8.3f} s")
    print(
        f"loop:       B={args.loop_resamples:>6}  {loop_t:8.3f} s  "
        f"({loop_t / args.loop_resamples * 1e3:.1f} ms/replicate; ~{loop_full:.0f} s at B={args.resamples})"
    )
    print(f"speed-up at B={args.resamples}: ~{loop_full / vec:.0f}x")
    print(
        f"agreement at B={args.loop_resamples}, seed {args.seed}: max |loop - vectorised| = {max_diff:.2e}, "
        f"same undefined cells: {same_nan}"
    )


if __name__ == "__main__":
    main()
