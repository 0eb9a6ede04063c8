"""Time building the judged set at 400 and at 40,000 trajectories (linear scaling check).

Run: python tests/benchmarks/bench_dataset.py
"""

from __future__ import annotations

import time

from trajectory_judge.testbed.dataset import build_dataset


def main() -> None:
    for n in (400, 40_000):
        start = time.perf_counter()
        trajs = build_dataset(n, 7)
        elapsed = time.perf_counter() - start
        print(f"n={n:>6}: {elapsed:7.3f} s  ({elapsed / len(trajs) * 1e6:7.1f} us per trajectory)")


if __name__ == "__main__":
    main()
