"""Response schemas: what a judge must emit, decoded under a JSON-schema grammar.

Property order is generation order under constrained decoding, so ``reasoning`` comes first
(the argument is written before the verdict) and carries a ``maxLength``: without it a small
model can loop inside the string until ``max_tokens`` and return broken JSON. The outcome
schema has no ``failure_step``: a judge that cannot see the steps has no business naming one.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trajectory_judge.models import TESTBED_FAILURE_TYPES
from trajectory_judge.models.schema import decoding_schema

REASONING_MAX_CHARS = 600
"""``maxLength`` of the ``reasoning`` string."""


TypeOrNone = Literal[(*TESTBED_FAILURE_TYPES, "none")]  # type: ignore[valid-type]
"""The six failure types of the taxonomy, or ``none`` (one list, kept in models.records)."""


class OutcomeResponse(BaseModel):
    """What the outcome judge returns."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=REASONING_MAX_CHARS)
    """The judge's argument, generated before the verdict."""
    faulty: bool
    """Whether the judge reports a failure."""
    failure_type: TypeOrNone
    """One of the six failure types, or ``none``."""
    confidence: float
    """Stated probability that the verdict is right (coerced into [0.5, 1.0])."""


class StepResponse(BaseModel):
    """What the step, reply and self-consistency judges return."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=REASONING_MAX_CHARS)
    """The judge's argument, generated before the verdict."""
    faulty: bool
    """Whether the judge reports a failure."""
    failure_step: int
    """Index of the first step that went wrong."""
    failure_type: TypeOrNone
    """One of the six failure types, or ``none``."""
    confidence: float
    """Stated probability that the verdict is right (coerced into [0.5, 1.0])."""


RESPONSE_MODELS: dict[str, type[BaseModel]] = {
    "outcome": OutcomeResponse,
    "step": StepResponse,
    "reply": StepResponse,
}


def response_schema(view: str) -> dict[str, Any]:
    """The JSON schema a ``view`` judge decodes under (all properties required, in order)."""
    try:
        model = RESPONSE_MODELS[view]
    except KeyError:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(RESPONSE_MODELS)}") from None
    return decoding_schema(model)
