"""Judges: the rule engine, the LLM views, and self-consistency."""

from .base import Judge
from .clients import (
    Completion,
    JudgeClientError,
    ModelClient,
    OllamaClient,
    OpenAIClient,
    PromptTooLongError,
    ServerRejectedError,
    TransportError,
)
from .coerce import coerce
from .llm import LLMJudge
from .programmatic import ProgrammaticJudge
from .prompts import SHARED_PREFIX, build_prompt, view_prefix
from .schema import response_schema
from .selfcons import SelfConsistencyJudge
from .views import VIEWS, render_view

__all__ = [
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
    "render_view",
    "response_schema",
    "view_prefix",
]
