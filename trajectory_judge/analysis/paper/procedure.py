"""The analysis procedure as the metrics chapter documents it, through public records: which metrics are costs,
the calibration bins and the confidences lying on their edges (:func:`interior_edges`), the stratified
resampling's draws per design cell (:func:`replicate_cell_sizes`) and the exact interval of a proportion
(:func:`exact_interval`).

The chapter shows the procedure with these; the bootstrap and the metrics' implementations stay internal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis.core.bootstrap import clopper_pearson, stratified_indices
from trajectory_judge.analysis.core.metrics import COST_METRICS, N_BINS, confidence_bin
from trajectory_judge.analysis.paper.claims import Estimate
from trajectory_judge.models import DESIGN_CELLS

__all__ = ["COST_METRICS", "N_BINS", "confidence_bin", "exact_interval", "interior_edges", "replicate_cell_sizes"]


def interior_edges(confidences: Sequence[float]) -> pd.DataFrame:
    """Confidences lying exactly on an interior bin edge (0.1 ... 0.9): value, count, and the bin it falls in."""
    tenths = {c: round(c * N_BINS, 9) for c in set(confidences)}
    edges = sorted(c for c, t in tenths.items() if t == int(t) and 0 < t < N_BINS)
    counts = pd.Series(list(confidences)).value_counts()
    rows = [(c, int(counts[c]), confidence_bin(c)) for c in edges]
    return pd.DataFrame(rows, columns=["confidence", "n", "bin"])


def replicate_cell_sizes(cells: Sequence[str], *, resamples: int, seed: int) -> pd.DataFrame:
    """Trajectories drawn from each design cell in each of ``resamples`` stratified replicates.

    Uses the bootstrap's own index generator, so every row must equal the original cell sizes.
    """
    idx = stratified_indices(cells, resamples=resamples, rng=np.random.default_rng(seed), order=DESIGN_CELLS)
    drawn = np.asarray(cells)[idx]
    order = [c for c in DESIGN_CELLS if c in set(cells)] + sorted(
        set(cells) - set(DESIGN_CELLS)
    )  # as the bootstrap orders them
    counts = {c: (drawn == c).sum(axis=1) for c in order}
    return pd.DataFrame(counts).rename_axis("replicate")


def exact_interval(successes: int, trials: int, confidence_level: float = 0.95) -> Estimate:
    """The proportion ``successes / trials`` with its exact (Clopper-Pearson) interval, the one the report gives a
    proportion observed at 0 or 1."""
    low, high = clopper_pearson(successes, trials, confidence_level)
    value = successes / trials if trials else float("nan")
    return Estimate(value, low, high, "clopper-pearson", trials, f"{successes} of {trials}")
