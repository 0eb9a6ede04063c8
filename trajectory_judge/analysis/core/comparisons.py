"""The pairs of judges a reader compares, so the report need not compute every pair.

A judge id is ``VIEW:MODEL`` (``step:qwen2.5:14b``; ``selfcons3:MODEL`` for the ensemble) or a
bare name (``programmatic``, a Python judge). The paper reads two kinds of comparison: the views
of one model against each other (``step - outcome``, ``selfcons - step``) and one view across
models (the 14B against the 8B). A ``reference`` judge adds a third: every judge against it.
With ``n`` judges that is about ``n`` pairs per kind instead of ``n^2 / 2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trajectory_judge.models import JudgeSpec

KINDS: tuple[str, ...] = ("reference", "same model", "same view")
"""Why a pair is compared, in the order the report lists them (a pair that fits two is listed under the first)."""


@dataclass(frozen=True)
class Comparison:
    """One compared pair: the delta is ``b - a``."""

    a: str
    """The judge subtracted (earlier in report order, or the reference)."""
    b: str
    """The judge compared with it."""
    kind: str
    """One of :data:`KINDS`."""


def split_judge_id(judge_id: str) -> tuple[str, str | None]:
    """``(setup, model)`` of a judge id (:class:`~trajectory_judge.models.JudgeSpec`): for an LLM judge its
    :attr:`~trajectory_judge.models.JudgeSpec.head` (``step``, ``selfcons3``, ``step@T0.7/seed7``) and its
    model; the whole id and None for the rule engine and a Python judge, whose ``NAME:DETAIL`` names no model."""
    spec = JudgeSpec.parse(judge_id)
    return (spec.head, spec.model) if spec.is_llm else (judge_id, None)


def compared_pairs(judges: Sequence[str], reference: str | None = None) -> tuple[Comparison, ...]:
    """The pairs of ``judges`` (in report order) that share a model or a view, and each judge against ``reference``.

    Each unordered pair appears once, under the first kind of :data:`KINDS` that applies; ``a`` is
    the judge earlier in ``judges`` except against the reference, where ``a`` is the reference.
    Raises ValueError when ``reference`` is not one of ``judges``.
    """
    if reference is not None and reference not in judges:
        raise ValueError(f"--reference {reference!r} is not a judge of this data; judges: {', '.join(judges)}")
    out: dict[frozenset[str], Comparison] = {}
    parts = {j: split_judge_id(j) for j in judges}
    for kind in KINDS:
        for i, a in enumerate(judges):
            for b in judges[i + 1 :]:
                (va, ma), (vb, mb) = parts[a], parts[b]
                key = frozenset((a, b))
                if key in out:
                    continue
                if (
                    kind == "same model"
                    and ma is not None
                    and ma == mb
                    or kind == "same view"
                    and ma is not None
                    and mb is not None
                    and va == vb
                ):
                    out[key] = Comparison(a, b, kind)
                elif kind == "reference" and reference in (a, b):
                    other = b if a == reference else a
                    out[key] = Comparison(reference, other, kind)
    return tuple(out.values())


def all_pairs(judges: Sequence[str]) -> tuple[Comparison, ...]:
    """Every pair of ``judges``, ``a`` earlier in report order (the book's appendix lists them all)."""
    return tuple(Comparison(a, b, "all") for i, a in enumerate(judges) for b in judges[i + 1 :])
