"""The claims register's types and its one rule: each claim of the paper is a typed record whose
verdict is derived, never written.

A :class:`Claim` holds where the paper makes it, what it says in this book's words, what it states
(:class:`Stated`: a value at its printed precision, or a direction against a boundary), the quantity
that checks it and that quantity's :class:`Estimate` (value, 95% interval, method, n). :func:`verdict`
is the rule (:data:`RULE` says it in words); :class:`Register` holds the claims in reading order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE = "borne out", "not borne out", "not checkable"
VERDICTS: tuple[str, ...] = (BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE)
"""The three verdicts, in the order tables list them."""

NO_DATA, INCONCLUSIVE = "no data", "inconclusive"
"""The two kinds of *not checkable*: the released data cannot give the quantity, or its interval straddles the
boundary of a stated direction."""

RULE = (
    "A claim states a value, at the precision it is printed with, or a direction (a difference of one sign, "
    "or one side of a boundary). It is *borne out* when the stated value, widened by half a unit of its last "
    "printed digit (a fraction in words is read to one significant figure: \u201ca third\u201d as 0.3), meets the 95% interval "
    "of the quantity that checks it, or when the whole interval lies on "
    "the stated side of the boundary; *not borne out* when the interval excludes the stated value, or lies "
    "wholly on the other side (a boundary value counts against a strict direction); otherwise *not checkable*, "
    "of one of two kinds: *no data* (the released data cannot give the quantity) or *inconclusive* (the interval "
    "straddles the boundary of a stated direction). A quantity without sampling variance (a count, a design constant, a ratio of timings "
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
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The quantity on every replicate of the bootstrap that gave its interval (None without one)."""
    units: np.ndarray | None = field(default=None, repr=False, compare=False)
    """When the quantity is the mean of one value per unit (a proportion is the mean of 0s and 1s), those values;
    they give the exact interval and the jackknife of the alternatives (:mod:`~trajectory_judge.analysis.robustness`)."""

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
    in_words: bool = False
    """A fraction in words (``a third``), read to one significant figure; the rule's alternatives read it literally."""

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
        precision = 10.0 ** (math.floor(math.log10(abs(value)))) if value else 0.0
        return cls(text, value=float(value), precision=precision, in_words=True)

    @classmethod
    def side(cls, text: str, direction: Direction, boundary: float = 0.0) -> Stated:
        """A stated direction against ``boundary``."""
        return cls(text, direction=direction, boundary=float(boundary))


def band(stated: Stated) -> tuple[float, float]:
    """The stated value widened by half a unit of its last printed digit (one point for an exact value)."""
    if stated.value is None:
        raise ValueError(f"{stated.text!r} states a direction, not a value")
    half = stated.precision / 2
    centre = round(stated.value / stated.precision) * stated.precision if stated.in_words and half else stated.value
    return centre - half, centre + half


_EPS = 1e-12


def _meets(a: float, b: float, lo: float, hi: float) -> bool:
    return a <= hi + _EPS and lo - _EPS <= b


def _on_side(direction: Direction, lo: float, hi: float, t: float) -> bool:
    return {"above": lo > t, "at_least": lo >= t, "below": hi < t, "at_most": hi <= t}[direction]


def _off_side(direction: Direction, lo: float, hi: float, t: float) -> bool:
    return {"above": hi <= t, "at_least": hi < t, "below": lo >= t, "at_most": lo > t}[direction]


def number_texts(values: Sequence[float], relation: Callable[..., object]) -> list[str]:
    """``values`` printed as the book prints numbers (integers whole, others with two or three decimals), with the
    fewest digits at which ``relation`` of the printed numbers is what it is of the values, so no reason can state a
    comparison its own digits contradict; more digits only when three decimals cannot show it."""
    want = relation(*values)
    forms = [lambda v: f"{v:.0f}"] if all(float(v).is_integer() for v in values) else []
    forms += [lambda v, d=d: f"{v:.{d}f}" for d in (2, 3)] + [lambda v, k=k: f"{v:.{k}g}" for k in range(3, 18)]
    for form in forms:
        texts = [form(v) for v in values]
        if relation(*(float(t) for t in texts)) == want:
            return [_typeset("0" + t[2:] if t.startswith("-0") and not t.strip("-0.") else t) for t in texts]
    return [_typeset(repr(v)) for v in values]


_SUPERSCRIPTS = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _typeset(text: str) -> str:
    """A printed number as the book sets it: a true minus sign, and a power of ten written out (``8.94 \u00d7 10\u207b\u2076``,
    not ``8.94e-06``)."""
    mantissa, e, exponent = text.partition("e")
    if e:
        text = f"{mantissa} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPTS)}"
    return text.replace("-", "\u2212")


def _interval_text(lo: str, hi: str) -> str:
    return f"{lo} to {hi}"


def verdict(stated: Stated, estimate: Estimate | None) -> tuple[str, str]:
    """The one rule (:data:`RULE`): ``(verdict, reason)`` from what a claim states and its estimate.

    The reason prints the numbers it compares (the interval, the stated value's band or the boundary), with enough
    digits that the comparison it states holds on them. ``estimate`` None means the data cannot give the quantity
    (the caller's reason is kept).
    """
    if estimate is None or any(math.isnan(x) for x in (estimate.value, estimate.low, estimate.high)):
        return NOT_CHECKABLE, ""
    lo, hi = estimate.low, estimate.high
    if stated.value is not None:
        return _value_verdict(stated, lo, hi)
    t, d = stated.boundary, stated.direction
    if d is None:
        raise ValueError(f"{stated.text!r} states neither a value nor a direction")
    llo, lhi = number_texts((lo, hi), lambda lo, hi: (_on_side(d, lo, hi, t), _off_side(d, lo, hi, t), lo < hi))
    lt = _exact_text(t)
    iv = f"the whole interval {_interval_text(llo, lhi)}" if lo < hi else f"the value {llo}"
    if _on_side(d, lo, hi, t):
        return BORNE_OUT, f"{iv} lies {_side_word(d)} {lt}"
    if _off_side(d, lo, hi, t):
        return NOT_BORNE_OUT, f"{iv} lies on the other side of {lt}"
    return (
        NOT_CHECKABLE,
        f"the interval {_interval_text(llo, lhi)} straddles {lt}, so the data cannot tell the direction",
    )


def _value_verdict(stated: Stated, lo: float, hi: float) -> tuple[str, str]:
    """The rule on a stated value."""
    a, b = band(stated)
    ok = _meets(a, b, lo, hi)
    if lo < hi or a < b:
        llo, lhi = number_texts((lo, hi), lambda lo, hi: (_meets(a, b, lo, hi), lo < hi))
        iv = f"the interval {_interval_text(llo, lhi)}" if lo < hi else f"the value {llo}"
        if a == b:
            read = f" (exactly {_exact_text(a)})"
        elif (dec := _decimals(stated.precision / 2)) <= 3:
            read = f" (read as {_signed(a, dec)} to {_signed(b, dec)})"
        else:
            read = " (at its printed precision)"
        if ok:
            return BORNE_OUT, f"{stated.text}{read} meets {iv}"
        return NOT_BORNE_OUT, f"{iv} excludes {stated.text}{read}"
    v, _ = number_texts((lo, a), lambda x, a: abs(x - a) <= _EPS)
    if ok:
        return BORNE_OUT, f"the value is {v}, as stated ({stated.text})"
    return NOT_BORNE_OUT, f"the value is {v}, not {stated.text}"


def _decimals(x: float) -> int:
    """Decimals of a unit such as 0.005 (3) or 0.5 (1)."""
    return max(0, -math.floor(math.log10(abs(x)) + 1e-9)) if x else 0


def _signed(x: float, dec: int) -> str:
    return f"{x:.{dec}f}".replace("-", "\u2212")


def _exact_text(x: float) -> str:
    return f"{x:g}".replace("-", "\u2212")


def _side_word(direction: Direction) -> str:
    return {"above": "above", "at_least": "at or above", "below": "below", "at_most": "at or below"}[direction]


@dataclass(frozen=True)
class Variant:
    """Another reading a claim allows of what checks it: the raw quantity beside a paired one, or another baseline
    to compare with (:mod:`~trajectory_judge.analysis.robustness` judges the claim under it too)."""

    choice: str
    """``quantity`` (the paired or the raw quantity) or ``baseline`` (what the claim compares with)."""
    name: str
    """The alternative in words (``raw recall difference``)."""
    estimate: Estimate | None = None
    """Its estimate (None: the claim's own)."""
    stated: Stated | None = None
    """What the claim states under it (None: the claim's own)."""


@dataclass(frozen=True)
class Claim:
    """One checkable claim of the paper, with the estimate that checks it; its verdict is derived by :func:`verdict`."""

    key: str
    """Short stable name (glue keys and tests)."""
    group: str
    """``headline`` (the paper's abstract), ``abstract_text`` (its statements without a number), ``camera_ready`` (the camera-ready abstract), ``results`` (§6 and its
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
    variants: tuple[Variant, ...] = ()
    """Other readings the claim allows (:class:`Variant`), judged by the same rule for its robustness."""

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
    def kind(self) -> str:
        """For a claim not checkable, :data:`NO_DATA` or :data:`INCONCLUSIVE`; empty otherwise."""
        if self.verdict != NOT_CHECKABLE:
            return ""
        return NO_DATA if self.estimate is None or math.isnan(self.estimate.value) else INCONCLUSIVE

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
