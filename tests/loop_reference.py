"""Slow reference implementations the tests hold the vectorised bootstrap to: one Python call per replicate."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from trajectory_judge.analysis.core import metrics as M
from trajectory_judge.analysis.core.bootstrap import stratified_indices


def count_weights(indices: np.ndarray, n: int) -> np.ndarray:
    """Multiplicity of each of ``n`` rows in each replicate: ``(B, m)`` indices -> ``(B, n)`` counts."""
    b = indices.shape[0]
    flat = (np.arange(b)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def bootstrap_loop(
    n: int,
    statistic: Callable[[np.ndarray], Any],
    *,
    strata: Any,
    resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    strata_order: Sequence[Any] | None = None,
) -> np.ndarray:
    """One Python call of ``statistic(indices)`` per replicate, on the ``n`` rows.

    ``statistic`` receives the resampled row indices of one replicate. With the same seed it
    sees exactly the resamples the bootstrap weights, so the two distributions agree.
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    assert len(strata) == n
    indices = stratified_indices(np.asarray(strata), resamples=resamples, rng=gen, order=strata_order)
    return np.asarray([np.asarray(statistic(row), dtype=float) for row in indices])


def loop_statistic(plan: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Resampled row indices of one replicate -> ``plan``'s statistics, through :func:`metrics.judge_metrics`."""

    def statistic(indices: np.ndarray) -> np.ndarray:
        cache: dict[tuple[str, ...], dict[str, float | None]] = {}

        def get(judge: str, other: str | None = None) -> dict[str, float | None]:
            vs, ws = plan.verdicts[judge], plan.verdicts[other or judge]
            covered = all(w is not None for v, w in zip(vs, ws) if v is not None)
            key = (judge, judge if covered else other or judge)
            if key not in cache:
                pairs = [(plan.labels[i], vs[i]) for i in indices if vs[i] is not None and ws[i] is not None]
                cache[key] = M.judge_metrics(pairs, plan.types)
            return cache[key]

        out = []
        for name in plan.names:
            parts = name.split("|")
            if parts[0] == "delta":
                _, a, b, m = parts
                vb, va = get(b, a)[m], get(a, b)[m]
                out.append(math.nan if va is None or vb is None else vb - va)
            else:
                v = get(parts[0])[parts[1]]
                out.append(math.nan if v is None else v)
        return np.asarray(out)

    return statistic
