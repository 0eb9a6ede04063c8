"""What a chapter cannot compute on a folder, and why: one record and one wording for every chapter.

The book builds on any folder ``report`` accepts (``TJ_DATA``): ten trajectories judged, one
Python judge, an ensemble alone. A quantity a chapter quotes is a :class:`Quantity`, either a value
or the reason it is missing on this folder; tables show a missing one as "–" and the prose says
once, in :func:`cannot_compute`'s one sentence, what could not be computed and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

HERE = "in this folder"
"""Where a reason applies: the folder the book is built on."""


@dataclass(frozen=True)
class Quantity:
    """A number a chapter quotes, with its interval when it has one, or why it is missing."""

    value: float | None
    """The value; ``None`` when it cannot be computed on this folder."""
    why: str | None = None
    """Why it is missing (a clause: "no fault of type X has its clean parent judged in this folder")."""
    low: float | None = None
    """Lower bound of its 95% interval, when it has one."""
    high: float | None = None
    """Upper bound of its 95% interval, when it has one."""
    n: int | None = None
    """How many items it was computed from."""

    def __post_init__(self) -> None:
        if (self.value is None) == (self.why is None):
            raise ValueError("a Quantity holds either a value or the reason it is missing")

    @classmethod
    def missing(cls, why: str) -> Quantity:
        """A quantity this folder cannot give, with the reason."""
        return cls(None, why=why)

    @property
    def available(self) -> bool:
        """Whether the value could be computed."""
        return self.value is not None


def series(items: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``: names joined as a sentence joins alternatives."""
    items = list(dict.fromkeys(items))
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def no_parent_judged(types: Iterable[str]) -> str:
    """The reason a paired value is missing: no fault of these types has a judged clean parent."""
    from trajectory_judge.book.render.style import label

    names = [label(t).lower() for t in types]
    return f"no fault of type {series(names)} has its clean parent judged {HERE}"


def none_judged(types: Iterable[str]) -> str:
    """The reason a per-type recall is missing: no fault of these types was judged."""
    from trajectory_judge.book.render.style import label

    return f"no fault of type {series([label(t).lower() for t in types])} was judged {HERE}"


def cannot_compute(what: Mapping[str, Quantity] | Iterable[tuple[str, Quantity]]) -> str:
    """One sentence naming what could not be computed and why; empty when everything was.

    ``what`` maps a quantity's name in words to its record; names sharing a reason are said together.
    """
    items = what.items() if isinstance(what, Mapping) else what
    by_reason: dict[str, list[str]] = {}
    for name, q in items:
        if not q.available:
            by_reason.setdefault(str(q.why), []).append(name)
    if not by_reason:
        return ""
    parts = [
        f"{names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]} cannot be computed: {why}"
        for why, names in by_reason.items()
    ]
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."
