"""Helpers of the chapter "Results" (``notebooks/results.md``): the main and per-type tables,
recall and reliability figures, the confidence tables.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.baselines import own_anchor_clause
from trajectory_judge.analysis.core.paired import type_anchor
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.book.render.figures import FALSE_ALARM, MIN_FONT_PT, PHONE_WIDTH_IN, judge_style
from trajectory_judge.book.render.style import (
    MARKS,
    _missing,
    format_interval,
    format_number,
    judge_name,
    list_text,
    number_word,
    plural,
    source_name,
    with_source,
)
from trajectory_judge.book.render.tables import BookTable
from trajectory_judge.models import TESTBED_FAILURE_TYPES, JudgeSpec
from trajectory_judge.provenance.computed import computes


def _cell(rep: Report, judge: str, metric: str) -> str:
    jr = rep.judges[judge]
    if metric.startswith("recall:"):
        t = metric.split(":", 1)[1]
        iv = jr.per_type_intervals.get(t)
        value = jr.per_type_recall.get(t)  # a type the folder does not have: "–"
    else:
        iv, value = jr.intervals.get(metric), jr.metrics[metric]
    return format_interval(value, iv.low if iv else None, iv.high if iv else None, iv.method if iv else None)


AXES: dict[str, tuple[str, ...]] = {
    "detection": ("n", "silent_recall", "loud_recall", "false_alarm_rate"),
    "localisation": ("f1", "step_exact_n", "step_exact", "type_macro_f1"),
    "calibration": ("ece", "s_per_traj"),
}
"""The main table's columns, split by axis so each part fits the text column: detection by outcome
survival; F1, localisation and typing; calibration and cost."""


def _main_row(rep: Report, judge: str, columns: tuple[str, ...]) -> dict[str, Any]:
    jr = rep.judges[judge]
    row: dict[str, Any] = {}
    for m in columns:
        if m == "n":
            row[m] = jr.n
        elif m in ("step_exact_n", "s_per_traj"):
            v = jr.metrics[m]
            row[m] = None if v is None or _missing(v) else float(v)
        else:
            row[m] = _cell(rep, judge, m)
    return row


@computes
def main_table(reports: dict[str, Report], axis: str, *, baselines: bool = False) -> pd.DataFrame:
    """One axis of the main table (:data:`AXES`) for every judge of every report, grouped by source
    (``release``, ``edition``): metrics as ``value (low–high)``, counts and seconds as numbers.
    With ``baselines``, the rows of :func:`baseline_rows` follow as reference."""
    columns = AXES[axis]
    parts = []
    for source, rep in reports.items():
        rows = {j: _main_row(rep, j, columns) for j in rep.judges}
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(columns)).rename_axis("judge")
        parts.append(with_source(frame, source))
    if baselines:
        parts.append(baseline_rows(reports, columns))
    return pd.concat(parts)


BASELINE_NAMES: dict[str, str] = {"flag everything": "Flag everything", "flag nothing": "Flag nothing"}
"""The baselines as row labels."""


@computes
def baseline_rows(reports: dict[str, Report], columns: tuple[str, ...]) -> pd.DataFrame:
    """Flag everything and flag nothing as reference rows under ``columns`` (their detection metrics,
    marked structural: fixed by the design; ``–`` elsewhere), once when every report has the same
    design, else once per source."""
    groups: dict[str, Report] = {}
    for source, rep in reports.items():
        if not any(other.baselines == rep.baselines for other in groups.values()):
            groups[source] = rep
    parts = []
    for source, rep in groups.items():
        rows = {}
        for b in rep.baselines:
            rows[BASELINE_NAMES[b.name]] = {m: b.n if m == "n" else _baseline_cell(b.metrics.get(m)) for m in columns}
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(columns)).rename_axis("judge")
        name = "Baselines" if len(groups) == 1 else f"Baselines ({source_name(source)})"
        parts.append(with_source(frame, name))
    return pd.concat(parts)


def _baseline_cell(value: float | None) -> str | None:
    return None if value is None else format_interval(value, value, value, "structural")


def baseline_design(rep: Report) -> str:
    """What the baselines score on ``rep``'s design, in words (for a sentence of the chapter)."""
    every, nothing = (next(b for b in rep.baselines if b.flags is f) for f in (True, False))
    clean = every.n - every.faults
    return (
        f"On this design ({plural(every.faults, 'fault')} and {plural(clean, 'clean run')}) a judge that "
        f"flags every trajectory has recall {format_number(every.metrics['recall'])} and F1 "
        f"{format_number(every.metrics['f1'])} without detecting anything, at a false-alarm rate of "
        f"{format_number(every.metrics['false_alarm_rate'])}; one that flags nothing has recall and F1 "
        f"{format_number(nothing.metrics['f1'])}"
    )


def our_headline(rep: Report) -> str:
    """The headline's counterpart in the verdicts beside the paper's, named as the tables name them."""
    from trajectory_judge.book.chapters.editions import ours_wording
    from trajectory_judge.book.render.claim_text import edition_headline

    return edition_headline(rep, ours_wording().column)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def summary_phrases(claims: Any, rep: Report) -> dict[str, str]:
    """The sentences the chapter's opening says the claims and our headline with, by glue name:
    ``edition_headline`` (with its lower-case ``_lower`` form), and the register's verdicts on the abstract's claims
    (``abstract_verdict``, which the landing page repeats) and on the results section's (``results_verdict``), each
    written by :func:`~trajectory_judge.book.render.claim_summary.summary_sentence` from the register's tally."""
    from trajectory_judge.book.render.claim_summary import summary_sentence, tally

    ours = our_headline(rep)
    return {
        "edition_headline": ours + ".",
        "edition_headline_lower": _lower_first(ours),
        "abstract_verdict": summary_sentence(tally(claims, "abstract")) + ".",
        "results_verdict": summary_sentence(tally(claims, "results")) + ".",
    }


def anchor_rule(rep: Report) -> str:
    """The rule an F1 is read by, with the anchor of every judge that judged only part of the design."""
    every = next(b for b in rep.baselines if b.flags)
    text = (
        "An F1 is evidence of detection only above that of flagging everything on the same trajectories "
        f"({format_number(every.metrics['f1'])} on the whole design"
    )
    clause = own_anchor_clause(rep.anchor_reading(), name=judge_name, number=format_number)
    return text + (f"; {clause})" if clause else ")")


def above_baseline(rep: Report, whose: str) -> str:
    """A sentence: which of ``rep``'s judges (``whose``: "the paper's", "our") have an F1 above that of
    flagging everything on the trajectories each judged, with their F1; when none does, the highest F1."""
    reading = rep.anchor_reading()
    f1 = {j: v for j, v in reading.f1.items() if not _missing(v)}
    above = [j for j in reading.above if j in f1]
    n, k = len(f1), len(above)
    if n == 1:
        ((j, v),) = f1.items()
        return f"{whose.capitalize()} one judge, {judge_name(j)}, {'exceeds' if k else 'does not exceed'} it (F1 {format_number(v)})"
    named = list_text([f"{judge_name(j)} at {format_number(f1[j])}" for j in above])
    if not above:
        best = max(f1, key=f1.__getitem__)
        return (
            f"Of {whose} {number_word(n, 12)} judges, none exceeds it (the highest F1 is that of {judge_name(best)}, "
            f"{format_number(f1[best])})"
        )
    if k == n:
        return f"Of {whose} {number_word(n, 12)} judges, all {number_word(n, 12)} exceed it ({named})"
    return (
        f"Of {whose} {number_word(n, 12)} judges, {number_word(k, 12)} {'exceeds' if k == 1 else 'exceed'} it ({named})"
    )


TYPE_GROUPS: tuple[tuple[str, ...], ...] = (TESTBED_FAILURE_TYPES[:3], TESTBED_FAILURE_TYPES[3:])
"""The testbed's failure types in two groups of three, one per-type table each."""


def testbed_typed(reports: dict[str, Report]) -> dict[str, Report]:
    """The reports whose failure types are the testbed's (the paper's always; a folder with types of its own gets a
    table of its own, :func:`own_type_groups`)."""
    return {s: r for s, r in reports.items() if set(r.types) <= set(TESTBED_FAILURE_TYPES)}


def own_type_groups(rep: Report, size: int = 3) -> tuple[tuple[str, ...], ...]:
    """A folder's own failure types in tables of ``size``; none when its types are the testbed's."""
    if set(rep.types) <= set(TESTBED_FAILURE_TYPES):
        return ()
    return tuple(rep.types[i : i + size] for i in range(0, len(rep.types), size))


def own_types_caption(types: Sequence[str], described: Mapping[str, str]) -> str:
    """The caption of a table of a folder's own failure types: each named with its ``fault_types.json``
    description when it has one."""
    from trajectory_judge.book.render.style import label

    def name(t: str) -> str:
        return f"{label(t)} ({described[t].rstrip('.')})" if t in described else label(t)

    return (
        "Recall on your folder's own failure types, with its 95% interval, and under it the share of that type's "
        "clean parents the judge flagged: " + "; ".join(name(t) for t in types) + "."
    )


ANCHOR_ROW = "Its clean parents flagged"
"""The row under each judge's per-type recalls: the flag rate on the clean parents of that type's
faults (:func:`~trajectory_judge.analysis.core.paired.type_anchor`), which the recall above it is read against."""


@computes
def per_type_table(reports: dict[str, Report], types: tuple[str, ...]) -> pd.DataFrame:
    """Recall on each of ``types`` with its interval and, in the row under it, the type's anchor
    (:data:`ANCHOR_ROW`: the judge's flag rate on the clean parents of that type's faults), for every
    judge of every report, grouped by source."""
    parts = []
    for source, rep in reports.items():
        rows = {}
        for j, jr in rep.judges.items():
            rows[(j, "recall")] = [_cell(rep, j, f"recall:{t}") for t in types]
            rows[(j, ANCHOR_ROW)] = [format_number(type_anchor(jr.paired_discrimination, t), 3) for t in types]
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(types))
        frame.index = pd.MultiIndex.from_tuples(list(rows), names=["judge", "row"])
        parts.append(with_source(frame, source))
    return pd.concat(parts)


def anchor_example(rep: Report, judge: str, whose: str) -> str:
    """A sentence: the failure types on which ``judge``'s anchor is highest and lowest, against its
    overall false-alarm rate (``whose``: "the paper's")."""
    from trajectory_judge.book.render.style import label

    jr = rep.judges[judge]
    found = {t: type_anchor(jr.paired_discrimination, t) for t in rep.types}
    anchors = {t: a for t, a in found.items() if a is not None}
    hi, lo = max(anchors, key=anchors.__getitem__), min(anchors, key=anchors.__getitem__)
    return (
        f"{whose} {judge_name(judge).partition(' · ')[0].lower()} judge on {judge_name(judge).partition(' · ')[2]} flags "
        f"{format_number(anchors[hi], 3)} of the clean parents of {label(hi).lower()} faults and "
        f"{format_number(anchors[lo], 3)} of those of {label(lo).lower()} faults, against a false-alarm rate of "
        f"{format_number(jr.metrics['false_alarm_rate'], 3)} on all clean runs"
    )


# --- long frames for the figures -------------------------------------------------------------
@computes
def recall_frame(rep: Report) -> pd.DataFrame:
    """Per judge and outcome stratum (silent, loud): recall, interval, false-alarm rate and n."""
    rows = []
    for j, jr in rep.judges.items():
        far = jr.metrics["false_alarm_rate"]
        for s in ("silent", "loud"):
            m = f"{s}_recall"
            v, iv = jr.metrics[m], jr.intervals.get(m)
            if _missing(v):
                continue
            rows.append((j, s, v, iv.low if iv else v, iv.high if iv else v, far, jr.strata[s]))
    return pd.DataFrame(rows, columns=["judge", "stratum", "recall", "low", "high", "false_alarm_rate", "n"])


# --- figures ---------------------------------------------------------------------------------
def _two_line_name(judge: str, n: int) -> str:
    """A judge's name on lines (family, model and size), and the trajectories it judged."""
    head, _, tail = judge_name(judge).partition(" \u00b7 ")
    return f"{head}\n{tail}\nn = {n}" if tail else f"{head}\nn = {n}"


@computes
def recall_figure(rep: Report) -> Any:
    """Silent (filled) and loud (hatched) recall per judge, one row per judge in the judge's colour,
    with 95% intervals, and each judge's false-alarm rate as a black cross; drawn narrow enough to be
    read on a phone, with the legend above the data."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    df = recall_frame(rep)
    order = list(dict.fromkeys(df["judge"]))
    fig, ax = plt.subplots(figsize=(PHONE_WIDTH_IN, 0.62 * len(order) + 1.3))
    for i, j in enumerate(order):
        colour = judge_style(j)["color"]
        for k, s in enumerate(("silent", "loud")):
            r = df[(df["judge"] == j) & (df["stratum"] == s)]
            if r.empty:
                continue
            r = r.iloc[0]
            y = i + (k - 0.5) * 0.38
            silent = s == "silent"
            ax.barh(y, r["recall"], height=0.36, color=colour, alpha=1.0 if silent else 0.45,
                    hatch=None if silent else "//", edgecolor="black", linewidth=0.6)  # fmt: skip
            xerr = [[r["recall"] - r["low"]], [r["high"] - r["recall"]]]
            ax.errorbar(r["recall"], y, xerr=xerr, color="black", capsize=3, lw=1)
        far = rep.judges[j].metrics["false_alarm_rate"]
        x = math.nan if far is None else far  # no clean run, no rate: the cross is not drawn
        ax.scatter(x, i, s=70, zorder=5, color=FALSE_ALARM["color"], marker=FALSE_ALARM["marker"])
    ax.set_yticks(range(len(order)), [_two_line_name(j, rep.judges[j].n) for j in order])
    ax.invert_yaxis()
    ax.set(xlim=(0, 1.02))
    ax.set_xlabel("Recall (false-alarm rate for the cross)", loc="right")  # spills left, not past the edge
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    handles = [
        Patch(facecolor="grey", edgecolor="black", label="Silent faults"),
        Patch(facecolor="grey", alpha=0.45, hatch="//", edgecolor="black", label="Loud faults"),
        plt.Line2D([], [], color="black", marker="x", ls="", markersize=8, label=FALSE_ALARM["label"]),
    ]
    fig.legend(handles=handles, loc="outside upper center", ncol=2, columnspacing=1.0, handlelength=1.4)  # above
    return fig


@computes
def reliability_figure(rep: Report) -> Any:
    """Observed accuracy against stated confidence per bin, one colour and marker per judge; marker
    area proportional to the bin's share. The rule engine is drawn hollow: its confidences are
    hand-set constants, not a measurement. The legend sits below the axes, in one column."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(PHONE_WIDTH_IN, 3.9 + 0.2 * len(rep.judges)))
    same_n = len({jr.n for jr in rep.judges.values()}) == 1  # then n is said once, as the legend's title
    ax.plot([0.5, 1.0], [0.5, 1.0], ls="--", color="grey", lw=1, label="Perfect calibration")
    for j, jr in rep.judges.items():
        bins = rep.calibration_bins(j)
        bins = bins[bins["n"] > 0]
        st = judge_style(j)
        hollow = not JudgeSpec.parse(j).is_llm
        ax.scatter(
            bins["confidence"],
            bins["accuracy"],
            s=500 * bins["n"] / jr.n,
            alpha=0.75,
            linewidths=1.5,
            marker=st["marker"],
            facecolors="none" if hollow else st["color"],
            edgecolors=st["color"],
            label=st["label"] if same_n else f"{st['label']} (n = {jr.n})",
        )
    ax.set(xlabel="Stated confidence (bin mean)", ylabel="Observed accuracy", xlim=(0.45, 1.02), ylim=(-0.02, 1.05))
    handles, names = ax.get_legend_handles_labels()
    title = f"Each judge: n = {next(iter(rep.judges.values())).n}" if same_n and rep.judges else None
    names = [textwrap.fill(n, 40, subsequent_indent="  ") for n in names]
    leg = fig.legend(handles, names, loc="outside lower center", ncol=1, title=title, title_fontsize=MIN_FONT_PT)
    for h in leg.legend_handles:
        if h is not None and hasattr(h, "set_sizes"):
            h.set_sizes([40])
    return fig


@computes
def signal_table(rep: Report) -> pd.DataFrame:
    """Per judge: false-alarm rate, silent and loud recall minus it, and the failure types on which
    it flags the faults more often than their clean parents (paired discrimination above zero).

    A recall at or below the flag rate on the same clean runs is the judge's willingness to say
    *faulty*, not detection.
    """
    rows = []
    for j, jr in rep.judges.items():
        far = jr.metrics["false_alarm_rate"]
        pdisc = jr.paired_discrimination
        above = [t for t in rep.types if t in pdisc and (v := pdisc[t].value) is not None and v > 0]
        sil, loud = jr.metrics["silent_recall"], jr.metrics["loud_recall"]
        sil_far, loud_far = (None if r is None or far is None else r - far for r in (sil, loud))
        rows.append((j, jr.n, far, sil_far, loud_far, len(above), ", ".join(above)))
    cols = ["judge", "n", "false_alarm_rate", "silent_minus_far", "loud_minus_far", "types_above_anchor", "which"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


@computes
def confidence_table(rep: Report) -> pd.DataFrame:
    """Per judge: distinct confidences stated, the most frequent one and the share of verdicts at it."""
    rows = []
    for j, jr in rep.judges.items():
        sup = rep.confidence_support(j)
        top = sup.idxmax() if len(sup) else None
        rows.append((j, jr.n, len(sup), top, sup.max() / sup.sum() if len(sup) else None))
    return pd.DataFrame(rows, columns=["judge", "n", "distinct", "most_frequent", "share_at_most_frequent"]).set_index(
        "judge"
    )


@computes
def signal_summary(reports: dict[str, Report]) -> pd.DataFrame:
    """Per source and judge: n and the number of failure types on which it flags the faults more
    often than their clean parents."""
    parts = []
    for source, rep in reports.items():
        sig = signal_table(rep)[["n", "types_above_anchor"]]
        parts.append(
            with_source(sig.rename(columns={"types_above_anchor": "Types flagged above their clean parents"}), source)
        )
    return pd.concat(parts)


@computes
def confidence_summary(reports: dict[str, Report]) -> pd.DataFrame:
    """:func:`confidence_table` of every report, grouped by source, with headers in words."""
    names = {
        "distinct": "Distinct values",
        "most_frequent": "Most frequent",
        "share_at_most_frequent": "Share at the most frequent",
    }
    parts = [with_source(confidence_table(rep).rename(columns=names), source) for source, rep in reports.items()]
    return pd.concat(parts)


def no_signal_clause(sig: pd.DataFrame) -> str:
    """How many judges' silent recall does not exceed their false-alarm rate, and which (by name)."""
    names = [judge_name(j) for j in sig.index[sig["silent_minus_far"] <= 0]]
    if not names:
        return "no judge has silent recall at or below its false-alarm rate"
    if len(names) == 1:
        return f"for one, {names[0]}, silent recall does not exceed the false-alarm rate"
    return f"for {len(names)} judges silent recall does not exceed the false-alarm rate ({list_text(names)})"


_NOTES = re.compile(r'<p class="tj-table-notes">(.*?)\.</p>\n')


def notes_once(tables: list[BookTable]) -> list[BookTable]:
    """A group of tables with the marks' notes said once, under the last table of the group: each
    table loses its own notes line and the last one carries every mark any of them uses."""
    items: list[str] = []
    for t in tables:
        for m in _NOTES.finditer(t.html):
            items += [i for i in m.group(1).split("; ") if i not in items]
    order = {m: k for k, m in enumerate(MARKS)}
    items.sort(key=lambda i: order.get(i.split(" ", 1)[0], len(order)))
    out = [BookTable(_NOTES.sub("", t.html), t.name, t.caption) for t in tables]
    if items and out:
        last = out[-1]
        note = f'<p class="tj-table-notes">{"; ".join(items)}.</p>\n'
        out[-1] = BookTable(last.html[: last.html.rindex("</div>")] + note + "</div>\n", last.name, last.caption)
    return out
