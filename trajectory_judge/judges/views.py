"""Views: what of a trajectory a judge is shown.

``outcome`` is V_out = (goal, final answer); ``step`` is the full rendering, three lines per
step; ``reply`` shows the same full rendering as ``step`` (the question asked differs, not
the evidence). The rule engine and the self-consistency ensemble read the full trajectory.
"""

from __future__ import annotations

from trajectory_judge.models import LLM_VIEWS, Trajectory
from trajectory_judge.testbed.render import render_steps

VIEWS: tuple[str, ...] = LLM_VIEWS


def render_view(view: str, traj: Trajectory) -> str:
    """The text a judge with ``view`` is shown of ``traj`` (the variable part of its prompt)."""
    if view == "outcome":
        return f"GOAL: {traj.goal}\nFINAL ANSWER: {traj.final_answer}"
    if view in ("step", "reply"):
        return f"GOAL: {traj.goal}\nSTEPS:\n{render_steps(traj)}\nFINAL ANSWER: {traj.final_answer}"
    raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
