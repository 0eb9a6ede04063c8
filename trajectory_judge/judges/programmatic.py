"""The rules judge (``programmatic``): reports the first violation the checker finds."""

from __future__ import annotations

import time
from typing import Any

from trajectory_judge.models import Trajectory, Verdict
from trajectory_judge.testbed.checker import check


def load_any(path: str) -> list[Trajectory]:
    """Trajectories from a trajectories file or from an agent's episodes file (``organic.jsonl``)."""
    import json

    from trajectory_judge.models import DataError, load_trajectories, parse_jsonl, read_text

    first = next((line for line in read_text(path).split("\n") if line.strip()), "")
    if not first:
        raise DataError(f"{path}: no trajectories (the file is empty)")
    try:
        head = json.loads(first) if first else {}
    except json.JSONDecodeError:
        head = {}
    if isinstance(head, dict) and "episode_id" in head and "trajectory" in head:
        from trajectory_judge.models import Episode

        return [e.trajectory for e in parse_jsonl(path, Episode)]  # not empty: its first line is an episode
    return load_trajectories(path)


def foreign_tools_note(trajs: list[Trajectory]) -> str | None:
    """The line ``check`` prints once when trajectories call tools the support desk does not have, else None.

    The rules know the support desk's tools only; on other tools they can fire only the rules that
    read any call (an argument no earlier observation grounds, a missing or repeated reply), so a
    clean result there says little.
    """
    from trajectory_judge.testbed.env import TOOLS

    other = sorted({s.call.tool for t in trajs for s in t.steps} - set(TOOLS))
    if not other:
        return None
    n = sum(any(s.call.tool not in TOOLS for s in t.steps) for t in trajs)
    shown = ", ".join(other[:6]) + (f" and {len(other) - 6} more" if len(other) > 6 else "")
    return (
        f"note: {n} of {len(trajs)} trajectories call tools the rules do not know ({shown}); the rules were "
        "written for the support desk's tools, so on these trajectories their verdicts check little beyond "
        "the format"
    )


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
        shared: dict[str, Any] = {"trajectory_id": traj.trajectory_id, "judge_id": self.judge_id, "latency_s": latency}
        if not violations:
            rationale = "no rule violated (rules cannot see wrong_tool or unsupported_claim)"
            return Verdict(**shared, faulty=False, confidence=CONFIDENCE_CLEAN, rationale=rationale)
        first = violations[0]
        return Verdict(
            **shared,
            faulty=True,
            failure_step=first.step,
            failure_type=first.failure_type,
            confidence=CONFIDENCE_FLAGGED,
            rationale=f"{first.rule} at step {first.step}: {first.detail}",
        )
