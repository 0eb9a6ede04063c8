"""What the model clients return and how they fail: :class:`Completion` and the client errors.

Kept apart from :mod:`.clients` so the plumbing modules can use them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class JudgeClientError(RuntimeError):
    """Base class of the client failures that must stop a run rather than become verdicts."""


class TransportError(JudgeClientError):
    """The server could not be reached, failed (connection, timeout, HTTP 5xx) or rate-limited, after retries."""


class PromptTooLongError(JudgeClientError):
    """The prompt does not fit the context window; it is never truncated silently."""


class ServerRejectedError(JudgeClientError):
    """The server answered a request with a client error (HTTP 4xx)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status, when the server sent one."""


class RetryBudgetExhausted(TransportError):
    """The server kept failing or rate-limiting past ``--retries`` or ``--retry-budget``: try again later."""


@dataclass(frozen=True)
class Completion:
    """One model response with its cost."""

    text: str
    """The raw response text (JSON under the schema, unless the server failed to follow it)."""
    prompt_tokens: int
    """Prompt tokens as the serving layer counted them."""
    completion_tokens: int
    """Generated tokens."""
    latency_s: float
    """Wall-clock seconds of the (successful) request, including transport."""
    finish_reason: str | None = None
    """``stop`` or ``length`` (output cut at ``max_tokens``), when the server says."""
    model_digest: str | None = None
    """The server's model digest, when it reports one per response."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Server-specific timings (for example llama-server's ``cache_n``)."""


class Aborted(TransportError):
    """The client was aborted (Ctrl-C or SIGTERM): the request in flight was cut off, not answered."""
