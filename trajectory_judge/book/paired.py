"""Helpers of the chapter "Paired discrimination" (``notebooks/paired.md``): per-fault paired
detail, the hidden-input summary and the numbers the camera-ready abstract quotes.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis.paired import clean_parents, paired_discrimination
from trajectory_judge.book.style import by_source
from trajectory_judge.judges.views import render_view
from trajectory_judge.models import FAILURE_TYPES, Trajectory, Verdict

# --- paired discrimination --------------------------------------------------------------------
PAIRED_VIEW_GROUPS: tuple[str, ...] = ("loud", "silent", "reaches_input", "hidden_from_input")
"""The groups the paired figure shows."""


def family_of(judge_id: str) -> str:
    """The family of a judge id: ``step:qwen2.5:14b`` -> ``step``."""
    return judge_id.split(":", 1)[0]


def model_of(judge_id: str) -> str | None:
    """The model of a judge id, ``None`` for the rule engine."""
    return judge_id.split(":", 1)[1] if ":" in judge_id else None


def judges_of(judges: Iterable[str], family: str) -> list[str]:
    """The judge ids of one family, in the given order."""
    return [j for j in judges if family_of(j) == family]


def paired_detail(trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> pd.DataFrame:
    """Per judge and group: faults with a judged clean parent, flag rate on them, on their parents
    (the group's anchor), the difference and the faults judged unlike their parent.

    One row per non-empty group of :func:`~trajectory_judge.analysis.paired.paired_discrimination`
    with its reply groups (whether the outcome view, goal and final answer, equals the parent's,
    whatever the judge's own view): the same computation as the report's, judges in report order.
    """
    from trajectory_judge.analysis.loading import judge_order

    by_judge: dict[str, dict[str, Verdict]] = {}
    for v in verdicts:
        by_judge.setdefault(v.judge_id, {})[v.trajectory_id] = v
    rows, reached = [], {}
    for judge in judge_order(verdicts):
        vs = by_judge[judge]
        for g, p in paired_discrimination(judge, trajectories, vs, reached=reached, reply_groups=True).items():
            if p.n:
                rows.append((judge, g, p.n, p.fault_rate, p.parent_rate, p.value, p.disagree))
    cols = ["judge", "group", "n", "fault_rate", "parent_rate", "paired", "disagree"]
    return pd.DataFrame(rows, columns=cols)


def paired_wide(detail: pd.DataFrame, value: str = "paired", groups: Sequence[str] | None = None) -> pd.DataFrame:
    """``detail`` as judge x group (groups in report order, judges in their order of appearance)."""
    from trajectory_judge.analysis.paired import PAIRED_GROUPS

    default = (*PAIRED_GROUPS[:5], "reply_unchanged", "reply_changed", *PAIRED_GROUPS[5:])
    order = [g for g in (groups or default) if g in set(detail["group"])]
    wide = detail.pivot(index="judge", columns="group", values=value)
    return wide.reindex(index=list(dict.fromkeys(detail["judge"])), columns=order).rename_axis(columns=None)


def hidden_input_summary(detail: pd.DataFrame) -> pd.DataFrame:
    """Judges with faults hidden from their input: recall there, flag rate on the parents, paired value."""
    hid = detail[detail["group"] == "hidden_from_input"].set_index("judge")
    return hid[["n", "fault_rate", "parent_rate", "paired", "disagree"]]


def paired_figure(detail: pd.DataFrame):
    """Two panels over :data:`PAIRED_VIEW_GROUPS`: recall on the faults (top) and paired
    discrimination (bottom), one bar per judge in its colour with its marker on top; the legend
    above the panels, one judge a line, so the figure stays narrow enough for a phone."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.figures import PHONE_WIDTH_IN, judge_style
    from trajectory_judge.book.style import label

    judges = list(dict.fromkeys(detail["judge"]))
    fig, axes = plt.subplots(2, 1, figsize=(PHONE_WIDTH_IN, 5.4 + 0.2 * len(judges)), sharex=True)
    for ax, col, title in zip(axes, ("fault_rate", "paired"), ("Recall on the faults", "Paired discrimination")):
        wide = paired_wide(detail, col, PAIRED_VIEW_GROUPS).T
        k = len(wide.columns)
        for i, j in enumerate(wide.columns):
            st = judge_style(j)
            x = np.arange(len(wide)) + (i - (k - 1) / 2) * 0.8 / k
            ax.bar(x, wide[j].fillna(0), width=0.8 / k, color=st["color"], edgecolor="black", linewidth=0.4)
            ax.scatter(x, wide[j], marker=st["marker"], color=st["color"], edgecolors="black", s=24, zorder=3, label=st["label"])
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel(title)
        ax.set_xticks(range(len(wide)), [label(g).replace(" the ", " the\n").replace(" from ", "\nfrom ") for g in wide.index])
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=1)
    return fig


def reply_unchanged_types(trajectories: Sequence[Trajectory]) -> list[str]:
    """Failure types whose every fault with a clean parent shows the outcome view (goal, final answer) of that parent."""
    parents = clean_parents(trajectories)
    same: dict[str, bool] = {}
    for t in trajectories:
        parent = parents.get(t.instance_id)
        if t.label is None or not t.label.faulty or parent is None:
            continue
        ft = str(t.label.failure_type)
        same[ft] = same.get(ft, True) and render_view("outcome", t) == render_view("outcome", parent)
    return [t for t in FAILURE_TYPES if same.get(t)]


def camera_ready_numbers(rep, trajectories: Sequence[Trajectory], outcome: str, step: str) -> dict[str, float]:
    """The quantities the camera-ready abstract quotes, computed from a report: outcome judge ``outcome``, step judge ``step``.

    Keys name what is measured (recall and paired discrimination of the outcome judge on the
    reply-unchanged types and by outcome survival; the step judge's recall there, its clean flags
    and their exact upper bound; its detection of each invented promise).
    """
    four = reply_unchanged_types(trajectories)
    out_j, step_j = rep.judges[outcome], rep.judges[step]
    claims = rep.claim_table(step)
    always = claims[claims["recall"] == 1.0]
    rest = claims.drop(always.index)
    return {
        "n_reply_unchanged_types": len(four),
        "outcome_recall_reply_unchanged_min": min(out_j.per_type_recall[t] for t in four),
        "outcome_recall_reply_unchanged_max": max(out_j.per_type_recall[t] for t in four),
        "outcome_paired_reply_unchanged": max(abs(out_j.paired_discrimination[t].value) for t in four),
        "outcome_paired_loud": out_j.paired_discrimination["loud"].value,
        "outcome_paired_silent": out_j.paired_discrimination["silent"].value,
        "outcome_loud_recall": out_j.metrics["loud_recall"],
        "outcome_silent_recall": out_j.metrics["silent_recall"],
        "step_recall_reply_unchanged": min(step_j.per_type_recall[t] for t in four),
        "step_clean_flagged": round(step_j.metrics["false_alarm_rate"] * step_j.strata["clean"]),
        "step_clean_n": step_j.strata["clean"],
        "step_clean_flagged_ci_high": step_j.intervals["false_alarm_rate"].high,
        "step_paired_reply_unchanged": min(step_j.paired_discrimination[t].value for t in four),
        "claim_sentences": len(claims),
        "claim_always_flagged_sentences": len(always),
        "claim_other_flagged": int(rest["flagged"].sum()),
        "claim_other_n": int(rest["n"].sum()),
    }


def hidden_claim_sentence(hidden: pd.DataFrame) -> str:
    """What the data say about recall on faults hidden from an outcome view, judge by judge."""
    if hidden.empty:
        return "No judge with an outcome view is in the data yet, so the claim cannot be checked here."
    from trajectory_judge.book.style import format_number, judge_name

    parts = []
    for j, r in hidden.iterrows():
        same = "identical to" if r["disagree"] == 0 else f"different from (on {r['disagree']} faults)"
        paired = format_number(float(r["paired"]), 3)
        paired = ("+" + paired) if float(r["paired"]) > 0 else paired.replace("-", "\u2212")
        parts.append(f"{judge_name(str(j))} flags a share of {format_number(float(r['fault_rate']), 3)} of the {int(r['n'])} hidden "
                     f"faults and {format_number(float(r['parent_rate']), 3)} of their clean parents, its verdicts {same} its "
                     f"verdicts on the parents (paired {paired})")  # fmt: skip
    return "; ".join(parts) + "."


CAMERA_READY_NAMES: dict[str, str] = {
    "n_reply_unchanged_types": "Reply-unchanged fault types",
    "outcome_recall_reply_unchanged_min": "Outcome judge: lowest recall on them",
    "outcome_recall_reply_unchanged_max": "Outcome judge: highest recall on them",
    "outcome_paired_reply_unchanged": "Outcome judge: largest |paired| on them",
    "outcome_paired_loud": "Outcome judge: paired, loud faults",
    "outcome_paired_silent": "Outcome judge: paired, silent faults",
    "outcome_loud_recall": "Outcome judge: loud recall",
    "outcome_silent_recall": "Outcome judge: silent recall",
    "step_recall_reply_unchanged": "Step judge: lowest recall on reply-unchanged types",
    "step_clean_flagged": "Step judge: clean runs flagged",
    "step_clean_n": "Step judge: clean runs judged",
    "step_clean_flagged_ci_high": "Step judge: exact upper bound of its false-alarm rate",
    "step_paired_reply_unchanged": "Step judge: lowest paired on reply-unchanged types",
    "claim_sentences": "Invented promises",
    "claim_always_flagged_sentences": "Promises the step judge always flags",
    "claim_other_flagged": "Faults carrying the others, flagged",
    "claim_other_n": "Faults carrying the others",
}
"""What each of :func:`camera_ready_numbers`' keys measures, in words."""

CAMERA_READY_COUNTS: frozenset[str] = frozenset({
    "n_reply_unchanged_types", "step_clean_flagged", "step_clean_n", "claim_sentences",
    "claim_always_flagged_sentences", "claim_other_flagged", "claim_other_n",
})  # fmt: skip
"""Keys of :func:`camera_ready_numbers` that are counts."""


def camera_ready_frame(numbers: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Quantity (in words) by column (``numbers``' keys): counts as integers, rates with three decimals."""
    from trajectory_judge.book.style import format_number

    keys = list(next(iter(numbers.values())))
    from trajectory_judge.book.appendix import true_minus

    data = {c: [true_minus(format_number(v[k], 3, count=k in CAMERA_READY_COUNTS)) for k in keys] for c, v in numbers.items()}
    return pd.DataFrame(data, index=pd.Index([CAMERA_READY_NAMES.get(k, k) for k in keys], name="Quantity"))


HIDDEN_NAMES: dict[str, str] = {"fault_rate": "Flag rate on the faults", "parent_rate": "Flag rate on their parents",
                                "paired": "Paired discrimination", "disagree": "Faults judged unlike their parent"}  # fmt: skip
"""Headers of the hidden-input table."""
