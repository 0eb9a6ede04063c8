"""Trajectories that share a base run: how many base runs a folder holds, and the headline deltas' intervals
when whole base runs are drawn.

The testbed plants several faults in one base run and keeps the clean run as their parent, so its
trajectories are not independent draws: the faults of one run share its task, its customer and its clean
parent. The design's bootstrap resamples trajectories within their cells. :func:`dependence` sets beside
each of its paired deltas the interval of the stratified cluster bootstrap
(:mod:`~trajectory_judge.analysis.core.resampling`, ``design-instances``), which draws whole base runs among
runs of the same make-up, from the same seed and number of replicates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trajectory_judge.analysis.core.deltas import Delta
from trajectory_judge.analysis.core.paired import clean_parents
from trajectory_judge.analysis.core.report import Report, build_report
from trajectory_judge.analysis.core.resampling import METHOD, Resampling, clustered
from trajectory_judge.models import Trajectory, Verdict

if TYPE_CHECKING:
    import pandas as pd

STATISTIC_METRICS = ("auroc",)
"""Metrics of the headline pairs read from the judge statistics (the rest are the report's metrics)."""


@dataclass(frozen=True)
class DeltaUnderDependence(Delta):
    """One paired delta ``b - a`` of a report (``low`` and ``high`` its interval there) with its interval under
    the other resampling."""

    clustered_low: float = math.nan
    clustered_high: float = math.nan
    """The interval when whole base runs are drawn."""

    @property
    def width_ratio(self) -> float:
        """Width of the clustered interval over the other's (above 1: drawing whole runs widens it)."""
        width = self.high - self.low
        return (self.clustered_high - self.clustered_low) / width if width > 0 else float("nan")


@dataclass(frozen=True)
class Dependence:
    """How a folder's trajectories share base runs, and its headline deltas under both bootstraps."""

    trajectories: int
    instances: int
    """Base runs (distinct ``instance_id``)."""
    paired_faults: int
    """Faults whose clean parent is in the folder."""
    parents: int
    """Base runs holding such a fault and its clean parent."""
    method: str
    clustered_method: str
    deltas: tuple[DeltaUnderDependence, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per delta: the pair, the metric, the value and both intervals."""
        import pandas as pd

        columns = ("a", "b", "metric", "value", "low", "high", "clustered_low", "clustered_high", "width_ratio")
        rows = [{c: getattr(d, c) for c in columns} for d in self.deltas]
        return pd.DataFrame(rows)


def dependence(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    rep: Report,
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str] = ("recall", "f1", "auroc"),
) -> Dependence:
    """The paired deltas ``b - a`` of ``pairs`` on ``metrics`` as ``rep`` gives them, beside their intervals
    when the same verdicts are resampled by whole base runs (``rep``'s seed and replicates; a report of a design
    draws runs within groups of like make-up, one of a sample draws them from the whole folder)."""
    resampling: Resampling = clustered(rep.resampling)
    other = build_report(
        trajectories,
        verdicts,
        resamples=rep.resamples,
        seed=rep.seed,
        pairs="compared",
        statistics=any(m in STATISTIC_METRICS for m in metrics),
        resampling=resampling,
    )
    rows = []
    for a, b in pairs:
        for m in metrics:
            if m in STATISTIC_METRICS:
                mine, theirs = rep.statistic_delta(a, b, m), other.statistic_delta(a, b, m)
            else:
                mine, theirs = rep.delta(a, b, m), other.delta(a, b, m)
            rows.append(DeltaUnderDependence(**vars(mine), clustered_low=theirs.low, clustered_high=theirs.high))
    parents = clean_parents(trajectories)
    paired = [t for t in trajectories if t.label is not None and t.label.faulty and t.instance_id in parents]
    return Dependence(
        trajectories=len(trajectories),
        instances=len({t.instance_id for t in trajectories}),
        paired_faults=len(paired),
        parents=len({t.instance_id for t in paired}),
        method=METHOD[rep.resampling],
        clustered_method=METHOD[resampling],
        deltas=tuple(rows),
    )


__all__ = ["Dependence", "DeltaUnderDependence", "dependence"]
