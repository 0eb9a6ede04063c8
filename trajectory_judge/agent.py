"""Organic episodes: an LLM drives the support desk, and the rule checker labels what it did.

Each episode gives the model the instance's goal, the same procedure text the judges receive,
and the tool list. At every step the model returns one action under a flat JSON schema with fixed
keyword fields (``thought``, ``tool``, ``email``, ``order_id``, ``sku``, ``amount_eur``,
``reason``, ``text``); the fields the chosen tool takes become its arguments, the rest are
ignored. The action runs against a fresh :class:`~trajectory_judge.env.SupportDesk`, and the
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

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from .checker import check
from .cost import CpuMeter
from .env import Instance, SupportDesk, generate_instances, outcome_matches
from .judges.clients import ModelClient
from .judges.prompts import PROCEDURE
from .judges.views import render_call, render_observation
from .models import Label, Observation, Step, ToolCall, Trajectory, dumps, parse_jsonl

MAX_STEPS = 10
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
    tool: Literal["get_customer", "lookup_order", "get_policy", "check_eligibility", "issue_refund", "escalate", "reply"]
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
    from .judges.schema import _clean

    schema = _clean(Action.model_json_schema())
    schema["required"] = list(schema["properties"])
    return schema


AGENT_PREFIX = (
    "You are a customer-support agent for an online shop, working on one refund request.\n\n"
    f"{PROCEDURE}\n\n"
    f"Tools:\n{TOOL_HELP}\n\n"
    "You act one step at a time. Below are the request and the steps you have taken so far, each with "
    "the result the tool returned. Decide the single next step. Answer with one JSON action: in "
    "\"thought\" say what you will do next and why, given the results so far; then the tool, and its "
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
    return (f"{AGENT_PREFIX}REQUEST: {goal}\n\nSTEPS TAKEN SO FAR ({len(steps)}):\n{render_history(steps)}\n\n"
            f"Your next action (step {len(steps)}):\n")


def action_call(action: dict[str, Any]) -> ToolCall:
    """The tool call an action stands for: the tool and only the fields it takes."""
    tool = action["tool"]
    return ToolCall(tool=tool, args={k: action.get(k) for k in TOOL_ARGS[tool]})


class Episode(BaseModel):
    """One organic episode: the trajectory the model produced, its rule-checker label, its cost."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    """``{instance_id}-organic``."""
    stratum: str
    """The instance's stratum."""
    agent_model: str
    """The model that drove the agent."""
    trajectory: Trajectory
    """The steps taken, with the label from the checker and the outcome check."""
    violations: list[dict[str, Any]]
    """Every rule the checker found broken, in (step, priority) order."""
    outcome: dict[str, Any]
    """The customer-visible end state."""
    expected: dict[str, Any]
    """The instance's expected outcome."""
    stop: Literal["replied", "max_steps", "unparseable_action"]
    """Why the episode ended."""
    error: str | None = None
    """The unparseable model output that ended the episode, if any."""
    latency_s: float
    """Wall-clock seconds of all model calls."""
    prompt_tokens: int
    """Prompt tokens over all steps."""
    completion_tokens: int
    """Generated tokens over all steps."""


def play(instance: Instance, client: ModelClient, *, agent_model: str, temperature: float = 0.0, seed: int = 7,
         max_steps: int = MAX_STEPS) -> Episode:
    """Let the model drive one episode on a fresh environment, then label it."""
    env = SupportDesk(instance)
    schema = action_schema()
    steps: list[Step] = []
    stop: str = "max_steps"
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
    traj = Trajectory(trajectory_id=f"{instance.instance_id}-organic", instance_id=instance.instance_id,
                      goal=instance.goal, steps=steps, final_answer=final)
    violations = check(traj)
    first = violations[0] if violations else None
    traj.label = Label(
        faulty=bool(violations) or not correct,
        failure_step=first.step if first else None,
        failure_type=first.failure_type if first else None,  # type: ignore[arg-type]
        outcome_correct=correct,
    )
    return Episode(
        episode_id=traj.trajectory_id, stratum=instance.stratum, agent_model=agent_model, trajectory=traj,
        violations=[{"step": v.step, "rule": v.rule, "failure_type": v.failure_type, "detail": v.detail} for v in violations],
        outcome=got.__dict__, expected=expected.__dict__, stop=stop, error=error,  # type: ignore[arg-type]
        latency_s=latency, prompt_tokens=ptok, completion_tokens=ctok,
    )


def summarise(episodes: Iterable[Episode]) -> dict[str, Any]:
    """Counts for the organic table: faulty or wrong outcome, loud, silent, rule-visible types, habits."""
    eps = list(episodes)
    labels = [e.trajectory.label for e in eps]
    return {
        "episodes": len(eps),
        "flagged_or_wrong_outcome": sum(lb.faulty for lb in labels),
        "wrong_outcome": sum(not lb.outcome_correct for lb in labels),
        "faulty_outcome_correct": sum(lb.faulty and lb.outcome_correct for lb in labels),
        "rule_visible_types": dict(Counter(lb.failure_type for lb in labels if lb.failure_type)),
        "faulty_by_stratum": dict(Counter(e.stratum for e in eps if e.trajectory.label.faulty)),
        "escalate_calls": sum(s.call.tool == "escalate" for e in eps for s in e.trajectory.steps),
        "episodes_with_eligibility_check": sum(any(s.call.tool == "check_eligibility" for s in e.trajectory.steps) for e in eps),
        "stops": dict(Counter(e.stop for e in eps)),
        "mean_steps": sum(len(e.trajectory.steps) for e in eps) / len(eps) if eps else 0.0,
    }


def run_episodes(instances: Sequence[Instance], client: ModelClient, out_path: str | Path, *, agent_model: str,
                 temperature: float = 0.0, seed: int = 7, progress: bool = True) -> list[Episode]:
    """Play every instance not yet in ``out_path``; append each episode durably as it finishes."""
    from .runner import Progress, repair_torn_tail

    out_path = Path(out_path)
    msg = repair_torn_tail(out_path, Episode)
    if msg:
        print(f"trajectory-judge: {msg}", file=sys.stderr)
    done = {e.episode_id for e in parse_jsonl(out_path, Episode)} if out_path.exists() else set()
    todo = [i for i in instances if f"{i.instance_id}-organic" not in done]
    bar = Progress(len(todo), desc=f"organic:{agent_model}", enabled=progress, unit="episode")
    new: list[Episode] = []
    with open(out_path, "a", encoding="utf-8", newline="\n") as fh:
        for inst in todo:
            ep = play(inst, client, agent_model=agent_model, temperature=temperature, seed=seed)
            fh.write(dumps(ep) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            new.append(ep)
            bar.update(f"{ep.episode_id} {len(ep.trajectory.steps)} steps {ep.latency_s:.0f}s")
    bar.close()
    return new


def add_agent_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``trajectory-judge agent``."""
    p.add_argument("--data", default="data/", help="output directory: organic.jsonl and runs.jsonl (default data/)")
    p.add_argument("--episodes", type=int, default=60, help="number of episodes, the first N instances (default 60)")
    p.add_argument("--instance-seed", type=int, default=7, help="instance generation seed (default 7)")
    p.add_argument("--backend", choices=["ollama", "openai"], default="openai")
    p.add_argument("--base-url", default="http://127.0.0.1:8080")
    p.add_argument("--model", required=True, help="model name sent to the server")
    p.add_argument("--agent-model-name", default=None, help="model name recorded in episodes (default --model)")
    p.add_argument("--num-ctx", type=int, default=8192)
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--retries", type=int, default=3)
    p.add_argument("--cache-prompt", choices=["off", "on", "unset"], default="off")
    p.add_argument("--quiet", action="store_true")


def cli_agent(args: argparse.Namespace) -> int:
    """``trajectory-judge agent``: play organic episodes, append them, print the summary."""
    from . import __version__
    from .judges.clients import JudgeClientError
    from .runner import _now, append_run_record, git_commit, launch_record, make_client

    args.concurrency = 1
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    name = args.agent_model_name or args.model
    client = make_client(args)
    record: dict[str, Any] = {
        "started": _now(), "argv": sys.argv[1:], "kind": "organic", "agent_model": name, "backend": args.backend,
        "base_url": args.base_url, "model": args.model, "episodes": args.episodes, "instance_seed": args.instance_seed,
        "decoding": {**client.decoding(), "temperature": args.temperature, "seed": args.seed},
        "package_version": __version__, "git_commit": git_commit(), "server": client.server_info(),
    }
    record["server_launch"] = launch_record(args.base_url, record["server"])
    meter = CpuMeter(record["server_launch"])
    t0 = time.monotonic()
    code, status, message, new = 0, "ok", None, []
    instances = generate_instances(args.episodes, args.instance_seed)
    try:
        new = run_episodes(instances, client, data / ORGANIC, agent_model=name, temperature=args.temperature,
                           seed=args.seed, progress=not args.quiet)
    except JudgeClientError as exc:
        code, status, message = 1, "failed", f"{type(exc).__name__}: {exc}"
        print(f"trajectory-judge: error: {exc}\n  episodes already written are kept; rerun to resume.", file=sys.stderr)
    except KeyboardInterrupt:
        code, status, message = 130, "interrupted", "KeyboardInterrupt"
    finally:
        client.close()
        record.update(status=status, message=message, written=len(new), ended=_now(),
                      wall_s=round(time.monotonic() - t0, 3), cpu_s=meter.read())
        append_run_record(data, record)
    if code == 0:
        eps = parse_jsonl(data / ORGANIC, Episode)
        ids = {f"{i.instance_id}-organic" for i in instances}
        print(json.dumps(summarise(e for e in eps if e.episode_id in ids), indent=2))
    return code
