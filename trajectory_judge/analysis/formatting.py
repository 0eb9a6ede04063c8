"""Numbers and intervals as the book and the terminal report write them: one format everywhere.

``0.616 (0.59\u20130.64)``: the value with three decimals, the 95% bounds with two; a negative
bound takes true minus signs and "to" (``\u22120.180 (\u22120.28 to \u22120.08)``); a mark after
the interval says when it is not an ordinary bootstrap interval (:data:`MARKS`). The book's
``style`` re-exports these names.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import pandas as pd

DAGGER = "\u2020"
"""Marks an exact (Clopper-Pearson) interval."""

MISSING = "\u2013"
"""How a missing value is written in every table and sentence (an en dash)."""

STRUCTURAL = "*"
"""Marks a structural value: verdicts constant within every design cell (the rule engine's), no interval."""

ZERO_WIDTH = "\u2021"
"""Marks a bootstrap interval of zero width (the metric is all-or-none in every design cell)."""

MARKS: dict[str, str] = {
    STRUCTURAL: ("structural: the judge's verdicts are constant within every design cell, as the rule engine's are, "
                 "so the design-conditioned bootstrap cannot vary the value and no interval is given"),
    DAGGER: "exact Clopper\u2013Pearson interval (the estimate is 0 or 1, where the bootstrap cannot spread)",
    ZERO_WIDTH: ("the bootstrap interval has zero width: for this metric every design cell is all-or-none, "
                 "so resampling within cells cannot move the estimate; it is not a measure of certainty"),
}
"""Every mark an interval can carry, with the sentence that explains it once under a table."""


def is_missing(x: Any) -> bool:
    """Whether ``x`` is a missing value (None, NaN, ``pd.NA``, ``pd.NaT``)."""
    if x is None or x is pd.NA or x is pd.NaT:
        return True
    return isinstance(x, float) and math.isnan(x)


def format_number(x: Any, decimals: int = 3, *, count: bool = False) -> str:
    """One number as the book writes it: ``–`` when missing, an integer for a count, else fixed
    decimals (never e-notation). Booleans read yes/no; text passes through."""
    if is_missing(x):
        return MISSING
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    if count or isinstance(x, int) or type(x).__name__.startswith(("int", "uint")):
        return f"{int(round(float(x))):d}"
    value = float(x)
    text = f"{value:.{decimals}f}"
    if math.isinf(value):
        return MISSING
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.000"


def format_interval(value: float | None, low: float | None = None, high: float | None = None, method: str | None = None) -> str:
    """``0.616 (0.59\u20130.64)`` on one line, the value with three decimals and the bounds with two;
    with a negative bound, ``\u22120.180 (\u22120.28 to \u22120.08)`` (minus signs, and "to" between the bounds).

    A mark follows the interval: \u2020 exact (Clopper\u2013Pearson), \u2021 a zero-width bootstrap
    interval (shown as the bare value and the mark), ``*`` structural (no interval); see :data:`MARKS`.
    Missing value: ``\u2013``; a value without an interval: the value alone.
    """
    if is_missing(value):
        return MISSING
    text = format_number(value, 3)
    if method == "structural":
        return text + STRUCTURAL
    if method is None or is_missing(low) or is_missing(high):
        return text
    if method != "clopper-pearson" and round(float(high) - float(low), 9) == 0:
        return text + ZERO_WIDTH
    lo, hi = format_number(float(low), 2), format_number(float(high), 2)
    if lo.startswith("-"):  # a negative bound: true minus signs, and "to" so no dash meets a minus
        text, lo, hi = (t.replace("-", "\u2212", 1) for t in (text, lo, hi))
        span = f" ({lo} to {hi})"
    else:
        span = f" ({lo}\u2013{hi})"
    return text + span + (DAGGER if method == "clopper-pearson" else "")


def marks_in(texts: Sequence[str]) -> list[str]:
    """The marks of :data:`MARKS` that occur at the end of any of ``texts``, in :data:`MARKS` order."""
    found = {m for t in texts if isinstance(t, str) for m in MARKS if t.endswith(m)}
    return [m for m in MARKS if m in found]
