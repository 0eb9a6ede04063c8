"""Helpers of the chapter "Metrics" (``notebooks/metrics.md``): confidences on bin edges, the bootstrap's design cells."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from trajectory_judge.analysis.paper import procedure as P
from trajectory_judge.provenance.computed import computes


# --- calibration bins ------------------------------------------------------------------------
@computes
def interior_edges(confidences: Sequence[float]) -> pd.DataFrame:
    """:func:`trajectory_judge.analysis.paper.procedure.interior_edges`: confidences on an interior bin edge, with their bin."""
    return P.interior_edges(confidences)


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
    """:func:`trajectory_judge.analysis.paper.procedure.replicate_cell_sizes`: trajectories drawn per design cell and replicate."""
    return P.replicate_cell_sizes(cells, resamples=resamples, seed=seed)


# --- how the chapter shows them ---------------------------------------------------------------
METHOD_NAMES: dict[str, str] = {
    "bootstrap": "Percentile bootstrap",
    "clopper-pearson": "Clopper\u2013Pearson",
    "structural": "Structural",
}
"""Column headers of the interval methods."""


def cells_phrase(cells: Sequence[str]) -> str:
    """Which design cells the data fall into, as the chapter's sentence ends: ``all 8 design cells``, ``5 of the 8
    design cells``, or, on a folder with types of its own, how many cells of its own it has."""
    from trajectory_judge.models import DESIGN_CELLS

    n_c, n_d = len(set(cells)), len(DESIGN_CELLS)
    if not set(cells) <= set(DESIGN_CELLS):
        return (
            f"{n_c} design cells of the folder's own (clean, and each of its failure types split by outcome survival)"
        )
    return f"all {n_d} design cells" if n_c == n_d else f"{n_c} of the {n_d} design cells"


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
