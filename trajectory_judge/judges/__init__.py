"""Judges: the rule engine, the LLM views, and self-consistency."""

from __future__ import annotations

from trajectory_judge.backends.clients import (
    Completion,
    JudgeClientError,
    ModelClient,
    OllamaClient,
    OpenAIClient,
    PromptTooLongError,
    ServerRejectedError,
    TransportError,
)
from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.blind import Blinder, judge_view, opaque_id
from trajectory_judge.judges.coerce import coerce
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.judges.programmatic import ProgrammaticJudge
from trajectory_judge.judges.prompts import SHARED_PREFIX, build_prompt, view_prefix
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.judges.selfcons import SelfConsistencyJudge
from trajectory_judge.judges.views import VIEWS, render_view

__all__ = [
    "Blinder",
    "Completion",
    "Judge",
    "JudgeClientError",
    "LLMJudge",
    "ModelClient",
    "OllamaClient",
    "OpenAIClient",
    "ProgrammaticJudge",
    "PromptTooLongError",
    "SHARED_PREFIX",
    "SelfConsistencyJudge",
    "ServerRejectedError",
    "TransportError",
    "VIEWS",
    "build_prompt",
    "coerce",
    "judge_view",
    "opaque_id",
    "render_view",
    "response_schema",
    "view_prefix",
]
