"""The claims register of the paper: every checkable claim of its two abstracts, §6-§8 and their
captions, checked on its own verdicts (:func:`paper_register`).

One module per part of the paper: :mod:`.abstract`, :mod:`.camera_ready`, :mod:`.section6`,
:mod:`.section7` and :mod:`.section8`, with what they share in :mod:`.common`. Each claim is written
in this book's words; its stated value or direction comes from
:mod:`trajectory_judge.analysis.paper.published` where the number is quoted there, and its estimate is the
record the chapter printing the quantity reads (a metric of the report, a paired value of
:mod:`trajectory_judge.analysis.paper.paired_detail`, or a quantity of :mod:`trajectory_judge.analysis.paper.estimates`
computed with the report's procedure). No verdict is written anywhere: each is derived by the rule of
:mod:`trajectory_judge.analysis.paper.claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

from trajectory_judge.analysis.core.report import Report, build_report
from trajectory_judge.analysis.paper.claims import Estimate, Register
from trajectory_judge.analysis.paper.estimates import QUALITY_AXES, axes_phrase, axes_words, metric as _metric
from trajectory_judge.analysis.paper.register.abstract import headline_claims
from trajectory_judge.analysis.paper.register.camera_ready import camera_ready_claims
from trajectory_judge.analysis.paper.register.common import QUOTED_MISS_PROMISE
from trajectory_judge.analysis.paper.register.section6 import results_claims
from trajectory_judge.analysis.paper.register.section7 import analysis_claims, quoted_miss
from trajectory_judge.analysis.paper.register.section8 import organic_claims
from trajectory_judge.models import Trajectory, Verdict

__all__ = [
    "GROUPS",
    "QUALITY_AXES",
    "QUOTED_MISS_PROMISE",
    "analysis_claims",
    "axes_phrase",
    "axes_words",
    "camera_ready_claims",
    "headline_claims",
    "metric_estimate",
    "organic_claims",
    "paper_register",
    "quoted_miss",
    "results_claims",
    "seed_register",
]

GROUPS: tuple[str, ...] = ("headline", "abstract_text", "camera_ready", "results", "analysis", "organic")
"""The register's groups, in reading order: the paper's abstract (its numbers, then its statements without a number),
the camera-ready abstract, §6, §7, §8."""


def paper_register(rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> Register:
    """Every checkable claim of the paper, checked on the report of its verdicts (``rep``, built from ``trajectories`` and ``verdicts``)."""
    parts = (headline_claims, camera_ready_claims, results_claims, analysis_claims, organic_claims)
    return Register(tuple(c for part in parts for c in part(rep, trajectories, verdicts)))


def metric_estimate(rep: Report, judge: str, name: str, detail: str = "") -> Estimate:
    """A metric of the report (``recall:TYPE`` for a per-type recall) as the register's record: its value and
    the report's one interval, the record a claim on that metric reads."""
    return _metric(rep, judge, name, detail)


def seed_register(rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], seed: int) -> Register:
    """The register again on a report of the same verdicts bootstrapped as ``rep`` was but at ``seed`` (the rule's seed
    alternative, :data:`~trajectory_judge.analysis.paper.robustness.SEEDS`); the judge statistics, which no claim reads, are
    left out."""
    other = build_report(
        trajectories,
        verdicts,
        resamples=rep.resamples,
        seed=seed,
        resampling=rep.resampling,
        statistics=False,
    )
    return paper_register(other, trajectories, verdicts)
