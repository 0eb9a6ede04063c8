"""Shared fakes for the LLM-judge tests: a hand-built trajectory and scripted model clients."""

from __future__ import annotations

import json
from typing import Any

from trajectory_judge.backends.clients import Completion, ModelClient
from trajectory_judge.models import Label, Observation, Step, ToolCall, Trajectory


def make_trajectory(tid: str = "t-0001", *, faulty: bool = False) -> Trajectory:
    """A six-step refund run in the shape the oracle produces (hand-written, no environment)."""
    calls = [
        ("get_customer", {"email": "ines.berg@example.com"}, {"customer_id": "C-1", "name": "Ines Berg"}),
        (
            "lookup_order",
            {"order_id": "O-1001"},
            {"order_id": "O-1001", "customer_id": "C-1", "sku": "SKU-DESK-30", "total_eur": 120.0},
        ),
        ("get_policy", {"sku": "SKU-DESK-30"}, {"sku": "SKU-DESK-30", "window_days": 30, "refundable": True}),
        ("check_eligibility", {"order_id": "O-1001"}, {"eligible": True, "authorised_eur": 120.0}),
        ("issue_refund", {"order_id": "O-1001", "amount_eur": 120.0}, {"refund_id": "R-1", "amount_eur": 120.0}),
        ("reply", {"text": "Your refund of 120.00 EUR for order O-1001 has been issued."}, {"sent": True}),
    ]
    steps = [
        Step(index=i, thought=f"thought {i}", call=ToolCall(tool=t, args=a), observation=Observation(ok=True, data=d))
        for i, (t, a, d) in enumerate(calls)
    ]
    return Trajectory(
        trajectory_id=tid,
        instance_id="inst-0001",
        goal="Customer ines.berg@example.com has asked for a refund on order O-1001.",
        steps=steps,
        final_answer="Your refund of 120.00 EUR for order O-1001 has been issued.",
        label=Label(
            faulty=faulty,
            failure_step=2 if faulty else None,
            failure_type="wrong_tool" if faulty else None,
            outcome_correct=True,
        ),
    )


def make_varied(tid: str) -> Trajectory:
    """:func:`make_trajectory` whose goal names ``tid``, so that trajectories differ in what a judge sees."""
    t = make_trajectory(tid)
    return t.model_copy(update={"goal": f"{t.goal} (case {tid})"})


def response(faulty: bool = True, step: int | None = 2, ftype: str = "wrong_tool", confidence: float = 0.8) -> str:
    obj: dict[str, Any] = {"reasoning": "checked", "faulty": faulty}
    if step is not None:
        obj["failure_step"] = step
    obj.update(failure_type=ftype, confidence=confidence)
    return json.dumps(obj)


class ScriptedClient(ModelClient):
    """Returns the given texts in turn (the last one forever); records every call."""

    name = "scripted"

    def __init__(
        self, texts: list[str] | str = "", *, fail_after: int | None = None, exc: Exception | None = None
    ) -> None:
        super().__init__("http://fake.invalid", "fake-model")
        self.texts = [texts] if isinstance(texts, str) else list(texts)
        self.calls: list[dict[str, Any]] = []
        self.fail_after = fail_after
        self.exc = exc

    def complete(self, prompt: str, schema: dict[str, Any], *, temperature: float, seed: int) -> Completion:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise self.exc or RuntimeError("scripted failure")
        self.calls.append({"prompt": prompt, "schema": schema, "temperature": temperature, "seed": seed})
        text = self.texts[min(len(self.calls) - 1, len(self.texts) - 1)] if self.texts else response()
        return Completion(text=text, prompt_tokens=100, completion_tokens=20, latency_s=0.0)
