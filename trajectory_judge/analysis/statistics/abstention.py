"""A confidence threshold above which a judge's verdicts may be trusted, with a guarantee on their error rate.

A judge used as a filter keeps the verdicts it states with confidence at least ``t`` and passes the rest to a
person. :func:`certify` picks ``t`` on labelled runs so that, with probability at least ``1 - delta`` over the
draw of those runs, the share of wrong verdicts among the kept ones, on new runs drawn as these were, is at
most ``alpha``. The procedure is fixed-sequence testing (Angelopoulos et al., *Learn then Test*, 2021), the
calibration behind the guarantees of *Trust or Escalate* (Jung et al., 2024):

* the candidate thresholds are the judge's distinct stated confidences, highest first (a threshold keeps a
  tie group whole, so no tie is broken at random), leaving out those that keep fewer verdicts than the
  fewest at which the test could pass at all (``n`` with ``(1 - alpha) ** n <= delta``, 29 at the defaults):
  such a threshold can never be certified, and trying it would only stop the sequence. The rule reads the
  confidences, never the labels, so the order is fixed before any verdict is checked;
* at each one the kept verdicts give ``k`` wrong of ``n``, and the exact binomial p-value of "the risk at this
  threshold exceeds ``alpha``" is ``P(Binomial(n, alpha) <= k)``;
* thresholds are tested in that order at level ``delta`` each, and the first one not rejected stops the
  sequence: the certified threshold is the lowest one rejected before it (the most verdicts kept).

No threshold is certified when the first one tried is not: the judge then escalates everything. The
guarantee is about runs exchangeable with the labelled ones; on the testbed that is the planted design's mix
of clean and faulty runs, not a deployment's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trajectory_judge.analysis.core.intervals import rounded
from trajectory_judge.models import Label, Trajectory, Verdict

if TYPE_CHECKING:
    import pandas as pd

ALPHA = 0.1
"""The default largest error rate among the kept verdicts."""

DELTA = 0.05
"""The default chance that the certified threshold misses ``alpha`` (one minus the guarantee's confidence)."""


@dataclass(frozen=True)
class Threshold:
    """One judge's certified threshold, or none, and what it keeps of the labelled runs."""

    judge: str
    alpha: float
    delta: float
    threshold: float | None
    """Keep verdicts stated with at least this confidence (None: no threshold is certified; escalate all)."""
    kept: int
    """Labelled verdicts the threshold keeps."""
    wrong: int
    """Of those, how many disagree with the label."""
    n: int
    """Labelled verdicts of the judge."""
    p_value: float
    """The exact binomial p-value at the certified threshold (at the first one tried when none is certified; NaN
    when the judge has too few verdicts for any to be tried)."""

    @property
    def coverage(self) -> float:
        """The share of the labelled verdicts kept."""
        return self.kept / self.n if self.n else math.nan

    @property
    def risk(self) -> float:
        """The share of the kept verdicts that are wrong (NaN when none is kept)."""
        return self.wrong / self.kept if self.kept else math.nan


@dataclass(frozen=True)
class Abstention:
    """Every judge's :class:`Threshold` at one ``alpha`` and ``delta``."""

    alpha: float
    delta: float
    judges: tuple[Threshold, ...]

    def to_dict(self) -> dict[str, Any]:
        """``report --json``'s ``abstention``: alpha, delta, and per judge its threshold and what it keeps."""
        return {
            "alpha": self.alpha,
            "delta": self.delta,
            "method": "fixed-sequence testing over the judge's distinct confidences, exact binomial p-values",
            "judges": {
                t.judge: {
                    "threshold": t.threshold,
                    "kept": t.kept,
                    "wrong": t.wrong,
                    "n": t.n,
                    **{k: rounded(getattr(t, k)) for k in ("coverage", "risk", "p_value")},
                }
                for t in self.judges
            },
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per judge: the threshold, what it keeps, the error rate among the kept, and the p-value."""
        import pandas as pd

        columns = ("judge", "threshold", "kept", "n", "coverage", "risk", "p_value")
        rows = [{c: getattr(t, c) for c in columns} for t in self.judges]
        return pd.DataFrame(rows).set_index("judge")


def fewest_testable(alpha: float, delta: float) -> int:
    """The fewest kept verdicts at which "the error rate exceeds ``alpha``" can be rejected at level ``delta``: with
    none of them wrong, ``(1 - alpha) ** n <= delta``."""
    return max(1, math.ceil(math.log(delta) / math.log1p(-alpha) - 1e-12))


def certify(
    judge: str, pairs: Sequence[tuple[Label, Verdict]], alpha: float = ALPHA, delta: float = DELTA
) -> Threshold:
    """The lowest confidence threshold fixed-sequence testing certifies for ``pairs`` (label, verdict)."""
    from scipy.stats import binom

    if not 0.0 < alpha < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError(f"alpha and delta must lie strictly between 0 and 1, got {alpha!r} and {delta!r}")
    by_confidence: dict[float, list[int]] = {}
    for lab, v in pairs:
        wrong = int(v.faulty != lab.faulty)
        by_confidence.setdefault(round(v.confidence, 9), []).append(wrong)
    fewest = fewest_testable(alpha, delta)
    kept = wrong = 0
    best: tuple[float, int, int, float] | None = None
    first_p = math.nan
    for conf in sorted(by_confidence, reverse=True):
        group = by_confidence[conf]
        kept, wrong = kept + len(group), wrong + sum(group)
        if kept < fewest:
            continue
        p = float(binom.cdf(wrong, kept, alpha))
        if math.isnan(first_p):
            first_p = p
        if p > delta:
            break
        best = (conf, kept, wrong, p)
    n = len(pairs)
    if best is None:
        return Threshold(judge, alpha, delta, None, 0, 0, n, first_p)
    conf, k, w, p = best
    return Threshold(judge, alpha, delta, conf, k, w, n, p)


def abstention(
    labels: Sequence[Label],
    verdicts: Mapping[str, Sequence[Verdict | None]],
    alpha: float = ALPHA,
    delta: float = DELTA,
) -> Abstention:
    """:func:`certify` for every judge of ``verdicts`` (aligned with ``labels``, None where it did not judge)."""
    out = tuple(
        certify(j, [(lab, v) for lab, v in zip(labels, vs, strict=True) if v is not None], alpha, delta)
        for j, vs in verdicts.items()
    )
    return Abstention(alpha, delta, out)


def abstention_of(
    trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], alpha: float = ALPHA, delta: float = DELTA
) -> Abstention:
    """:func:`abstention` of a folder's trajectories and verdicts, the judges in the report's order."""
    from trajectory_judge.analysis.core.plan import make_plan

    plan = make_plan(trajectories, verdicts, [])
    return abstention(plan.labels, plan.verdicts, alpha, delta)


__all__ = [
    "ALPHA",
    "DELTA",
    "Abstention",
    "Threshold",
    "abstention",
    "abstention_of",
    "certify",
    "fewest_testable",
]
