"""The report's per-judge metrics, each registered once: its name, how it is written, which way is better, how
many decimals it is printed with, and what it is (a quality axis, a share of units, a cost).

The report's metric order, the paper's main table, the quality axes, the terminal's headers, the book's labels
and the sentences of the claims register are views of :data:`REGISTRY`; a new metric is one line here (and its
computation in :mod:`~trajectory_judge.analysis.core.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Metric:
    """One per-judge metric of the report."""

    name: str
    """Its key in the report, its JSON and its tables."""
    label: str
    """As a table's header or row label in the book (``Silent recall``)."""
    words: str
    """As a sentence writes it (``silent recall``)."""
    header: str
    """As the terminal's table heads its column."""
    lower_is_better: bool = False
    """A smaller value is better (the direction every "better" reads)."""
    decimals: int = 3
    """Decimals the book prints it with."""
    quality_axis: bool = False
    """One of the quality axes on which two judges are compared."""
    main: bool = False
    """A column of the paper's main table (Table 3)."""
    proportion: bool = False
    """A share of units (faults, clean runs, flags or scored cases)."""
    cost: bool = False
    """A cost rather than a quality."""
    count: bool = False
    """A count, printed as an integer."""


_Q, _M, _P = {"quality_axis": True}, {"main": True}, {"proportion": True}
_LOWER, _COST = {"lower_is_better": True}, {"lower_is_better": True, "cost": True}

# fmt: off
REGISTRY: Mapping[str, Metric] = MappingProxyType({m.name: m for m in (
    Metric("precision", "Precision", "precision", "precision", **_P),
    Metric("recall", "Recall", "recall", "recall", **_P),
    Metric("f1", "F1", "F1", "F1", **_Q, **_M),
    Metric("silent_recall", "Silent recall", "silent recall", "silent recall", **_Q, **_M, **_P),
    Metric("loud_recall", "Loud recall", "loud recall", "loud recall", **_Q, **_M, **_P),
    Metric("false_alarm_rate", "False-alarm rate", "false-alarm rate", "false alarms", **_LOWER, **_Q, **_M, **_P),
    Metric("step_exact", "Step exact", "exact-step localisation", "step exact (n)", **_Q, **_M, **_P),
    Metric("step_exact_n", "Loc. n", "localisation cases", "n", **_M, count=True),
    Metric("step_within_one", "Step \u00b11", "localisation within one step", "step \u00b11"),
    Metric("type_macro_f1", "Type macro-F1", "type macro-F1", "type macro-F1", **_Q, **_M),
    Metric("ece", "ECE", "ECE", "ECE", **_LOWER, **_Q, **_M),
    Metric("brier", "Brier", "Brier score", "Brier", **_LOWER, **_Q),
    Metric("s_per_traj", "s / traj.", "seconds per trajectory", "s/trajectory", **_COST, **_M, decimals=1),
    Metric("prompt_tokens_mean", "Prompt tokens", "prompt tokens", "prompt tokens", **_COST, decimals=0),
    Metric("completion_tokens_mean", "Completion tokens", "completion tokens", "completion tokens", **_COST, decimals=0),
)})
# fmt: on
"""Every per-judge metric, in report order."""


@dataclass(frozen=True)
class Statistic:
    """One per-judge statistic beyond the paper's metrics (:mod:`~trajectory_judge.analysis.core.judge_statistics`)."""

    name: str
    """Its key in the report, its JSON and its tables."""
    label: str
    """As a table's row label in the book."""
    header: str
    """As the terminal's table heads its column."""
    reference: str = ""
    """The value it is read against (empty when it is not read against one)."""
    lower_is_better: bool = False
    """A smaller value is better."""
    sklearn: bool = False
    """Its point value is scikit-learn's."""
    delta: bool = False
    """Compared between judges as a paired delta."""


_SK = {"sklearn": True, "delta": True}

# fmt: off
STATISTIC_REGISTRY: Mapping[str, Statistic] = MappingProxyType({s.name: s for s in (
    Statistic("auroc", "AUROC", "AUROC", "0.5 (random ranking)", **_SK),
    Statistic("auroc_tied_pairs", "Tied pairs", "tied pairs"),
    Statistic("auroc_ties_against", "AUROC, ties against", "AUROC, ties against"),
    Statistic("auroc_ties_for", "AUROC, ties for", "AUROC, ties for"),
    Statistic("auprc", "AUPRC", "AUPRC", "the prevalence of faults", **_SK),
    Statistic("prevalence", "AUPRC reference", "AUPRC ref."),
    Statistic("kappa", "Cohen's κ", "Cohen's κ", "0 (chance agreement; flagging everything)", **_SK),
    Statistic("mcc", "MCC", "MCC", "0 (flagging everything)", **_SK),
    Statistic("balanced_accuracy", "Balanced accuracy", "balanced accuracy", "0.5 (flagging everything)", **_SK),
    Statistic("aurc", "AURC (lower is better)", "AURC (lower better)", lower_is_better=True, delta=True),
    Statistic("e_aurc", "E-AURC (lower is better)", "E-AURC (lower better)", lower_is_better=True, delta=True),
)})
# fmt: on
"""Every per-judge statistic but the recall and risk at each coverage, in report order."""


def metric_names(**having: bool) -> tuple[str, ...]:
    """The registered metrics, in report order, whose flags are as given: ``metric_names(quality_axis=True)``."""
    return tuple(m.name for m in REGISTRY.values() if all(getattr(m, k) == v for k, v in having.items()))


def statistic_names(**having: bool) -> tuple[str, ...]:
    """The registered statistics, in report order, whose flags are as given: ``statistic_names(delta=True)``."""
    return tuple(s.name for s in STATISTIC_REGISTRY.values() if all(getattr(s, k) == v for k, v in having.items()))


def label_of(name: str) -> str:
    """How the book labels a registered metric or statistic."""
    return (REGISTRY.get(name) or STATISTIC_REGISTRY[name]).label


__all__ = ["REGISTRY", "STATISTIC_REGISTRY", "Metric", "Statistic", "label_of", "metric_names", "statistic_names"]
