"""Time and peak memory of ``trajectory-judge import-inspect`` on one log of many samples.

    python tests/benchmarks/bench_import.py [--n 2000] [--before REV] [--work DIR]

Makes ``--n`` trajectories (``build-dataset --n``), runs the step task over them through inspect_ai
against the loopback stand-in server (``tests/fake_server.py``: every answer valid, instantly),
then imports the log into a fresh copy of the folder under ``/usr/bin/time -v`` and prints wall and
CPU time (user + system) and the maximum resident set size; with ``--before REV`` REV's import
(checked out into a temporary worktree, same venv) is measured on another copy of the same folder
and the verdicts both write are compared. Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for fake_server

from bench_report import run_timed
from fake_server import FakeModelServer

ROOT = Path(__file__).resolve().parents[2]
TJ = str(Path(sys.executable).with_name("trajectory-judge"))


def make_log(work: Path, n: int) -> Path:
    """The folder's trajectories and one step-task log over all of them."""
    data = work / "data"
    if not (data / "trajectories.jsonl").exists():
        subprocess.run([TJ, "build-dataset", "--n", str(n), "--out", str(data)], check=True, capture_output=True)
    logs = work / "logs"
    if not list(logs.glob("*.eval")):
        with FakeModelServer(hosted=True, api_key="test-key") as srv:
            os.environ.update(FAKE_BASE_URL=srv.url + "/v1", FAKE_API_KEY="test-key")
            from inspect_ai import eval as inspect_eval

            from trajectory_judge.inspect_tasks import step_judge

            (log,) = inspect_eval(
                [step_judge(data=str(data))], model="openai-api/fake/m", log_dir=str(logs), display="none"
            )
            assert log.status == "success", log.error
    return next(logs.glob("*.eval"))


def timed_import(tree: Path, log: Path, data: Path, into: Path) -> tuple[float, float, int, bytes]:
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    shutil.copy(data / "trajectories.jsonl", into / "trajectories.jsonl")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, "-m", "trajectory_judge.cli", "import-inspect", str(log), "--data", str(into)]
    wall, cpu, rss_kb, proc = run_timed(cmd, cwd=tree, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"import failed ({tree}): {proc.stderr.strip()[-500:]}")
    return wall, cpu, rss_kb // 1024, (into / "verdicts.jsonl").read_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="trajectories, one sample each")
    ap.add_argument("--before", help="a git revision to pair with")
    ap.add_argument("--work", type=Path, help="folder for the data and the log (kept; default a temporary one)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-import-"))
    log = make_log(work, args.n)
    wall, cpu, rss, ours = timed_import(ROOT, log, work / "data", work / "ours")
    print(f"import-inspect of {args.n} samples: wall {wall:.2f} s  cpu {cpu:.2f} s  peak {rss} MB")
    if args.before:
        old = Path(tempfile.mkdtemp(prefix="bench-import-rev-")) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), args.before], cwd=ROOT, check=True)
        try:
            wall, cpu, rss, theirs = timed_import(old, log, work / "data", work / "before")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
        print(f"  {args.before}: wall {wall:.2f} s  cpu {cpu:.2f} s  peak {rss} MB  same verdicts: {theirs == ours}")


if __name__ == "__main__":
    main()
