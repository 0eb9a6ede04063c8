"""``report`` and the runner at 4,000, 20,000 and 100,000 trajectories: time and peak memory.

    python tests/benchmarks/bench_scale.py [--sizes 4000 20000 100000] [--confidences tenths distinct]
        [--resamples 10000] [--before REV] [--before-max 20000] [--work DIR] [--write FILE]

For each size: ``trajectory-judge build-dataset --n N`` makes a folder, the five trivial Python judges
of ``tests/scale_judges.py`` judge it through the runner (``run_judges``, one process; the time per
verdict is the runner's overhead, as the judges do next to nothing), once for each kind of stated
confidence asked (``tenths``: five values; ``distinct``: one of its own for every verdict, as a model's
token probabilities give, so that the judge statistics have a cell per verdict), then ``trajectory-judge report
--data DIR --resamples B`` runs under ``/usr/bin/time -v``: wall and CPU time (user + system) and the
maximum resident set size. With ``--before REV`` the same ``report`` of REV (checked out into a
temporary worktree, run with this venv) is measured right after ours on the same folder, up to
``--before-max`` trajectories (above it the old report needs more memory than the machine may have)
and its output compared with ours. ``--write FILE`` (``book/benchmarks.json``) stores the figures under
``scale``, keeping those of other sizes measured with the same ``--resamples`` and ``--before``; the
guide's benchmarks page shows them. Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for scale_judges

from bench_report import run_timed
from scale_judges import CONFIDENCES, JUDGES, judges

from trajectory_judge import __version__
from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.models import load_trajectories
from trajectory_judge.run.runner import run_judges

ROOT = Path(__file__).resolve().parents[2]
TJ = str(Path(sys.executable).with_name("trajectory-judge"))


def make_folder(out: Path, n: int, confidences: str = "tenths") -> float:
    """Build ``n`` trajectories into ``out`` and judge them with the five judges; seconds per verdict."""
    if not (out / "trajectories.jsonl").exists():
        subprocess.run([TJ, "build-dataset", "--n", str(n), "--out", str(out)], check=True, capture_output=True)
    verdicts = out / "verdicts.jsonl"
    if verdicts.exists():
        verdicts.unlink()
        (out / "runs.jsonl").unlink(missing_ok=True)
    trajs = load_trajectories(out / "trajectories.jsonl")
    t0 = time.perf_counter()
    five = judges(confidences)
    res = run_judges(trajs, list(five), verdicts, progress=False)
    el = time.perf_counter() - t0
    assert res.written == n * len(five), res
    return el / res.written


def report(cwd: Path, pythonpath: Path, data: Path, resamples: int) -> dict:
    """One ``report`` run: wall and CPU seconds, peak RSS in MB, exit status and stdout."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    env.pop("OPENBLAS_NUM_THREADS", None)
    cmd = [
        sys.executable,
        "-m",
        "trajectory_judge.cli",
        "report",
        "--data",
        str(data),
        "--resamples",
        str(resamples),
        "--statistics",
    ]
    wall, cpu, rss_kb, proc = run_timed(cmd, cwd=cwd, env=env)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "rss_mb": round(rss_kb / 1024),
        "rc": proc.returncode,
        "out": proc.stdout,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 20000, 100000])
    ap.add_argument(
        "--confidences", nargs="+", choices=CONFIDENCES, default=["tenths", "distinct"], help="kinds of confidence"
    )
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--before", help="a git revision to pair with")
    ap.add_argument("--before-max", type=int, default=20_000, help="largest size the revision is run at")
    ap.add_argument("--work", type=Path, help="folder for the data folders (kept; default a temporary one)")
    ap.add_argument("--write", type=Path, help="JSON file to store the figures in, under 'scale'")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    old = None
    if args.before:
        old = Path(tempfile.mkdtemp(prefix="bench-scale-rev-")) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(old), args.before], cwd=ROOT, check=True, capture_output=True
        )
    rows: dict[str, list[dict]] = {c: [] for c in args.confidences}
    try:
        for confidences in args.confidences:
            for n in args.sizes:
                rows[confidences].append(measure(work, n, confidences, args, old))
    finally:
        if old is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    for confidences, measured in rows.items():
        base = measured[0]
        for r in measured:
            print(
                f"{r['n']:>7} ({confidences}): report {r['cpu_s'] / r['n'] * 1e3:.3f} ms CPU per trajectory"
                f" ({r['cpu_s'] / r['n'] / (base['cpu_s'] / base['n']):.2f}x the {base['n']}'s),"
                f" runner {r['runner_ms_per_verdict'] / base['runner_ms_per_verdict']:.2f}x"
            )
    if args.write:
        write(args.write, rows, args.resamples, args.before)


KEYS = {"tenths": "sizes", "thousandths": "thousandths", "distinct": "distinct"}
"""Where the figures of each kind of confidence are kept under ``scale`` (``sizes``: the judges' tenths)."""


def measure(work: Path, n: int, confidences: str, args: argparse.Namespace, old: Path | None) -> dict:
    """``report`` on the folder of ``n`` trajectories judged with ``confidences`` (ours, and ``old``'s if asked)."""
    data = work / (f"n{n}" if confidences == "tenths" else f"n{n}-{confidences}")
    per_verdict = make_folder(data, n, confidences)
    print(
        f"{n:>7} trajectories ({confidences} confidences): runner {per_verdict * 1e3:.3f} ms per verdict"
        f" ({n * len(JUDGES)} verdicts)",
        flush=True,
    )
    ours = report(ROOT, ROOT, data, args.resamples)
    row = {
        "n": n,
        "judges": len(JUDGES),
        "confidences": confidences,
        "runner_ms_per_verdict": round(per_verdict * 1e3, 4),
        **{k: v for k, v in ours.items() if k != "out"},
    }
    print(
        f"  report ours   wall {ours['wall_s']:8.2f} s  cpu {ours['cpu_s']:8.2f} s  peak {ours['rss_mb']:6d} MB  exit {ours['rc']}",
        flush=True,
    )
    if old is not None and n <= args.before_max:
        theirs = report(old, old, data, args.resamples)
        same = theirs["out"] == ours["out"]
        row["before"] = {k: v for k, v in theirs.items() if k != "out"} | {"same_output": same}
        print(
            f"  report {args.before:<6} wall {theirs['wall_s']:8.2f} s  cpu {theirs['cpu_s']:8.2f} s  peak {theirs['rss_mb']:6d} MB  exit {theirs['rc']}  output identical: {same}",
            flush=True,
        )
    elif old is not None:
        print(f"  report {args.before}: not run above {args.before_max} trajectories", flush=True)
    return row


def before_label(rev: str) -> str:
    """How the book names the revision paired with: the version of its commit's date (no hash on a page)."""
    done = subprocess.run(
        ["git", "log", "-1", "--format=%ad", "--date=format:%-d %B %Y", rev], cwd=ROOT, capture_output=True, text=True
    )
    return (
        f"the version of {done.stdout.strip()}"
        if done.returncode == 0 and done.stdout.strip()
        else "an earlier version"
    )


def write(path: Path, rows: dict[str, list[dict]], resamples: int, before: str | None) -> None:
    """Store the figures under ``scale`` in ``path``, keeping the other sizes measured with the same settings."""
    doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    earlier = doc.get("scale") or {}
    same = (earlier.get("resamples"), earlier.get("before")) == (resamples, before)
    scale = {
        "command": f"trajectory-judge report --data DIR --resamples {resamples} --statistics",
        "resamples": resamples,
        "before": before,
        "before_label": before_label(before) if before else None,
        "cpus": os.cpu_count(),
        "version": __version__,
    }
    for confidences, key in KEYS.items():
        new = rows.get(confidences, [])
        kept = [r for r in earlier.get(key, []) if r["n"] not in {row["n"] for row in new}] if same else []
        if new or kept:
            scale[key] = sorted(kept + new, key=lambda r: r["n"])
    doc["scale"] = scale
    atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
