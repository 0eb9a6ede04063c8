"""Every change made to the claims register's rule after the paper's verdicts had been read, with the verdicts under
the rule before and after it, computed (:func:`rule_changes`); the audit chapter discloses them.

A change is a pair of :class:`~trajectory_judge.analysis.paper.claims.Reading` s of the rule; the register is judged under
both, so what a change moved (or did not) is counted, never asserted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from trajectory_judge.analysis.paper.claims import (
    CURRENT,
    INCONCLUSIVE,
    NO_DATA,
    NOT_CHECKABLE,
    VERDICTS,
    Claim,
    Reading,
    Register,
)


@dataclass(frozen=True)
class RuleChange:
    """One change of the rule after the data: what, when, why, and the rule before and after it."""

    what: str
    """The change in words."""
    made: str
    """When it was made (the date of its entry in the changelog)."""
    why: str
    """Why it was made."""
    before: Reading
    """The rule before it."""
    after: Reading
    """The rule after it."""
    only_words: bool = False
    """It concerns only the claims that state a fraction in words."""
    split_before: bool = True
    """Whether the rule before it split *not checkable* into its two kinds (the verdicts are the same either way)."""


THIRD_BEFORE = Reading("\u201ca third\u201d as 1/3 \u00b1 0.05", equivalence=False, round_fraction=False)
THIRD_AFTER = Reading("\u201ca third\u201d as 0.3 \u00b1 0.05", equivalence=False)

CHANGES: tuple[RuleChange, ...] = (
    RuleChange(
        "*not checkable* split into two kinds, *no data* and *inconclusive*",
        "2026-12-02",
        "a claim the data cannot decide differs from one the release cannot check at all",
        THIRD_BEFORE,
        THIRD_BEFORE,
        split_before=False,
    ),
    RuleChange(
        "a fraction in words centred on its value at one significant figure: \u201ca third\u201d read as 0.3 \u00b1 0.05, "
        "where it was 1/3 \u00b1 0.05",
        "2026-12-02",
        "the rule reads a fraction in words to one significant figure, and a value read to one figure is centred on "
        "that figure, as a printed 0.3 is; the band had mixed the two readings",
        THIRD_BEFORE,
        THIRD_AFTER,
        only_words=True,
    ),
    RuleChange(
        "a stated value *confirmed*, *consistent with* the claim or *not borne out* against a tolerance band stated "
        "with the rule, where it was *borne out* whenever the band of its printed digits met the interval",
        "2026-12-06",
        "a band that need only meet the interval is met more easily the wider the interval is, so imprecision read as "
        "support; the three verdicts tell a value the data pin within its tolerance from one they only fail to "
        "contradict, and Holm's adjustment can now withdraw a confirmation as well as a rejection",
        THIRD_AFTER,
        CURRENT,
    ),
)
"""The rule's changes after the data, oldest first."""


def _label(c: Claim, reading: Reading, split: bool) -> str:
    v = c.verdict_under(reading)
    if v == NOT_CHECKABLE and split:
        return f"{v}: {NO_DATA if c.estimate is None else INCONCLUSIVE}"
    return v


def _order(label: str) -> tuple[int, str]:
    head = label.split(":")[0]
    return (VERDICTS.index(head) if head in VERDICTS else len(VERDICTS), label)


def _tally(labels: list[str]) -> str:
    counts = Counter(labels)
    return "; ".join(f"{k} {counts[k]}" for k in sorted(counts, key=_order))


@dataclass(frozen=True)
class ChangeVerdicts:
    """One change with the register's verdicts under the rule before and after it."""

    change: RuleChange
    """The change."""
    keys: tuple[str, ...]
    """The claims it concerns, in the register's order."""
    before: tuple[str, ...]
    """Their verdicts before it (``not checkable: no data`` where the rule then split it)."""
    after: tuple[str, ...]
    """Their verdicts after it."""

    @property
    def moved(self) -> dict[tuple[str, str], int]:
        """How many claims went from each verdict to another, ``(before, after)``: count; none when nothing moved."""
        return dict(Counter((b, a) for b, a in zip(self.before, self.after) if b != a))

    def moved_text(self) -> str:
        """The moves in words (``borne out \u2192 confirmed: 35``), or ``no verdict moved``."""
        moves = sorted(self.moved.items(), key=lambda kv: (_order(kv[0][0]), _order(kv[0][1])))
        return "; ".join(f"{b} \u2192 {a}: {n}" for (b, a), n in moves) or "no verdict moved"


def rule_changes(register: Register) -> tuple[ChangeVerdicts, ...]:
    """Every change of :data:`CHANGES` with the verdicts of the claims it concerns before and after it."""
    out = []
    for ch in CHANGES:
        claims = [c for c in register if c.stated.in_words] if ch.only_words else list(register)
        out.append(
            ChangeVerdicts(
                ch,
                tuple(c.key for c in claims),
                tuple(_label(c, ch.before, ch.split_before) for c in claims),
                tuple(_label(c, ch.after, True) for c in claims),
            )
        )
    return tuple(out)


def _named(register: Register, keys: tuple[str, ...], labels: tuple[str, ...]) -> str:
    return "; ".join(f"{register[k].where.split(';')[0].strip()}: {v}" for k, v in zip(keys, labels))


def disclosure_frame(register: Register) -> pd.DataFrame:
    """One row per change: what, when, why, the claims it concerns, their verdicts before and after it (a list where
    it concerns a few claims, the tally where it concerns the register) and what moved."""
    rows = []
    for cv in rule_changes(register):
        few = len(cv.keys) <= 3
        rows.append(
            {
                "Change": cv.change.what,
                "Made": cv.change.made,
                "Why": cv.change.why,
                "Claims": len(cv.keys),
                "Before": _named(register, cv.keys, cv.before) if few else _tally(list(cv.before)),
                "After": _named(register, cv.keys, cv.after) if few else _tally(list(cv.after)),
                "Moved": cv.moved_text(),
            }
        )
    return pd.DataFrame(rows)


def words_now(register: Register) -> dict[str, tuple[str, str]]:
    """The claims stated as a fraction in words, with their verdicts under the current rule read both ways (centred
    on the fraction itself and on its value at one significant figure), by key."""
    literal = Reading("centred on the fraction", round_fraction=False)
    return {c.key: (c.verdict_under(literal), c.verdict) for c in register if c.stated.in_words}
