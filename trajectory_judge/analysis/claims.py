"""The claims register's types and its one rule: each claim of the paper is a typed record whose
verdict is derived, never written.

A :class:`Claim` holds where the paper makes it, what it says in this book's words, what it states
(:class:`Stated`: a value at its printed precision, or a direction against a boundary), the quantity
that checks it and that quantity's :class:`Estimate` (value, 95% interval, method, n). :func:`verdict`
is the rule (:data:`RULE` says it in words); :class:`Register` holds the claims in reading order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE = "borne out", "not borne out", "not checkable"
VERDICTS: tuple[str, ...] = (BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE)
"""The three verdicts, in the order tables list them."""

RULE = (
    "A claim states a value, at the precision it is printed with, or a direction (a difference of one sign, "
    "or one side of a boundary). It is *borne out* when the stated value, widened by half a unit of its last "
    "printed digit (a fraction in words, such as \u201ca third\u201d, is read to one significant figure), meets the 95% interval of the quantity that checks it, or when the whole interval lies on "
    "the stated side of the boundary; *not borne out* when the interval excludes the stated value, or lies "
    "wholly on the other side (a boundary value counts against a strict direction); otherwise *not checkable*, "
    "with the reason: the released data cannot give the quantity, or the interval straddles the boundary of a "
    "stated direction. A quantity without sampling variance (a count, a design constant, a ratio of timings "
    "measured once) is its own interval."
)
"""The rule, stated once (the audit chapter prints it above the register)."""

Direction = Literal["above", "below", "at_least", "at_most"]


@dataclass(frozen=True)
class Estimate:
    """A quantity computed once: its value, 95% interval, how the interval was obtained and on how many units."""

    value: float
    """The recomputed value."""
    low: float
    """Lower 95% bound (equal to ``value`` for a quantity without sampling variance)."""
    high: float
    """Upper 95% bound."""
    method: str
    """``bootstrap``, ``clopper-pearson``, ``structural``, ``exact`` (a count or constant) or ``measured once``."""
    n: int | None = None
    """Units the value is computed over (trajectories, faults, verdicts); None when not a sample."""
    detail: str = ""
    """What the value counts, in words (``47 of 50 faults``); may be empty."""

    @classmethod
    def exact(cls, value: float, n: int | None = None, detail: str = "", method: str = "exact") -> Estimate:
        """A value without sampling variance: its own interval."""
        return cls(float(value), float(value), float(value), method, n, detail)

    def to_dict(self) -> dict:
        """Value, low, high, method, n and detail as plain Python values."""
        return {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "method": self.method,
            "n": self.n,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Stated:
    """What a claim states: a value at its printed precision, or a direction against a boundary."""

    text: str
    """The statement as the register prints it (``84%``, ``a third``, ``below zero``)."""
    value: float | None = None
    """A stated value (None for a direction)."""
    precision: float = 0.0
    """One unit of the stated value's last printed digit (0.01 for ``84%``; 0.1 for a fraction in words such as
    ``a third``, read to one significant figure; 0 for an exact count)."""
    direction: Direction | None = None
    """For a direction: the side of ``boundary`` the quantity is said to lie on."""
    boundary: float = 0.0
    """The boundary of a direction (0 for the sign of a difference)."""

    def __post_init__(self) -> None:
        if (self.value is None) == (self.direction is None):
            raise ValueError(f"a stated claim is a value or a direction, not both or neither: {self.text!r}")

    @classmethod
    def number(cls, text: str, value: float, precision: float = 0.0) -> Stated:
        """A stated value, ``precision`` one unit of its last printed digit."""
        return cls(text, value=float(value), precision=float(precision))

    @classmethod
    def fraction(cls, text: str, value: float) -> Stated:
        """A fraction in words (``a third``, ``half``), read to one significant figure."""
        return cls(text, value=float(value), precision=10.0 ** (math.floor(math.log10(abs(value)))) if value else 0.0)

    @classmethod
    def side(cls, text: str, direction: Direction, boundary: float = 0.0) -> Stated:
        """A stated direction against ``boundary``."""
        return cls(text, direction=direction, boundary=float(boundary))


def verdict(stated: Stated, estimate: Estimate | None) -> tuple[str, str]:
    """The one rule (:data:`RULE`): ``(verdict, reason)`` from what a claim states and its estimate.

    ``estimate`` None means the data cannot give the quantity (the caller's reason is kept).
    """
    if estimate is None or any(math.isnan(x) for x in (estimate.value, estimate.low, estimate.high)):
        return NOT_CHECKABLE, ""
    lo, hi = estimate.low, estimate.high
    if stated.value is not None:
        half = stated.precision / 2
        a, b = stated.value - half, stated.value + half
        eps = 1e-12
        if a <= hi + eps and lo - eps <= b:
            return (
                BORNE_OUT,
                f"{stated.text} lies inside the interval"
                if lo < hi
                else f"the value equals {stated.text} at the printed precision",
            )
        return (
            NOT_BORNE_OUT,
            f"the interval excludes {stated.text}"
            if lo < hi
            else f"the value differs from {stated.text} at the printed precision",
        )
    t = stated.boundary
    on_side = {"above": lo > t, "at_least": lo >= t, "below": hi < t, "at_most": hi <= t}[stated.direction]  # type: ignore[index]
    off_side = {"above": hi <= t, "at_least": hi < t, "below": lo >= t, "at_most": lo > t}[stated.direction]  # type: ignore[index]
    where = f"{_num(t)}"
    if on_side:
        return BORNE_OUT, f"the whole interval lies {_side_word(stated.direction)} {where}"  # type: ignore[arg-type]
    if off_side:
        return NOT_BORNE_OUT, f"the whole interval lies on the other side of {where}"
    return NOT_CHECKABLE, f"the interval straddles {where}, so the data cannot tell the direction"


def _side_word(direction: Direction) -> str:
    return {"above": "above", "at_least": "at or above", "below": "below", "at_most": "at or below"}[direction]


def _num(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Claim:
    """One checkable claim of the paper, with the estimate that checks it; its verdict is derived by :func:`verdict`."""

    key: str
    """Short stable name (glue keys and tests)."""
    group: str
    """``headline`` (the paper's abstract), ``camera_ready`` (the camera-ready abstract), ``results`` (§6 and its
    captions), ``analysis`` (§7 and its captions) or ``organic`` (§8)."""
    where: str
    """Where the paper makes it (``abstract``, ``§6``, ``Table 4 caption``...)."""
    says: str
    """What the paper says, in this book's words (with its number as printed)."""
    stated: Stated
    """The stated value or direction."""
    quantity: str
    """The quantity that checks it, in words."""
    estimate: Estimate | None
    """That quantity recomputed from the paper's verdicts; None when the released data cannot give it."""
    why_not: str = ""
    """Why the quantity cannot be computed (with ``estimate`` None)."""

    @property
    def verdict(self) -> str:
        """``borne out``, ``not borne out`` or ``not checkable``, by the register's one rule."""
        return verdict(self.stated, self.estimate)[0]

    @property
    def reason(self) -> str:
        """Why the rule gives that verdict, in words."""
        v, why = verdict(self.stated, self.estimate)
        return why or self.why_not

    @property
    def holds(self) -> bool:
        """True when the claim is borne out."""
        return self.verdict == BORNE_OUT

    @property
    def value(self) -> float | None:
        """The recomputed value (None when not checkable from the data)."""
        return None if self.estimate is None else self.estimate.value

    @property
    def low(self) -> float | None:
        """Lower 95% bound."""
        return None if self.estimate is None else self.estimate.low

    @property
    def high(self) -> float | None:
        """Upper 95% bound."""
        return None if self.estimate is None else self.estimate.high


@dataclass(frozen=True)
class Register:
    """Every checkable claim of the paper, in reading order."""

    items: tuple[Claim, ...]
    """The claims."""

    def __post_init__(self) -> None:
        keys = [c.key for c in self.items]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"claim keys must be unique: {', '.join(dup)}")

    def __getitem__(self, key: str) -> Claim:
        for c in self.items:
            if c.key == key:
                return c
        raise KeyError(f"no claim {key!r}")

    def __iter__(self) -> Iterator[Claim]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def group(self, *groups: str) -> list[Claim]:
        """The claims of the given groups, in order."""
        return [c for c in self.items if c.group in groups]

    def with_verdict(self, v: str) -> list[Claim]:
        """The claims whose verdict is ``v``."""
        return [c for c in self.items if c.verdict == v]

    def contradicted(self) -> list[Claim]:
        """The claims the verdicts do not bear out."""
        return self.with_verdict(NOT_BORNE_OUT)

    def counts(self) -> dict[str, int]:
        """Claims per verdict, every verdict listed."""
        return {v: len(self.with_verdict(v)) for v in VERDICTS}

    def to_frame(self) -> pd.DataFrame:
        """One row per claim: group, where, says, stated, quantity, value, low, high, method, n, verdict, reason."""
        rows = []
        for c in self.items:
            e = c.estimate.to_dict() if c.estimate else dict.fromkeys(("value", "low", "high", "method", "n", "detail"))
            rows.append(
                {
                    "key": c.key,
                    "group": c.group,
                    "where": c.where,
                    "says": c.says,
                    "stated": c.stated.text,
                    "quantity": c.quantity,
                    **e,
                    "verdict": c.verdict,
                    "reason": c.reason,
                }
            )
        return pd.DataFrame(rows).set_index("key")


def sections(register: Register | Sequence[Claim]) -> list[str]:
    """The distinct places the claims come from, in order of first appearance."""
    return list(dict.fromkeys(c.where for c in register))
