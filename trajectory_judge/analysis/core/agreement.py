"""How much two judges agree with each other: Cohen's κ between their flags, and how far their errors overlap.

For every pair of judges, on the trajectories both judged:

* **κ between the judges** (Cohen's): agreement of the two judges' flags beyond what their flag rates
  alone would give by chance, 1 for identical flags, 0 for chance. Two judges that agree at κ near 1 add
  little to each other, whatever their accuracy.
* **Error overlap**: of the trajectories at least one of them gets wrong (its flag is not the label), the
  share both get wrong (the Jaccard index of their errors). Near 0, their mistakes fall on different
  trajectories, and a second judge catches what the first misses; near 1, they fail together.

Both are read from four (κ) and three (overlap) weighted counts per pair, so they join the report's shared
resample as one more family (:class:`~trajectory_judge.analysis.core.bootstrap.Family`): every interval is drawn
on the same replicates as the metrics', whatever the resampling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from trajectory_judge.analysis.core.bootstrap import BootstrapResult, Family
from trajectory_judge.analysis.core.confusion import confusion_statistics, ratio
from trajectory_judge.analysis.core.intervals import rounded
from trajectory_judge.models import Label, Verdict

if TYPE_CHECKING:
    import pandas as pd

COUNTS = ("both_flag", "a_only", "b_only", "neither", "both_wrong", "a_wrong_only", "b_wrong_only")
"""The counts each pair contributes, per trajectory both judged."""

AGREEMENT = ("kappa", "error_overlap")
"""The statistics of a pair."""


@dataclass(frozen=True)
class Agreement:
    """Agreement between judges ``a`` and ``b`` on the ``n`` trajectories both judged."""

    a: str
    """The first judge (report order)."""
    b: str
    """The second judge."""
    n: int
    """Trajectories both judged."""
    kappa: float | None
    """Cohen's κ between their flags (None where it is undefined: both flag everything, or nothing)."""
    kappa_low: float | None
    """Lower bound of κ's interval."""
    kappa_high: float | None
    """Upper bound of κ's interval."""
    error_overlap: float | None
    """Share of the trajectories either gets wrong that both get wrong (None when neither errs)."""
    overlap_low: float | None
    """Lower bound of the overlap's interval."""
    overlap_high: float | None
    """Upper bound of the overlap's interval."""

    def to_dict(self) -> dict[str, Any]:
        """The report's JSON of the pair: κ and the overlap, each with its bounds (rounded)."""
        kappa = {"value": rounded(self.kappa), "low": rounded(self.kappa_low), "high": rounded(self.kappa_high)}
        overlap = [rounded(x) for x in (self.error_overlap, self.overlap_low, self.overlap_high)]
        return {
            "a": self.a,
            "b": self.b,
            "n": self.n,
            "kappa": kappa,
            "error_overlap": dict(zip(("value", "low", "high"), overlap)),
        }


def pair_counts(labels: Sequence[Label], a: Sequence[Verdict | None], b: Sequence[Verdict | None]) -> np.ndarray:
    """``(n, 7)`` indicators of :data:`COUNTS` per trajectory (all 0 where either judge has no verdict)."""
    out = np.zeros((len(labels), len(COUNTS)))
    for i, (lab, va, vb) in enumerate(zip(labels, a, b)):
        if va is None or vb is None:
            continue
        fa, fb = va.faulty, vb.faulty
        out[i, 0 if fa and fb else 1 if fa else 2 if fb else 3] = 1
        wa, wb = fa != lab.faulty, fb != lab.faulty
        if wa and wb:
            out[i, 4] = 1
        elif wa:
            out[i, 5] = 1
        elif wb:
            out[i, 6] = 1
    return out


def _statistic(sums: np.ndarray) -> np.ndarray:
    """Sums ``(..., 7 * pairs)`` -> ``(..., 2 * pairs)``: κ and error overlap of each pair."""
    s = sums.reshape(*sums.shape[:-1], -1, len(COUNTS))
    both, a_only, b_only, neither = (s[..., k] for k in range(4))
    kappa = confusion_statistics(both, b_only, a_only, neither)["kappa"]  # judge a as the truth of judge b
    overlap = ratio(s[..., 4], s[..., 4] + s[..., 5] + s[..., 6])
    return np.stack([kappa, overlap], axis=-1).reshape(*sums.shape[:-1], -1)


def agreement_family(
    labels: Sequence[Label], verdicts: Mapping[str, Sequence[Verdict | None]], judges: Sequence[str]
) -> Family:
    """Every pair of ``judges`` (report order) as one family of the shared bootstrap."""
    pairs = [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]
    data = (
        np.hstack([pair_counts(labels, verdicts[a], verdicts[b]) for a, b in pairs])
        if pairs
        else np.zeros((len(labels), 0))
    )
    names = tuple(f"{a}|{b}|{m}" for a, b in pairs for m in AGREEMENT)
    return Family(data, _statistic, names)


def read_agreement(family: Family, result: BootstrapResult) -> tuple[Agreement, ...]:
    """The pairs of ``family`` with their values and intervals from ``result``."""
    out = []
    names = list(result.names)
    for k in range(0, len(names), len(AGREEMENT)):
        a, b, _ = names[k].split("|")
        n = int(family.data[:, 7 * (k // 2) : 7 * (k // 2) + 4].sum())

        def triple(i: int) -> tuple[float | None, float | None, float | None]:
            v = float(result.estimate[i])
            if not np.isfinite(v):
                return None, None, None
            lo, hi = float(result.low[i]), float(result.high[i])
            return v, (lo if np.isfinite(lo) else None), (hi if np.isfinite(hi) else None)

        kv, kl, kh = triple(k)
        ov, ol, oh = triple(k + 1)
        out.append(Agreement(a, b, n, kv, kl, kh, ov, ol, oh))
    return tuple(out)


def agreement_frame(pairs: Sequence[Agreement]) -> pd.DataFrame:
    """One row per pair: judges, n, κ and error overlap with their bounds."""
    import pandas as pd

    cols = ["a", "b", "n", "kappa", "kappa_low", "kappa_high", "error_overlap", "overlap_low", "overlap_high"]
    return pd.DataFrame([{c: getattr(p, c) for c in cols} for p in pairs], columns=cols)
