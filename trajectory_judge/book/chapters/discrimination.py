"""Helpers of the chapter "Paired discrimination" (``notebooks/paired.md``): per-fault paired
detail, the hidden-input summary and the numbers the camera-ready abstract quotes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis.paired import clean_parents, paired_discrimination, unchanged_types
from trajectory_judge.book.render.missing import HERE, Quantity, cannot_compute, no_parent_judged, none_judged
from trajectory_judge.book.render.style import by_source  # noqa: F401 - re-exported: the paired chapter imports it from here
from trajectory_judge.models import Trajectory, Verdict
from trajectory_judge.provenance.computed import computes

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


@computes
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


@computes
def paired_wide(detail: pd.DataFrame, value: str = "paired", groups: Sequence[str] | None = None) -> pd.DataFrame:
    """``detail`` as judge x group (groups in report order, judges in their order of appearance)."""
    from trajectory_judge.analysis.paired import PAIRED_GROUPS

    default = (*PAIRED_GROUPS[:5], "reply_unchanged", "reply_changed", *PAIRED_GROUPS[5:])
    order = [g for g in (groups or default) if g in set(detail["group"])]
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
            ax.scatter(
                x,
                wide[j],
                marker=st["marker"],
                color=st["color"],
                edgecolors="black",
                s=24,
                zorder=3,
                label=st["label"],
            )
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel(title)
        ax.set_xticks(
            range(len(wide)), [label(g).replace(" the ", " the\n").replace(" from ", "\nfrom ") for g in wide.index]
        )
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=1)
    return fig


def reply_unchanged_types(trajectories: Sequence[Trajectory]) -> list[str]:
    """Failure types whose every fault with a clean parent shows the outcome view (goal, final answer) of that parent."""
    return unchanged_types(trajectories, "outcome")


def paired_interval(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    judge: str,
    group: str,
    *,
    resamples: int = 10_000,
    seed: int = 7,
) -> tuple[float, float] | None:
    """95% percentile interval of ``judge``'s paired discrimination on ``group`` (``loud``, ``silent``, ``all``):
    the fault–parent pairs resampled within each failure type, as the design fixes how many of each
    there are. ``None`` when the group has no pair."""
    parents = clean_parents(trajectories)
    vs = {v.trajectory_id: v for v in verdicts if v.judge_id == judge}
    by_type: dict[str, list[int]] = {}
    for t in trajectories:
        lab, parent = t.label, parents.get(t.instance_id)
        if (
            lab is None
            or not lab.faulty
            or parent is None
            or t.trajectory_id not in vs
            or parent.trajectory_id not in vs
        ):
            continue
        if group != "all" and group != ("silent" if lab.outcome_correct else "loud"):
            continue
        by_type.setdefault(str(lab.failure_type), []).append(
            int(vs[t.trajectory_id].faulty) - int(vs[parent.trajectory_id].faulty)
        )
    n = sum(map(len, by_type.values()))
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for ft in sorted(by_type):
        d = np.asarray(by_type[ft])
        total += d[rng.integers(0, len(d), size=(resamples, len(d)))].sum(axis=1)
    low, high = np.percentile(total / n, [2.5, 97.5])
    return float(low), float(high)


def _over_types(four: Sequence[str], values: dict, pick, paired: bool) -> Quantity:
    """``pick`` (min, max) of a per-type value over the reply-unchanged types, or why it is missing."""
    if not four:
        return Quantity.missing(f"no fault type leaves the reply unchanged {HERE}")
    got = {t: values[t].value if paired else values[t] for t in four}
    lacking = [t for t, v in got.items() if v is None]
    if lacking:
        return Quantity.missing(no_parent_judged(lacking) if paired else none_judged(lacking))
    return Quantity(pick(got.values()))


def _paired(judge, group: str, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> Quantity:
    """A judge's paired discrimination on ``loud`` or ``silent`` faults, with its interval when ``verdicts`` are given."""
    v = judge.paired_discrimination[group]
    if v.value is None:
        return Quantity.missing(f"no {group} fault has its clean parent judged {HERE}")
    span = paired_interval(trajectories, verdicts, judge.judge_id, group) if verdicts else None
    low, high = span if span is not None else (None, None)
    return Quantity(v.value, low=low, high=high, n=v.n)


def _metric(judge, key: str, why: str) -> Quantity:
    v = judge.metrics.get(key)
    return Quantity(v) if v is not None else Quantity.missing(why)


def camera_ready_quantities(
    rep, trajectories: Sequence[Trajectory], outcome: str, step: str, verdicts: Sequence[Verdict] = ()
) -> dict[str, Quantity]:
    """The quantities the camera-ready abstract quotes, computed from a report: outcome judge ``outcome``, step judge ``step``.

    Keys name what is measured (recall and paired discrimination of the outcome judge on the
    reply-unchanged types and by outcome survival; the step judge's recall there, its clean flags
    and their exact upper bound; its detection of each invented promise). A quantity the folder's
    verdicts cannot give (no fault of a type judged, or none with its clean parent judged) is
    :meth:`Quantity.missing` with the reason. Given the ``verdicts``, the paired values by outcome
    survival carry their interval (:func:`paired_interval`).
    """
    four = reply_unchanged_types(trajectories)
    out_j, step_j = rep.judges[outcome], rep.judges[step]
    claims = rep.claim_table(step)
    always = claims[claims["recall"] == 1.0]
    rest = claims.drop(always.index)

    n_clean = step_j.strata.get("clean", 0)
    false_alarms = step_j.metrics.get("false_alarm_rate")
    no_clean = f"no clean run was judged by the step judge {HERE}"
    ci = step_j.intervals.get("false_alarm_rate")
    no_claim = f"no unsupported-claim fault was judged by the step judge {HERE}"
    return {
        "n_reply_unchanged_types": Quantity(len(four)),
        "outcome_recall_reply_unchanged_min": _over_types(four, out_j.per_type_recall, min, False),
        "outcome_recall_reply_unchanged_max": _over_types(four, out_j.per_type_recall, max, False),
        "outcome_paired_reply_unchanged": _over_types(
            four, out_j.paired_discrimination, lambda xs: max(map(abs, xs)), True
        ),
        "outcome_paired_loud": _paired(out_j, "loud", trajectories, verdicts),
        "outcome_paired_silent": _paired(out_j, "silent", trajectories, verdicts),
        "outcome_loud_recall": _metric(out_j, "loud_recall", f"no loud fault was judged {HERE}"),
        "outcome_silent_recall": _metric(out_j, "silent_recall", f"no silent fault was judged {HERE}"),
        "step_recall_reply_unchanged": _over_types(four, step_j.per_type_recall, min, False),
        "step_clean_flagged": Quantity(round(false_alarms * n_clean))
        if false_alarms is not None
        else Quantity.missing(no_clean),
        "step_clean_n": Quantity(n_clean),
        "step_clean_flagged_ci_high": Quantity(ci.high) if ci is not None else Quantity.missing(no_clean),
        "step_paired_reply_unchanged": _over_types(four, step_j.paired_discrimination, min, True),
        "claim_sentences": Quantity(len(claims)) if len(claims) else Quantity.missing(no_claim),
        "claim_always_flagged_sentences": Quantity(len(always)) if len(claims) else Quantity.missing(no_claim),
        "claim_other_flagged": Quantity(int(rest["flagged"].sum())) if len(claims) else Quantity.missing(no_claim),
        "claim_other_n": Quantity(int(rest["n"].sum())) if len(claims) else Quantity.missing(no_claim),
    }


def camera_ready_numbers(rep, trajectories: Sequence[Trajectory], outcome: str, step: str) -> dict[str, float | None]:
    """:func:`camera_ready_quantities` as plain values (``None`` where missing)."""
    return {k: q.value for k, q in camera_ready_quantities(rep, trajectories, outcome, step).items()}


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
"""What each of :func:`camera_ready_numbers`' keys measures, in words."""

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
"""Keys of :func:`camera_ready_numbers` that are counts."""


@computes
def camera_ready_frame(numbers: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Quantity (in words) by column (``numbers``' keys): counts as integers, rates with three decimals."""
    from trajectory_judge.book.render.style import format_number

    keys = list(next(iter(numbers.values())))
    from trajectory_judge.book.chapters.appendix import true_minus
    from trajectory_judge.book.render.style import format_interval

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
