"""Views: what of a trajectory a judge is shown.

``outcome`` is V_out = (goal, final answer); ``step`` is the full rendering, three lines per
step; ``reply`` shows the same full rendering as ``step`` (the question asked differs, not
the evidence). The rule engine and the self-consistency ensemble read the full trajectory.
"""

from __future__ import annotations

import json
from typing import Any

from ..models import Trajectory

VIEWS: tuple[str, ...] = ("outcome", "step", "reply")


def _value(v: Any) -> str:
    if isinstance(v, str):
        return repr(v)
    return json.dumps(v, ensure_ascii=False)


def render_call(tool: str, args: dict[str, Any]) -> str:
    """``tool(key=value, ...)`` with keyword arguments in their recorded order."""
    return f"{tool}(" + ", ".join(f"{k}={_value(v)}" for k, v in args.items()) + ")"


def render_observation(ok: bool, data: dict[str, Any], error: str | None) -> str:
    """``ok=True {...}`` or ``ok=False error=...``."""
    if ok:
        return "ok=True " + json.dumps(data, ensure_ascii=False)
    return f"ok=False error={error}"


def render_steps(traj: Trajectory) -> str:
    """Every step as three lines: thought, call, observation."""
    lines: list[str] = []
    for s in traj.steps:
        lines.append(f"step {s.index} thought: {s.thought}")
        lines.append(f"step {s.index} call: {render_call(s.call.tool, s.call.args)}")
        obs = s.observation
        lines.append(f"step {s.index} observation: {render_observation(obs.ok, obs.data, obs.error)}")
    return "\n".join(lines)


def render_view(view: str, traj: Trajectory) -> str:
    """The text a judge with ``view`` is shown of ``traj`` (the variable part of its prompt)."""
    if view == "outcome":
        return f"GOAL: {traj.goal}\nFINAL ANSWER: {traj.final_answer}"
    if view in ("step", "reply"):
        return f"GOAL: {traj.goal}\nSTEPS:\n{render_steps(traj)}\nFINAL ANSWER: {traj.final_answer}"
    raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")


def view_of_judge(judge_id: str) -> str:
    """The view a judge reads, from its id (``outcome:M``, ``step:M``, ``reply:M``, ``selfcons3:M``, ``programmatic``).

    Judges whose family is not a known view (the rule engine, ensembles, user judges) are
    taken to read the full trajectory.
    """
    family = judge_id.split(":", 1)[0]
    return family if family in VIEWS else "step"
