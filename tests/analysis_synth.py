"""Small synthetic trajectories and verdicts for the analysis tests (no release needed)."""

from __future__ import annotations

import random

from trajectory_judge.models import (
    FAILURE_TYPES,
    Label,
    Observation,
    Step,
    ToolCall,
    Trajectory,
    Verdict,
)

ALWAYS_SILENT = ("wrong_tool", "hallucinated_argument", "unsupported_claim")
ALWAYS_LOUD = ("ignored_observation", "premature_stop")
REPLY = "Your refund of 40.00 EUR has been issued."
CLAIM = "A courier will collect the item from your address tomorrow morning."


def step(i: int, tool: str = "lookup_order") -> Step:
    """A minimal successful step."""
    return Step(
        index=i,
        thought=f"t{i}",
        call=ToolCall(tool=tool, args={"order_id": "ORD-1"}),
        observation=Observation(ok=True, data={"i": i}),
    )


def clean(instance: str) -> Trajectory:
    """A clean trajectory of ``instance``."""
    return Trajectory(
        trajectory_id=f"{instance}-clean",
        instance_id=instance,
        goal=f"goal {instance}",
        steps=[step(i) for i in range(4)],
        final_answer=REPLY,
        label=Label(faulty=False, outcome_correct=True),
    )


def fault(instance: str, ftype: str, *, loud: bool | None = None, reply_changes: bool | None = None) -> Trajectory:
    """A fault of ``ftype`` on ``instance``: a changed step, and a changed reply for the reply types."""
    if loud is None:
        loud = ftype in ALWAYS_LOUD
    if reply_changes is None:
        reply_changes = ftype in ("premature_stop", "unsupported_claim")
    answer = (
        REPLY + " " + CLAIM if ftype == "unsupported_claim" else ("I am looking into it." if reply_changes else REPLY)
    )
    steps = [step(i) for i in range(4)]
    steps[2] = step(2, tool="get_policy_for_sku")
    return Trajectory(
        trajectory_id=f"{instance}-{ftype}",
        instance_id=instance,
        goal=f"goal {instance}",
        steps=steps,
        final_answer=answer,
        label=Label(faulty=True, failure_step=2, failure_type=ftype, outcome_correct=not loud),
    )


def verdict(
    tid: str,
    judge: str,
    faulty: bool,
    *,
    step_: int | None = None,
    ftype: str | None = None,
    confidence: float = 0.9,
    latency: float = 1.0,
) -> Verdict:
    """A verdict with defaults for the bookkeeping fields."""
    return Verdict(
        trajectory_id=tid,
        judge_id=judge,
        faulty=faulty,
        failure_step=step_,
        failure_type=ftype if faulty else None,
        confidence=confidence,
        rationale="r",
        latency_s=latency,
        prompt_tokens=100,
        completion_tokens=10,
    )


def design(n_instances: int = 4) -> list[Trajectory]:
    """Clean parents and one fault of every type per instance (skipped_precondition alternates silent/loud)."""
    out = []
    for k in range(n_instances):
        inst = f"INS-{k:03d}"
        out.append(clean(inst))
        for t in FAILURE_TYPES:
            loud = (k % 2 == 1) if t == "skipped_precondition" else None
            out.append(fault(inst, t, loud=loud))
    return out


def random_verdicts(
    trajs: list[Trajectory], judge: str, seed: int, *, coverage: float = 1.0, steps: bool = True
) -> list[Verdict]:
    """Noisy verdicts on a random ``coverage`` share of ``trajs``."""
    rng = random.Random(seed)
    out = []
    for t in trajs:
        if rng.random() > coverage:
            continue
        flag = rng.random() < (0.8 if t.label.faulty else 0.2)
        ftype = rng.choice([*FAILURE_TYPES, None]) if flag else None
        st = rng.choice([None, 1, 2, 3]) if (flag and steps) else None
        conf = rng.choice([0.5, 0.6, 0.7, 0.8, 0.9, 0.92, 1.0])
        out.append(
            verdict(t.trajectory_id, judge, flag, step_=st, ftype=ftype, confidence=conf, latency=rng.random() * 5)
        )
    return out
