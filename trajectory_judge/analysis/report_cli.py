"""``trajectory-judge report``: the report on stdout, and as JSON and Markdown files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

from trajectory_judge.analysis.cost import ComputeSpent, compute_spent
from trajectory_judge.analysis.loading import load_data, unparseable_counts, unparseable_sentence
from trajectory_judge.analysis.report import Report, _md, build_report
from trajectory_judge.analysis.seeds import members_summary
from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.provenance.outputs import DATA_NAMES, guard_output


# --- command line ----------------------------------------------------------------------------
def compute_markdown(spent: ComputeSpent) -> str:
    """The ``## Compute spent`` section of the Markdown report (from the run records)."""
    table = "\n\n" + _md(spent.to_frame()) if spent.rows else ""
    return f"\n## Compute spent\n\n{spent.sentence()}.{table}\n"


def _stdout_table(rep: Report) -> str:
    df = rep.main_table()
    fmt: dict[str, Callable[[Any], str]] = {
        c: (lambda v: "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}") for c in df.columns
    }
    fmt["step_exact_n"] = lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(int(v))
    fmt["s_per_traj"] = lambda v: f"{v:.1f}"
    return df.to_string(formatters=fmt, na_rep="n/a")


def cli_report(args: Any) -> int:
    """``trajectory-judge report``: print the main table; write JSON and Markdown on request."""
    if args.resamples < 1:
        print(f"trajectory-judge: error: --resamples must be positive, got {args.resamples}", file=__import__("sys").stderr)
        return 2
    _guard_outputs(args)
    data = load_data(args.data)
    rep = build_report(data.trajectories, data.verdicts, resamples=args.resamples, seed=args.seed)
    print(f"{rep.n_trajectories} trajectories: " + ", ".join(f"{v} {k}" for k, v in rep.design.items()))
    print(_stdout_table(rep))
    print()
    print(rep.per_type_table().to_string(float_format=lambda v: f"{v:.2f}"))
    print(f"\n{unparseable_sentence(data.verdicts)}.")
    members = members_summary(args.data, data.trajectories, data.verdicts, seed=args.seed)
    if members:
        print("\n" + members)
    spent = compute_spent(args.data)
    print(f"\n{spent.sentence()}.")
    if spent.rows:
        print(spent.to_frame().to_string(float_format=lambda v: f"{v:.2f}"))
    if args.json:
        body = {**rep.to_dict(), "unparseable": unparseable_counts(data.verdicts)}
        atomic_write_text(args.json, json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    if args.markdown:
        atomic_write_text(args.markdown, rep.to_markdown() + f"\n## Unparseable answers\n\n{unparseable_sentence(data.verdicts)}.\n"
                          + compute_markdown(spent))
    return 0


def _guard_outputs(args: Any) -> None:
    """Refuse ``--json``/``--markdown`` paths that would overwrite what the report reads (or each other)."""
    inputs = [Path(args.data) / n for n in DATA_NAMES]
    if args.json:
        guard_output(args.json, inputs=inputs)
    if args.markdown:
        guard_output(args.markdown, inputs=inputs, outputs=[args.json] if args.json else [])
