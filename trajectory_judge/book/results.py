"""Helpers of the chapter "Results" (``notebooks/results.md``): the main and per-type tables,
recall and reliability figures, the confidence tables.

Every helper works for any set of judges found in the data.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from trajectory_judge.analysis.report import Report
from trajectory_judge.book.figures import FALSE_ALARM, PHONE_WIDTH_IN, judge_style
from trajectory_judge.book.style import (
    _missing,
    format_interval,
    judge_name,
    list_text,
    parse_judge_id,
    plural,
    with_source,
)
from trajectory_judge.models import FAILURE_TYPES


def _cell(rep: Report, judge: str, metric: str) -> str:
    jr = rep.judges[judge]
    if metric.startswith("recall:"):
        t = metric.split(":", 1)[1]
        iv = jr.per_type_intervals.get(t)
        value = jr.per_type_recall[t]
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
            row[m] = None if _missing(jr.metrics[m]) else float(jr.metrics[m])  # type: ignore[arg-type]
        else:
            row[m] = _cell(rep, judge, m)
    return row


def main_table(reports: dict[str, Report], axis: str) -> pd.DataFrame:
    """One axis of the main table (:data:`AXES`) for every judge of every report, grouped by source
    (``release``, ``edition``): metrics as ``value (low–high)``, counts and seconds as numbers."""
    columns = AXES[axis]
    parts = []
    for source, rep in reports.items():
        rows = {j: _main_row(rep, j, columns) for j in rep.judges}
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(columns)).rename_axis("judge")
        parts.append(with_source(frame, source))
    return pd.concat(parts)


TYPE_GROUPS: tuple[tuple[str, ...], ...] = (FAILURE_TYPES[:3], FAILURE_TYPES[3:])
"""The failure types in two groups of three, one per-type table each (each with the false-alarm anchor)."""


def per_type_table(reports: dict[str, Report], types: tuple[str, ...]) -> pd.DataFrame:
    """Recall on each of ``types`` with its interval, and the false-alarm rate on clean runs (last
    column, the anchor each row is read against), for every judge of every report, grouped by source."""
    parts = []
    for source, rep in reports.items():
        rows = {j: [*(_cell(rep, j, f"recall:{t}") for t in types), _cell(rep, j, "false_alarm_rate")] for j in rep.judges}
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=[*types, "false_alarm_rate"]).rename_axis("judge")
        parts.append(with_source(frame, source))
    return pd.concat(parts)


# --- long frames for the figures -------------------------------------------------------------
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
            ax.barh(y, r["recall"], height=0.36, color=colour, alpha=1.0 if s == "silent" else 0.45,
                    hatch=None if s == "silent" else "//", edgecolor="black", linewidth=0.6)  # fmt: skip
            ax.errorbar(r["recall"], y, xerr=[[r["recall"] - r["low"]], [r["high"] - r["recall"]]], color="black", capsize=3, lw=1)
        ax.scatter(rep.judges[j].metrics["false_alarm_rate"], i, s=70, zorder=5, color=FALSE_ALARM["color"], marker=FALSE_ALARM["marker"])
    ax.set_yticks(range(len(order)), [_two_line_name(j, rep.judges[j].n) for j in order])
    ax.invert_yaxis()
    ax.set(xlabel="Recall (false-alarm rate for the cross)", xlim=(0, 1.02))
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    handles = [Patch(facecolor="grey", edgecolor="black", label="Silent faults"),
               Patch(facecolor="grey", alpha=0.45, hatch="//", edgecolor="black", label="Loud faults"),
               plt.Line2D([], [], color="black", marker="x", ls="", markersize=8, label=FALSE_ALARM["label"])]  # fmt: skip
    fig.legend(handles=handles, loc="outside upper center", ncol=3, columnspacing=1.0, handlelength=1.4)  # above the data
    return fig


def reliability_figure(rep: Report) -> Any:
    """Observed accuracy against stated confidence per bin, one colour and marker per judge; marker
    area proportional to the bin's share. The rule engine is drawn hollow: its confidences are
    hand-set constants, not a measurement. The legend sits below the axes, in one column."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(PHONE_WIDTH_IN, 3.9 + 0.2 * len(rep.judges)))
    ax.plot([0.5, 1.0], [0.5, 1.0], ls="--", color="grey", lw=1, label="Perfect calibration")
    for j, jr in rep.judges.items():
        bins = rep.calibration_bins(j)
        bins = bins[bins["n"] > 0]
        st = judge_style(j)
        hollow = not parse_judge_id(j).is_llm
        ax.scatter(bins["confidence"], bins["accuracy"], s=500 * bins["n"] / jr.n, alpha=0.75, linewidths=1.5, marker=st["marker"],
                   facecolors="none" if hollow else st["color"], edgecolors=st["color"], label=f"{st['label']} (n = {jr.n})")  # fmt: skip
    ax.set(xlabel="Stated confidence (bin mean)", ylabel="Observed accuracy", xlim=(0.45, 1.02), ylim=(-0.02, 1.05))
    leg = fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=1)
    for h in leg.legend_handles:
        if hasattr(h, "set_sizes"):
            h.set_sizes([40])
    return fig


def signal_table(rep: Report) -> pd.DataFrame:
    """Per judge: false-alarm rate, silent and loud recall minus it, and the failure types whose recall exceeds it.

    Recall at or below a judge's false-alarm rate is its willingness to say *faulty*, not detection.
    """
    rows = []
    for j, jr in rep.judges.items():
        far = jr.metrics["false_alarm_rate"]
        above = [t for t, r in jr.per_type_recall.items() if r is not None and far is not None and r > far]
        sil, loud = jr.metrics["silent_recall"], jr.metrics["loud_recall"]
        rows.append((j, jr.n, far, None if sil is None or far is None else sil - far,
                     None if loud is None or far is None else loud - far, len(above), ", ".join(above)))  # fmt: skip
    cols = ["judge", "n", "false_alarm_rate", "silent_minus_far", "loud_minus_far", "types_above_far", "which"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


def confidence_table(rep: Report) -> pd.DataFrame:
    """Per judge: distinct confidences stated, the most frequent one and the share of verdicts at it."""
    rows = []
    for j, jr in rep.judges.items():
        sup = rep.confidence_support(j)
        top = sup.idxmax() if len(sup) else None
        rows.append((j, jr.n, len(sup), top, sup.max() / sup.sum() if len(sup) else None))
    return pd.DataFrame(rows, columns=["judge", "n", "distinct", "most_frequent", "share_at_most_frequent"]).set_index("judge")


def signal_summary(reports: dict[str, Report]) -> pd.DataFrame:
    """Per source and judge: n, false-alarm rate and the number of failure types whose recall exceeds it."""
    parts = []
    for source, rep in reports.items():
        sig = signal_table(rep)[["n", "false_alarm_rate", "types_above_far"]]
        parts.append(with_source(sig.rename(columns={"types_above_far": "Types above the false-alarm rate"}), source))
    return pd.concat(parts)


def confidence_summary(reports: dict[str, Report]) -> pd.DataFrame:
    """:func:`confidence_table` of every report, grouped by source, with headers in words."""
    names = {"distinct": "Distinct values", "most_frequent": "Most frequent", "share_at_most_frequent": "Share at the most frequent"}
    parts = [with_source(confidence_table(rep).rename(columns=names), source) for source, rep in reports.items()]
    return pd.concat(parts)


def no_signal_clause(sig: pd.DataFrame) -> str:
    """How many judges' silent recall does not exceed their false-alarm rate, and which (by name)."""
    names = [judge_name(j) for j in sig.index[sig["silent_minus_far"] <= 0]]
    head = f"for {plural(len(names), 'judge')} silent recall does not exceed the false-alarm rate"
    return head + (f" ({list_text(names)})" if names else "")
