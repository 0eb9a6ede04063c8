"""The claims of the paper's §8 (:func:`organic_claims`): the organic episodes, which the release does not
hold, so every one is not checkable, with the reason."""

from __future__ import annotations

from collections.abc import Sequence

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper.claims import Claim, Stated
from trajectory_judge.analysis.paper.register.common import ORGANIC_WHY, count_value, record
from trajectory_judge.models import Trajectory, Verdict


def organic_claims(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """§8: the organic episodes, which the release does not hold."""
    k = count_value
    rows = [
        (
            "organic_flagged",
            f"{k('organic_flagged'):g} of {k('organic_episodes'):g} organic episodes are flagged or end in a wrong outcome",
            k("organic_flagged"),
            "episodes flagged or wrong",
        ),
        (
            "organic_loud_silent",
            f"{k('organic_loud'):g} of them break the customer-visible outcome and {k('organic_silent'):g} are silent",
            k("organic_loud"),
            "episodes with a wrong outcome",
        ),
        (
            "organic_all_premature",
            "every rule-visible organic fault is a premature stop",
            k("organic_premature_stop"),
            "rule-visible faults that are premature stops",
        ),
        (
            "organic_already_refunded",
            f"all {k('organic_already_refunded_n'):g} already-refunded episodes fail",
            k("organic_already_refunded_failed"),
            "already-refunded episodes that fail",
        ),
        (
            "organic_escalations",
            f"the model calls escalate {k('organic_escalate_calls'):g} times across the episodes",
            k("organic_escalate_calls"),
            "escalate calls",
        ),
        (
            "organic_eligibility",
            f"only {k('organic_with_check_eligibility'):g} of the episodes check eligibility",
            k("organic_with_check_eligibility"),
            "episodes that check eligibility",
        ),
    ]
    return [
        record("organic", "§8", key, says, Stated.number(f"{v:g}", v), q, None, ORGANIC_WHY) for key, says, v, q in rows
    ]
