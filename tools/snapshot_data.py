"""Stage a consistent snapshot of data/ while a judge run may still be appending to it.

    .venv/bin/python tools/snapshot_data.py [--out DIR] && git commit -m "Data: ..."

A run appends its record to runs.jsonl only when it ends, so the verdicts of a run in flight are on
disk before anything accounts for them. The snapshot keeps exactly what the run records account for:
the verdicts of each LLM judge up to the count its records sum to (plus every ``programmatic``
verdict), and the organic episodes the agent records sum to. It writes those files and their
SHA256SUMS to DIR (default /tmp/tj-data-snapshot; point TJ_DATA there to execute the notebooks on
it) and stages the same bytes in git's index; the files in data/ are not touched.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("trajectories.jsonl", "verdicts.jsonl", "members.jsonl", "runs.jsonl", "organic.jsonl")


def complete_lines(path: Path) -> list[str]:
    """The newline-terminated lines of ``path`` (a torn last line is left out)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return text.splitlines(keepends=True)[: text.count("\n")]


def accounted(data: Path) -> dict[str, list[str]]:
    """File name -> the lines the run records account for."""
    runs = complete_lines(data / "runs.jsonl")
    recs = [json.loads(ln) for ln in runs if ln.strip()]
    budget = Counter()
    for r in recs:
        for judge, per in (r.get("per_judge") or {}).items():
            budget[judge] += per.get("verdicts", 0)
    kept = {name: accounted_verdicts(data / name, budget) for name in ("verdicts.jsonl", "members.jsonl")}
    n_eps = sum(r.get("written", 0) for r in recs if r.get("kind") in ("agent", "organic"))
    return {
        "trajectories.jsonl": complete_lines(data / "trajectories.jsonl"),
        **kept,
        "runs.jsonl": runs,
        "organic.jsonl": complete_lines(data / "organic.jsonl")[:n_eps],
    }


def accounted_verdicts(path: Path, budget: Counter) -> list[str]:
    """The lines of a verdict file the run records account for: per judge, up to its recorded count."""
    lines = complete_lines(path)
    kept, seen = [], Counter()
    for i, ln in enumerate(lines):
        judge = json.loads(ln)["judge_id"]
        if judge != "programmatic" and seen[judge] >= budget[judge]:
            if any(json.loads(x)["judge_id"] == "programmatic" for x in lines[i:]):
                raise SystemExit(f"{path.name}:{i + 1}: programmatic verdicts after an unaccounted one")
            break
        seen[judge] += 1
        kept.append(ln)
    on_disk = Counter(json.loads(ln)["judge_id"] for ln in lines)
    short = {j: (seen[j], n) for j, n in budget.items() if j in on_disk and seen[j] != n}
    if short:
        raise SystemExit(f"run records account for more verdicts than {path.name} holds: {short}")
    return kept


def stage(repo: Path, rel: str, path: Path) -> None:
    """Put the bytes of ``path`` into git's index as ``rel`` (the working tree is not touched)."""
    blob = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", str(path)], check=True, capture_output=True, text=True
    ).stdout.strip()
    subprocess.run(["git", "-C", str(repo), "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}"], check=True)


def main(argv: list[str] | None = None) -> int:
    from trajectory_judge.provenance.manifest import MANIFEST, write_manifest

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "data"))
    ap.add_argument("--out", default="/tmp/tj-data-snapshot")
    ap.add_argument("--no-stage", action="store_true", help="write the snapshot directory only")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in accounted(Path(a.data)).items():
        if lines or (Path(a.data) / name).exists():
            (out / name).write_text("".join(lines), encoding="utf-8", newline="")
    write_manifest(out)
    if not a.no_stage:
        for name in (*FILES, MANIFEST):
            if (out / name).exists():
                stage(ROOT, f"data/{name}", out / name)
    counts = Counter(json.loads(ln)["judge_id"] for ln in complete_lines(out / "verdicts.jsonl"))
    print(
        f"snapshot in {out}: {dict(counts)}, {len(complete_lines(out / 'organic.jsonl'))} organic episodes",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
