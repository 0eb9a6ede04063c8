"""How a trajectory is written as text: tool calls, observations and steps.

The judges' views (:mod:`trajectory_judge.judges.views`) and the organic agent's history both use
these renderings, so a model sees a call written the same way whichever role it plays.
"""

from __future__ import annotations

import json
from typing import Any

from trajectory_judge.models import Trajectory


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
