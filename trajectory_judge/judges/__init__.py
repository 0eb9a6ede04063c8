"""Judges: the rule engine, the LLM views, and self-consistency.

The public names below are imported on first use (PEP 562), so that a module that needs only the
views (the report) does not pay for the HTTP clients.
"""

from __future__ import annotations

from trajectory_judge.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    **{
        name: "trajectory_judge.backends.clients"
        for name in (
            "Completion",
            "JudgeClientError",
            "ModelClient",
            "OllamaClient",
            "OpenAIClient",
            "PromptTooLongError",
            "ServerRejectedError",
            "TransportError",
        )
    },
    "Judge": "trajectory_judge.judges.base",
    "Blinder": "trajectory_judge.judges.blind",
    "judge_view": "trajectory_judge.judges.blind",
    "opaque_id": "trajectory_judge.judges.blind",
    "coerce": "trajectory_judge.judges.coerce",
    "LLMJudge": "trajectory_judge.judges.llm",
    "ProgrammaticJudge": "trajectory_judge.judges.programmatic",
    "SHARED_PREFIX": "trajectory_judge.judges.prompts",
    "build_prompt": "trajectory_judge.judges.prompts",
    "view_prefix": "trajectory_judge.judges.prompts",
    "response_schema": "trajectory_judge.judges.schema",
    "SelfConsistencyJudge": "trajectory_judge.judges.selfcons",
    "VIEWS": "trajectory_judge.judges.views",
    "render_view": "trajectory_judge.judges.views",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
