"""Time and memory of ``trajectory-judge report`` with many judges, and of ``--help`` and ``--version``.

    python tests/benchmarks/bench_report.py [--judges 15] [--resamples 10000] [--repeat 3]

Builds a scratch data directory from the committed trajectories (``data/trajectories.jsonl``) and
``--judges`` synthetic judges (views outcome, step and reply across as many models as needed;
verdicts drawn at random with a fixed seed, so the work is the real report's, not its numbers),
then runs each command ``--repeat`` times under ``/usr/bin/time -v`` and prints the median wall
and CPU time (user + system) and the largest maximum resident set size; on a shared machine the CPU
time is the steadier figure, and ``os.getloadavg()`` is printed so a reader can judge the wall time. Not a test: the figures depend on the machine
(the guide's benchmarks page says how to run it).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from trajectory_judge.models import FAILURE_TYPES, Verdict, dumps, load_trajectories

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ("outcome", "step", "reply")


def judge_ids(n: int) -> list[str]:
    """``n`` judge ids: the three views of model ``m0``, then of ``m1``, ... (a user's sweep)."""
    return [f"{VIEWS[i % 3]}:bench-model-{i // 3}:7b" for i in range(n)]


def write_data(out: Path, n_judges: int, seed: int = 7) -> None:
    """Copy the committed trajectories into ``out`` and write random verdicts of ``n_judges`` judges."""
    rng = random.Random(seed)
    trajs = load_trajectories(ROOT / "data" / "trajectories.jsonl")
    (out / "trajectories.jsonl").write_text(
        (ROOT / "data" / "trajectories.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
    )
    lines = []
    for j in judge_ids(n_judges):
        for t in trajs:
            faulty = rng.random() < 0.6
            step = (
                rng.choice([s.index for s in t.steps]) if faulty and t.steps and not j.startswith("outcome") else None
            )
            lines.append(
                dumps(
                    Verdict(
                        trajectory_id=t.trajectory_id,
                        judge_id=j,
                        faulty=faulty,
                        failure_step=step,
                        failure_type=rng.choice(FAILURE_TYPES) if faulty else None,
                        confidence=rng.choice([0.6, 0.7, 0.8, 0.9]),
                        latency_s=rng.uniform(1, 10),
                        prompt_tokens=rng.randint(300, 900),
                        completion_tokens=rng.randint(20, 90),
                    )
                )
            )
    (out / "verdicts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_timed(
    cmd: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, int, subprocess.CompletedProcess]:
    """One run of ``cmd`` under ``/usr/bin/time -v``: wall seconds, CPU seconds (user + system, children
    included), maximum RSS (KB), and the process (its ``stdout`` and ``returncode``; ``stderr`` without time's lines)."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, cwd=cwd, env=env)
    cut = proc.stderr.rfind("\tCommand being timed:")
    failed = proc.stderr.rfind("Command exited with non-zero status", 0, max(cut, 0))
    cut = failed if failed >= 0 else cut
    stats, proc.stderr = proc.stderr[cut:], proc.stderr[:cut]
    wall = re.search(r"Elapsed \(wall clock\) time .*: (?:(\d+):)?(\d+):([\d.]+)", stats)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stats)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", stats))
    assert cut >= 0 and wall and rss, stats
    h, m, s = wall.groups()
    return int(h or 0) * 3600 + int(m) * 60 + float(s), cpu, int(rss.group(1)), proc


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and maximum RSS (KB) of one run of ``cmd`` under ``/usr/bin/time -v``."""
    wall, cpu, rss, proc = run_timed(cmd)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, cpu, rss


def measure(label: str, cmd: list[str], repeat: int) -> None:
    """Print the median wall time and the largest RSS of ``repeat`` runs of ``cmd``."""
    runs = [timed(cmd) for _ in range(repeat)]
    wall = statistics.median(w for w, _, _ in runs)
    cpu = statistics.median(c for _, c, _ in runs)
    rss = max(r for _, _, r in runs)
    print(f"{label:<24} wall {wall:6.2f} s  cpu {cpu:6.2f} s  max RSS {rss / 1024:5.0f} MB  (median of {repeat})")


def main() -> None:
    """Build the scratch directory and measure the three commands."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judges", type=int, default=15)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    exe = str(Path(sys.executable).with_name("trajectory-judge"))
    with tempfile.TemporaryDirectory() as tmp:
        write_data(Path(tmp), args.judges)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"{args.judges} judges x 400 trajectories, B = {args.resamples}; {os.cpu_count()} CPUs, load average {load}"
        )
        measure(
            f"report ({args.judges} judges)",
            [exe, "report", "--data", tmp, "--resamples", str(args.resamples)],
            args.repeat,
        )
        measure("--help", [exe, "--help"], args.repeat)
        measure("--version", [exe, "--version"], args.repeat)


if __name__ == "__main__":
    main()
