"""What a judge's flags are worth at another share of faulty runs than the design's.

Recall (the share of faults flagged) and the false-alarm rate (the share of clean runs flagged) do not depend
on how many of the judged runs are faulty; precision, F1, Cohen's kappa and MCC do. The testbed plants three
faults for every clean run, far more than a deployed agent makes, so those four statistics as the report gives
them hold at the design's prevalence only. :func:`at_prevalence` recomputes them at a prevalence ``p`` from
the judge's recall and false-alarm rate, replicate by replicate of the report's bootstrap, so each keeps an
interval:

    TP = recall * p, FN = (1 - recall) * p, FP = far * (1 - p), TN = (1 - far) * (1 - p)

and the statistics of that expected confusion matrix. AUPRC needs the judge's ranking, not only its flags:
given the trajectories and verdicts, each faulty run is weighed ``p / (faulty runs)`` and each clean run
``(1 - p) / (clean runs)`` (scikit-learn's ``average_precision_score`` with those sample weights), on the
report's own resamples; a judge that ranks at random reaches ``p``. Recall itself is averaged over the
design's mix of failure types; a deployment with another mix moves it too, which this does not model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from trajectory_judge.analysis.core.bootstrap import BootstrapResult
from trajectory_judge.analysis.core.confusion import confusion_statistics
from trajectory_judge.analysis.core.intervals import Interval, rounded
from trajectory_judge.analysis.core.report import Report

if TYPE_CHECKING:
    import pandas as pd

    from trajectory_judge.models import Trajectory, Verdict

STATISTICS: tuple[str, ...] = ("precision", "f1", "kappa", "mcc")
"""The statistics :func:`at_prevalence` recomputes from recall and the false-alarm rate: the ones the share of
faulty runs moves."""

RANKING: tuple[str, ...] = ("auprc",)
"""What :func:`at_prevalence` adds when it is given the verdicts: the ranking's statistic the share moves."""


def expected_statistics(recall: np.ndarray, far: np.ndarray, p: float) -> dict[str, np.ndarray]:
    """The statistics of the expected confusion matrix at prevalence ``p`` (elementwise); MCC is undefined (NaN,
    left out of the intervals) for a judge that flags everything or nothing."""
    return confusion_statistics(recall * p, far * (1 - p), (1 - recall) * p, (1 - far) * (1 - p), constant_mcc=math.nan)


@dataclass(frozen=True)
class AtPrevalence:
    """One judge's prevalence-dependent statistics at one prevalence, with percentile intervals."""

    judge: str
    prevalence: float
    values: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]


@dataclass(frozen=True)
class Deployment:
    """Every judge's statistics at ``prevalence`` (:data:`STATISTICS`, and :data:`RANKING` when the verdicts were
    given), beside the design's own prevalence."""

    prevalence: float
    design_prevalence: float
    judges: tuple[AtPrevalence, ...]
    level: float
    statistics: tuple[str, ...] = STATISTICS
    """What each judge has: :data:`STATISTICS`, and :data:`RANKING` when the verdicts were given."""

    @property
    def chance_auprc(self) -> float:
        """The AUPRC of a judge that ranks at random at :attr:`prevalence`: the prevalence itself."""
        return self.prevalence

    def to_dict(self) -> dict[str, Any]:
        """``report --json``'s ``at_prevalence``: the prevalence, the folder's, and per judge each statistic's value
        and interval."""
        return {
            "prevalence": self.prevalence,
            "folder_prevalence": round(self.design_prevalence, 6),
            **({"chance_auprc": self.chance_auprc} if "auprc" in self.statistics else {}),
            "judges": {
                j.judge: {
                    s: {"value": rounded(j.values[s]), **Interval(j.low[s], j.high[s]).to_dict()}
                    for s in self.statistics
                }
                for j in self.judges
            },
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per judge and statistic: value and interval."""
        import pandas as pd

        rows = [
            {"judge": j.judge, "statistic": s, "value": j.values[s], "low": j.low[s], "high": j.high[s]}
            for j in self.judges
            for s in self.statistics
        ]
        return pd.DataFrame(rows)


def at_prevalence(
    rep: Report,
    prevalence: float,
    judges: Sequence[str] | None = None,
    *,
    trajectories: Sequence[Trajectory] | None = None,
    verdicts: Sequence[Verdict] | None = None,
) -> Deployment:
    """The statistics of :data:`STATISTICS` for ``judges`` (default all of ``rep``) at ``prevalence`` (0 < p < 1),
    from their recall and false-alarm rate, each with the percentile interval of the report's replicates; and,
    given the ``trajectories`` and ``verdicts`` the report was built from, AUPRC at ``prevalence`` on the report's
    resamples."""
    if not 0.0 < prevalence < 1.0:
        raise ValueError(f"prevalence must lie strictly between 0 and 1, got {prevalence!r}")
    if (trajectories is None) != (verdicts is None):
        raise ValueError("AUPRC at a prevalence needs both the trajectories and the verdicts")
    boot = rep.bootstrap
    level = boot.confidence_level
    q = [50 * (1 - level), 100 - 50 * (1 - level)]
    chosen = list(rep.judges if judges is None else judges)
    ranking = None if trajectories is None or verdicts is None else _auprc_at(rep, prevalence, trajectories, verdicts)
    out = []
    for j in chosen:
        jr = rep.judges[j]
        point = expected_statistics(
            np.asarray([jr.metrics["recall"]], float), np.asarray([jr.metrics["false_alarm_rate"]], float), prevalence
        )
        reps = expected_statistics(
            boot.distribution[:, boot.index(f"{j}|recall")],
            boot.distribution[:, boot.index(f"{j}|false_alarm_rate")],
            prevalence,
        )
        values, low, high = {}, {}, {}
        for s in STATISTICS:
            values[s] = float(point[s][0])
            col = reps[s][np.isfinite(reps[s])]
            lo, hi = np.percentile(col, q) if len(col) else (math.nan, math.nan)
            low[s], high[s] = float(lo), float(hi)
        if ranking is not None:
            i = ranking.index(f"{j}|auprc")
            values["auprc"] = float(ranking.estimate[i])
            col = ranking.distribution[:, i][np.isfinite(ranking.distribution[:, i])]
            lo, hi = np.percentile(col, q) if len(col) else (math.nan, math.nan)
            low["auprc"], high["auprc"] = float(lo), float(hi)
        out.append(AtPrevalence(j, prevalence, values, low, high))
    design = sum(rep.design.get(k, 0) for k in ("silent", "loud")) / max(1, sum(rep.design.values()))
    return Deployment(prevalence, design, tuple(out), level, STATISTICS + (RANKING if ranking is not None else ()))


def _auprc_at(
    rep: Report, prevalence: float, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]
) -> BootstrapResult:
    """Every judge's AUPRC at ``prevalence`` on the report's resamples (its seed, replicates and resampling)."""
    from trajectory_judge.analysis.core.judge_statistics import auprc_at_prevalence_family
    from trajectory_judge.analysis.core.plan import make_plan, on_report_resamples

    plan = make_plan(trajectories, verdicts, [])
    if list(plan.judges) != list(rep.judges) or len(plan.labels) != rep.n_trajectories:
        raise ValueError("the trajectories and verdicts given are not the ones the report was built from")
    family = auprc_at_prevalence_family(plan.labels, plan.verdicts, prevalence)
    (boot,) = on_report_resamples(
        plan, [family], resamples=rep.resamples, seed=rep.seed, resampling=rep.resampling, kept=rep.counts
    )
    return boot


__all__ = ["RANKING", "STATISTICS", "AtPrevalence", "Deployment", "at_prevalence", "expected_statistics"]
