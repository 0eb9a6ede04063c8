"""The names of the shared bootstrap's statistics: ``judge|metric`` for a judge's own, ``delta|a|b|metric`` for the
paired difference ``b - a``. Every name is written by :func:`judge_name` or :func:`delta_name` and read by
:func:`split_name`, and a statistic plan evaluates its names with :func:`evaluate_names`.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from typing import NamedTuple, TypeVar

import numpy as np

V = TypeVar("V")


class StatisticName(NamedTuple):
    """One statistic of the shared bootstrap."""

    judge: str
    """The judge (for a delta, the compared judge ``b``)."""
    metric: str
    """The metric or statistic."""
    reference: str | None = None
    """For a delta ``b - a``, the reference judge ``a``; None for a judge's own statistic."""


def judge_name(judge: str, metric: str) -> str:
    """``judge|metric``."""
    return f"{judge}|{metric}"


def delta_name(a: str, b: str, metric: str) -> str:
    """``delta|a|b|metric``: the paired difference ``b - a``."""
    return f"delta|{a}|{b}|{metric}"


def split_name(name: str) -> StatisticName:
    """The parts of a name :func:`judge_name` or :func:`delta_name` wrote."""
    parts = name.split("|")
    if parts[0] == "delta":
        _, a, b, m = parts
        return StatisticName(b, m, a)
    judge, metric = parts
    return StatisticName(judge, metric)


def pair_block(blocks: Container[tuple[str, ...]], a: str, b: str, judge: str) -> tuple[str, ...]:
    """The block of ``judge`` restricted to what both ``a`` and ``b`` judged, or its own block when that is the same."""
    key = (a, b, judge)
    return key if key in blocks else (judge,)


def pair_blocks(
    verdicts: Mapping[str, Sequence[V | None]], a: str, b: str
) -> list[tuple[tuple[str, str, str], list[V | None]]]:
    """The blocks a pair adds: each of ``a`` and ``b`` restricted to what both judged (None elsewhere), when that
    differs from what either judged alone (otherwise the judges' own blocks serve, :func:`pair_block`)."""
    both = [x is not None and y is not None for x, y in zip(verdicts[a], verdicts[b])]
    if all(both == [v is not None for v in verdicts[j]] for j in (a, b)):
        return []
    return [((a, b, j), [v if keep else None for v, keep in zip(verdicts[j], both)]) for j in (a, b)]


def evaluate_names(
    names: Sequence[str],
    blocks: Container[tuple[str, ...]],
    block_statistics: Callable[[tuple[str, ...]], Mapping[str, np.ndarray]],
) -> np.ndarray:
    """Every name's statistic, stacked on the last axis: a judge's from its block, a delta ``b - a`` from the two
    judges' blocks restricted to what both judged (``block_statistics`` maps a block to its statistics)."""
    cache: dict[tuple[str, ...], Mapping[str, np.ndarray]] = {}

    def get(key: tuple[str, ...]) -> Mapping[str, np.ndarray]:
        if key not in cache:
            cache[key] = block_statistics(key)
        return cache[key]

    out = []
    for name in names:
        s = split_name(name)
        if s.reference is None:
            out.append(get((s.judge,))[s.metric])
        else:
            a, b = s.reference, s.judge
            out.append(get(pair_block(blocks, a, b, b))[s.metric] - get(pair_block(blocks, a, b, a))[s.metric])
    return np.stack(out, axis=-1)


__all__ = ["StatisticName", "delta_name", "evaluate_names", "judge_name", "pair_block", "pair_blocks", "split_name"]
