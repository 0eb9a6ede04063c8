"""Helpers of the chapter "Analysis" (``notebooks/analysis.md``): view deltas, the capability
floor, claims, cost ratios and confusion matrices.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

from trajectory_judge.analysis.report import Report
from trajectory_judge.book.style import family_pairs, parse_judge_id
from trajectory_judge.models import Verdict

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
            sa, sb = parse_judge_id(a), parse_judge_id(b)
            rows.append((sb.model, f"{sb.family} - {sa.family}", a, b, n, m, d.value, d.low, d.high))
    cols = ["model", "comparison", "a", "b", "n", "metric", "delta", "low", "high"]
    return pd.DataFrame(rows, columns=cols)


def floor_table(rep: Report) -> pd.DataFrame:
    """Per judge: trajectories flagged of judged, flag rate, false-alarm rate, recall, paired discrimination."""
    rows = []
    for j, jr in rep.judges.items():
        n_fault = jr.strata["silent"] + jr.strata["loud"]
        recall, far = jr.metrics["recall"], jr.metrics["false_alarm_rate"]
        flagged = round((recall or 0.0) * n_fault + (far or 0.0) * jr.strata["clean"])
        pd_all = jr.paired_discrimination["all"].value
        rows.append((j, jr.n, flagged, f"flags {flagged} of {jr.n}", flagged / jr.n, far, recall,
                     None if recall is None or far is None else recall - far, pd_all))  # fmt: skip
    cols = ["judge", "n", "flagged", "flags", "flag_rate", "false_alarm_rate", "recall", "recall_minus_far", "paired_all"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


def claim_frame(rep: Report, judges: Sequence[str]) -> pd.DataFrame:
    """Invented sentence (rows) by judge (columns): ``flagged/judged`` on ``unsupported_claim`` faults."""
    cols = {}
    for j in judges:
        tab = rep.claim_table(j)
        cols[j] = {s: f"{int(r.flagged)}/{int(r.n)}" for s, r in tab.iterrows()}
    return pd.DataFrame(cols).rename_axis("invented sentence").fillna("")


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


def confusion_figure(rep: Report, judges: Sequence[str]) -> Any:
    """Typing confusion heatmaps (true type x predicted type or missed), one panel per judge."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    ncols = min(2, max(1, len(judges)))
    nrows = max(1, math.ceil(len(judges) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.2 * ncols, 4.6 * nrows), squeeze=False)
    for ax, j in zip(axes.flat, judges):
        sns.heatmap(rep.confusion(j), annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
        ax.set_title(f"{j} (n={rep.judges[j].n})", fontsize=10)
    for ax in list(axes.flat)[len(judges) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def hidden_fault_table(rep: Report) -> pd.DataFrame:
    """Per outcome-view judge: paired discrimination on faults that do / do not reach its input, with n."""
    rows = []
    for j, jr in rep.judges.items():
        if parse_judge_id(j).view != "outcome":
            continue
        pdisc = jr.paired_discrimination
        rows.append((j, pdisc["hidden_from_input"].value, pdisc["hidden_from_input"].n,
                     pdisc["reaches_input"].value, pdisc["reaches_input"].n, jr.metrics["false_alarm_rate"]))  # fmt: skip
    cols = ["judge", "paired_hidden", "n_hidden", "paired_reaches", "n_reaches", "false_alarm_rate"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


def claim_summary(rep: Report) -> pd.DataFrame:
    """Per judge: recall on ``unsupported_claim``, false-alarm rate, and paired discrimination on that type."""
    rows = []
    for j, jr in rep.judges.items():
        p = jr.paired_discrimination["unsupported_claim"]
        rows.append((j, jr.per_type_recall["unsupported_claim"], jr.metrics["false_alarm_rate"], p.value, p.n))
    return pd.DataFrame(rows, columns=["judge", "recall", "false_alarm_rate", "paired", "n_pairs"]).set_index("judge")


def flag_all_judges(floor: pd.DataFrame) -> list[str]:
    """Judges (rows of :func:`floor_table`) that flagged every trajectory they judged."""
    return [j for j, r in floor.iterrows() if r["flagged"] == r["n"]]
