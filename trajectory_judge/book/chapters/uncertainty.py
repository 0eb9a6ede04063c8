"""Helpers of the chapter "Metrics" (``notebooks/metrics.md``): confidences on bin edges, the bootstrap's design cells."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis.bootstrap import stratified_indices
from trajectory_judge.analysis.metrics import N_BINS, confidence_bin
from trajectory_judge.models import DESIGN_CELLS
from trajectory_judge.provenance.computed import computes


# --- calibration bins ------------------------------------------------------------------------
@computes
def interior_edges(confidences: Sequence[float]) -> pd.DataFrame:
    """Confidences lying exactly on an interior bin edge (0.1 ... 0.9): value, count, and the bin it falls in."""
    tenths = {c: round(c * N_BINS, 9) for c in set(confidences)}
    edges = sorted(c for c, t in tenths.items() if t == int(t) and 0 < t < N_BINS)
    counts = pd.Series(list(confidences)).value_counts()
    rows = [(c, int(counts[c]), confidence_bin(c)) for c in edges]
    return pd.DataFrame(rows, columns=["confidence", "n", "bin"])


def edge_sentence(edges: pd.DataFrame, n_verdicts: int) -> str:
    """How many verdicts sit on an interior edge, and where (from :func:`interior_edges`), as a clause."""
    n = int(edges["n"].sum())
    if n == 0:
        return (
            f"none of the {n_verdicts} verdicts in the data sits exactly on an interior edge, but one that "
            "did would count in the bin its edge closes"
        )
    at = ", ".join(f"{c:g}" for c in edges["confidence"])
    return (
        f"{n} of the {n_verdicts} verdicts in the data sit exactly on an interior edge (at {at}), and each "
        "counts in the bin its edge closes"
    )


# --- bootstrap demonstration -----------------------------------------------------------------
@computes
def replicate_cell_sizes(cells: Sequence[str], *, resamples: int, seed: int) -> pd.DataFrame:
    """Trajectories drawn from each design cell in each of ``resamples`` stratified replicates.

    Uses the bootstrap's own index generator, so every row must equal the original cell sizes.
    """
    idx = stratified_indices(cells, resamples=resamples, rng=np.random.default_rng(seed), order=DESIGN_CELLS)
    drawn = np.asarray(cells)[idx]
    order = [c for c in DESIGN_CELLS if c in set(cells)]
    counts = {c: (drawn == c).sum(axis=1) for c in order}
    return pd.DataFrame(counts).rename_axis("replicate")


# --- how the chapter shows them ---------------------------------------------------------------
METHOD_NAMES: dict[str, str] = {
    "bootstrap": "Percentile bootstrap",
    "clopper-pearson": "Clopper\u2013Pearson",
    "structural": "Structural",
}
"""Column headers of the interval methods."""


@computes
def replicates_by_cell(cells: Sequence[str], *, resamples: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """:func:`replicate_cell_sizes` and the data's own cell sizes in the same column order."""
    sizes = replicate_cell_sizes(cells, resamples=resamples, seed=seed)
    return sizes, pd.Series(list(cells)).value_counts().reindex(sizes.columns)


@computes
def methods_table(intervals: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    """Intervals per judge (rows, in ``judges`` order) and method (columns, in words)."""
    tab = pd.crosstab(intervals["judge"], intervals["method"]).reindex(list(judges)).fillna(0).astype(int)
    tab = tab.reindex(
        columns=[m for m in METHOD_NAMES if m in tab.columns] + [m for m in tab.columns if m not in METHOD_NAMES]
    )
    tab.columns = [METHOD_NAMES.get(m, m) for m in tab.columns]
    return tab


@computes
def replicates_frame(sizes: pd.DataFrame, original: pd.Series, first: int = 5) -> pd.DataFrame:
    """Design cells (rows) by the ``first`` replicates of :func:`replicate_cell_sizes` and the data (columns)."""
    out = sizes.head(first).T
    out.columns = [f"replicate {r + 1}" for r in out.columns]
    out["data"] = original
    return out.rename_axis("design cell")
