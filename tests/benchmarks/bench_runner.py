"""Runner overhead per verdict (instant fake client) and throughput under concurrency (fixed latency).

Run: python tests/benchmarks/bench_runner.py [--n 2000] [--latency 0.05] [--n-latency 80]

1. Overhead: an LLMJudge over a client that answers instantly, so the time per verdict is the
   runner's own (prompt building, coercion, the JSON line, the flush; fsync in the background).
2. Throughput: a client that sleeps a fixed latency per request (as a model server would), at
   --concurrency 1, 2 and 4; prints verdicts/s and the speed-up over concurrency 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for llm_fakes

from llm_fakes import make_trajectory, response

from trajectory_judge.backends.clients import Completion, ModelClient
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.run.runner import run_judges


class FixedLatencyClient(ModelClient):
    """Answers a valid verdict after ``latency_s`` (0 = instantly); thread-safe."""

    name = "fixed"

    def __init__(self, latency_s: float = 0.0) -> None:
        super().__init__("http://fake.invalid", "fake")
        self.latency_s = latency_s
        self.text = response()

    def complete(self, prompt: str, schema: dict[str, Any], *, temperature: float, seed: int) -> Completion:
        if self.latency_s:
            time.sleep(self.latency_s)
        return Completion(text=self.text, prompt_tokens=100, completion_tokens=20, latency_s=self.latency_s)


def timed_run(n: int, latency: float, concurrency: int) -> float:
    trajs = [make_trajectory(f"t-{i:06d}") for i in range(n)]
    judge = LLMJudge("step", FixedLatencyClient(latency), "fake:1b")
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        r = run_judges(trajs, [judge], Path(d) / "verdicts.jsonl", concurrency=concurrency, progress=False)
        el = time.perf_counter() - t0
    assert r.written == n
    return el


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="verdicts for the overhead run")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per request in the throughput runs")
    ap.add_argument("--n-latency", type=int, default=80, help="verdicts per throughput run")
    a = ap.parse_args()

    timed_run(50, 0.0, 1)  # warm-up
    for c in (1, 4):
        el = timed_run(a.n, 0.0, c)
        print(f"overhead  concurrency={c}: {a.n} verdicts in {el:6.3f} s = {el / a.n * 1e3:6.3f} ms/verdict")

    base = None
    for c in (1, 2, 4):
        el = timed_run(a.n_latency, a.latency, c)
        rate = a.n_latency / el
        base = base or rate
        ideal = c / a.latency
        print(
            f"latency {a.latency * 1e3:.0f} ms concurrency={c}: {rate:6.2f} verdicts/s "
            f"(speed-up x{rate / base:4.2f}, ideal {ideal:.0f}/s)"
        )


if __name__ == "__main__":
    main()
