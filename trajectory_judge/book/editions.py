"""The two verdict sets every results chapter shows: the paper's and this edition's.

*The paper's* are the release's verdicts (``TJ_PAPER_DATA``, default ``data/release``: the
numbers-only projection) on this book's trajectories put in the release's order; *this edition's*
are the verdicts in ``TJ_DATA`` (default ``data/``). Both go through the same code, so a chapter
computes each table twice: the paper's first, then ours.
"""

from __future__ import annotations

from typing import NamedTuple

from trajectory_judge.analysis.loading import Dataset, load_data, load_paper_data
from trajectory_judge.analysis.report import Report, build_report
from trajectory_judge.book.paths import data_dir, paper_data_dir, paper_trajectories_dir

PAPER = "the paper"
"""Label of the paper's verdict set."""

OURS = "this edition"
"""Label of this edition's verdict set."""


class Editions(NamedTuple):
    """The paper's and this edition's data, and their reports."""

    paper: Dataset
    ours: Dataset
    paper_rep: Report
    rep: Report


def load_editions(resamples: int = 10_000, seed: int = 7) -> Editions:
    """Load both verdict sets (each verified against its manifest) and build both reports."""
    paper = load_paper_data(paper_data_dir(), paper_trajectories_dir())
    ours = load_data(data_dir())
    paper_rep = build_report(paper.trajectories, paper.verdicts, resamples=resamples, seed=seed)
    rep = build_report(ours.trajectories, ours.verdicts, resamples=resamples, seed=seed)
    return Editions(paper, ours, paper_rep, rep)
