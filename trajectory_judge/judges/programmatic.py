"""The rules judge (``programmatic``): reports the first violation the checker finds."""

from __future__ import annotations

import time

from ..checker import check
from ..models import Trajectory, Verdict

CONFIDENCE_FLAGGED = 0.95
"""Hand-set confidence when a rule fires (a constant, not a measurement)."""
CONFIDENCE_CLEAN = 0.60
"""Hand-set confidence when no rule fires: two failure types are outside what rules can see."""


class ProgrammaticJudge:
    """The free baseline: eight rules, no model."""

    judge_id = "programmatic"

    def judge(self, traj: Trajectory) -> Verdict:
        """Check ``traj`` and turn its first violation (if any) into a verdict."""
        start = time.perf_counter()
        violations = check(traj)
        latency = time.perf_counter() - start
        if violations:
            first = violations[0]
            return Verdict(
                trajectory_id=traj.trajectory_id,
                judge_id=self.judge_id,
                faulty=True,
                failure_step=first.step,
                failure_type=first.failure_type,  # type: ignore[arg-type]
                confidence=CONFIDENCE_FLAGGED,
                rationale=f"{first.rule} at step {first.step}: {first.detail}",
                latency_s=latency,
                prompt_tokens=0,
                completion_tokens=0,
            )
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=False,
            confidence=CONFIDENCE_CLEAN,
            rationale="no rule violated (rules cannot see wrong_tool or unsupported_claim)",
            latency_s=latency,
            prompt_tokens=0,
            completion_tokens=0,
        )
