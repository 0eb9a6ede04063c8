"""The garbage collector's pace in the processes that build the book: Sphinx's, and each chapter's kernel.

Such a process imports a few thousand modules (Sphinx and docutils, or pandas, matplotlib and scipy) and
then allocates millions of short-lived objects. CPython's collector examines every tracked object at each
full collection, so at its default pace a build spends a large share of its processor time walking the
imported modules' objects again and again, finding nothing to free among them (the guide's benchmarks
page has the build's time).

:func:`settle` moves every object alive at the call out of the collector's view (:func:`gc.freeze`: those
objects live as long as the process anyway) and runs a full collection a tenth as often as the default
(:func:`gc.set_threshold`). Cycles of garbage are still collected, by the younger generations' collections
and by the rarer full ones. Nothing the book computes depends on when a collection runs.
"""

from __future__ import annotations

import gc

FULL_EVERY = 100
"""Collections of the middle generation between two full collections (CPython's default is 10)."""


def settle() -> None:
    """Freeze every object alive now and collect the oldest generation every :data:`FULL_EVERY` middle ones."""
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_EVERY)


__all__ = ["FULL_EVERY", "settle"]
