"""The two line formats of a batch: OpenAI Batch API requests and their results, read and written once.

A requests file (what ``export-requests`` writes, what a provider's batch API, ``vllm run-batch``
and ``run-requests`` read) holds one :class:`BatchRequest` per line; a results file (what they
answer, what ``import-results`` reads) one :class:`BatchResult` per line. Every reader goes
through :func:`read_lines`, so a bad line is refused with one message naming the file, the line
and the field (``FILE:LINE: invalid BatchResult: response.status_code: ...``), as a bad
trajectory or verdict is; every writer goes through :meth:`BatchLine.line`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from trajectory_judge.models import DataError, parse_line

ChatUrl = Literal["/v1/chat/completions"]
CHAT_URL: ChatUrl = "/v1/chat/completions"
"""The ``url`` of every request: the only endpoint the requests are written for."""


class BatchLine(BaseModel):
    """A record that is one line of a batch file."""

    model_config = ConfigDict(strict=True, frozen=True)

    def line(self) -> str:
        """The record as one JSON line, without its newline (the one writer of both formats)."""
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False)


class BatchRequest(BatchLine):
    """One request: the Batch API's input line."""

    model_config = ConfigDict(extra="forbid")

    custom_id: str = Field(min_length=1)
    """What names the request in its answer (``tj-`` and a digest of what determines the answer)."""
    method: Literal["POST"] = "POST"
    """Always ``POST``."""
    url: ChatUrl = CHAT_URL
    """Always the chat-completions endpoint."""
    body: dict[str, Any]
    """The chat-completions request body, sent as it is."""


class BatchResponse(BaseModel):
    """What the server answered to one request."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    status_code: int
    """The HTTP status of the answer."""
    request_id: str | None = None
    """The engine's id of the request, when it gives one."""
    body: Any = None
    """The response body: a chat completion under 200, the server's error otherwise."""


class BatchError(BaseModel):
    """Why an engine could not get an answer at all (the Batch API's ``error``)."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    code: str | int | None = None
    """The engine's code for the failure."""
    message: str | None = None
    """Its message."""


SETTLED_STATUS = range(200, 500)
"""An answer with one of these statuses settles its request (asking again would get the same)..."""
UNSETTLED_STATUS = (408, 429)
"""...except a timeout or a rate limit, which a later try may get past."""


class BatchResult(BatchLine):
    """One answer: the Batch API's output line (fields other engines add are ignored)."""

    model_config = ConfigDict(extra="ignore")

    id: str | None = None
    """The engine's id of this line."""
    custom_id: str = Field(min_length=1)
    """The ``custom_id`` of the request it answers."""
    response: BatchResponse | None = None
    """The server's answer; None when there was none."""
    error: BatchError | str | None = None
    """Why there is no answer, when the engine says (some engines give only a message)."""

    @classmethod
    def of(cls, n: int, custom_id: str, status: int, body: Any) -> BatchResult:
        """The result line ``run-requests`` writes for its ``n``-th request."""
        return cls(
            id=f"tj-batch-req-{n}",
            custom_id=custom_id,
            response=BatchResponse(status_code=status, request_id=custom_id, body=body),
            error=None,
        )

    @property
    def status(self) -> int | None:
        """The HTTP status of the answer, None when there is none."""
        return self.response.status_code if self.response is not None else None

    @property
    def settled(self) -> bool:
        """Whether the request needs no asking again: answered, or refused for good (a 4xx other than 408 or 429)."""
        return self.status in SETTLED_STATUS and self.status not in UNSETTLED_STATUS

    def why_not(self) -> str:
        """A short reason this line is not an answer (for the import's list of unanswered requests)."""
        if self.status is not None:
            return f"HTTP {self.status}"
        if isinstance(self.error, BatchError):
            return json.dumps(self.error.model_dump(mode="json"))[:200]
        return str(self.error)[:200] if self.error else "no response"


R = TypeVar("R", bound=BatchLine)


def read_lines(
    path: str | Path, model: type[R], *, on_torn: Callable[[str], Any] | None = None
) -> Iterator[tuple[int, R]]:
    """``(line number, record)`` of every non-blank line of ``path``, read a line at a time.

    With ``on_torn``, a last line without its newline that is not a whole record (a download cut
    off, a writer killed mid-line) is left out and ``on_torn`` hears why; without it, that line is
    refused as any other bad line is.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
                record = parse_line(path, lineno, text, model)
            except (UnicodeDecodeError, DataError) as exc:
                if on_torn is not None and not raw.endswith(b"\n"):
                    on_torn(f"{path}:{lineno}: the last line is not whole ({len(raw)} bytes, no newline); left out")
                    return
                if isinstance(exc, UnicodeDecodeError):
                    raise DataError(f"{path}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x})") from None
                raise
            yield lineno, record


def read_requests(path: str | Path) -> dict[str, BatchRequest]:
    """Every request of a requests file by ``custom_id``, in file order (a repeated id keeps its first line)."""
    out: dict[str, BatchRequest] = {}
    for _lineno, req in read_lines(path, BatchRequest):
        out.setdefault(req.custom_id, req)
    return out
