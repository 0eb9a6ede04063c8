"""A judge in Python for the library agent: a reply may only report what a successful call did.

Usage: python claims_judge.py DATA_DIR
"""

import sys
from pathlib import Path

from trajectory_judge.models import Verdict, load_trajectories
from trajectory_judge.run.runner import run_judges

CLAIMS = {"hold": "place_hold", "renewed": "renew_loan", "books out": "list_loans"}
"""A word in the final answer, and the call that must have succeeded before it."""


class ClaimsJudge:
    judge_id = "claims:v1"

    def judge(self, traj):
        done = {s.call.tool for s in traj.steps if s.observation.ok}
        answer = traj.final_answer.lower()
        unbacked = [word for word, tool in CLAIMS.items() if word in answer and tool not in done]
        if not unbacked:
            return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.6)
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=True,
            failure_step=traj.steps[-1].index if traj.steps else 0,
            failure_type="unsupported_claim",
            confidence=0.8,
            rationale=f"the answer says {unbacked[0]!r} but no {CLAIMS[unbacked[0]]} call succeeded",
        )


if __name__ == "__main__":
    data = Path(sys.argv[1])
    run_judges(load_trajectories(data / "trajectories.jsonl"), [ClaimsJudge()], data / "verdicts.jsonl")
