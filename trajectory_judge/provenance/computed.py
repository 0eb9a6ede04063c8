"""What computed a table's frame or a figure.

:func:`computes` decorates a function that returns a frame (or a figure): its result is tagged with
the function's dotted name. A frame keeps the tag in ``DataFrame.attrs``, which
pandas carries through renaming, selection, ``assign``, ``concat`` of frames with the same tag and
the like; any other result (a matplotlib figure) carries it as an attribute. The outermost decorated
function wins, so a table made by ``main_table`` names ``main_table``, not the helper it called.
The book shows the tag under each table and figure (:mod:`trajectory_judge.book.building.provenance_lines`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

ATTR = "tj_computed"
"""The key of the tag in a frame's ``attrs`` (and the attribute name on any other object)."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Computed:
    """A result's origin: the dotted name of the function that returned it."""

    made_by: str


def dotted_name(func: Callable[..., Any]) -> str:
    """``module.qualname`` of ``func`` (``trajectory_judge.book.chapters.results.main_table``)."""
    return f"{func.__module__}.{func.__qualname__}"


def tag(result: Any, made_by: str) -> Any:
    """``result`` tagged as computed by ``made_by``; results that can hold no tag (numbers, strings,
    tuples) are returned unchanged."""
    info = Computed(made_by)
    attrs = getattr(result, "attrs", None)
    if isinstance(attrs, dict):
        attrs[ATTR] = info
        return result
    with contextlib.suppress(AttributeError, TypeError):
        setattr(result, "_" + ATTR, info)
    return result


def computed(result: Any) -> Computed | None:
    """The tag of ``result`` (see :func:`computes`), or ``None`` when nothing tagged it."""
    attrs = getattr(result, "attrs", None)
    if isinstance(attrs, dict) and isinstance(attrs.get(ATTR), Computed):
        return attrs[ATTR]
    info = getattr(result, "_" + ATTR, None)
    return info if isinstance(info, Computed) else None


def computes(func: F) -> F:
    """Decorate ``func`` so that what it returns names it (:func:`tag`)."""

    name = dotted_name(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return tag(func(*args, **kwargs), name)

    wrapper.__tj_computes__ = name  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
