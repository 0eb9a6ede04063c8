"""The three speed figures: ``report`` on the release's verdicts, a clean build, README's tests.

    python tests/benchmarks/bench_speed.py [report] [build] [rebuild] [tests] [--runs 5] [--before REV] [--reference-cmd CMD] [--write FILE]

Each figure is the median of ``--runs`` runs (with their min and max), wall and CPU (user + system,
children included, from ``/usr/bin/time -v``), and the load average is printed before and after
each, since this machine is shared. "ours" is this working tree (``PYTHONPATH`` points at it, the
interpreter and its tools are this one's venv; ``PYTHONDONTWRITEBYTECODE`` is dropped, so bytecode
is cached as on a reader's machine). With ``--before REV`` (a git revision of this
repository) every figure is also measured on REV, checked out in a temporary worktree or clone and
run with the same venv; the runs alternate, ours first in odd rounds and REV first in even ones,
so the two share the machine's moods (paired), and the ratio printed is the median of the rounds'.

* ``report``: ``trajectory-judge report --data RELEASE`` (the published release's directory,
  ``--release-dir``, default ``TJ_RELEASE_DIR`` or ``../shared/upstream-release``), whole process.
  ``--reference-cmd`` (a shell command, run with ``sh -c``) adds the release's own ``report`` to the
  pairing where it can run; without it ours is compared with :data:`RELEASE_REPORT`. One untimed run
  of each comes first (caches warm); each variant's stdout is compared with ours.
* ``build``: ``jupyter-book build . --all -W`` with ``TJ_RELEASE_DIR`` set (as ``.ci/run`` does),
  each run into a fresh ``--path-output`` outside the repository (so it is clean, and the tree's own
  ``_build`` is left alone).
* ``rebuild``: ``jupyter-book build . -W`` again into a ``--path-output`` that already holds a finished
  build of the same tree (made once, untimed, before the first run): nothing changed.
* ``tests``: README's test command, ``python -m pytest -n auto --dist loadfile`` (default addopts) from the root of a fresh
  ``git clone`` of HEAD (or REV) with the release present; only pytest is timed (the "install" is the
  clone, run with this venv and ``PYTHONPATH`` at the clone). HEAD is the last commit: uncommitted
  changes are not in the clone.

With ``--write FILE`` (``book/benchmarks.json`` for the book) each figure measured is also written
into FILE, a JSON object by figure that keeps the figures not measured this time: this tree's
median, min and max, wall and CPU, the runs, the CPU count and the package version. The guide's
benchmarks page shows what that file holds (the appendix chapter reads it).

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from bench_report import run_timed

ROOT = Path(__file__).resolve().parents[2]
FIGURES: tuple[str, ...] = ("report", "build", "rebuild", "tests")
"""What can be measured, in the order it is printed."""

RELEASE_REPORT = (0.39, 0.39, "e2e87b3")
"""The release's own ``report`` on its verdicts, wall and CPU seconds (medians of 5, paired, quiet
machine), as issue 28 measured it on this edition's machine at the named commit; the release needs
Python >= 3.12, which this machine does not have, so the script cannot run it here."""

TARGETS: dict[str, str] = {
    "report": "within 2x the release's own report, wall",
    "build": "at most 40 s with the release present",
    "rebuild": "at most 15 s with nothing changed",
    "tests": "at most 120 s after the install, on a fresh clone with the release present",
}
"""The target each figure is held to."""

COMMANDS: dict[str, str] = {
    "report": "trajectory-judge report --data RELEASE",
    "build": "jupyter-book build . --all -W",
    "rebuild": "jupyter-book build . -W",
    "tests": "python -m pytest -n auto --dist loadfile",
}
"""What each figure times, as the guide's benchmarks page names it."""


@dataclass(frozen=True)
class Summary:
    """Median, min and max of a few measurements."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        """The summary of ``values`` (at least one)."""
        if not values:
            raise ValueError("no measurements to summarise")
        return cls(statistics.median(values), min(values), max(values))

    def __str__(self) -> str:
        return f"{self.median:7.2f} s ({self.low:.2f}–{self.high:.2f})"


@dataclass
class Variant:
    """One command measured: its label, argv, working directory, environment and untimed set-up."""

    label: str
    cmd: list[str]
    cwd: Path
    env: dict[str, str]
    setup: Callable[[], None] = lambda: None
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def round_order(n_variants: int, round_index: int) -> list[int]:
    """Variant indices in the order round ``round_index`` runs them: rotated by one each round."""
    return [(round_index + i) % n_variants for i in range(n_variants)]


def paired_ratio(a: Variant, b: Variant) -> float:
    """Median over rounds of ``a``'s wall time divided by ``b``'s."""
    return statistics.median(x / y for x, y in zip(a.walls, b.walls))


def run_paired(variants: list[Variant], runs: int) -> None:
    """Run every variant ``runs`` times, alternating them round by round."""
    for r in range(runs):
        for i in round_order(len(variants), r):
            v = variants[i]
            v.setup()
            wall, cpu, _, proc = run_timed(v.cmd, cwd=v.cwd, env=v.env)
            v.walls.append(wall)
            v.cpus.append(cpu)
            v.outputs.append(proc.stdout)
            if proc.returncode != 0:
                v.failures.append(f"exit {proc.returncode}: {(proc.stdout + proc.stderr).strip().splitlines()[-1:]}")
            print(f"  round {r + 1}: {v.label:<28} wall {wall:7.2f} s  cpu {cpu:7.2f} s", flush=True)


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, and the CPU count."""
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def print_summary(title: str, variants: list[Variant], runs: int) -> None:
    """Each variant's medians (min–max), its failures, and its paired ratio to ours."""
    print(f"{title}: medians of {runs} (min–max), {load_average()}")
    for v in variants:
        print(f"  {v.label:<28} wall {Summary.of(v.walls)}  cpu {Summary.of(v.cpus)}")
        for f in dict.fromkeys(v.failures):
            print(f"    FAILED: {f}")
    for v in variants[1:]:
        print(f"  ours / {v.label}: wall x{paired_ratio(variants[0], v):.2f} (median of paired rounds)")


def reader_env() -> dict[str, str]:
    """This environment without ``PYTHONDONTWRITEBYTECODE``, so Python caches bytecode as it does for a reader."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def python_env(tree: Path, release: Path) -> dict[str, str]:
    """:func:`reader_env` with ``PYTHONPATH`` at ``tree`` (its package first) and the release named."""
    return {**reader_env(), "PYTHONPATH": str(tree), "TJ_RELEASE_DIR": str(release)}


def tool(name: str) -> str:
    """A console script of this interpreter's venv."""
    return str(Path(sys.executable).with_name(name))


def bench_report(trees: dict[str, Path], release: Path, runs: int, reference_cmd: str | None) -> Variant:
    """``report`` on the release's verdicts, ours against each other tree and the reference command."""
    cmd = [tool("trajectory-judge"), "report", "--data", str(release)]
    variants = [Variant(label, cmd, tree, python_env(tree, release)) for label, tree in trees.items()]
    if reference_cmd:
        variants.append(Variant("reference command", ["sh", "-c", reference_cmd], ROOT, reader_env()))
    print(
        f"report: {' '.join(cmd[1:])}, after one untimed run of each (bytecode and file caches warm); {load_average()}"
    )
    for v in variants:
        run_timed(v.cmd, cwd=v.cwd, env=v.env)
    run_paired(variants, runs)
    print_summary("report", variants, runs)
    for v in variants[1 : len(trees)]:
        same = all(o == variants[0].outputs[0] for o in v.outputs + variants[0].outputs)
        print(f"  stdout of {v.label} identical to ours: {'yes' if same else 'NO'}")
    ours = Summary.of(variants[0].walls).median
    if not reference_cmd:
        wall, cpu, rev = RELEASE_REPORT
        print(
            f"  the release's own report was not run here (it needs Python >= 3.12); issue 28 measured it on this "
            f"machine at {rev}, quiet: {wall:.2f} s wall, {cpu:.2f} s CPU. ours / that: x{ours / wall:.2f} "
            f"(target {TARGETS['report']}: <= {2 * wall:.2f} s)"
        )
    else:
        print(f"  target: {TARGETS['report']}")
    return variants[0]


def bench_build(trees: dict[str, Path], release: Path, runs: int, scratch: Path) -> Variant:
    """A clean ``jupyter-book build . --all -W`` of each tree, output in a fresh folder outside it."""
    variants = []
    for i, (label, tree) in enumerate(trees.items()):
        out = scratch / f"build-{i}"
        cmd = [tool("jupyter-book"), "build", ".", "--all", "-W", "--path-output", str(out)]
        variants.append(
            Variant(
                label,
                cmd,
                tree,
                python_env(tree, release),
                setup=lambda out=out: shutil.rmtree(out, ignore_errors=True),
            )
        )
    print(f"build: jupyter-book build . --all -W (fresh --path-output each run); {load_average()}")
    run_paired(variants, runs)
    print_summary("build", variants, runs)
    print(f"  target: {TARGETS['build']}")
    return variants[0]


def bench_rebuild(trees: dict[str, Path], release: Path, runs: int, scratch: Path) -> Variant:
    """``jupyter-book build . -W`` of each tree into a ``--path-output`` holding its finished build: nothing changed."""
    variants = []
    for i, (label, tree) in enumerate(trees.items()):
        out = scratch / f"rebuild-{i}"
        cmd = [tool("jupyter-book"), "build", ".", "-W", "--path-output", str(out)]
        env = python_env(tree, release)

        def first_build(out: Path = out, tree: Path = tree, env: dict[str, str] = env) -> None:
            if not (out / "_build" / "html" / "index.html").is_file():
                full = [tool("jupyter-book"), "build", ".", "--all", "-W", "--path-output", str(out)]
                subprocess.run(full, cwd=tree, env=env, check=True, capture_output=True)

        variants.append(Variant(label, cmd, tree, env, setup=first_build))
    print(f"rebuild: jupyter-book build . -W over a finished build, nothing changed; {load_average()}")
    run_paired(variants, runs)
    print_summary("rebuild", variants, runs)
    print(f"  target: {TARGETS['rebuild']}")
    return variants[0]


def fresh_clone(rev: str, dest: Path) -> None:
    """``dest`` emptied and made a clone of this repository at ``rev`` (a commit, detached)."""
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", rev], check=True)


def bench_tests(revs: dict[str, str], release: Path, runs: int, scratch: Path) -> Variant:
    """README's test command on a fresh clone of each revision, timed after the clone."""
    variants = []
    for i, (label, rev) in enumerate(revs.items()):
        clone = scratch / f"clone-{i}"
        variants.append(
            Variant(
                label,
                [sys.executable, "-m", "pytest", "-n", "auto", "--dist", "loadfile"],
                clone,
                python_env(clone, release),
                setup=lambda rev=rev, clone=clone: fresh_clone(rev, clone),
            )
        )
    print(
        f"tests: {COMMANDS['tests']} on a fresh clone of {', '.join(f'{k} ({v[:7]})' for k, v in revs.items())}; {load_average()}"
    )
    run_paired(variants, runs)
    print_summary("tests", variants, runs)
    print(f"  target: {TARGETS['tests']}")
    return variants[0]


def figure_record(figure: str, ours: Variant, runs: int) -> dict:
    """What ``--write`` keeps of one figure: this tree's medians, mins and maxes, and how they were taken."""
    from trajectory_judge import __version__

    if ours.failures:
        raise ValueError(f"{figure}: {len(ours.failures)} of the runs failed ({ours.failures[0]}); nothing written")
    wall, cpu = Summary.of(ours.walls), Summary.of(ours.cpus)
    return {
        "command": COMMANDS[figure],
        "target": TARGETS[figure],
        "runs": runs,
        "wall_s": {"median": round(wall.median, 2), "min": round(wall.low, 2), "max": round(wall.high, 2)},
        "cpu_s": {"median": round(cpu.median, 2), "min": round(cpu.low, 2), "max": round(cpu.high, 2)},
        "cpus": os.cpu_count(),
        "version": __version__,
    }


def write_figures(path: Path, records: dict[str, dict]) -> None:
    """Merge ``records`` (figure -> :func:`figure_record`) into the JSON object at ``path``, written whole."""
    from trajectory_judge.fileio import atomic_write_text

    figures = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    figures.update(records)
    atomic_write_text(path, json.dumps(figures, indent=1, sort_keys=True) + "\n")


def default_release() -> Path:
    """``TJ_RELEASE_DIR``, or ``../shared/upstream-release`` beside the repository (as the tests look)."""
    return Path(os.environ.get("TJ_RELEASE_DIR") or ROOT.parent / "shared" / "upstream-release")


def positive_int(text: str) -> int:
    """An integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The figures to measure (all by default, in :data:`FIGURES` order) and the options."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("figures", nargs="*", metavar="FIGURE", help="report, build, rebuild, tests (default: all)")
    ap.add_argument("--runs", type=positive_int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--before", metavar="REV", help="also measure this git revision, paired with ours")
    ap.add_argument(
        "--reference-cmd", metavar="CMD", help="report: also time this shell command (the release's own report)"
    )
    ap.add_argument(
        "--write",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the figures measured into this JSON file (book/benchmarks.json for the book)",
    )
    ap.add_argument(
        "--release-dir",
        type=Path,
        default=None,
        help="the published release (default TJ_RELEASE_DIR or ../shared/upstream-release)",
    )
    args = ap.parse_args(argv)
    bad = [f for f in args.figures if f not in FIGURES]
    if bad:
        ap.error(f"unknown figure {bad[0]!r}: choose from {', '.join(FIGURES)}")
    args.figures = [f for f in FIGURES if f in args.figures] or list(FIGURES)
    args.release_dir = args.release_dir or default_release()
    return args


def rev_parse(rev: str) -> str:
    """The commit ``rev`` names in this repository (exit with one line if none)."""
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"bench_speed: --before {rev}: not a commit of {ROOT}")
    return proc.stdout.strip()


def main(argv: Sequence[str] | None = None) -> None:
    """Measure the chosen figures."""
    args = parse_args(argv)
    if not (args.release_dir / "verdicts.jsonl").is_file():
        sys.exit(f"bench_speed: {args.release_dir}: no release there (set TJ_RELEASE_DIR or --release-dir)")
    head = rev_parse("HEAD")
    before = rev_parse(args.before) if args.before else None
    print(
        f"ours: {ROOT} (HEAD {head[:7]}){f'; before: {args.before} ({before[:7]})' if before else ''}; "
        f"{args.runs} runs each; python {sys.executable}"
    )
    records: dict[str, dict] = {}
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-speed-")))
        trees = {"ours": ROOT}
        if before:
            wt = scratch / "before"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(wt), before], check=True
            )
            stack.callback(
                subprocess.run, ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)], check=False
            )
            trees[f"before {args.before}"] = wt
        for figure in args.figures:
            print()
            if figure == "report":
                ours = bench_report(trees, args.release_dir, args.runs, args.reference_cmd)
            elif figure == "build":
                ours = bench_build(trees, args.release_dir, args.runs, scratch)
            elif figure == "rebuild":
                ours = bench_rebuild(trees, args.release_dir, args.runs, scratch)
            else:
                revs = {"ours (HEAD)": head, **({f"before {args.before}": before} if before else {})}
                ours = bench_tests(revs, args.release_dir, args.runs, scratch)
            if ours.failures:
                print(f"  {figure}: not written, {len(ours.failures)} of the runs failed")
            else:
                records[figure] = figure_record(figure, ours, args.runs)
    print(f"\nend: {load_average()}")
    if args.write:
        write_figures(args.write, records)
        print(f"wrote {', '.join(records)} into {args.write}")


if __name__ == "__main__":
    main()
