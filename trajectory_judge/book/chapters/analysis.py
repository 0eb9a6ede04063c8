"""Helpers of the chapter "Analysis" (``notebooks/analysis.md``): view deltas, the capability
floor, claims, cost ratios and confusion matrices.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.paired import type_anchor
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.book.render.figures import MIN_FONT_PT
from trajectory_judge.book.render.style import (
    family_pairs,
    format_interval,
    format_number,
    judge_name,
    list_text,
    model_name,
    number_word,
    source_name,
)
from trajectory_judge.models import JudgeSpec, Verdict
from trajectory_judge.provenance.computed import computes

DELTA_METRICS: tuple[str, ...] = ("silent_recall", "loud_recall", "false_alarm_rate", "f1", "type_macro_f1", "ece")
"""Quality metrics shown for the paired deltas between views."""


# --- analysis --------------------------------------------------------------------------------
def common_ids(verdicts: Sequence[Verdict], a: str, b: str) -> set[str]:
    """Trajectory ids judged by both ``a`` and ``b``."""
    ids: dict[str, set[str]] = {a: set(), b: set()}
    for v in verdicts:
        if v.judge_id in ids:
            ids[v.judge_id].add(v.trajectory_id)
    return ids[a] & ids[b]


@computes
def view_deltas(rep: Report, verdicts: Sequence[Verdict], metrics: Sequence[str] = DELTA_METRICS) -> pd.DataFrame:
    """Paired deltas ``b - a`` between views of the same model, on the trajectories both judged."""
    rows = []
    for a, b in family_pairs(list(rep.judges)):
        n = len(common_ids(verdicts, a, b))
        for m in metrics:
            try:
                d = rep.delta(a, b, m)
            except KeyError:
                continue
            sa, sb = JudgeSpec.parse(a), JudgeSpec.parse(b)
            rows.append((sb.model, f"{sb.family} - {sa.family}", a, b, n, m, d.value, d.low, d.high))
    cols = ["model", "comparison", "a", "b", "n", "metric", "delta", "low", "high"]
    return pd.DataFrame(rows, columns=cols)


FLOOR_RATES: tuple[str, ...] = ("flag_rate", "false_alarm_rate", "recall", "recall_minus_far", "paired_all")
"""The rates of :func:`floor_table`, in its order and :func:`floor_view`'s."""


@computes
def floor_table(rep: Report) -> pd.DataFrame:
    """Per judge: trajectories flagged of judged, flag rate, false-alarm rate, recall, paired discrimination."""
    rows = []
    for j, jr in rep.judges.items():
        n_fault = jr.strata["silent"] + jr.strata["loud"]
        recall, far = jr.metrics["recall"], jr.metrics["false_alarm_rate"]
        flagged = round((recall or 0.0) * n_fault + (far or 0.0) * jr.strata["clean"])
        pd_all = jr.paired_discrimination["all"].value
        minus = None if recall is None or far is None else recall - far
        rows.append((j, jr.n, flagged, f"flags {flagged} of {jr.n}", flagged / jr.n, far, recall, minus, pd_all))
    cols = ["judge", "n", "flagged", "flags", *FLOOR_RATES]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


@computes
def promise_labels(rep: Report) -> dict[str, str]:
    """Each invented sentence of ``rep``'s trajectories -> ``Promise 1``, ``Promise 2``, ... in the order
    the testbed's injector lists them: the same label names the same group of faults in every verdict set,
    whatever wording the set's injector gave it."""
    from trajectory_judge.testbed.inject import INVENTED_PROMISES

    seen = {s for jr in rep.judges.values() for s in jr.claim_detection}
    ordered = [s for s in INVENTED_PROMISES if s in seen] + sorted(seen - set(INVENTED_PROMISES))
    return {s: f"Promise {k}" for k, s in enumerate(ordered, 1)}


@computes
def claim_frame(rep: Report, judges: Sequence[str]) -> pd.DataFrame:
    """Invented promise (rows, :func:`promise_labels`) by judge (columns): ``flagged/judged`` on
    ``unsupported_claim`` faults."""
    labels = promise_labels(rep)
    cols = {}
    for j in judges:
        tab = rep.claim_table(j)
        cols[j] = {labels[s]: f"{int(r.flagged)}/{int(r.n)}" for s, r in tab.iterrows()}
    return (
        pd.DataFrame(cols).reindex(sorted(set(labels.values()), key=_promise_number)).rename_axis("promise").fillna("")
    )


def _promise_number(label: str) -> int:
    return int(label.rpartition(" ")[2])


@computes
def promise_key(rep: Report) -> pd.DataFrame:
    """Each promise label with this edition's sentence for it."""
    rows = {label: {"this edition's sentence": s} for s, label in promise_labels(rep).items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("promise")


def cost_ratio(verdicts: Sequence[Verdict], a: str, b: str) -> float | None:
    """Mean latency of ``b`` over that of ``a`` on the trajectories both judged (None if none)."""
    both = common_ids(verdicts, a, b)
    lat: dict[str, list[float]] = {a: [], b: []}
    for v in verdicts:
        if v.judge_id in lat and v.trajectory_id in both:
            lat[v.judge_id].append(v.latency_s)
    if not both or not sum(lat[a]):
        return None
    return sum(lat[b]) / sum(lat[a])


def vote_shares(k: int) -> set[float]:
    """The confidences a strict-majority vote of ``k`` samples can state: ``j/k`` for ``j > k/2``."""
    return {j / k for j in range(k // 2 + 1, k + 1)}


TYPE_CODES: dict[str, str] = {
    "wrong_tool": "WT",
    "hallucinated_argument": "HA",
    "skipped_precondition": "SP",
    "ignored_observation": "IO",
    "premature_stop": "PS",
    "unsupported_claim": "UC",
    "missed": "Miss",
}
"""Short column labels of the confusion panels (the figure spells each out in its key)."""


def confusion_judges(llm: Sequence[str], judges: Sequence[str]) -> list[str]:
    """The judges the confusion figure shows: the LLM judges, else every judge in the data (the rule
    engine or a Python judge; a reader's folder need not hold the rule engine)."""
    return list(llm) or list(judges)


def _text_colour(rgba: Any) -> str:
    """Dark text on a light cell, white on a dark one (WCAG relative luminance above or below 0.408)."""
    import numpy as np

    rgb = np.asarray(rgba, dtype=float)[:3]
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return ".15" if float(linear @ [0.2126, 0.7152, 0.0722]) > 0.408 else "w"


def _counts_heatmap(ax: Any, mat: pd.DataFrame, *, row_labels: bool) -> None:
    """``mat``'s counts as a heatmap on ``ax``: one white-edged cell per count in matplotlib's "Blues",
    from the smallest count to the largest, each annotated at 9 pt; first row on top, no spines.
    Drawn with matplotlib alone, so drawing a panel never draws the whole figure (the caller sets
    the tick labels' rotation)."""
    import numpy as np

    values = mat.to_numpy(dtype=float)
    mesh = ax.pcolormesh(
        values, cmap="Blues", vmin=np.nanmin(values), vmax=np.nanmax(values), linewidths=0.5, edgecolor="white"
    )
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set(xlim=(0, values.shape[1]), ylim=(0, values.shape[0]))
    ax.invert_yaxis()
    ax.set_xticks(np.arange(values.shape[1]) + 0.5, [str(c) for c in mat.columns])
    if row_labels:
        ax.set_yticks(np.arange(values.shape[0]) + 0.5, [str(i) for i in mat.index], va="center")
    else:
        ax.set_yticks([])
    colours = mesh.to_rgba(values)
    for (row, col), count in np.ndenumerate(mat.to_numpy()):
        colour = _text_colour(colours[row, col])
        ax.text(col + 0.5, row + 0.5, f"{count:d}", ha="center", va="center", size=MIN_FONT_PT, color=colour)


@computes
def confusion_figure(rep: Report, judges: Sequence[str]) -> Any:
    """Typing confusion heatmaps (true type x named type or missed), one panel per judge (lettered
    when there are several), two a row. Every panel labels its columns with the short codes of
    :data:`TYPE_CODES`, spelt out in a key under the panels; a single panel names its rows, several label
    theirs with the same codes (only the left panels). Drawn narrow enough that every count and label is at
    least 11 CSS pixels at phone width."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import PHONE_WIDTH_IN
    from trajectory_judge.book.render.style import label

    ncols = min(2, max(1, len(judges)))
    nrows = max(1, math.ceil(len(judges) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(PHONE_WIDTH_IN, 2.45 * nrows + 0.7), squeeze=False)
    codes: dict[str, str] = {}
    for k, (ax, j) in enumerate(zip(axes.flat, judges)):
        left = k % ncols == 0
        mat = rep.confusion(j)
        codes.update({c: TYPE_CODES.get(c, label(c)) for c in mat.columns})
        rows = (lambda r: textwrap.fill(label(r), 13)) if ncols == 1 else (lambda r: TYPE_CODES.get(r, label(r)))
        mat = mat.rename(index=rows, columns=lambda c: TYPE_CODES.get(c, label(c)))
        _counts_heatmap(ax, mat, row_labels=left)
        plt.setp(ax.get_yticklabels(), rotation=0)
        letter = f"({chr(97 + k)}) " if len(judges) > 1 else ""
        family, _, model = judge_name(j).partition(" \u00b7 ")
        ax.set_title(
            f"{letter}{family}\n{model + chr(10) if model else ''}n = {rep.judges[j].n}",
            fontsize=MIN_FONT_PT,
            loc="left",
        )
        ax.set(xlabel="", ylabel="")
        ax.tick_params(length=0, labelsize=MIN_FONT_PT)
        ax.xaxis.tick_top()
        plt.setp(ax.get_xticklabels(), rotation=90)
    for ax in list(axes.flat)[len(judges) :]:
        ax.axis("off")
    key = ", ".join(f"{code} {label(c).lower()}" for c, code in codes.items())
    head = "Named type (columns): " if ncols == 1 else "Injected type (rows), named type (columns): "
    fig.supxlabel(textwrap.fill(head + key, 50), fontsize=MIN_FONT_PT)
    fig.supylabel("Injected type (rows)", fontsize=MIN_FONT_PT)
    return fig


@computes
def hidden_fault_table(rep: Report) -> pd.DataFrame:
    """Per outcome-view judge: paired discrimination on faults that do / do not reach its input, with n, and how many
    of the hidden faults it judged unlike their parent (``disagree_hidden``; zero for a deterministic judge)."""
    rows = []
    for j, jr in rep.judges.items():
        if JudgeSpec.parse(j).view != "outcome":
            continue
        hidden, reaches = jr.paired_discrimination["hidden_from_input"], jr.paired_discrimination["reaches_input"]
        far = jr.metrics["false_alarm_rate"]
        rows.append((j, hidden.value, hidden.n, reaches.value, reaches.n, far, hidden.disagree))
    cols = ["judge", "paired_hidden", "n_hidden", "paired_reaches", "n_reaches", "false_alarm_rate", "disagree_hidden"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


@computes
def claim_summary(rep: Report) -> pd.DataFrame:
    """Per judge: recall on ``unsupported_claim``, its anchor (the flag rate on those faults' clean
    parents, :func:`~trajectory_judge.analysis.core.paired.type_anchor`), and paired discrimination on that type."""
    from trajectory_judge.analysis.core.paired import PairedValue

    rows = []
    for j, jr in rep.judges.items():
        p = jr.paired_discrimination.get("unsupported_claim", PairedValue(None, 0))
        anchor = type_anchor(jr.paired_discrimination, "unsupported_claim")
        rows.append((j, jr.per_type_recall.get("unsupported_claim"), anchor, p.value, p.n))
    frame = pd.DataFrame(rows, columns=["judge", "recall", "anchor", "paired", "n_pairs"]).set_index("judge")
    return frame.astype({"recall": float, "anchor": float, "paired": float})


def claim_missing_sentence(rep: Report) -> str:
    """The one sentence saying the invented-promise study cannot be computed on a folder without unsupported-claim
    faults (:func:`~trajectory_judge.book.render.missing.cannot_compute`); empty when it has them."""
    from trajectory_judge.book.render.missing import Quantity, cannot_compute, none_judged

    if any(jr.per_type_recall.get("unsupported_claim") is not None for jr in rep.judges.values()):
        return ""
    return cannot_compute({"Recall on invented promises": Quantity.missing(none_judged(["unsupported_claim"]))})


def matrix_sentence(reports: dict[str, Report]) -> str:
    """That every typed fault a judge saw is in its confusion matrix once, and, when some faults are labelled by
    their outcome only, that those have no row."""
    untyped = {
        s: sum(
            jr.strata["silent"] + jr.strata["loud"] - int(r.confusion(j).to_numpy().sum()) for j, jr in r.judges.items()
        )
        for s, r in reports.items()
    }
    if not any(untyped.values()):
        return "Every fault a judge saw appears exactly once in its matrix"
    return (
        "Every fault a judge saw with a type appears exactly once in its matrix; a fault labelled by its outcome "
        "only has no type and no row, and counts for detection alone"
    )


def flag_all_judges(floor: pd.DataFrame) -> list[str]:
    """Judges (rows of :func:`floor_table`) that flagged every trajectory they judged."""
    return [j for j, r in floor.iterrows() if r["flagged"] == r["n"]]


# --- the chapter's tables and sentences, as a reader sees them ----------------------------------
@computes
def view_delta_table(deltas: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`view_deltas` of each source (the paper's first), transposed for reading: one row per
    metric, one column per comparison (the source and model, then ``b − a`` with its n), each cell
    ``delta (low–high)``."""
    cells: dict[tuple[str, str], dict[str, str]] = {}
    metrics: set[str] = set()
    for source, frame in deltas.items():
        metrics |= set(frame["metric"])
        for r in frame.itertuples():
            key = (
                f"{source_name(source)}: {model_name(r.model)}",
                f"{_family_word(r.b)} \u2212 {_family_word(r.a).lower()} (n = {r.n})",
            )
            cells.setdefault(key, {})[r.metric] = format_interval(r.delta, r.low, r.high, "bootstrap")
    frame = pd.DataFrame(cells).reindex([m for m in DELTA_METRICS if m in metrics])
    frame.columns = pd.MultiIndex.from_tuples(list(cells), names=["model", "comparison"]) if cells else frame.columns
    return frame.rename_axis("metric")


def _family_word(judge: str) -> str:
    """The family part of a judge's name: ``Step``, ``Self-consistency ×3``."""
    return judge_name(judge).partition(" \u00b7 ")[0]


def _whose(source: str) -> str:
    return "the paper's" if source == "release" else "our"


def view_effect_sentence(deltas: dict[str, pd.DataFrame]) -> str:
    """What the step view changes against the outcome view of the same model, per source: silent
    recall and false-alarm rate, signed, with their intervals."""
    parts = []
    for source, frame in deltas.items():
        for _, g in frame[frame["comparison"] == "step - outcome"].groupby(["a", "b"], sort=False):
            d = g.set_index("metric")
            said = [
                f"{LABEL[m]} by {'+' if d.loc[m, 'delta'] > 0 else ''}"
                f"{format_interval(d.loc[m, 'delta'], d.loc[m, 'low'], d.loc[m, 'high'], 'bootstrap')}"
                for m in ("silent_recall", "false_alarm_rate")
                if m in d.index
            ]
            parts.append(
                f"on {_whose(source)} {model_name(str(g['model'].iloc[0]))} the step view moves {list_text(said)}"
            )
    return "; ".join(parts) if parts else "no model has both an outcome and a step judge"


LABEL = {"silent_recall": "silent recall", "false_alarm_rate": "the false-alarm rate"}


def hidden_sentence(hidden: dict[str, pd.DataFrame]) -> str:
    """How many fault–parent pairs with an identical outcome view each source's outcome judges
    judged (rows of :func:`hidden_fault_table` per source), as the opening of a sentence."""
    parts = [
        f"{_whose(source)} {model_name(str(JudgeSpec.parse(str(j)).model))} outcome judge"
        + " {} "
        + str(int(r["n_hidden"]))
        for source, frame in hidden.items()
        for j, r in frame.iterrows()
    ]
    if not parts:
        return "No outcome judge has judged a fault whose outcome view equals its parent's"
    first = parts[0].format("has judged") + " fault\u2013parent pairs whose outcome view is identical"
    rest = [p.format("").replace("  ", " ") for p in parts[1:]]
    text = first + (", and " + list_text(rest) if rest else "")
    return text[:1].upper() + text[1:]


def claim_above_sentence(summaries: dict[str, pd.DataFrame]) -> str:
    """Per source, which LLM judges catch ``unsupported_claim`` more often than they flag those faults'
    clean parents (rows of :func:`claim_summary`)."""
    parts = []
    for source, frame in summaries.items():
        llm = frame.loc[[j for j in frame.index if JudgeSpec.parse(j).is_llm]]
        above = list(llm.index[llm["recall"] > llm["anchor"]])
        n, k = len(llm), len(above)
        who = "none" if k == 0 else ("all " + number_word(n) if k == n else number_word(k))
        verb = "catches" if k == 1 or k == 0 else "catch"
        names = f" ({list_text([judge_name(j) for j in above])})" if 0 < k < n or (k == n and n > 1) else ""
        parts.append(
            f"of {_whose(source)} {number_word(n)} LLM judges, {who} {verb} it more often than "
            f"{'it flags' if k <= 1 else 'they flag'} its clean parents{names}"
        )
    return "; ".join(parts)


HIDDEN_HEADERS: dict[str, str] = {
    "paired_hidden": "Paired, hidden faults",
    "n_hidden": "Pairs (hidden)",
    "paired_reaches": "Paired, reaching faults",
    "n_reaches": "Pairs (reaching)",
}
"""Column names of :func:`hidden_fault_table` in words."""

CLAIM_HEADERS: dict[str, str] = {
    "recall": "Recall",
    "anchor": "Its clean parents flagged",
    "paired": "Paired discrimination",
    "n_pairs": "Pairs",
}
"""Column names of :func:`claim_summary` in words."""

FLOOR_HEADERS: dict[str, str] = {
    "flagged": "Flagged",
    "flag_rate": "Flag rate",
    "recall_minus_far": "Recall \u2212 false-alarm rate",
    "paired_all": "Paired discrimination",
    "completion_tokens": "Completion tokens",
}
"""Column names of :func:`floor_table` in words."""


@computes
def floor_view(floor: pd.DataFrame) -> pd.DataFrame:
    """:func:`floor_table` (with ``completion_tokens``) as shown: counts, rates, headers in words."""
    from trajectory_judge.book.chapters.appendix import true_minus
    from trajectory_judge.book.render.style import MISSING

    cols = ["flagged", "n", *FLOOR_RATES, "completion_tokens"]
    out = floor[cols].astype({"flagged": int, "n": int})
    for c in ("recall_minus_far", "paired_all"):  # differences: signed with a true minus, like every interval
        out[c] = [MISSING if pd.isna(x) else true_minus(format_number(float(x), 3)) for x in out[c]]
    return out.rename(columns=FLOOR_HEADERS)


def top_flagger(floor: pd.DataFrame) -> str | None:
    """The LLM judge of :func:`floor_table` that flags the most trajectories (``None``: no LLM judge,
    as in a reader's folder of Python judges only)."""
    llm = [j for j in floor.index if JudgeSpec.parse(str(j)).is_llm]
    return str(floor.loc[llm, "flag_rate"].idxmax()) if llm else None


def floor_sentence(floor: pd.DataFrame, whose: str) -> str:
    """The LLM judge of ``whose`` set (``The paper's``, ``Our``) that flags the most: its count,
    recall minus false-alarm rate and paired discrimination."""
    from trajectory_judge.book.chapters.appendix import true_minus

    j = top_flagger(floor)
    if j is None:
        return f"{whose} verdicts hold no LLM judge to set beside it"
    r = floor.loc[j]
    return (
        f"{whose} LLM judge that flags the most, {judge_name(j)}, flags {int(r['flagged'])} of the {int(r['n'])} "
        f"trajectories it judged; its recall minus its false-alarm rate is "
        f"{true_minus(format_number(float(r['recall_minus_far']), 3))} and its paired discrimination "
        f"{true_minus(format_number(float(r['paired_all']), 3))}"
    )


def cost_sentence(ratios: dict[str, dict[str, float | None]]) -> str:
    """Per source, what each self-consistency ensemble costs against its single pass (``ratios``:
    source -> ensemble -> :func:`cost_ratio`)."""
    parts = [
        f"{_whose(source)} {judge_name(b)} costs {r:.2f} times its single pass"
        for source, rs in ratios.items()
        for b, r in rs.items()
        if r
    ]
    return list_text(parts, empty="no ensemble has a single-pass partner")


def naming_sentence(naming: dict[str, pd.DataFrame]) -> str:
    """Per source, for how many judges typing macro-F1 falls below detection recall."""
    from trajectory_judge.book.chapters.editions import ours_wording

    ours = ours_wording().column.lower()
    parts = []
    for source, frame in naming.items():
        n, k = len(frame), int((frame["type_macro_f1"] < frame["recall"]).sum())
        count = f"all {number_word(n)}" if k == n else f"{number_word(k)} of the {number_word(n)}"
        parts.append(f"{count} {'judges' if n > 1 else 'judge'} of {'the paper' if source == 'release' else ours}")
    return list_text(parts)


def _not_zero(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`hidden_fault_table` of judges that gave a fault and its parent different verdicts on one
    input (their paired discrimination there may still net to zero)."""
    judged = frame[frame["n_hidden"] > 0]
    paired = judged.get("paired_hidden", pd.Series(0.0, index=judged.index)).fillna(0).abs() > 1e-12
    return judged[paired | (judged.get("disagree_hidden", pd.Series(0, index=judged.index)) > 0)]


def hidden_zero_sentence(
    hidden: dict[str, pd.DataFrame], reports: dict[str, Report], verdicts: dict[str, Sequence[Verdict]]
) -> str:
    """What the outcome judges do with identical inputs, per source (rows of :func:`hidden_fault_table`): the
    paper's exact zero, or, for a judge that gives a fault and its parent different verdicts on the same input, a
    finding with its numbers (paired discrimination, pairs that part ways, answers that did not parse)."""
    findings = []
    for source, frame in hidden.items():
        for j, r in _not_zero(frame).iterrows():
            p = reports[source].judges[str(j)].paired_discrimination["hidden_from_input"]
            bad = sum(v.unparseable for v in verdicts[source] if v.judge_id == j)
            why = (
                f"; {number_word(bad)} of its verdicts were stored from answers that did not parse"
                if bad
                else "; no answer of it failed to parse, so its decoding is not deterministic"
            )
            findings.append(
                f"{_whose(source)} outcome judge {judge_name(str(j))} is not: on the {p.n} pairs its paired "
                f"discrimination is {r['paired_hidden']:+.3f}, and {number_word(p.disagree)} of them get two different "
                f"verdicts for one input{why}"
            )
    if not findings:
        return (
            "on every one of them the paired discrimination is exactly zero: greedy decoding of the same prompt "
            "returns the same verdict, so whatever recall such a judge shows on these faults is its flag rate on the "
            "clean runs"
        )
    judged = [s for s, f in hidden.items() if (f["n_hidden"] > 0).any()]
    zero = [s for s in judged if _not_zero(hidden[s]).empty]
    lead = (
        f"for {list_text([_whose(s) + ' outcome judges' for s in zero])} the paired discrimination on them is exactly "
        "zero, as greedy decoding of one prompt gives; "
        if zero
        else ""
    )
    text = (
        lead
        + "a judge that reads only the outcome should give a fault and its parent one verdict here, and "
        + ("; ".join(findings))
    )
    return text + ". Its recall on these faults is then partly chance, not what it can see"


def landing_hidden_sentence(frame: pd.DataFrame) -> str:
    """For the landing page: the fault–parent pairs with an identical outcome view that the outcome judges
    of ``TJ_DATA`` judged (this source's rows of :func:`hidden_fault_table`), and their paired zero."""
    from trajectory_judge.book.chapters.editions import ours_wording

    whose = "your" if ours_wording().own else "our"
    n, k = len(frame), int(frame["n_hidden"].sum()) if len(frame) else 0
    if k == 0:
        return (
            f"None of {whose} judges has judged a fault whose outcome view equals its clean parent's, "
            "so the paired-discrimination zero is not tested here"
        )
    who = f"{whose} outcome judge has" if n == 1 else f"{whose} {number_word(n)} outcome judges have"
    pairs = "one fault–parent pair" if k == 1 else f"{k} fault–parent pairs"
    each = "on it" if k == 1 else "on every one of them"
    off = _not_zero(frame)
    if len(off):
        values = list_text([f"{judge_name(str(j))} {r['paired_hidden']:+.3f}" for j, r in off.iterrows()])
        return (
            f"The paired-discrimination zero does not hold here: {who} judged {pairs} whose input is identical, "
            f"and identical inputs got different verdicts (paired discrimination {values}; see the analysis chapter)"
        )
    return (
        f"The paired-discrimination zero holds here too: {who} judged {pairs} whose input is identical, "
        f"and {each} the paired discrimination is exactly zero"
    )
