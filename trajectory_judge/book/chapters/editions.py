"""The two verdict sets every results chapter shows: the paper's and this edition's.

*The paper's* are the release's verdicts (``TJ_PAPER_DATA``, default ``data/release``: the
numbers-only projection) on this book's trajectories put in the release's order; *this edition's*
are the verdicts in ``TJ_DATA`` (default ``data/``). Both go through the same code, so a chapter
computes each table twice: the paper's first, then ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from trajectory_judge.analysis.core.loading import Dataset, load_data, load_paper_data
from trajectory_judge.analysis.core.report import Report, build_report
from trajectory_judge.analysis.core.resampling import folder_resampling
from trajectory_judge.book.paths import data_dir, own_folder, paper_data_dir, paper_trajectories_dir
from trajectory_judge.models import DESIGN_FILE

OURS = "this edition"
"""Label of this edition's verdict set."""


@dataclass(frozen=True)
class OursWording:
    """How the chapters name the verdict set beside the paper's: this edition's run, or a reader's folder."""

    own: bool
    """Whether the book is built on a reader's folder (``TJ_DATA`` other than the book's ``data/``)."""
    name: str
    """``this edition`` or ``your folder `mine```: what the verdicts are."""
    judges: str
    """``this edition's judges`` or ``your judges``."""
    column: str
    """A table column's head for one model's judges: ``This edition`` or ``Your folder``."""

    @property
    def whose(self) -> str:
        """The possessive that opens a sentence about the verdict set: ``This edition's`` or ``Your folder's``."""
        return f"{self.column}'s"


def ours_wording() -> OursWording:
    """The wording of the verdict set in ``TJ_DATA``: this edition's, or the reader's folder's."""
    folder = own_folder()
    if folder is None:
        return OursWording(False, OURS, "this edition's judges", "This edition")
    return OursWording(True, f"your folder `{folder}`", "your judges", "Your folder")


def edition_run() -> bool:
    """Whether the book is built on this edition's own ``data/`` rather than a reader's folder.

    A chapter's guards on what the testbed's construction and this edition's judges make true (every fault type
    present, a paired zero on identical inputs) hold there and are checked there only; on a reader's folder the
    chapter says what the folder cannot show, and reports a judge that behaves otherwise as a finding."""
    return not ours_wording().own


def folder_note(ours: Dataset) -> str:
    """On a reader's folder, one paragraph saying the page is about that folder, the paper's verdicts beside it
    as the reference; empty for this edition's own run."""
    from trajectory_judge.analysis.core.loading import judge_order
    from trajectory_judge.book.render.style import judge_name, list_text

    words = ours_wording()
    if not words.own:
        return ""
    judges = judge_order(ours.verdicts)
    judged = len({v.trajectory_id for v in ours.verdicts})
    return (
        f"This page is built on {words.name}: {judged} of its {len(ours.trajectories)} trajectories judged by "
        f"{list_text([judge_name(j) for j in judges], 'no judge')}. Where it speaks of this edition, read your "
        "folder and your judges; the paper's verdicts stay beside them as the reference."
    )


def ours_phrases(ours: Dataset) -> dict[str, str]:
    """The phrases that say whose verdicts stand beside the paper's, for glue: ``ours_verdicts`` (what
    and where they are), ``ours_source`` (their tables' group), ``ours_origin`` (how they were made)."""
    from trajectory_judge.analysis.core.loading import judge_order
    from trajectory_judge.book.render.style import judge_name, list_text, source_name

    words = ours_wording()
    if not words.own:
        return {
            "ours_verdicts": "this edition's verdicts (its much smaller models, in data/)",
            "ours_source": source_name("edition"),
            "ours_origin": "This edition re-ran the testbed and the judges on one CPU with much smaller models",
        }
    judges = list_text([judge_name(j) for j in judge_order(ours.verdicts)], "no judge")
    judged = len({v.trajectory_id for v in ours.verdicts})
    return {
        "ours_verdicts": f"the verdicts of {words.name} (your judges: {judges})",
        "ours_source": source_name("edition"),
        "ours_origin": (
            f"Your folder holds the verdicts of your judges ({judges}) on {judged} of its "
            f"{len(ours.trajectories)} trajectories"
        ),
    }


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
    paper_rep = build_report(paper.trajectories, paper.verdicts, resamples=resamples, seed=seed)  # a planted design
    resampling = folder_resampling(data_dir())  # a reader's folder is a sample unless it says it is a design
    rep = build_report(ours.trajectories, ours.verdicts, resamples=resamples, seed=seed, resampling=resampling)
    return Editions(paper, ours, paper_rep, rep)


def interval_method_sentence(paper_rep: Report, rep: Report) -> str:
    """How both editions' intervals were made, in a sentence: one method when they share it; otherwise
    each, and why a reader's folder is resampled as it is."""
    if rep.resampling == paper_rep.resampling:
        return f"Every interval of both sets of verdicts is a {paper_rep.method}."
    return (
        f"The paper's intervals are a {paper_rep.method}, as its planted design calls for; your folder holds "
        f"no {DESIGN_FILE} declaring a planted design, so it is read as a sample of runs and its intervals "
        f"are a {rep.method}."
    )
