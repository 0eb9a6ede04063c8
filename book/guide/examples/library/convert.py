"""Convert a library agent's runs (runs.json) and hand-made labels (labels.csv) into trajectories.jsonl.

Usage: python convert.py SOURCE_DIR OUT_DIR
"""

import csv
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from trajectory_judge.models import Label, Observation, Step, ToolCall, Trajectory, write_jsonl


def label(row: dict[str, str]) -> Label:
    return Label(
        faulty=row["faulty"] == "yes",
        failure_step=int(row["step"]) if row["step"] else None,
        failure_type=row["type"] or None,
        outcome_correct=row["outcome_correct"] == "yes",
    )


def trajectory(run: dict, lab: Label) -> Trajectory:
    steps = [
        Step(
            index=i,
            thought=call["why"],
            call=ToolCall(tool=call["tool"], args=call["input"]),
            observation=Observation(ok=call["ok"], data=call["output"], error=call.get("error")),
        )
        for i, call in enumerate(run["calls"])
    ]
    return Trajectory(
        trajectory_id=run["run"],
        instance_id=run["task"],  # the clean run of a task is the parent of its faulty runs
        goal=run["request"],
        steps=steps,
        final_answer=run["answer"],
        label=lab,
    )


def main(source: Path, out: Path) -> int:
    with open(source / "labels.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    labels = {}
    for line, row in enumerate(rows, start=2):
        try:
            labels[row["run"]] = label(row)
        except (ValidationError, ValueError) as exc:
            print(f"{source / 'labels.csv'}:{line}: {str(exc).splitlines()[-1].strip()}", file=sys.stderr)
            return 2
    runs = json.loads((source / "runs.json").read_text(encoding="utf-8"))
    trajectories = []
    for n, run in enumerate(runs, start=1):
        try:
            trajectories.append(trajectory(run, labels[run["run"]]))
        except (ValidationError, KeyError) as exc:
            print(f"{source / 'runs.json'}: run {n}: {str(exc).splitlines()[-1].strip()}", file=sys.stderr)
            return 2
    write_jsonl(out / "trajectories.jsonl", trajectories)
    print(f"wrote {len(trajectories)} trajectories to {out / 'trajectories.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
