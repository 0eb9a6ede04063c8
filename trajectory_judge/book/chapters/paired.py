"""Helpers of the chapter "Paired discrimination" (``notebooks/paired.md``): per-fault paired
detail, the hidden-input summary and the numbers the camera-ready abstract quotes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis.paper.paired_detail import (
    CAMERA_READY_KEYS,
    DETAIL_GROUPS,
    CameraReady,
    camera_ready,
    paired_detail as compute_paired_detail,
    reply_unchanged_paired,
    reply_unchanged_types,  # noqa: F401  (re-exported for the chapter)
)
from trajectory_judge.book.render.missing import HERE, Quantity, cannot_compute, no_parent_judged, none_judged
from trajectory_judge.book.render.style import by_source  # noqa: F401 - by_source: re-exported for the chapter
from trajectory_judge.models import JudgeSpec, Trajectory, Verdict
from trajectory_judge.provenance.computed import computes

# --- paired discrimination --------------------------------------------------------------------
PAIRED_VIEW_GROUPS: tuple[str, ...] = ("loud", "silent", "reaches_input", "hidden_from_input")
"""The groups the paired figure shows."""


def judges_of(judges: Iterable[str], family: str) -> list[str]:
    """The judge ids of one family, in the given order."""
    return [j for j in judges if JudgeSpec.parse(j).family == family]


@computes
def paired_detail(trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> pd.DataFrame:
    """:func:`trajectory_judge.analysis.paper.paired_detail.paired_detail` as the frame the chapter's tables read."""
    return compute_paired_detail(trajectories, verdicts).to_frame()


@computes
def paired_wide(detail: pd.DataFrame, value: str = "paired", groups: Sequence[str] | None = None) -> pd.DataFrame:
    """``detail`` as judge x group (groups in report order, judges in their order of appearance)."""
    order = [g for g in (groups or DETAIL_GROUPS) if g in set(detail["group"])]
    wide = detail.pivot(index="judge", columns="group", values=value)
    return wide.reindex(index=list(dict.fromkeys(detail["judge"])), columns=order).rename_axis(columns=None)


@computes
def hidden_input_summary(detail: pd.DataFrame) -> pd.DataFrame:
    """Judges with faults hidden from their input: recall there, flag rate on the parents, paired value."""
    hid = detail[detail["group"] == "hidden_from_input"].set_index("judge")
    return hid[["n", "fault_rate", "parent_rate", "paired", "disagree"]]


@computes
def paired_figure(detail: pd.DataFrame):
    """Two panels over :data:`PAIRED_VIEW_GROUPS`: recall on the faults (top) and paired
    discrimination (bottom), one bar per judge in its colour with its marker on top; the legend
    above the panels, one judge a line, so the figure stays narrow enough for a phone."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import PHONE_WIDTH_IN, judge_style
    from trajectory_judge.book.render.style import label

    judges = list(dict.fromkeys(detail["judge"]))
    fig, axes = plt.subplots(2, 1, figsize=(PHONE_WIDTH_IN, 5.4 + 0.2 * len(judges)), sharex=True)
    for ax, col, title in zip(axes, ("fault_rate", "paired"), ("Recall on the faults", "Paired discrimination")):
        wide = paired_wide(detail, col, PAIRED_VIEW_GROUPS).T
        k = len(wide.columns)
        for i, j in enumerate(wide.columns):
            st = judge_style(j)
            x = np.arange(len(wide)) + (i - (k - 1) / 2) * 0.8 / k
            ax.bar(x, wide[j].fillna(0), width=0.8 / k, color=st["color"], edgecolor="black", linewidth=0.4)
            ax.scatter(x, wide[j], marker=st["marker"], color=st["color"], edgecolors="black", s=24, zorder=3,
                       label=st["label"])  # fmt: skip
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel(title)
        ax.set_xticks(
            range(len(wide)), [label(g).replace(" the ", " the\n").replace(" from ", "\nfrom ") for g in wide.index]
        )
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=1)
    return fig


def _reason(key: str, cr: CameraReady, rep, judge: str) -> str:
    """Why the folder's verdicts cannot give one camera-ready quantity, in the chapter's words."""
    four = cr.reply_unchanged
    if not four and "reply_unchanged" in key:
        return f"no fault type leaves the reply unchanged {HERE}"
    jr = rep.judges[judge]
    if key.endswith("_paired_reply_unchanged"):
        return no_parent_judged([t for t in four if jr.paired_discrimination[t].value is None])
    if key.endswith(("_reply_unchanged_min", "_reply_unchanged_max", "_recall_reply_unchanged")):
        return none_judged([t for t in four if jr.per_type_recall.get(t) is None])
    if key in ("outcome_paired_loud", "outcome_paired_silent"):
        return f"no {key.rsplit('_', 1)[1]} fault has its clean parent judged {HERE}"
    if key in ("outcome_loud_recall", "outcome_silent_recall"):
        return f"no {key.split('_')[1]} fault was judged {HERE}"
    if key.startswith("claim_"):
        return f"no unsupported-claim fault was judged by the step judge {HERE}"
    return f"no clean run was judged by the step judge {HERE}"


def camera_ready_quantities(
    rep, trajectories: Sequence[Trajectory], outcome: str, step: str, verdicts: Sequence[Verdict] = ()
) -> dict[str, Quantity]:
    """The record :func:`trajectory_judge.analysis.paper.paired_detail.camera_ready` as the chapter's quantities.

    A quantity the folder's verdicts cannot give is :meth:`Quantity.missing` with the reason; given the
    ``verdicts``, the paired values by outcome survival carry the interval of their record, the one the
    claims register checks.
    """
    cr = camera_ready(rep, trajectories, outcome, step, verdicts)
    out: dict[str, Quantity] = {}
    for key in CAMERA_READY_KEYS:
        value = cr.values[key]
        judge = step if key.startswith(("step_", "claim_")) else outcome
        if value is None:
            out[key] = Quantity.missing(_reason(key, cr, rep, judge))
            continue
        e = cr.paired.get(key)
        out[key] = Quantity(value, low=e.low, high=e.high, n=e.n) if e is not None else Quantity(value)
    return out


def reply_beside_camera_ready(rep, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> str:
    """The camera-ready abstract's reply-only figure beside this edition's own reply judges on the same faults."""
    from trajectory_judge.analysis.core.formatting import format_interval
    from trajectory_judge.analysis.paper.published import PUBLISHED_PAIRED
    from trajectory_judge.analysis.paper.register.common import signed_text
    from trajectory_judge.book.chapters.editions import ours_wording
    from trajectory_judge.book.render.style import judge_name, list_text

    published = signed_text(PUBLISHED_PAIRED["reply_paired_reply_unchanged"].value, 2)
    said = f"The camera-ready abstract puts its reply-only judge at a paired {published} on those types"
    found = {j: reply_unchanged_paired(rep, trajectories, verdicts, j) for j in judges_of(rep.judges, "reply")}
    shown = [
        f"{format_interval(e.value, e.low, e.high, e.method)} for {judge_name(j)} ({e.n} fault–parent pairs)"
        for j, e in found.items()
        if e is not None
    ]
    whose = ours_wording().column.lower()
    if not shown:
        return f"{said}; {whose} has no judge with that view, so nothing stands beside it {HERE}."
    judges = "reply judges reach" if len(shown) > 1 else "reply judge reaches"
    return f"{said}; pooled over the same faults, {whose}'s {judges} {list_text(shown)}."


def camera_ready_gaps(quantities: dict[str, dict[str, Quantity]]) -> str:
    """One sentence per column of the camera-ready table saying what it cannot compute and why; empty when nothing is missing."""
    parts = []
    for column, qs in quantities.items():
        said = cannot_compute((_possessive(CAMERA_READY_NAMES.get(k, k)), q) for k, q in qs.items())
        if said:
            parts.append(f"In the column {column}, {said[0].lower()}{said[1:]}")
    return " ".join(parts)


def _possessive(name: str) -> str:
    """``Outcome judge: lowest recall on them`` as ``the outcome judge's lowest recall on the reply-unchanged types``."""
    who, _, what = name.partition(": ")
    if not what:
        return name[0].lower() + name[1:]
    what = what.replace("on them", "on the reply-unchanged types").replace("paired, ", "paired discrimination on ")
    return f"the {who.lower()}'s {what}"


def hidden_views_sentence(hidden: pd.DataFrame) -> str:
    """Which views have faults hidden from their input (rows of :func:`hidden_input_summary`, indexed by source and
    judge): on the testbed only the outcome view, since every mutant changes a step or the reply; on a folder whose
    faults can read exactly as their parent, judges that read the steps too, said with their names."""
    from trajectory_judge.book.render.style import judge_name, list_text

    others = [(s, str(j)) for s, j in hidden.index if JudgeSpec.parse(str(j)).rendered_view != "outcome"]
    if not others:
        return (
            "Only a judge that reads the outcome view has faults hidden from its input: every other view includes "
            "the steps, and every fault changes at least one step or the reply"
        )
    names = list_text([judge_name(j) for _, j in others])
    n = int(hidden.loc[others[0], "n"])
    return (
        f"Not only judges of the outcome view have faults hidden from their input: {names} too, though "
        f"{'it reads' if len(others) == 1 else 'they read'} the steps, {'is' if len(others) == 1 else 'are'} shown "
        f"{'one fault' if n == 1 else f'{n} faults'} exactly as the clean parent, since such a fault differs from its "
        "parent in nothing a view shows (the testbed makes no such fault; a folder's own labels can)"
    )


def hidden_claim_sentence(hidden: pd.DataFrame) -> str:
    """What the data say about recall on faults hidden from an outcome view, judge by judge."""
    if hidden.empty:
        return "No judge with an outcome view is in the data yet, so the claim cannot be checked here."
    from trajectory_judge.book.render.style import format_number, judge_name

    parts = []
    for j, r in hidden.iterrows():
        same = "identical to" if r["disagree"] == 0 else f"different from (on {r['disagree']} faults)"
        paired = format_number(float(r["paired"]), 3)
        paired = ("+" + paired) if float(r["paired"]) > 0 else paired.replace("-", "\u2212")
        parts.append(
            f"{judge_name(str(j))} flags a share of {format_number(float(r['fault_rate']), 3)} of the {int(r['n'])} hidden "
            f"faults and {format_number(float(r['parent_rate']), 3)} of their clean parents, its verdicts {same} its "
            f"verdicts on the parents (paired {paired})"
        )
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
"""What each of :func:`camera_ready_quantities`' keys measures, in words."""

CAMERA_READY_COUNTS: frozenset[str] = frozenset(
    {
        "n_reply_unchanged_types",
        "step_clean_flagged",
        "step_clean_n",
        "claim_sentences",
        "claim_always_flagged_sentences",
        "claim_other_flagged",
        "claim_other_n",
    }
)
"""Keys of :func:`camera_ready_quantities` that are counts."""


@computes
def camera_ready_frame(numbers: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Quantity (in words) by column (``numbers``' keys): counts as integers, rates with three decimals."""
    from trajectory_judge.book.chapters.appendix import true_minus
    from trajectory_judge.book.render.style import format_interval, format_number

    keys = list(next(iter(numbers.values())))

    def text(x, count: bool) -> str:
        if isinstance(x, Quantity) and x.low is not None:
            return format_interval(x.value, x.low, x.high, "bootstrap")
        return format_number(x.value if isinstance(x, Quantity) else x, 3, count=count)

    data = {c: [true_minus(text(v[k], k in CAMERA_READY_COUNTS)) for k in keys] for c, v in numbers.items()}
    return pd.DataFrame(data, index=pd.Index([CAMERA_READY_NAMES.get(k, k) for k in keys], name="Quantity"))


HIDDEN_NAMES: dict[str, str] = {
    "fault_rate": "Flag rate on the faults",
    "parent_rate": "Flag rate on their parents",
    "paired": "Paired discrimination",
    "disagree": "Faults judged unlike their parent",
}
"""Headers of the hidden-input table."""
