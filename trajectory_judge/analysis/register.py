"""The claims register of the paper: every checkable claim of its two abstracts, §6-§8 and their
captions, checked on its own verdicts (:func:`paper_register`).

Each claim is written in this book's words; its stated value or direction comes from
:mod:`trajectory_judge.analysis.published` where the number is quoted there, and its estimate from
:mod:`trajectory_judge.analysis.estimates`. No verdict is written anywhere: each is derived by the
rule of :mod:`trajectory_judge.analysis.claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

from trajectory_judge.analysis.claims import Register
from trajectory_judge.analysis.register_abstracts import camera_ready_claims, headline_claims
from trajectory_judge.analysis.register_body import analysis_claims, organic_claims, results_claims
from trajectory_judge.analysis.report import Report
from trajectory_judge.models import Trajectory, Verdict

GROUPS: tuple[str, ...] = ("headline", "camera_ready", "results", "analysis", "organic")
"""The register's groups, in reading order: the paper's abstract, the camera-ready abstract, §6, §7, §8."""


def paper_register(rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> Register:
    """Every checkable claim of the paper, checked on the report of its verdicts (``rep``, built from ``trajectories`` and ``verdicts``)."""
    parts = (headline_claims, camera_ready_claims, results_claims, analysis_claims, organic_claims)
    return Register(tuple(c for part in parts for c in part(rep, trajectories, verdicts)))
