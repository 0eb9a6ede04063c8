"""One interval type for every result, and the one rounding of the report's JSON.

A result record holds its bounds as an :class:`Interval` (low, high and how they were obtained) or, where its
readers index the bounds by name, as ``low`` and ``high`` fields; either way its ``to_dict()`` writes them with
:func:`rounded`, so the JSON of every result rounds alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DIGITS = 6
"""Decimals of a number in the report's JSON."""


def rounded(x: float | None) -> float | None:
    """``x`` at :data:`DIGITS` decimals for the JSON (NaN as None, never ``-0.0``)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return round(float(x), DIGITS) + 0.0  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True)
class Interval:
    """An interval (95% unless its reader says otherwise) and how it was obtained."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    method: str = ""
    """``bootstrap``, ``clopper-pearson``, ``structural`` and so on (empty where its reader states it)."""

    def to_dict(self) -> dict[str, Any]:
        """``low``, ``high`` (rounded) and ``method`` when it is known."""
        out: dict[str, Any] = {"low": rounded(self.low), "high": rounded(self.high)}
        return {**out, "method": self.method} if self.method else out


NO_INTERVAL: dict[str, Any] = {"low": None, "high": None, "method": None}
"""What the JSON writes for a statistic without an interval."""


__all__ = ["DIGITS", "NO_INTERVAL", "Interval", "rounded"]
