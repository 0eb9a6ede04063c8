"""The fault injector: one edit at one step of the oracle's call list, then replay.

Each mutation is built to break exactly one rule (or, for the two types outside rule coverage,
none), and draws its randomness from a generator seeded by ``"{instance}-{type}-{seed}"``.
"""

from __future__ import annotations

import random
from dataclasses import replace

from trajectory_judge.models import TESTBED_FAILURE_TYPES, Trajectory
from trajectory_judge.testbed.env import Instance
from trajectory_judge.testbed.oracle import PlannedCall, oracle_calls, replay

INVENTED_PROMISES: tuple[str, ...] = (
    "A replacement unit is already on its way and should reach you by Thursday.",
    "I have also closed the membership plan attached to this purchase.",
    "As an apology, a 15 EUR gift card has been added to your account.",
    "Our courier will pick the item up from your home tomorrow between 9 and 12.",
)
"""The four sentences ``unsupported_claim`` may append: each promises something no observation supports."""


HOLDING_ANSWER = "Thanks for your patience; I am still checking your request and will follow up shortly."
"""The final answer of a ``premature_stop`` mutant, which never reaches a reply."""


INVENTED_SKU_KINDS: tuple[str, ...] = ("BUNDLE", "WARRANTY", "GIFT")


ANCHORS: dict[str, int] = {
    "wrong_tool": 2,
    "hallucinated_argument": 2,
    "skipped_precondition": 3,
    "ignored_observation": 4,
    "premature_stop": 3,
    "unsupported_claim": 5,
}
"""The labelled failure step of each type (for ``skipped_precondition``, after the deletion)."""


class NotHostable(ValueError):
    """The instance cannot host this failure type (for example no restocking fee)."""


def can_host(instance: Instance, failure_type: str) -> bool:
    """Whether a mutation of ``failure_type`` is meaningful on ``instance``.

    ``skipped_precondition`` needs a refund to rewrite; ``ignored_observation`` needs a
    restocking fee so that the order total differs from the authorised amount.
    """
    if failure_type == "skipped_precondition":
        return instance.eligible
    if failure_type == "ignored_observation":
        return instance.eligible and instance.policy.restocking_fee_pct > 0
    return failure_type in TESTBED_FAILURE_TYPES


def _rng(instance: Instance, failure_type: str, seed: int) -> random.Random:
    return random.Random(f"{instance.instance_id}-{failure_type}-{seed}")


def mutate_calls(instance: Instance, failure_type: str, seed: int = 7) -> tuple[list[PlannedCall], str | None]:
    """The edited call list and, when the edit replaces it, the final answer."""
    if failure_type not in TESTBED_FAILURE_TYPES:
        raise ValueError(f"unknown failure type {failure_type!r}; expected one of {', '.join(TESTBED_FAILURE_TYPES)}")
    if not can_host(instance, failure_type):
        raise NotHostable(f"{instance.instance_id} ({instance.stratum}) cannot host {failure_type}")
    rng = _rng(instance, failure_type, seed)
    calls = list(oracle_calls(instance))
    order_id = instance.order.order_id
    full_refund = {"order_id": order_id, "amount_eur": instance.order.total_eur}
    if failure_type == "wrong_tool":
        calls[2] = PlannedCall("Let me look at the order once more.", "lookup_order", {"order_id": order_id})
    elif failure_type == "hallucinated_argument":
        sku = f"SKU-{rng.choice(INVENTED_SKU_KINDS)}-{rng.randint(10, 99)}"
        calls[2] = PlannedCall("Read the refund rules for the item.", "get_policy", {"sku": sku})
    elif failure_type == "skipped_precondition":
        del calls[3]
        calls[3] = PlannedCall("Refund what the customer paid.", "issue_refund", full_refund)
    elif failure_type == "ignored_observation":
        calls[4] = PlannedCall("Refund the full price of the order.", "issue_refund", full_refund)
    elif failure_type == "premature_stop":
        return calls[:4], HOLDING_ANSWER
    elif failure_type == "unsupported_claim":
        text = calls[5].args["text"] + " " + rng.choice(INVENTED_PROMISES)
        calls[5] = replace(calls[5], args={"text": text})
    return calls, None


def inject(instance: Instance, failure_type: str, seed: int = 7) -> Trajectory:
    """A mutant of the oracle's run with exactly one fault of ``failure_type``, replayed for real."""
    calls, final_answer = mutate_calls(instance, failure_type, seed)
    return replay(
        instance,
        calls,
        trajectory_id=f"{instance.instance_id}-{failure_type}",
        final_answer=final_answer,
        failure_step=ANCHORS[failure_type],
        failure_type=failure_type,
    )
