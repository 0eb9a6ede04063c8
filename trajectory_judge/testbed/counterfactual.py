"""The counterfactual set: one fault, the same call with the same observation, planted at every step.

In the judged set each failure type sits at one step (its anchor, :data:`~trajectory_judge.testbed.inject.ANCHORS`),
so a difference in recall between positions there is a difference between types. Here the position
is the only thing that varies. The fault is an ungrounded argument, the one type whose nature does
not depend on where it happens: a ``get_policy`` call for an invented SKU, which fails (no policy is
on file for it), inserted before the oracle's call ``k`` for every ``k`` of the oracle's six calls.
The rest of the run is the oracle's, so the outcome is the instance's expected one (a silent fault)
and every mutant of an instance has seven steps. Each instance also contributes its clean run.

The invented SKU is drawn from a generator seeded by ``"{instance}-counterfactual-{seed}"``, once per
instance, so the mutants of one instance differ only in where the call sits. The set is ordered by
instance (the clean run, then the positions in order), so a prefix of ``7 k`` trajectories holds
``k`` instances complete.
"""

from __future__ import annotations

import random

from trajectory_judge.models import Trajectory
from trajectory_judge.testbed.env import Instance, generate_instances
from trajectory_judge.testbed.inject import INVENTED_SKU_KINDS
from trajectory_judge.testbed.oracle import PlannedCall, oracle_calls, replay, solve

FAULT = "hallucinated_argument"
"""The failure type planted at every position."""

THOUGHT = "Read the refund rules for the item."
"""The thought of the planted call (the judged set's ``hallucinated_argument`` mutant says the same)."""


def invented_sku(instance: Instance, seed: int) -> str:
    """The SKU the planted call asks about: of a kind no instance sells, so no policy is on file for it."""
    rng = random.Random(f"{instance.instance_id}-counterfactual-{seed}")
    return f"SKU-{rng.choice(INVENTED_SKU_KINDS)}-{rng.randint(10, 99)}"


def positions(instance: Instance) -> range:
    """The steps the fault can sit at: before each of the oracle's calls (the reply stays last)."""
    return range(len(oracle_calls(instance)))


def counterfactual_id(instance: Instance, position: int) -> str:
    """``INS-00003-hallucinated_argument-at2``."""
    return f"{instance.instance_id}-{FAULT}-at{position}"


def plant(instance: Instance, position: int, seed: int = 7) -> Trajectory:
    """The oracle's run with the invented-SKU ``get_policy`` call inserted at step ``position``, replayed."""
    calls = oracle_calls(instance)
    if position not in range(len(calls)):
        raise ValueError(f"position must be a step from 0 to {len(calls) - 1}, got {position}")
    call = PlannedCall(THOUGHT, "get_policy", {"sku": invented_sku(instance, seed)})
    return replay(
        instance,
        calls[:position] + [call] + calls[position:],
        trajectory_id=counterfactual_id(instance, position),
        failure_step=position,
        failure_type=FAULT,
    )


def build_counterfactual(instances: int = 60, seed: int = 7) -> list[Trajectory]:
    """For each of the first ``instances`` instances, its clean run and the fault at every position."""
    if instances < 1:
        raise ValueError(f"instances must be at least 1, got {instances}")
    out: list[Trajectory] = []
    for inst in generate_instances(instances, seed):
        out.append(solve(inst))
        out.extend(plant(inst, k, seed) for k in positions(inst))
    return out
