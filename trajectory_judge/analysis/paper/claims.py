"""The claims register's types and its one rule: each claim of the paper is a typed record whose
verdict is derived, never written.

A :class:`Claim` holds where the paper makes it, what it says in this book's words, what it states
(:class:`Stated`: a value at its printed precision, or a direction against a boundary), the quantity
that checks it and that quantity's :class:`Estimate` (value, 95% interval, method, n). :func:`verdict`
is the rule (:data:`RULE` says it in words); :class:`Register` holds the claims in reading order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

CONFIRMED, CONSISTENT = "confirmed", "consistent with"
"""The verdicts a stated value can earn beside *not borne out*: its interval lies within the value's tolerance band,
or meets the band but is too wide to lie within it."""

BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE = "borne out", "not borne out", "not checkable"
"""A stated direction is *borne out* or *not borne out*; a stated value is *not borne out* when its interval misses
the band; a claim the data cannot decide is *not checkable*."""

VERDICTS: tuple[str, ...] = (CONFIRMED, CONSISTENT, BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE)
"""The verdicts, in the order tables list them."""

HOLDS: tuple[str, ...] = (CONFIRMED, CONSISTENT, BORNE_OUT)
"""The verdicts under which the data do not count against a claim."""

NO_DATA, INCONCLUSIVE = "no data", "inconclusive"
"""The two kinds of *not checkable*: the released data cannot give the quantity, or its interval straddles the
boundary of a stated direction."""

MARGIN = 0.05
"""The tolerance a stated value on the scale of a proportion keeps against sampling noise: its band reaches this far
either side of it (or half a unit of its last printed digit, when that is wider)."""

SAMPLED_METHODS = frozenset({"bootstrap", "clopper-pearson", "bca", "bc"})
"""The interval methods of a quantity with sampling variance (the others are their own interval)."""

RULE = (
    "Before any claim is read against the data, each stated value gets a tolerance band: the value widened by half "
    "a unit of its last printed digit (a fraction in words is read to one significant figure: \u201ca third\u201d as 0.3) "
    f"or, for a quantity on the scale of a proportion that has sampling variance (a rate, a share, F1, ECE, a "
    f"confidence, or a difference of two), by {MARGIN:g} either side, whichever is wider. A quantity without "
    "sampling variance (a count, a design constant, a ratio of timings measured once) is its own interval and keeps "
    "the band of its printed digits alone. A stated value is *confirmed* when the whole 95% interval of the quantity "
    "that checks it lies within that band, *consistent with* the claim when the interval meets the band but is too "
    "wide to lie within it, and *not borne out* when the interval misses the band. A stated direction (a difference "
    "of one sign, or one side of a boundary) is *borne out* when the whole interval lies on the stated side, and "
    "*not borne out* when it lies wholly on the other side (a boundary value counts against a strict direction). "
    "Otherwise a claim is *not checkable*, of one of two kinds: *no data* (the released data cannot give the "
    "quantity) or *inconclusive* (the interval straddles the boundary of a stated direction)."
)
"""The rule, stated once (the audit chapter prints it above the register)."""


@dataclass(frozen=True)
class Reading:
    """One version of the rule, for the disclosure of how it changed after the data were seen: the current one is
    :data:`CURRENT`."""

    name: str
    """The version in words."""
    equivalence: bool = True
    """Three verdicts for a stated value against its tolerance band (True), or the earlier two: *borne out* when the
    band of the printed digits meets the interval, *not borne out* when it misses it (False)."""
    round_fraction: bool = True
    """A fraction in words centred on its value rounded to one significant figure (\u201ca third\u201d as 0.3), or on
    the fraction itself (1/3); the band is half a unit of that figure either way."""


CURRENT = Reading("the rule as stated")
"""The rule of :data:`RULE`."""

Direction = Literal["above", "below", "at_least", "at_most"]


Test = Literal["above", "below", "excludes"]
"""When an interval a count counts passes: it lies wholly above zero, wholly below it, or excludes it."""


@dataclass(frozen=True)
class Counted:
    """One estimate a count of intervals is taken over, with the test it must pass to be counted."""

    name: str
    """What it is, in words (``ECE``, ``step 14B``)."""
    estimate: Estimate
    """Its estimate and interval."""
    test: Test
    """When it is counted (:data:`Test`)."""

    @property
    def passes(self) -> bool:
        """Whether its interval passes the test."""
        lo, hi = self.estimate.low, self.estimate.high
        return {"above": lo > 0, "below": hi < 0, "excludes": lo > 0 or hi < 0}[self.test]


ESTIMATE_FIELDS: tuple[str, ...] = ("value", "low", "high", "method", "n", "detail")
"""What :meth:`Estimate.to_dict` holds, in this order (the estimate's columns of :meth:`Register.to_frame`)."""


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
    they give the exact interval and the jackknife of the alternatives (:mod:`~trajectory_judge.analysis.paper.robustness`)."""
    parts: tuple[Counted, ...] = field(default=(), repr=False, compare=False)
    """When the quantity counts intervals (the quality axes whose difference excludes zero), the estimates it counts
    over and the test each must pass; the rule's alternatives count them again under each alternative interval."""

    @classmethod
    def exact(cls, value: float, n: int | None = None, detail: str = "", method: str = "exact") -> Estimate:
        """A value without sampling variance: its own interval."""
        return cls(float(value), float(value), float(value), method, n, detail)

    @classmethod
    def count_of(cls, parts: Sequence[Counted], detail: Callable[[list[str]], str]) -> Estimate:
        """How many of ``parts`` pass their test, out of how many there are: an exact count, with ``detail`` of the
        names of those that pass; it keeps its parts, so it can be counted again under another interval."""
        hits = [p.name for p in parts if p.passes]
        return cls(
            float(len(hits)), float(len(hits)), float(len(hits)), "exact", len(parts), detail(hits), parts=tuple(parts)
        )

    def recount(self, estimates: Sequence[Estimate]) -> Estimate:
        """The count again with each part's estimate replaced by the one of ``estimates`` in the same place."""
        if len(estimates) != len(self.parts):
            raise ValueError(f"a count over {len(self.parts)} estimates recounted over {len(estimates)}")
        parts = [Counted(p.name, e, p.test) for p, e in zip(self.parts, estimates)]
        hits = [p.name for p in parts if p.passes]
        n = float(len(hits))
        return dataclasses.replace(self, value=n, low=n, high=n, detail=", ".join(hits) or "none", parts=tuple(parts))

    def to_dict(self) -> dict:
        """Value, low, high, method, n and detail as plain Python values."""
        return {k: getattr(self, k) for k in ESTIMATE_FIELDS}


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

    @property
    def proportion_scale(self) -> bool:
        """Whether the stated value is on the scale of a proportion (a rate, a share, F1, ECE, a confidence or a
        difference of two): printed as a percentage or with two or three decimals, a fraction in words, or none or
        all of something in words; a count, a ratio (``3 times``) and seconds are not."""
        if self.value is None:
            return False
        return self.in_words or self.precision in (0.01, 0.001) or (self.precision == 0 and self.value in (0.0, 1.0))


def _centre(stated: Stated, reading: Reading = CURRENT) -> float:
    if stated.value is None:
        raise ValueError(f"{stated.text!r} states a direction, not a value")
    if stated.in_words and stated.precision and reading.round_fraction:
        return round(stated.value / stated.precision) * stated.precision
    return stated.value


def band(stated: Stated, reading: Reading = CURRENT) -> tuple[float, float]:
    """The stated value widened by half a unit of its last printed digit (one point for an exact value)."""
    centre, half = _centre(stated, reading), stated.precision / 2
    return centre - half, centre + half


def sampled(estimate: Estimate) -> bool:
    """Whether the estimate's interval comes from sampling (:data:`SAMPLED_METHODS`), not from an exact value."""
    return estimate.method in SAMPLED_METHODS


def tolerance(stated: Stated, estimate: Estimate | None = None) -> float:
    """How far either side of a stated value its tolerance band reaches (:data:`RULE`): half a unit of its last
    printed digit, or :data:`MARGIN` for a quantity on the scale of a proportion with sampling variance, whichever is
    wider."""
    half = stated.precision / 2
    if stated.proportion_scale and estimate is not None and sampled(estimate):
        return max(half, MARGIN)
    return half


def tolerance_band(stated: Stated, estimate: Estimate | None = None, reading: Reading = CURRENT) -> tuple[float, float]:
    """The stated value's tolerance band against ``estimate`` (:func:`tolerance`); under a :class:`Reading` without
    equivalence, the band of its printed digits (:func:`band`)."""
    if not reading.equivalence:
        return band(stated, reading)
    centre, t = _centre(stated, reading), tolerance(stated, estimate)
    return centre - t, centre + t


_EPS = 1e-12


def _meets(a: float, b: float, lo: float, hi: float) -> bool:
    return a <= hi + _EPS and lo - _EPS <= b


def _within(a: float, b: float, lo: float, hi: float) -> bool:
    return a - _EPS <= lo and hi <= b + _EPS


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


def verdict(stated: Stated, estimate: Estimate | None, reading: Reading = CURRENT) -> tuple[str, str]:
    """The one rule (:data:`RULE`): ``(verdict, reason)`` from what a claim states and its estimate.

    The reason prints the numbers it compares (the interval, the stated value's band or the boundary), with enough
    digits that the comparison it states holds on them. ``estimate`` None means the data cannot give the quantity
    (the caller's reason is kept). ``reading`` gives an earlier version of the rule (:class:`Reading`).
    """
    if estimate is None or any(math.isnan(x) for x in (estimate.value, estimate.low, estimate.high)):
        return NOT_CHECKABLE, ""
    lo, hi = estimate.low, estimate.high
    if stated.value is not None:
        if not reading.equivalence:
            return _meets_verdict(stated, lo, hi, reading)
        return _value_verdict(stated, estimate, reading)
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


def _band_text(stated: Stated, a: float, b: float, t: float) -> str:
    """How the reason names a stated value's band: ``84% (read as 0.79 to 0.89)``, ``(exactly 4)``."""
    if a == b:
        return f"{stated.text} (exactly {_exact_text(a)})"
    if _decimals(t) > 3:
        return f"{stated.text} (at its printed precision)"
    dec = next((d for d in range(_decimals(t), 4) if all(abs(round(x, d) - x) < 1e-9 for x in (a, b))), 3)
    return f"{stated.text} (read as {_signed(a, dec)} to {_signed(b, dec)})"


def _value_verdict(stated: Stated, estimate: Estimate, reading: Reading = CURRENT) -> tuple[str, str]:
    """The rule on a stated value: confirmed, consistent with, or not borne out, against its tolerance band."""
    lo, hi = estimate.low, estimate.high
    a, b = tolerance_band(stated, estimate, reading)
    inside, meets = _within(a, b, lo, hi), _meets(a, b, lo, hi)
    if lo < hi or a < b:
        llo, lhi = number_texts((lo, hi), lambda lo, hi: (_within(a, b, lo, hi), _meets(a, b, lo, hi), lo < hi))
        iv = f"the interval {_interval_text(llo, lhi)}" if lo < hi else f"the value {llo}"
        read = _band_text(stated, a, b, (b - a) / 2)
        if inside:
            return CONFIRMED, f"{iv} lies within {read}"
        if meets:
            return CONSISTENT, f"{iv} meets {read} but is too wide to lie within it"
        return NOT_BORNE_OUT, f"{iv} excludes {read}"
    v, _ = number_texts((lo, a), lambda x, a: abs(x - a) <= _EPS)
    if inside:
        return CONFIRMED, f"the value is {v}, as stated ({stated.text})"
    return NOT_BORNE_OUT, f"the value is {v}, not {stated.text}"


def _meets_verdict(stated: Stated, lo: float, hi: float, reading: Reading) -> tuple[str, str]:
    """The earlier rule on a stated value (a :class:`Reading` without equivalence): *borne out* when the band of its
    printed digits meets the interval, *not borne out* otherwise."""
    a, b = band(stated, reading)
    ok = _meets(a, b, lo, hi)
    llo, lhi = number_texts((lo, hi), lambda lo, hi: (_meets(a, b, lo, hi), lo < hi))
    iv = f"the interval {_interval_text(llo, lhi)}" if lo < hi else f"the value {llo}"
    read = _band_text(stated, a, b, stated.precision / 2)
    return (BORNE_OUT, f"{read} meets {iv}") if ok else (NOT_BORNE_OUT, f"{iv} excludes {read}")


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
    to compare with (:mod:`~trajectory_judge.analysis.paper.robustness` judges the claim under it too)."""

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
        """One of :data:`VERDICTS`, by the register's one rule."""
        return verdict(self.stated, self.estimate)[0]

    def verdict_under(self, reading: Reading) -> str:
        """Its verdict under another version of the rule (:class:`Reading`)."""
        return verdict(self.stated, self.estimate, reading)[0]

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
        """True when the data do not count against the claim: confirmed, consistent with it, or a direction borne
        out (:data:`HOLDS`)."""
        return self.verdict in HOLDS

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

    def counts(self, reading: Reading = CURRENT) -> dict[str, int]:
        """Claims per verdict, every verdict listed (under ``reading``, a version of the rule)."""
        got = [c.verdict_under(reading) for c in self.items]
        return {v: got.count(v) for v in VERDICTS}

    def to_frame(self) -> pd.DataFrame:
        """One row per claim: group, where, says, stated, quantity, value, low, high, method, n, verdict, reason."""
        rows = []
        for c in self.items:
            e = c.estimate.to_dict() if c.estimate else dict.fromkeys(ESTIMATE_FIELDS)
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
