"""Helpers of the chapter "The testbed" (``notebooks/testbed.md``): dataset composition,
strata, checker coverage, the reply-unchanged faults and one instance's family of trajectories.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from trajectory_judge.judges.views import render_view
from trajectory_judge.models import (
    DESIGN_CELLS,
    OUTCOME_ONLY,
    TESTBED_FAILURE_TYPES,
    Trajectory,
    design_cell,
    load_trajectories,
    stratum,
)
from trajectory_judge.provenance.computed import computes
from trajectory_judge.testbed.checker import checker_table
from trajectory_judge.testbed.env import Instance, generate_instances
from trajectory_judge.testbed.oracle import solve

_INDEX = re.compile(r"(\d+)$")


def _instance_index(instance_id: str) -> int:
    """The number an instance id ends in (``"INS-041"`` -> 41)."""
    m = _INDEX.search(instance_id)
    if m is None:
        raise ValueError(f"instance id {instance_id!r} does not end in a number")
    return int(m.group(1))


def instances_for(trajs: Sequence[Trajectory], seed: int) -> dict[str, Instance]:
    """instance_id -> the seeded instance behind each trajectory; raises if a goal does not match.

    The check is what ties the data to the seed: an instance regenerated with the wrong seed
    (or data from another generator) has a different goal text.
    """
    n = 1 + max(_instance_index(t.instance_id) for t in trajs)
    by_id = {inst.instance_id: inst for inst in generate_instances(n, seed)}
    for t in trajs:
        inst = by_id.get(t.instance_id)
        if inst is None or inst.goal != t.goal:
            raise ValueError(
                f"{t.trajectory_id}: goal does not match instance {t.instance_id} generated with seed {seed}"
            )
    return by_id


def testbed_trajectories(folder: Path, seed: int, own: Path) -> tuple[list[Trajectory], str]:
    """The trajectories the testbed chapter describes, and the sentence that says so when they are not ``folder``'s.

    The chapter describes how the testbed builds its trajectories: seeded instances, the oracle, one fault per
    mutant. A folder the testbed did not make (its goals are not the seeded instances') cannot show that, so the
    chapter reads the edition's own trajectories in ``own`` instead and says so once; empty on a testbed folder.
    """
    trajs = load_trajectories(folder / "trajectories.jsonl")
    try:
        instances_for(trajs, seed)
    except ValueError as exc:
        why = str(exc).split(": ", 1)[-1]
        return load_trajectories(own / "trajectories.jsonl"), (
            f"Your folder's trajectories were not made by the testbed ({why}), so this chapter describes the "
            "testbed on the edition's own trajectories in `data/`; the chapters after it score your judges on "
            "your folder."
        )
    return trajs, ""


def _kind(t: Trajectory) -> str:
    return "clean" if t.label is None or not t.label.faulty else t.label.failure_type or OUTCOME_ONLY


@computes
def composition_table(trajs: Sequence[Trajectory]) -> pd.DataFrame:
    """Trajectories per design cell, with the outcome stratum (clean / silent / loud) of each cell."""
    counts = pd.Series([design_cell(t.label) for t in trajs]).value_counts()
    rows = [(c, "clean" if c == "clean" else c.split("/")[1], int(counts.get(c, 0))) for c in DESIGN_CELLS]
    return pd.DataFrame(rows, columns=["design cell", "outcome stratum", "trajectories"]).set_index("design cell")


def stratum_counts(trajs: Sequence[Trajectory]) -> dict[str, int]:
    """Trajectories per outcome stratum: clean, silent, loud."""
    counts = pd.Series([stratum(t.label) for t in trajs if t.label is not None]).value_counts()
    return {s: int(counts.get(s, 0)) for s in ("clean", "silent", "loud")}


def strata_by_type(trajs: Sequence[Trajectory]) -> dict[str, set[str]]:
    """Failure type -> the outcome strata (``silent``, ``loud``) its mutants fall in."""
    out: dict[str, set[str]] = {}
    for t in trajs:
        if t.label is not None and t.label.faulty:
            out.setdefault(str(t.label.failure_type), set()).add(stratum(t.label))
    return out


@computes
def strata_table(trajs: Sequence[Trajectory], instances: dict[str, Instance]) -> pd.DataFrame:
    """Instance stratum x trajectory kind (clean or failure type), with row totals."""
    df = pd.DataFrame(
        {"instance stratum": [instances[t.instance_id].stratum for t in trajs], "kind": [_kind(t) for t in trajs]}
    )
    tab = pd.crosstab(df["instance stratum"], df["kind"])
    tab = tab.reindex(columns=[k for k in ("clean", *TESTBED_FAILURE_TYPES) if k in tab.columns])
    order = list(dict.fromkeys(inst.stratum for inst in sorted(instances.values(), key=lambda i: i.index)))
    tab = tab.reindex([s for s in order if s in tab.index])
    tab["total"] = tab.sum(axis=1)
    tab.columns.name = None
    return tab


@computes
def coverage_table(trajs: Sequence[Trajectory]) -> pd.DataFrame:
    """The rule checker per kind: n, share flagged, share flagged with the right type (NaN for clean)."""
    rows = [
        (kind, n, flagged / n, float("nan") if kind == "clean" else typed / n)
        for kind, n, flagged, typed in checker_table(list(trajs))
    ]
    return pd.DataFrame(rows, columns=["kind", "n", "flagged", "typed"]).set_index("kind")


@computes
def reply_unchanged_table(trajs: Sequence[Trajectory], instances: dict[str, Instance]) -> pd.DataFrame:
    """Per failure type: mutants, and the share whose outcome view equals their oracle parent's.

    The parent is the oracle's run on the same instance, regenerated; the outcome view is
    (goal, final answer), so a share of 1 means an outcome-only judge sees the clean run's input.
    """
    parents = {iid: render_view("outcome", solve(instances[iid])) for iid in {t.instance_id for t in trajs}}
    rows = []
    for ftype in TESTBED_FAILURE_TYPES:
        mutants = [t for t in trajs if t.label is not None and t.label.failure_type == ftype]
        same = sum(render_view("outcome", t) == parents[t.instance_id] for t in mutants)
        rows.append((ftype, len(mutants), same / len(mutants) if mutants else float("nan")))
    return pd.DataFrame(rows, columns=["failure type", "mutants", "outcome view unchanged"]).set_index("failure type")


def example_instance_id(trajs: Sequence[Trajectory]) -> str:
    """The first instance (by id) with a clean run and a mutant of every failure type in ``trajs``."""
    kinds: dict[str, set[str]] = {}
    for t in trajs:
        kinds.setdefault(t.instance_id, set()).add(_kind(t))
    full = sorted(i for i, k in kinds.items() if k >= {"clean", *TESTBED_FAILURE_TYPES})
    if not full:
        raise ValueError("no instance has a clean run and a mutant of every failure type")
    return full[0]


def example_trajectory(trajs: Sequence[Trajectory]) -> Trajectory:
    """A clean run to show prompts on: the example instance's (:func:`example_instance_id`) when the folder has
    one, else the folder's first clean run, else its first trajectory."""
    try:
        return family(trajs, example_instance_id(trajs))["clean"]
    except ValueError:
        return next((t for t in trajs if t.label is not None and not t.label.faulty), trajs[0])


def family(trajs: Sequence[Trajectory], instance_id: str) -> dict[str, Trajectory]:
    """kind -> trajectory for one instance, in the order clean, then the failure types."""
    by_kind = {_kind(t): t for t in trajs if t.instance_id == instance_id}
    return {k: by_kind[k] for k in ("clean", *TESTBED_FAILURE_TYPES) if k in by_kind}


def mutant_diff(parent: Trajectory, mutant: Trajectory, *, view: str = "step") -> str:
    """The lines of ``view`` that differ between parent and mutant (``-`` parent, ``+`` mutant)."""
    a, b = render_view(view, parent).splitlines(), render_view(view, mutant).splitlines()
    lines = [ln for ln in difflib.unified_diff(a, b, lineterm="", n=0) if not ln.startswith(("---", "+++", "@@"))]
    return "\n".join(lines)


@computes
def family_table(fam: dict[str, Trajectory]) -> pd.DataFrame:
    """One row per member of a family: labelled step, outcome survival, steps, and the final answer."""
    rows = []
    for kind, t in fam.items():
        lab = t.label
        rows.append(
            (kind, lab.failure_step if lab else None, stratum(lab) if lab else "", len(t.steps), t.final_answer)
        )
    df = pd.DataFrame(rows, columns=["kind", "labelled step", "outcome stratum", "steps", "final answer"]).set_index(
        "kind"
    )
    df["labelled step"] = df["labelled step"].astype("Int64")
    return df


# --- how the chapter shows them ---------------------------------------------------------------
@computes
def family_summary(fam: dict[str, Trajectory]) -> pd.DataFrame:
    """:func:`family_table` with the final answer replaced by whether it is the clean run's, word for word."""
    tab = family_table(fam)
    tab["same reply as the clean run"] = tab["final answer"] == tab["final answer"].iloc[0]
    return tab.drop(columns="final answer")


def family_diffs(fam: dict[str, Trajectory]) -> str:
    """Markdown: for each mutant, its name, labelled step and a ``diff`` block of the lines of the
    step view that differ from the clean run (``-`` clean, ``+`` mutant)."""
    parts = []
    for kind, mutant in list(fam.items())[1:]:
        step = mutant.label.failure_step if mutant.label else None
        parts.append(f"**{kind.replace('_', ' ').capitalize()}** (labelled step {step})\n")
        parts.append(f"```diff\n{mutant_diff(fam['clean'], mutant)}\n```\n")
    return "\n".join(parts)
