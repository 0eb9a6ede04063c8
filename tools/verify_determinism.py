"""Re-judge the first N trajectories into a scratch directory and compare with the recorded verdicts.

    .venv/bin/python tools/verify_determinism.py --data data --judges outcome,step,reply \
        --model qwen2.5-coder:1.5b --n 5 --cache-prompt prefix

Runs `trajectory-judge run` with the same decoding as the edition against the running server
and reports, per (trajectory, judge), whether every field except latency is byte-identical.
Exit code 0 when all are identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

FIELDS = (
    "faulty",
    "failure_step",
    "failure_type",
    "confidence",
    "rationale",
    "prompt_tokens",
    "completion_tokens",
    "error",
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data")
    ap.add_argument("--judges", default="outcome,step,reply")
    ap.add_argument("--model", required=True)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--cache-prompt", default="prefix")
    ap.add_argument("--base-url", default="http://127.0.0.1:8080")
    ap.add_argument("--out", default=None, help="append the result as one JSON line here")
    a = ap.parse_args()
    data = Path(a.data)
    lines = (data / "trajectories.jsonl").read_text().splitlines()[: a.n]
    recorded = {}
    for ln in (data / "verdicts.jsonl").read_text().splitlines():
        if ln.strip():
            v = json.loads(ln)
            recorded[(v["trajectory_id"], v["judge_id"])] = v
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
        cmd = [
            str(Path(sys.executable).with_name("trajectory-judge")),
            "run",
            "--data",
            tmp,
            "--judges",
            a.judges,
            "--model",
            a.model,
            "--judge-model-name",
            a.model,
            "--base-url",
            a.base_url,
            "--cache-prompt",
            a.cache_prompt,
            "--temperature",
            "0",
            "--seed",
            "7",
            "--num-ctx",
            "8192",
            "--quiet",
        ]
        subprocess.run(cmd, check=True)
        fresh = [json.loads(ln) for ln in (Path(tmp) / "verdicts.jsonl").read_text().splitlines()]
    same, differ, missing = 0, [], 0
    for v in fresh:
        old = recorded.get((v["trajectory_id"], v["judge_id"]))
        if old is None:
            missing += 1
            continue
        diff = [f for f in FIELDS if old.get(f) != v.get(f)]
        if diff:
            differ.append({"trajectory_id": v["trajectory_id"], "judge_id": v["judge_id"], "fields": diff})
        else:
            same += 1
    result = {
        "judges": a.judges,
        "model": a.model,
        "n": a.n,
        "cache_prompt": a.cache_prompt,
        "identical": same,
        "different": differ,
        "not_recorded": missing,
    }
    print(json.dumps(result, indent=2))
    if a.out:
        with open(a.out, "a") as fh:
            fh.write(json.dumps(result, sort_keys=True) + "\n")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
