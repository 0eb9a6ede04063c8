"""Every sentence of the book that counts or characterises the paper's claims, from one record and one function.

A :class:`Tally` is how the register's verdicts fall on one set of its claims (a part of the paper, the claims a
sentence restates, the whole register), with the robustness and the Holm-adjusted verdict of each; it is built
from the register's records by :func:`tally` and read out by :func:`summary_sentence`, the one function that writes
such a sentence on the landing page, in Results, in the analysis chapter and in the audit. A count in the book can
then never disagree with the register's tally for the same set. :data:`SCOPES` names the sets the book counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from trajectory_judge.analysis.core.formatting import list_text
from trajectory_judge.analysis.paper.claims import (
    BORNE_OUT,
    CONFIRMED,
    CONSISTENT,
    HOLDS,
    INCONCLUSIVE,
    NO_DATA,
    NOT_BORNE_OUT,
    NOT_CHECKABLE,
)
from trajectory_judge.analysis.paper.robustness import Robustness
from trajectory_judge.book.render.claim_text import Claims, ClaimText, number_word

__all__ = ["SCOPES", "Tally", "summary_sentence", "tally", "tally_of"]

SCOPES: dict[str, tuple[tuple[str, ...], str]] = {
    "abstract": (("headline", "abstract_text"), "claims of the paper's abstract"),
    "camera_ready": (("camera_ready",), "claims of the paper's camera-ready abstract"),
    "results": (("results",), "claims of the paper's results section and its captions"),
    "analysis": (("analysis",), "claims of the paper's analysis section and its captions"),
    "organic": (("organic",), "claims of the paper's section on organic faults"),
    "register": (
        ("headline", "abstract_text", "camera_ready", "results", "analysis", "organic"),
        "claims of the paper in the register",
    ),
}
"""The sets of claims the book counts: the register's groups each set holds, and the set in words."""


@dataclass(frozen=True)
class Tally:
    """How the register's verdicts fall on one set of its claims, with each claim's robustness."""

    scope: str
    """The set in words, as a sentence counts it (``claims of the paper's abstract``)."""
    claims: tuple[ClaimText, ...]
    """The claims, in the register's order."""
    robustness: Mapping[str, Robustness]
    """Each claim's robustness and Holm-adjusted verdict, by key."""

    @property
    def n(self) -> int:
        """How many claims the set holds."""
        return len(self.claims)

    def _with(self, verdict: str, kind: str = "") -> tuple[ClaimText, ...]:
        return tuple(c for c in self.claims if c.verdict == verdict and (not kind or c.kind == kind))

    @property
    def confirmed(self) -> tuple[ClaimText, ...]:
        """The stated values the verdicts confirm (the interval lies within the tolerance band)."""
        return self._with(CONFIRMED)

    @property
    def consistent(self) -> tuple[ClaimText, ...]:
        """The stated values the verdicts are consistent with but too imprecise to confirm."""
        return self._with(CONSISTENT)

    @property
    def borne_out(self) -> tuple[ClaimText, ...]:
        """The stated directions the verdicts bear out."""
        return self._with(BORNE_OUT)

    @property
    def holding(self) -> tuple[ClaimText, ...]:
        """The claims the verdicts do not count against: confirmed, consistent with, or a direction borne out."""
        return tuple(c for c in self.claims if c.verdict in HOLDS)

    @property
    def not_borne_out(self) -> tuple[ClaimText, ...]:
        """The claims the verdicts do not bear out."""
        return self._with(NOT_BORNE_OUT)

    @property
    def not_checkable(self) -> tuple[ClaimText, ...]:
        """The claims the verdicts cannot check, of either kind."""
        return self._with(NOT_CHECKABLE)

    @property
    def no_data(self) -> tuple[ClaimText, ...]:
        """Not checkable: the released data cannot give the quantity."""
        return self._with(NOT_CHECKABLE, NO_DATA)

    @property
    def inconclusive(self) -> tuple[ClaimText, ...]:
        """Not checkable: the interval straddles the boundary of a stated direction."""
        return self._with(NOT_CHECKABLE, INCONCLUSIVE)

    @property
    def fragile(self) -> tuple[ClaimText, ...]:
        """The claims whose verdict one of the rule's alternatives at least changes."""
        return tuple(c for c in self.claims if self.robustness[c.key].flips)

    @property
    def withdrawn(self) -> tuple[ClaimText, ...]:
        """The claims whose verdict Holm's adjustment changes."""
        return tuple(c for c in self.claims if self.robustness[c.key].adjusted != c.verdict)

    def counts(self) -> dict[str, int]:
        """The tally in numbers: claims, each verdict, each kind of not checkable, fragile and withdrawn."""
        return {
            "claims": self.n,
            CONFIRMED: len(self.confirmed),
            CONSISTENT: len(self.consistent),
            BORNE_OUT: len(self.borne_out),
            NOT_BORNE_OUT: len(self.not_borne_out),
            NOT_CHECKABLE: len(self.not_checkable),
            NO_DATA: len(self.no_data),
            INCONCLUSIVE: len(self.inconclusive),
            "fragile": len(self.fragile),
            "withdrawn": len(self.withdrawn),
        }


def tally(claims: Claims, scope: str) -> Tally:
    """The tally of one of :data:`SCOPES` (``abstract``, ``results``, ``register``...) on ``claims``."""
    if scope not in SCOPES:
        raise ValueError(f"no set of claims named {scope!r}; the book counts {', '.join(SCOPES)}")
    groups, words = SCOPES[scope]
    return Tally(words, tuple(claims.group(*groups)), claims.robustness)


def tally_of(claims: Claims, keys: Iterable[str], words: str) -> Tally:
    """The tally of the claims of ``keys`` (those the register holds, in its order), the set named ``words``."""
    wanted = set(keys)
    chosen = tuple(c for c in claims.items if c.key in wanted)
    if not chosen:
        raise ValueError(f"none of the claims of {words!r} is in the register")
    return Tally(words, chosen, claims.robustness)


def _n(k: int) -> str:
    return number_word(k)


def _where(c: ClaimText) -> str:
    return c.where.split(";")[0]


def _got(c: ClaimText) -> str:
    """What the verdicts give for a claim, for a parenthesis: ``the verdicts give 192 of 206 published numbers``."""
    return "the verdicts give " + c.given(count_first=True)


def _verdicts_clause(t: Tally) -> str:
    """``Of the 13 claims ..., the paper's verdicts confirm four, are consistent with five, bear out two stated
    directions and contradict two`` (or ``confirm all eight ...`` when one verdict takes every claim)."""
    bad, open_ = len(t.not_borne_out), len(t.not_checkable)
    whole = {CONFIRMED: "confirm", CONSISTENT: "are consistent with", BORNE_OUT: "bear out"}
    for v, verb in whole.items():
        if len(t._with(v)) == t.n:
            return f"The paper's verdicts {verb} {'the one' if t.n == 1 else 'all ' + _n(t.n)} {t.scope}"
    if open_ == t.n:
        return f"The paper's verdicts can check {'none' if t.n > 1 else 'neither'} of the {_n(t.n)} {t.scope}"
    parts = []
    for k, verb in ((len(t.confirmed), "confirm"), (len(t.consistent), "are consistent with")):
        if k:
            parts.append(f"{verb} {_n(k)}")
    if t.borne_out:
        k = len(t.borne_out)
        parts.append(f"bear out {_n(k)} stated direction{'s' if k > 1 else ''}")
    if not parts:
        parts.append("confirm none")
    if bad:
        parts.append(f"contradict {_n(bad)}")
    if open_:
        parts.append(f"cannot check {_n(open_)}" + _open_kinds(t))
    said = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"Of the {_n(t.n)} {t.scope}, the paper's verdicts {said}"


def _open_kinds(t: Tally) -> str:
    nd, inc = len(t.no_data), len(t.inconclusive)
    if nd and inc:
        return f" ({_n(nd)} for want of data, {_n(inc)} because the interval straddles the boundary)"
    if nd:
        return " for want of data"
    return (
        " because its interval straddles the boundary" if inc == 1 else " because their intervals straddle the boundary"
    )


def _named(cs: Sequence[ClaimText]) -> str:
    return list_text([f"that {c.says} ({_got(c)})" for c in cs])


def _robustness_clause(t: Tally, detail: Literal["count", "names", "flips"]) -> str:
    """How the verdicts stand the rule's alternatives and Holm's adjustment (empty when nothing is checkable)."""
    checked = [c for c in t.claims if t.robustness[c.key].status]
    if not checked:
        return ""
    fragile, withdrawn = t.fragile, t.withdrawn
    if not fragile and not withdrawn:
        each = "the verdict survives" if len(checked) == 1 else "each of these verdicts survives"
        return f"{each} every alternative reading of the rule and Holm's adjustment"
    out = []
    said = lambda cs: list_text([f"that {c.says} ({_where(c)})" for c in cs])
    if fragile:
        k = len(fragile)
        if detail == "count":
            names = ""
        elif detail == "flips":
            names = ": " + list_text(
                [f"{_where(c)} ({c.stated.text}: {t.robustness[c.key].flipped_by()})" for c in fragile]
            )
        else:
            names = (", " if k == 1 else ", those ") + said(fragile)
        verb = "is" if k == 1 else "are"
        out.append(
            f"{_n(k)} of these verdicts {verb} fragile{names}" if len(checked) > 1 else f"the verdict is fragile{names}"
        )
    else:
        out.append("every verdict survives the rule's alternatives")
    if withdrawn:
        if detail == "count":
            names = ""
        elif detail == "flips":
            names = ": " + list_text([f"{_where(c)} ({c.stated.text})" for c in withdrawn])
        else:
            names = ", " + said(withdrawn)
        out.append(f"Holm's adjustment withdraws {_n(len(withdrawn))}{names}")
    else:
        out.append("Holm's adjustment withdraws none")
    return "; ".join(out) if detail != "count" else " and ".join(out)


def summary_sentence(
    t: Tally,
    *,
    name: bool = True,
    robustness: Literal["none", "count", "names", "flips"] = "names",
) -> str:
    """The one sentence the book says a set of claims with, from its :class:`Tally` (no final full stop).

    It counts the claims, those confirmed, consistent with, borne out (a direction), contradicted and not checkable
    (by kind), with ``name`` names what each
    contradicted claim says and what the verdicts give, and then says how the verdicts stand the rule's alternatives
    and Holm's adjustment: as counts (``count``), naming the fragile and withdrawn ones (``names``), or naming what
    flips each (``flips``); ``none`` leaves that out.
    """
    if t.n == 0:
        return f"The register holds no {t.scope}"
    text = _verdicts_clause(t)
    if name and t.not_borne_out:
        text += f"; not borne out: {_named(t.not_borne_out)}"
    if robustness != "none":
        clause = _robustness_clause(t, robustness)
        if clause:
            text += f". {clause[:1].upper() + clause[1:]}"
    return text
