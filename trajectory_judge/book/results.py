"""Helpers of the chapter "Results" (``notebooks/results.md``): the main and per-type tables,
recall and reliability figures, the confidence tables.

Every helper works for any set of judges found in the data.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from trajectory_judge.analysis.report import MAIN_COLUMNS, Report
from trajectory_judge.book.style import (
    _missing,
    format_interval,
    judge_label,
    parse_judge_id,
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


def main_table(rep: Report) -> pd.DataFrame:
    """The main table as text: each quality metric with its interval, the localisation denominator, cost."""
    rows = {}
    for j, jr in rep.judges.items():
        row: dict[str, Any] = {"n": jr.n}
        for m in MAIN_COLUMNS:
            if m == "step_exact_n":
                row["loc. n"] = "" if _missing(jr.metrics[m]) else str(int(jr.metrics[m]))  # type: ignore[arg-type]
            elif m == "s_per_traj":
                row["s/traj"] = "n/a" if _missing(jr.metrics[m]) else f"{jr.metrics[m]:.2f}"
            else:
                row[m] = _cell(rep, j, m)
        rows[j] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("judge")


def per_type_table(rep: Report) -> pd.DataFrame:
    """Recall per failure type with intervals (rows) by judge (columns), and the false-alarm anchor row."""
    data = {j: [*(_cell(rep, j, f"recall:{t}") for t in FAILURE_TYPES), _cell(rep, j, "false_alarm_rate")] for j in rep.judges}
    return pd.DataFrame(data, index=pd.Index([*FAILURE_TYPES, "false alarms on clean"], name="failure type"))


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
def recall_figure(rep: Report) -> Any:
    """Silent and loud recall per judge with intervals, and each judge's false-alarm rate as a red x."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    df = recall_frame(rep)
    df["label"] = [judge_label(j, rep.judges[j].n) for j in df["judge"]]
    order = list(dict.fromkeys(df["label"]))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(order)), 4.4))
    sns.barplot(df, x="label", y="recall", hue="stratum", hue_order=["silent", "loud"], order=order, ax=ax, palette="deep")
    for container, s in zip(ax.containers, ["silent", "loud"]):
        sub = df[df["stratum"] == s].set_index("label")
        for bar, lab in zip(container, order):
            if lab in sub.index:
                r = sub.loc[lab]
                x = bar.get_x() + bar.get_width() / 2
                ax.errorbar(x, r["recall"], yerr=[[r["recall"] - r["low"]], [r["high"] - r["recall"]]], color="black", capsize=3, lw=1)
    far = df.drop_duplicates("label").set_index("label")["false_alarm_rate"].reindex(order)
    ax.scatter(range(len(order)), far, marker="x", s=90, color="red", zorder=5, label="false-alarm rate")
    ax.set(xlabel="", ylabel="recall", ylim=(0, 1.05))
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def reliability_figure(rep: Report) -> Any:
    """Observed accuracy against stated confidence per bin; marker area proportional to the bin's share.

    The rule engine is drawn hollow: its confidences are hand-set constants, not a measurement.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(7.0, 6.2))
    colors = sns.color_palette("deep", len(rep.judges))
    ax.plot([0.5, 1.0], [0.5, 1.0], ls="--", color="grey", lw=1, label="perfect calibration")
    for color, (j, jr) in zip(colors, rep.judges.items()):
        bins = rep.calibration_bins(j)
        bins = bins[bins["n"] > 0]
        hollow = not parse_judge_id(j).is_llm
        ax.scatter(bins["confidence"], bins["accuracy"], s=800 * bins["n"] / jr.n, alpha=0.8, linewidths=1.5,
                   facecolors="none" if hollow else color, edgecolors=color, label=f"{j} (n={jr.n})")  # fmt: skip
    ax.set(xlabel="stated confidence (bin mean)", ylabel="observed accuracy", xlim=(0.45, 1.02), ylim=(-0.02, 1.05))
    leg = ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False, fontsize=8)
    for h in leg.legend_handles:
        if hasattr(h, "set_sizes"):
            h.set_sizes([40])
    fig.tight_layout()
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
