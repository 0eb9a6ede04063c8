"""The paper's claims as the book reads them out: the register of
:mod:`trajectory_judge.analysis.paper.register` rendered as sentences, lists and the audit's table.

No verdict is decided here: each comes from the register's one rule
(:func:`trajectory_judge.analysis.paper.claims.verdict`). :func:`paper_claims` builds the register on the
paper's verdicts; each claim reads itself out with :meth:`ClaimText.sentence`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.formatting import list_text
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper.claims import (
    BORNE_OUT,
    CONFIRMED,
    CONSISTENT,
    INCONCLUSIVE,
    NO_DATA,
    NOT_BORNE_OUT,
    NOT_CHECKABLE,
    RULE,
    VERDICTS,
    Claim,
    Register,
)
from trajectory_judge.analysis.paper.register import metric_estimate as metric, paper_register, seed_register
from trajectory_judge.analysis.paper.robustness import ALTERNATIVES, P_VALUES, Robustness, robustness, seed_registers
from trajectory_judge.book.render.style import MARKS, MISSING, format_interval, format_number, number_word
from trajectory_judge.models import JudgeSpec
from trajectory_judge.provenance.computed import computes

__all__ = [
    "ALTERNATIVES",
    "P_VALUES",
    "RULE",
    "VERDICTS",
    "ClaimText",
    "Claims",
    "paper_claims",
    "claims_markdown",
    "register_table",
    "verdict_table",
    "marks_legend",
    "claim_anchor",
    "register_anchors",
    "robustness_mark",
]

_INTERVAL_METHODS = frozenset({"bootstrap", "clopper-pearson", "structural"})


def _signed(stated) -> bool:
    text = stated.text.strip()
    return text[:1] in "+\u2212-" or (stated.direction is not None and stated.boundary == 0)


@dataclass(frozen=True)
class ClaimText:
    """One claim of the register with its reading-out; every field of the record is reachable (``.verdict``, ``.low``)."""

    claim: Claim
    """The register's record."""
    robustness: Robustness | None = None
    """How robust its verdict is to the rule's alternatives, and its verdict after Holm's adjustment (None: not
    computed)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("claim", "robustness"):
            raise AttributeError(name)
        return getattr(self.claim, name)

    @property
    def detail(self) -> str:
        """What the value counts, in words."""
        return "" if self.claim.estimate is None else self.claim.estimate.detail

    def value_text(self, unit: bool = True) -> str:
        """The recomputed value with its interval, in the book's one format (a ratio as ``3.00 times``; without
        ``unit``, as the bare value and interval, for a table whose stated column names the unit)."""
        e = self.claim.estimate
        if e is None:
            return MISSING
        if self.claim.stated.text.endswith("times") and unit:
            text = format_interval(e.value, e.low, e.high, e.method)
            head, _, rest = text.partition(" ")
            return f"{format_number(e.value, 2)} times" + (f" {rest}" if rest else "")
        if e.method in _INTERVAL_METHODS:
            text = format_interval(e.value, e.low, e.high, e.method)
        elif e.method.startswith("range"):
            same = round(e.low, 3) == round(e.high, 3)
            text = format_number(e.value, 2) + (
                " on every one of them"
                if same
                else f" (range {format_number(e.low, 2)}\u2013{format_number(e.high, 2)})"
            )
        else:
            v = float(e.value)
            text = format_number(v, 0, count=True) if v.is_integer() else format_number(v, 1 if abs(v) >= 10 else 3)
        if _signed(self.claim.stated) and e.value > 0 and not text.startswith("+"):
            text = "+" + text
        return text.replace("-", "\u2212", 1) if text.startswith("-") else text

    def given(self, count_first: bool = False) -> str:
        """What the verdicts give, in words: the value with its interval and what it counts (``0.932, 192 of 206
        published numbers``; ``1 of the eight quality axes (...), namely ECE``); with ``count_first``, a count the
        detail states stands for the value (``192 of 206 published numbers; ...``)."""
        detail = self.detail
        if count_first and detail[:1].isdigit():
            return detail
        if detail.startswith("of "):
            return f"{self.value_text()} {detail}"
        return self.value_text() + (f", {detail}" if detail else "")

    def sentence(self) -> str:
        """``The paper says X (where); its verdicts give Y (interval): confirmed.`` (or ``borne out``, for a direction),
        with the reason when the verdict is another."""
        c = self.claim
        if c.estimate is None:
            return f"The paper says {c.says} ({c.where}); this cannot be checked: {c.reason}."
        got = self.given()
        tail = {CONFIRMED: CONFIRMED, BORNE_OUT: BORNE_OUT, CONSISTENT: "consistent with it"}.get(c.verdict, c.verdict)
        if c.verdict not in (CONFIRMED, BORNE_OUT):
            tail += f", {c.reason}"
        return f"The paper says {c.says} ({c.where}); its verdicts give {got}: {tail}."


@dataclass(frozen=True)
class Claims:
    """The register as chapters read it: claims by key or group, each with its sentence."""

    register: Register
    """The analysis-level register."""
    at_seed: Callable[[int], Register] | None = None
    """The register rebuilt at another bootstrap seed, for the rule's seed alternative (None: no seed alternative)."""
    seed: int | None = None
    """The bootstrap seed of :attr:`register`."""

    @functools.cached_property
    def seed_registers(self) -> dict[str, Register]:
        """The register at each other seed of :data:`~trajectory_judge.analysis.paper.robustness.SEEDS`, by name."""
        if self.at_seed is None:
            return {}
        return seed_registers(self.at_seed, -1 if self.seed is None else self.seed)

    @functools.cached_property
    def robustness(self) -> dict[str, Robustness]:
        """Every claim's robustness and adjusted verdict (:func:`~trajectory_judge.analysis.paper.robustness.robustness`)."""
        return robustness(self.register, self.seed_registers)

    def _text(self, c: Claim) -> ClaimText:
        return ClaimText(c, self.robustness[c.key])

    @property
    def items(self) -> tuple[ClaimText, ...]:
        """Every claim, in reading order."""
        return tuple(self._text(c) for c in self.register)

    def __getitem__(self, key: str) -> ClaimText:
        return self._text(self.register[key])

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.register)

    def group(self, *groups: str) -> list[ClaimText]:
        """The claims of the given groups, in order."""
        return [self._text(c) for c in self.register.group(*groups)]

    def contradicted(self) -> list[ClaimText]:
        """The claims the verdicts do not bear out."""
        return [self._text(c) for c in self.register.contradicted()]

    def counts(self) -> dict[str, int]:
        """Claims per verdict."""
        return self.register.counts()

    def to_frame(self) -> pd.DataFrame:
        """The register as a frame (:meth:`~trajectory_judge.analysis.paper.claims.Register.to_frame`)."""
        return self.register.to_frame()


def paper_claims(rep: Report, data, seeds: bool = True) -> Claims:
    """The paper's claims, checked on the report ``rep`` of its own verdicts ``data`` (trajectories, verdicts); with
    ``seeds``, their robustness includes the register recomputed at the other bootstrap seeds (on first reading).
    Each call checks the register afresh: a chapter keeps the :class:`Claims` it made and passes it on."""
    at_seed = (lambda s: seed_register(rep, data.trajectories, data.verdicts, s)) if seeds else None
    return Claims(paper_register(rep, data.trajectories, data.verdicts), at_seed, rep.seed)


def marks_legend(texts: Sequence[str]) -> str:
    """One line per interval mark that occurs in ``texts`` (empty when none does)."""
    found = [m for m in MARKS if any(m in t for t in texts)]
    return " ".join(f"{m} {MARKS[m][:1].upper() + MARKS[m][1:]}." for m in found)


_GROUP_NAMES = {
    "headline": "Abstract",
    "abstract_text": "Abstract, statements",
    "camera_ready": "Camera-ready abstract",
    "results": "§6",
    "analysis": "§7",
    "organic": "§8",
}


def verdict_words(verdict: str, kind: str = "") -> str:
    """A verdict with, for *not checkable*, its kind: ``not checkable: no data``."""
    return f"{verdict}: {kind}" if kind else verdict


VERDICT_ROWS: tuple[tuple[str, str], ...] = (
    (CONFIRMED, ""),
    (CONSISTENT, ""),
    (BORNE_OUT, ""),
    (NOT_BORNE_OUT, ""),
    (NOT_CHECKABLE, INCONCLUSIVE),
    (NOT_CHECKABLE, NO_DATA),
)
"""The verdict table's rows: *not checkable* split into inconclusive and no data."""


def robustness_text(r: Robustness) -> str:
    """``robust``, or ``fragile`` with the alternatives that flip the verdict and what they give."""
    if not r.status:
        return MISSING
    return r.status if not r.flips else f"{r.status}: {r.flipped_by()}"


def _adjusted_kind(c: ClaimText, adjusted: str) -> str:
    return "" if adjusted != NOT_CHECKABLE else (NO_DATA if c.estimate is None else INCONCLUSIVE)


@computes
def register_table(claims: Claims) -> pd.DataFrame:
    """The whole register as the audit shows it: the claim led by where the paper makes it, what it states, the
    recomputed value with its interval, the verdict and its reason, how robust the verdict is and the verdict
    adjusted for multiplicity."""
    rob = claims.robustness
    rows = [
        {
            "Claim": f"{c.where[:1].upper() + c.where[1:]}: {c.says}",
            "Stated": c.stated.text,
            "Recomputed": c.value_text(unit=False),
            "Verdict": verdict_words(c.verdict, c.kind),
            "Reason": c.reason,
            "Robustness": robustness_text(rob[c.key]),
            "After Holm": verdict_words(rob[c.key].adjusted, _adjusted_kind(c, rob[c.key].adjusted)),
        }
        for c in claims.items
    ]
    return pd.DataFrame(rows)


def register_anchors(claims: Claims) -> list[str]:
    """The anchor of each row of :func:`register_table`, in its order (:func:`claim_anchor`)."""
    return [claim_anchor(c.key) for c in claims.items]


@computes
def verdict_table(claims: Claims) -> pd.DataFrame:
    """Claims per verdict (*not checkable* split by kind) and per part of the paper, the total, and how many of each
    verdict are fragile and how many stand after Holm's adjustment."""
    parts = list(dict.fromkeys(c.group for c in claims.items))
    rob = claims.robustness

    def count(cs, v: str, k: str) -> int:
        return sum(1 for c in cs if c.verdict == v and c.kind == k)

    data = {_GROUP_NAMES.get(g, g): [count(claims.group(g), v, k) for v, k in VERDICT_ROWS] for g in parts}
    words = lambda v, k: verdict_words(v, k) + (" (a direction)" if v == BORNE_OUT else "")
    index = pd.Index([words(v, k)[:1].upper() + words(v, k)[1:] for v, k in VERDICT_ROWS], name="Verdict")
    frame = pd.DataFrame(data, index=index)
    frame["All"] = frame.sum(axis=1)
    frame["Fragile"] = [
        sum(1 for c in claims.items if c.verdict == v and c.kind == k and rob[c.key].flips) for v, k in VERDICT_ROWS
    ]
    frame["After Holm"] = [
        sum(1 for c in claims.items if rob[c.key].adjusted == v and _adjusted_kind(c, rob[c.key].adjusted) == k)
        for v, k in VERDICT_ROWS
    ]
    return frame


def judged_scope(a: int, b: int, total: int) -> str:
    """How many trajectories two judges were scored on: ``on all 400 trajectories``, ``on 40 trajectories each``
    or ``on 40 and 38 trajectories``."""
    if a == b == total:
        return f"on all {a} trajectories"
    if a == b:
        return f"on {a} trajectories each"
    return f"on {a} and {b} trajectories"


def edition_headline(rep: Report, whose: str = "This edition") -> str:
    """The counterpart of the headline in ``whose`` verdicts (``This edition``, ``Your folder``), for the first
    model with both an outcome and a step judge."""
    from trajectory_judge.book.render.style import family_pairs, judge_name, model_name

    pairs = family_pairs(list(rep.judges), [("outcome", "step")])
    if not pairs:
        return f"{whose}'s data holds no outcome-only and step-rubric judge of the same model, so it has no counterpart of the headline"
    o, st = pairs[0]
    f = lambda j, m: (lambda e: format_interval(e.value, e.low, e.high, e.method))(metric(rep, j, m))
    model = model_name(JudgeSpec.parse(o).model or "")
    n_o, n_s = rep.judges[o].n, rep.judges[st].n
    scope = judged_scope(n_o, n_s, rep.n_trajectories)
    return (
        f"{whose}'s outcome-only judge ({model}, {scope}) catches {f(o, 'loud_recall')} of loud faults and "
        f"{f(o, 'silent_recall')} of silent ones while flagging {f(o, 'false_alarm_rate')} of clean runs; the "
        f"{judge_name(st).split(' · ')[0].lower()}-rubric judge of the same model reaches {f(st, 'silent_recall')} silent recall "
        f"at a false-alarm rate of {f(st, 'false_alarm_rate')}"
    )


def scope_phrase(counts: list[int], total: int) -> str:
    """How many trajectories a set of judges was scored on: ``all 400 trajectories``, ``between 40 and 400 trajectories``."""
    lo, hi = min(counts), max(counts)
    if lo == hi == total:
        return f"all {total} trajectories" if len(counts) > 1 else f"all {total} trajectories"
    if lo == hi:
        return f"the same {lo} trajectories" if len(counts) > 1 else f"{lo} trajectories"
    return f"between {lo} and {hi} trajectories"


def signal_phrase(n_llm: int, n_signal: int) -> str:
    """``of its five LLM judges, one has silent recall above its false-alarm rate`` (number-aware)."""
    if n_llm == 0:
        return "it holds no LLM judge"
    if n_llm == 1:
        return f"its one LLM judge {'has' if n_signal else 'does not have'} silent recall above its false-alarm rate"
    who = "none" if n_signal == 0 else "all " + number_word(n_llm) if n_signal == n_llm else number_word(n_signal)
    verb = "has" if n_signal in (0, 1) and n_signal != n_llm else "have"
    their = "its" if n_signal in (0, 1) else "their"
    return f"of its {number_word(n_llm)} LLM judges, {who} {verb} silent recall above {their} false-alarm rate"


REGISTER_PAGE = "audit.html"
"""The page that holds the register, relative to a chapter's page (every chapter sits in ``notebooks/``)."""


def claim_anchor(key: str) -> str:
    """The stable anchor of a claim's row in the register's table (``claim-step8-uniform``)."""
    return "claim-" + key.replace("_", "-")


def robustness_mark(c: ClaimText, page: str = REGISTER_PAGE) -> str:
    """What a chapter citing a verdict says of its robustness: a link to its register row, led by *fragile* (with
    the alternatives that flip it) or *withdrawn after Holm* (with the adjusted verdict) where it is so."""
    link = f'<a class="tj-claim-mark" href="{page}#{claim_anchor(c.key)}" title="This claim\'s row in the claims register">register row</a>'
    r = c.robustness
    words = []
    if r is not None and r.flips:
        gives = list_text(sorted({a.verdict for a in r.flips}))
        words.append(f"*fragile*: under {list_text([a.name for a in r.flips])} the rule gives {gives}")
    if r is not None and r.adjusted != c.verdict:
        adjusted = verdict_words(r.adjusted, _adjusted_kind(c, r.adjusted))
        words.append(f"*withdrawn after Holm*: adjusted for multiplicity, {adjusted}")
    return f" ({'; '.join(words)}; {link})" if words else f" ({link})"


def claims_markdown(claims: Sequence[ClaimText], page: str = REGISTER_PAGE) -> str:
    """A group of claims as a Markdown list, one sentence per claim (a claim not borne out is marked), each followed
    by its :func:`robustness_mark`, then the legend of every interval mark the list uses."""
    lead = {NOT_BORNE_OUT: "**Not borne out.** ", NOT_CHECKABLE: "*Not checkable.* "}
    lines = [f"- {lead.get(c.verdict, '')}{c.sentence()[:-1]}{robustness_mark(c, page)}." for c in claims]
    legend = marks_legend([c.value_text() for c in claims]).replace("*", "\\*")
    return "\n".join(lines) + "\n" + (f"\n{legend}\n" if legend else "")
