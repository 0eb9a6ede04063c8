"""Per-type recalls read as one family: simultaneous intervals from the report's own resamples.

A report gives every judge's recall on every failure type its own 95% interval. Read together (five
judges by six types is thirty cells), some of those intervals miss their true value by chance alone. The
simultaneous band of :func:`per_type_family` is the sup-t band over the report's bootstrap replicates: each
cell's value plus or minus one critical value times its bootstrap standard error, the critical value being
the 95th percentile over replicates of the largest standardised deviation of any cell. All cells then hold
their true values together with 95% probability (to the bootstrap's approximation). A cell whose replicates
do not vary (a recall fixed by the design, or 0 or 1 in every replicate) has no standard error: it keeps its
own interval and is left out of the family.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from trajectory_judge.analysis.core.report import Report

if TYPE_CHECKING:
    import pandas as pd

METHOD = "sup-t simultaneous band over the report's bootstrap replicates"
"""How :class:`PerTypeFamily`'s simultaneous intervals are made, as a caption says it."""


@dataclass(frozen=True)
class TypeCell:
    """One judge's recall on one failure type, with its own interval and the family's."""

    judge: str
    failure_type: str
    value: float
    low: float
    high: float
    """Its own interval (the report's)."""
    sim_low: float
    sim_high: float
    """The simultaneous interval (its own where the cell is out of the family)."""
    in_family: bool
    """Whether its replicates vary, so that it takes part in the simultaneous band."""


@dataclass(frozen=True)
class PerTypeFamily:
    """Every (judge, failure type) recall of a report, with per-cell and simultaneous intervals."""

    cells: tuple[TypeCell, ...]
    level: float
    critical: float
    """The sup-t critical value (NaN when no cell varies); a single cell's would be about 1.96 at 95%."""
    method: str = METHOD

    @property
    def size(self) -> int:
        """Cells in the family (those whose replicates vary)."""
        return sum(c.in_family for c in self.cells)

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: judge, type, value, both intervals and whether it is in the family."""
        import pandas as pd

        return pd.DataFrame([c.__dict__ for c in self.cells])


def per_type_family(rep: Report, judges: Sequence[str] | None = None, level: float = 0.95) -> PerTypeFamily:
    """The per-type recalls of ``judges`` (default every judge of ``rep``) with the sup-t simultaneous band at
    ``level`` from ``rep``'s own bootstrap replicates."""
    chosen = list(rep.judges) if judges is None else list(judges)
    boot = rep.bootstrap
    keys, values, own = [], [], []
    for j in chosen:
        jr = rep.judges[j]
        for t, iv in jr.per_type_intervals.items():
            v = jr.per_type_recall.get(t)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            keys.append((j, t))
            values.append(float(v))
            own.append((iv.low, iv.high))
    if not keys:
        return PerTypeFamily((), level, math.nan)
    cols = np.column_stack([boot.distribution[:, boot.index(f"{j}|recall:{t}")] for j, t in keys])
    se = np.nanstd(cols, axis=0, ddof=1)
    varies = np.isfinite(se) & (se > 0)
    critical = math.nan
    if varies.any():
        centre = np.asarray(values)[varies]
        z = np.abs(cols[:, varies] - centre) / se[varies]
        worst = np.nanmax(z, axis=1)
        critical = float(np.quantile(worst[np.isfinite(worst)], level))
    cells = []
    for k, ((j, t), v, (lo, hi)) in enumerate(zip(keys, values, own, strict=True)):
        if varies[k]:
            half = critical * float(se[k])
            cells.append(TypeCell(j, t, v, lo, hi, max(0.0, v - half), min(1.0, v + half), True))
        else:
            cells.append(TypeCell(j, t, v, lo, hi, lo, hi, False))
    return PerTypeFamily(tuple(cells), level, critical)


__all__ = ["METHOD", "PerTypeFamily", "TypeCell", "per_type_family"]
