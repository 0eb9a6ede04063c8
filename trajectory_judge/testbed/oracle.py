"""The oracle: a fixed six-step policy that always solves an instance, and trajectory replay."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trajectory_judge.models import Label, Step, ToolCall, Trajectory
from trajectory_judge.testbed.env import Instance, SupportDesk, outcome_matches


@dataclass(frozen=True)
class PlannedCall:
    """One entry of a call list: the thought that goes with it and the call."""

    thought: str
    tool: str
    args: dict[str, Any]


def refund_reply(name: str, amount: float, order_id: str) -> str:
    """The oracle's reply after a refund."""
    return (
        f"Dear {name}, a refund of EUR {amount:.2f} for order {order_id} is on its way; "
        "expect it in your account within five working days."
    )


def escalation_reply(name: str, reason: str, order_id: str) -> str:
    """The oracle's reply after an escalation."""
    return (
        f"Dear {name}, I could not refund order {order_id} myself ({reason}), so a colleague "
        "will review it and get in touch with you."
    )


def oracle_calls(instance: Instance) -> list[PlannedCall]:
    """Run the policy against a fresh environment and return its call list.

    Verify, look up, read the policy for the SKU the lookup returned, check eligibility,
    refund the authorised amount or escalate, reply.
    """
    env = SupportDesk(instance)
    calls: list[PlannedCall] = []

    def do(thought: str, tool: str, **args: Any) -> dict[str, Any]:
        calls.append(PlannedCall(thought, tool, args))
        obs = env.call(tool, args)
        if not obs.ok:  # the oracle never fails on a generated instance
            raise AssertionError(f"oracle call {tool}({args}) failed on {instance.instance_id}: {obs.error}")
        return obs.data

    email, order_id = instance.customer.email, instance.order.order_id
    who = do("First make sure I know who is asking.", "get_customer", email=email)
    order = do("Pull up the order to see the item and what was paid.", "lookup_order", order_id=order_id)
    do("Read the refund rules for the item on this order.", "get_policy", sku=order["sku"])
    elig = do("Check eligibility before any money moves.", "check_eligibility", order_id=order_id)
    if elig["eligible"]:
        amount = elig["max_refund_eur"]
        do(
            "Eligible: refund exactly the amount the check allowed.",
            "issue_refund",
            order_id=order_id,
            amount_eur=amount,
        )
        text = refund_reply(who["name"], amount, order_id)
    else:
        do("Not eligible, so a human has to take this one.", "escalate", reason=elig["reason"])
        text = escalation_reply(who["name"], elig["reason"], order_id)
    do("Let the customer know what happened.", "reply", text=text)
    return calls


def replay(
    instance: Instance,
    calls: list[PlannedCall],
    *,
    trajectory_id: str,
    final_answer: str | None = None,
    failure_step: int | None = None,
    failure_type: str | None = None,
) -> Trajectory:
    """Execute a call list against a fresh environment; every observation is real.

    The final answer is the text of the last ``reply`` unless given. The label's
    ``outcome_correct`` is recomputed from the replayed end state, never assumed.
    """
    env = SupportDesk(instance)
    steps: list[Step] = []
    for i, c in enumerate(calls):
        obs = env.call(c.tool, dict(c.args))
        call = ToolCall.model_construct(tool=c.tool, args=dict(c.args))
        steps.append(Step.model_construct(index=i, thought=c.thought, call=call, observation=obs))
    if final_answer is None:
        final_answer = env.replies[-1] if env.replies else ""
    label = Label(
        faulty=failure_type is not None,
        failure_step=failure_step,
        failure_type=failure_type,
        outcome_correct=outcome_matches(env.outcome(), instance.expected_outcome),
    )
    return Trajectory(
        trajectory_id=trajectory_id,
        instance_id=instance.instance_id,
        goal=instance.goal,
        steps=steps,
        final_answer=final_answer,
        label=label,
    )


def solve(instance: Instance) -> Trajectory:
    """The clean trajectory of an instance."""
    return replay(instance, oracle_calls(instance), trajectory_id=f"{instance.instance_id}-clean")
