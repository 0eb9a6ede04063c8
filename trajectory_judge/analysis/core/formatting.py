"""Numbers and intervals as the book and the terminal report write them: one format everywhere.

``0.616 (0.59\u20130.64)``: the value with three decimals, the 95% bounds with two; a negative
bound takes true minus signs and "to" (``\u22120.180 (\u22120.28 to \u22120.08)``); a mark after
the interval says when it is not an ordinary bootstrap interval (:data:`MARKS`). The book's
``style`` re-exports these names.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    STRUCTURAL: (
        "structural: the judge's verdicts are constant within every design cell, as the rule engine's are, "
        "so the design-conditioned bootstrap cannot vary the value and no interval is given"
    ),
    DAGGER: "exact Clopper\u2013Pearson interval (the estimate is 0 or 1, where a bootstrap or normal interval cannot spread)",
    ZERO_WIDTH: (
        "the bootstrap interval has zero width: for this metric every design cell is all-or-none, "
        "so resampling within cells cannot move the estimate; it is not a measure of certainty"
    ),
}
"""Every mark an interval can carry, with the sentence that explains it once under a table."""

SAMPLE_MARKS: dict[str, str] = {
    **MARKS,
    STRUCTURAL: (
        "structural: the judge gives every trajectory the same verdict, so no resample can vary the value "
        "and no interval is given"
    ),
    ZERO_WIDTH: (
        "the bootstrap interval has zero width: the metric is the same on every trajectory, so no resample "
        "can move it; it is not a measure of certainty"
    ),
}
"""The marks' sentences when the bootstrap resamples trajectories or instances, not design cells."""


def marks_for(resampling: str) -> dict[str, str]:
    """The marks' sentences for a report resampled as ``resampling`` (:data:`MARKS` for ``design``)."""
    return MARKS if resampling == "design" else SAMPLE_MARKS


def is_missing(x: Any) -> bool:
    """Whether ``x`` is a missing value (None, NaN, ``pd.NA``, ``pd.NaT``)."""
    if x is None:
        return True
    pd = sys.modules.get("pandas")  # pd.NA and pd.NaT exist only where pandas is loaded: no import for them
    if pd is not None and (x is pd.NA or x is pd.NaT):
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


def bound_decimals(low: float, high: float, *, fewest: int = 2, most: int = 6) -> int:
    """Decimals for an interval's bounds: two, or as many more as it takes for bounds that differ to
    print differently (so a narrow interval such as 0.0028 to 0.0032 never reads ``(0.00–0.00)``)."""
    places = fewest
    while places < most and format_number(low, places) == format_number(high, places):
        places += 1
    if format_number(low, places) == format_number(high, places):  # narrower than ``most`` shows: the value's own
        return fewest + 1
    return places


def format_interval(
    value: float | None, low: float | None = None, high: float | None = None, method: str | None = None
) -> str:
    """``0.616 (0.59\u20130.64)`` on one line, the value with three decimals and the bounds with two
    (one more of each for every decimal two bounds that differ need to print differently, :func:`bound_decimals`);
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
    if method is None or low is None or high is None or is_missing(low) or is_missing(high):
        return text
    if method != "clopper-pearson" and round(float(high) - float(low), 9) == 0:
        return text + ZERO_WIDTH
    places = bound_decimals(float(low), float(high))
    lo, hi = format_number(float(low), places), format_number(float(high), places)
    text = format_number(value, 3 if lo == hi else places + 1)
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


_ESCAPES = str.maketrans({"\t": r"\t", "\n": r"\n", "\r": r"\r"})


def _trim_front(cells: list[str]) -> list[str]:
    cut = min(len(c) - len(c.lstrip()) for c in cells)
    return [c[cut:] for c in cells]


def _column_kind(name: str, cells: Sequence[Any]) -> str:
    if all(
        isinstance(c, int) and not isinstance(c, bool) or type(c).__name__.startswith(("int", "uint")) for c in cells
    ):
        return "int"
    if all(
        c is None or isinstance(c, (int, float)) and not isinstance(c, bool) or type(c).__name__.startswith("float")
        for c in cells
    ):
        return "float"
    if all(isinstance(c, str) for c in cells):
        return "str"
    raise ValueError(
        f"text table: column {name!r} mixes kinds of cell (only all-integer, all-number or all-text columns)"
    )


@dataclass(frozen=True)
class TextTable:
    """Rows of text, integer or float cells under named columns and a named index of row labels.

    :meth:`to_string` prints it exactly as ``to_frame().to_string(...)`` does (pandas' layout: text and
    numbers right-aligned, numeric headers led by a space, labels left-aligned, the index name on a
    line of its own), without importing pandas, which the terminal report need not pay for.
    """

    index_name: str | None
    """Name of the row labels (printed on the line under the headers)."""
    rows: Mapping[str, Mapping[str, Any]]
    """Row label -> column -> cell; every row has every column."""
    columns: tuple[str, ...]
    """Column names, in order."""

    @classmethod
    def from_rows(
        cls, rows: Mapping[str, Mapping[str, Any]], index_name: str | None, columns: Sequence[str] | None = None
    ) -> TextTable:
        """From row dicts (columns in order of first appearance unless given)."""
        cols = tuple(columns) if columns is not None else tuple(dict.fromkeys(c for r in rows.values() for c in r))
        for label, row in rows.items():
            missing = [c for c in cols if c not in row]
            if missing:
                raise ValueError(f"text table: row {label!r} has no {missing[0]!r}")
        return cls(index_name, {k: dict(v) for k, v in rows.items()}, cols)

    @property
    def empty(self) -> bool:
        """Whether the table has no rows or no columns."""
        return not self.rows or not self.columns

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame (integer, float and object columns)."""
        import pandas as pd

        data = {c: [r[c] for r in self.rows.values()] for c in self.columns}
        frame = pd.DataFrame(data, index=pd.Index(list(self.rows), name=self.index_name), columns=list(self.columns))
        return frame.astype({c: float for c, v in data.items() if _column_kind(c, v) == "float"})

    def to_string(self, float_format: Callable[[float], str] | None = None, na_rep: str = "NaN") -> str:
        """The table as ``DataFrame.to_string(float_format=..., na_rep=...)`` prints it."""
        if self.empty:
            raise ValueError("text table: no rows or no columns to print")
        named = self.index_name is not None
        strcols = []
        for c in self.columns:
            cells = [r[c] for r in self.rows.values()]
            kind = _column_kind(c, cells)
            if kind == "int":
                values = [f"{int(v): d}" for v in cells]
            elif kind == "float":
                if float_format is None:
                    raise ValueError(f"text table: float column {c!r} needs a float_format")
                values = [na_rep if v is None or math.isnan(v) else float_format(float(v)) for v in cells]
            else:
                values = [" " + v.translate(_ESCAPES) for v in cells]
            header = [(" " + c if kind != "str" else c).translate(_ESCAPES)] + ([""] if named else [])
            width = max(len(x) for x in header + values)
            strcols.append([x.rjust(width) for x in header + values])
        labels = _trim_front([" " + str(k).translate(_ESCAPES) for k in self.rows])
        index = ([str(self.index_name).translate(_ESCAPES)] if named else []) + labels
        width = max(len(x) for x in index)
        strcols.insert(0, [""] + [x.ljust(width) for x in index])
        widths = [max(len(x) for x in col) + 1 for col in strcols[:-1]] + [max(len(x) for x in strcols[-1])]
        return "\n".join("".join(x.ljust(w) for x, w in zip(line, widths)) for line in zip(*strcols))


def list_text(items: Sequence[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no items."""
    items = list(items)
    if not items:
        return empty
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
