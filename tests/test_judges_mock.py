"""The deterministic mock judge: protocol, id, determinism across processes, spread."""

from __future__ import annotations

import subprocess
import sys

from llm_fakes import make_varied

from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.mock import MockJudge
from trajectory_judge.run.runner import run_judges


def test_protocol_and_id():
    j = MockJudge(view="step", seed=7)
    assert isinstance(j, Judge)
    assert j.judge_id == "mock-step:seed7"


def test_deterministic_and_seed_dependent():
    trajs = [make_varied(f"t-{i:04d}") for i in range(200)]
    a = [MockJudge(seed=7).judge(t) for t in trajs]
    b = [MockJudge(seed=7).judge(t) for t in trajs]
    c = [MockJudge(seed=8).judge(t) for t in trajs]
    strip = lambda v: v.model_copy(update={"latency_s": 0.0})
    assert [strip(v) for v in a] == [strip(v) for v in b]
    assert [v.faulty for v in a] != [v.faulty for v in c]
    n = sum(v.faulty for v in a)
    assert 60 < n < 140  # about half
    for v in a:
        assert 0.5 <= v.confidence <= 1.0
        assert (v.failure_step is not None) == v.faulty == (v.failure_type is not None)


def test_same_verdict_in_another_process():
    # Python's hash() is salted per process; the mock must not depend on it
    code = (
        "from llm_fakes import make_varied; from trajectory_judge.judges.mock import MockJudge;"
        "v = MockJudge(seed=3).judge(make_varied('t-x')); print(v.faulty, v.confidence, v.failure_step)"
    )
    here = MockJudge(seed=3).judge(make_varied("t-x"))
    import os
    from pathlib import Path

    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(Path(__file__).parent)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == [str(here.faulty), str(here.confidence), str(here.failure_step)]


def test_runs_through_the_runner(tmp_path):
    trajs = [make_varied(f"t-{i}") for i in range(5)]
    r = run_judges(trajs, [MockJudge("step", 1), MockJudge("outcome", 1)], tmp_path / "v.jsonl", progress=False)
    assert r.written == 10 and r.status == "ok"
