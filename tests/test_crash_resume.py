"""Crash test: SIGKILL the runner at seeded random points, resume, and lose or duplicate nothing.

The runner runs in a subprocess (the entry point below) with slow mock judges; it is killed with
``kill -9`` several times mid-run, each time resumed by running it again, and once a torn last
line is planted as a crash mid-write would leave it. After the final, uninterrupted resume the
verdict file must hold exactly one parseable verdict per planned (trajectory, judge) key, each
equal to what the deterministic judge gives.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_fakes import make_varied

from trajectory_judge.judges.mock import MockJudge
from trajectory_judge.models import Verdict, parse_jsonl

N_TRAJ = 40
SEEDS = (1, 2)
DELAY_S = 0.015

ENTRY = f"""
import sys
from llm_fakes import make_varied
from trajectory_judge.judges.mock import MockJudge
from trajectory_judge.run.runner import run_judges

path, concurrency = sys.argv[1], int(sys.argv[2])
trajs = [make_varied(f"t-{{i:04d}}") for i in range({N_TRAJ})]
judges = [MockJudge("step", s, delay_s={DELAY_S}) for s in {SEEDS!r}]
print("ready", flush=True)
r = run_judges(trajs, judges, path, concurrency=concurrency, progress=False)
print("done", r.written, r.skipped, flush=True)
"""


def start(path: Path, concurrency: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen(
        [sys.executable, "-c", ENTRY, str(path), str(concurrency)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert p.stdout is not None
    line = p.stdout.readline()  # wait for the imports, so the kill lands inside run_judges
    assert line.strip() == "ready", (line, p.stderr.read() if p.stderr else "")
    return p


def n_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow  # many runner subprocesses killed and resumed
def test_kill_9_and_resume_loses_and_duplicates_nothing(tmp_path):
    rng = random.Random(20240607)
    path = tmp_path / "verdicts.jsonl"
    planned = {(f"t-{i:04d}", f"mock-step:seed{s}") for i in range(N_TRAJ) for s in SEEDS}
    kills = 0
    progress = []
    stderrs = []
    for round_ in range(4):
        p = start(path, concurrency=1 + round_ % 2)
        time.sleep(rng.uniform(0.05, 0.25))
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            kills += 1
        p.wait(timeout=10)
        p.stdout.close()
        stderrs.append(p.stderr.read())
        p.stderr.close()
        progress.append(n_lines(path))
        if round_ == 1:
            # plant a torn last line, as a crash in the middle of a write would leave it
            with open(path, "ab") as fh:
                fh.write(b'{"trajectory_id":"t-0039","judge_id":"mock-st')
    assert kills >= 3, "the runs finished before the kills; raise N_TRAJ or DELAY_S"
    assert progress == sorted(progress) and 0 < progress[-1] < len(planned), progress

    # the final resume runs to the end
    p = start(path, concurrency=2)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    written, skipped = map(int, out.split()[1:3])
    assert written + skipped == len(planned)
    # the planted tear, set aside once, by the first later run that got as far as reading the file (under load a run
    # can be killed before its interpreter has started, or after it set the tear aside and before it said so)
    assert sum("moved a torn last line" in e for e in [*stderrs[2:], err]) <= 1
    assert sorted(p.name for p in tmp_path.glob("verdicts.jsonl.torn-*")) == ["verdicts.jsonl.torn-1"]
    assert path.with_name("verdicts.jsonl.torn-1").read_bytes() == b'{"trajectory_id":"t-0039","judge_id":"mock-st'

    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.decode("utf-8").split("\n")[:-1]
    for ln in lines:
        Verdict.model_validate(json.loads(ln))  # every line parses
    verdicts = parse_jsonl(path, Verdict)
    keys = [(v.trajectory_id, v.judge_id) for v in verdicts]
    assert len(keys) == len(set(keys)), "duplicate verdicts"
    assert set(keys) == planned, "verdicts lost"
    # and each verdict is the one the deterministic judge gives
    judges = {f"mock-step:seed{s}": MockJudge("step", s) for s in SEEDS}
    for v in verdicts:
        want = judges[v.judge_id].judge(make_varied(v.trajectory_id))
        assert v.model_copy(update={"latency_s": 0.0}) == want.model_copy(update={"latency_s": 0.0})
