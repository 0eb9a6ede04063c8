"""Organic episodes: an LLM drives the support desk, and the rule checker labels what it did.

Each episode gives the model the instance's goal, the same procedure text the judges receive,
and the tool list. At every step the model returns one action under a flat JSON schema with fixed
keyword fields (``thought``, ``tool``, ``email``, ``order_id``, ``sku``, ``amount_eur``,
``reason``, ``text``); the fields the chosen tool takes become its arguments, the rest are
ignored. The action runs against a fresh :class:`~trajectory_judge.testbed.env.SupportDesk`, and the
observation is appended to the history shown at the next step. An episode ends with the first
``reply`` or after ``max_steps`` (10) steps.

Labels come afterwards from the rule checker plus the outcome check, so they are lower bounds:
the checker is blind to ``wrong_tool`` and ``unsupported_claim``. An episode is *faulty* when a
rule fires or the customer-visible outcome is wrong; its type and step are the checker's first
violation (``None`` when only the outcome is wrong). Organic episodes are reported separately
and never mixed into the controlled comparison.

Output: ``DIR/organic.jsonl``, one :class:`Episode` per line, appended durably and resumable
(an episode already on disk is skipped); every invocation appends its metadata to
``DIR/runs.jsonl``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trajectory_judge.backends.clients import ModelClient
from trajectory_judge.models import Episode, Label, Observation, Step, ToolCall, Trajectory
from trajectory_judge.testbed.checker import check
from trajectory_judge.testbed.env import Instance, SupportDesk, outcome_matches
from trajectory_judge.testbed.procedure import PROCEDURE
from trajectory_judge.testbed.render import render_call, render_observation

MAX_STEPS = 10
"""An episode that has not replied after this many steps stops (``stop="max_steps"``)."""


AGENT_TEMPERATURE, AGENT_SEED = 0.0, 7
"""The agent's decoding unless told otherwise: greedy, one fixed seed (``trajectory-judge agent``'s defaults)."""


ORGANIC = "organic.jsonl"


TOOL_ARGS: dict[str, tuple[str, ...]] = {
    "get_customer": ("email",),
    "lookup_order": ("order_id",),
    "get_policy": ("sku",),
    "check_eligibility": ("order_id",),
    "issue_refund": ("order_id", "amount_eur"),
    "escalate": ("reason",),
    "reply": ("text",),
}
"""Which action fields each tool takes as keyword arguments."""


TOOL_HELP = """\
- get_customer(email): look the customer up by email address.
- lookup_order(order_id): fetch an order: its owner, item (sku), total and status.
- get_policy(sku): read the refund policy for an item.
- check_eligibility(order_id): decide whether the order may be refunded and the maximum refund.
- issue_refund(order_id, amount_eur): send money back to the customer.
- escalate(reason): hand the case to a human colleague.
- reply(text): send the final message to the customer; this ends the conversation."""


class Action(BaseModel):
    """One agent step under a flat schema: a thought, a tool, and every possible argument."""

    model_config = ConfigDict(extra="forbid")

    thought: str = Field(max_length=300)
    """Why this tool, now (generated first)."""
    tool: Literal[
        "get_customer", "lookup_order", "get_policy", "check_eligibility", "issue_refund", "escalate", "reply"
    ]
    """The tool to call."""
    email: str = Field(max_length=120)
    """Argument of get_customer."""
    order_id: str = Field(max_length=40)
    """Argument of lookup_order, check_eligibility, issue_refund."""
    sku: str = Field(max_length=40)
    """Argument of get_policy."""
    amount_eur: float
    """Argument of issue_refund."""
    reason: str = Field(max_length=200)
    """Argument of escalate."""
    text: str = Field(max_length=600)
    """Argument of reply."""


def action_schema() -> dict[str, Any]:
    """The JSON schema of :class:`Action` (all fields required, in order)."""
    from trajectory_judge.models.schema import decoding_schema

    return decoding_schema(Action)


AGENT_PREFIX = (
    "You are a customer-support agent for an online shop, working on one refund request.\n\n"
    f"{PROCEDURE}\n\n"
    f"Tools:\n{TOOL_HELP}\n\n"
    "You act one step at a time. Below are the request and the steps you have taken so far, each with "
    "the result the tool returned. Decide the single next step. Answer with one JSON action: in "
    '"thought" say what you will do next and why, given the results so far; then the tool, and its '
    "arguments in the matching fields. Fill the fields the tool does not use with an empty string (or 0 "
    "for amount_eur). Use only values from the request or from earlier results.\n\n"
)
"""The part of every agent prompt that does not depend on the episode."""


def render_history(steps: Sequence[Step]) -> str:
    """One line per step taken: the call and what it returned (the agent's own thoughts are not replayed)."""
    if not steps:
        return "(none yet)"
    return "\n".join(
        f"step {s.index}: {render_call(s.call.tool, s.call.args)} -> "
        f"{render_observation(s.observation.ok, s.observation.data, s.observation.error)}"
        for s in steps
    )


def agent_prompt(goal: str, steps: Sequence[Step]) -> str:
    """The prompt for the next action: shared instructions, the request, the steps so far."""
    return (
        f"{AGENT_PREFIX}REQUEST: {goal}\n\nSTEPS TAKEN SO FAR ({len(steps)}):\n{render_history(steps)}\n\n"
        f"Your next action (step {len(steps)}):\n"
    )


def action_call(action: dict[str, Any]) -> ToolCall:
    """The tool call an action stands for: the tool and only the fields it takes."""
    tool = action["tool"]
    return ToolCall(tool=tool, args={k: action.get(k) for k in TOOL_ARGS[tool]})


def play(
    instance: Instance,
    client: ModelClient,
    *,
    agent_model: str,
    temperature: float = AGENT_TEMPERATURE,
    seed: int = AGENT_SEED,
    max_steps: int = MAX_STEPS,
) -> Episode:
    """Let the model drive one episode on a fresh environment, then label it."""
    env = SupportDesk(instance)
    schema = action_schema()
    steps: list[Step] = []
    stop: Literal["replied", "max_steps", "unparseable_action"] = "max_steps"
    error: str | None = None
    latency, ptok, ctok = 0.0, 0, 0
    while len(steps) < max_steps:
        c = client.complete(agent_prompt(instance.goal, steps), schema, temperature=temperature, seed=seed)
        latency += c.latency_s
        ptok += c.prompt_tokens
        ctok += c.completion_tokens
        try:
            act = json.loads(c.text)
            call = action_call(act)
            thought = str(act.get("thought", ""))
        except (ValueError, KeyError, TypeError) as exc:
            stop, error = "unparseable_action", f"{type(exc).__name__}: {c.text[:300]}"
            break
        obs: Observation = env.call(call.tool, dict(call.args))
        steps.append(Step(index=len(steps), thought=thought, call=call, observation=obs))
        if call.tool == "reply":
            stop = "replied"
            break
    final = env.replies[-1] if env.replies else ""
    got, expected = env.outcome(), instance.expected_outcome
    correct = outcome_matches(got, expected)
    traj = Trajectory(
        trajectory_id=episode_id(instance.instance_id, agent_model),
        instance_id=instance.instance_id,
        goal=instance.goal,
        steps=steps,
        final_answer=final,
    )
    violations = check(traj)
    first = violations[0] if violations else None
    traj.label = Label(
        faulty=bool(violations) or not correct,
        failure_step=first.step if first else None,
        failure_type=first.failure_type if first else None,
        outcome_correct=correct,
    )
    return Episode(
        episode_id=traj.trajectory_id,
        stratum=instance.stratum,
        agent_model=agent_model,
        trajectory=traj,
        violations=[
            {"step": v.step, "rule": v.rule, "failure_type": v.failure_type, "detail": v.detail} for v in violations
        ],
        outcome=got.__dict__,
        expected=expected.__dict__,
        stop=stop,
        error=error,
        latency_s=latency,
        prompt_tokens=ptok,
        completion_tokens=ctok,
    )


def episode_id(instance_id: str, agent_model: str) -> str:
    """``{instance_id}-organic-{agent_model}``: each model that drives the agent plays its own episodes.

    Episodes written before the model was part of the id are named ``{instance_id}-organic``;
    resuming keys episodes by (instance, agent model) from their fields, so those still count.
    """
    return f"{instance_id}-organic-{re.sub(r'[^A-Za-z0-9._:-]+', '_', agent_model)}"


def _label(e: Episode) -> Label:
    """An episode's label: :func:`play` labels every episode it writes."""
    if e.trajectory.label is None:
        raise ValueError(f"episode {e.episode_id!r} has no label")
    return e.trajectory.label


def summarise(episodes: Iterable[Episode]) -> dict[str, Any]:
    """Counts for the organic table: faulty or wrong outcome, loud, silent, rule-visible types, habits."""
    eps = list(episodes)
    labels = [_label(e) for e in eps]
    return {
        "episodes": len(eps),
        "flagged_or_wrong_outcome": sum(lb.faulty for lb in labels),
        "wrong_outcome": sum(not lb.outcome_correct for lb in labels),
        "faulty_outcome_correct": sum(lb.faulty and lb.outcome_correct for lb in labels),
        "rule_visible_types": dict(Counter(lb.failure_type for lb in labels if lb.failure_type)),
        "faulty_by_stratum": dict(Counter(e.stratum for e in eps if _label(e).faulty)),
        "escalate_calls": sum(s.call.tool == "escalate" for e in eps for s in e.trajectory.steps),
        "episodes_with_eligibility_check": sum(
            any(s.call.tool == "check_eligibility" for s in e.trajectory.steps) for e in eps
        ),
        "stops": dict(Counter(e.stop for e in eps)),
        "mean_steps": sum(len(e.trajectory.steps) for e in eps) / len(eps) if eps else 0.0,
    }
