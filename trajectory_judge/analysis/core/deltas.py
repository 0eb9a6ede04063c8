"""Paired deltas between judges and each judge's loud-minus-silent gap, read off the shared bootstrap.

Both are differences of two statistics on the same resamples (:mod:`trajectory_judge.analysis.core.plan`),
so their intervals are paired: the noise the two sides share cancels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trajectory_judge.analysis.core.bootstrap import BootstrapResult
from trajectory_judge.analysis.core.intervals import Interval, rounded
from trajectory_judge.analysis.core.names import judge_name, split_name
from trajectory_judge.analysis.core.plan import Plan
from trajectory_judge.models import Verdict

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Delta:
    """Paired difference ``b - a`` of one metric, on the trajectories both judged."""

    a: str
    """Reference judge."""
    b: str
    """Compared judge."""
    metric: str
    """Metric name."""
    value: float
    """Point estimate of ``b - a``."""
    low: float
    """Lower percentile bound."""
    high: float
    """Upper percentile bound."""
    kind: str = "all"
    """Why the pair is compared (:data:`trajectory_judge.analysis.core.comparisons.KINDS`, or ``all``)."""
    n: int = 0
    """Trajectories both judges judged."""

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON of the delta (bounds rounded)."""
        head = {"a": self.a, "b": self.b, "kind": self.kind, "n": self.n, "metric": self.metric}
        return {**head, "value": rounded(self.value), **Interval(self.low, self.high).to_dict()}


@dataclass(frozen=True)
class Gap:
    """Loud recall minus silent recall of one judge."""

    judge: str
    """Judge id."""
    metric: str
    """Always ``loud_minus_silent``."""
    value: float
    """Point estimate."""
    low: float
    """Lower bound (percentile, or the value for a structural judge)."""
    high: float
    """Upper bound."""

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON of the gap (bounds rounded)."""
        return {
            "judge": self.judge,
            "metric": self.metric,
            "value": rounded(self.value),
            **Interval(self.low, self.high).to_dict(),
        }


def deltas_frame(deltas: Sequence[Delta]) -> pd.DataFrame:
    """One row per delta: the pair, the metric, value and bounds, why the pair is compared and on how many."""
    import pandas as pd

    cols = ["a", "b", "metric", "value", "low", "high", "kind", "n"]
    return pd.DataFrame([d.__dict__ for d in deltas], columns=cols)


def read_deltas(
    verdicts: Mapping[str, Sequence[Verdict | None]], boot: BootstrapResult, kinds: Mapping[tuple[str, str], str]
) -> tuple[Delta, ...]:
    """Every defined delta statistic of ``boot`` as a :class:`Delta`, ``verdicts`` aligned by trajectory; ``kinds``
    says why each pair is compared (``all`` for a pair it does not name)."""
    out: list[Delta] = []
    both: dict[tuple[str, str], int] = {}
    for i, name in enumerate(boot.names):
        b, m, a = split_name(name)
        if a is None or math.isnan(boot.estimate[i]):
            continue
        if (a, b) not in both:
            both[(a, b)] = sum(x is not None and y is not None for x, y in zip(verdicts[a], verdicts[b]))
        out.append(
            Delta(
                a,
                b,
                m,
                float(boot.estimate[i]),
                float(boot.low[i]),
                float(boot.high[i]),
                kinds.get((a, b), "all"),
                both[(a, b)],
            )
        )
    return tuple(out)


def read_gaps(plan: Plan, boot: BootstrapResult) -> tuple[Gap, ...]:
    """Loud minus silent recall of every judge that has both, with its interval."""
    out = []
    for j in plan.judges:
        i = boot.index(judge_name(j, "loud_minus_silent"))
        if not math.isnan(boot.estimate[i]):
            out.append(Gap(j, "loud_minus_silent", float(boot.estimate[i]), float(boot.low[i]), float(boot.high[i])))
    return tuple(out)
