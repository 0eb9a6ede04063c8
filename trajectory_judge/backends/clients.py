"""Model clients: one abstract base with one method, two thin HTTP subclasses.

``ModelClient.complete(prompt, schema, *, temperature, seed)`` sends one flat prompt, decodes
under a JSON schema and returns a :class:`Completion`. The subclasses differ only in request and
response shape:

- :class:`OllamaClient`: Ollama's native ``POST /api/generate`` (``format`` = the schema,
  ``options.num_ctx`` set explicitly);
- :class:`OpenAIClient`: any OpenAI-compatible ``POST /v1/chat/completions`` (one user message,
  ``response_format`` = strict JSON schema), including llama.cpp's ``llama-server`` and hosted APIs.

A base URL is accepted with or without its trailing ``/v1``. An ``api_key`` is sent as a Bearer
token on every request and kept only in memory (never in a record, a message or a file).

Three kinds of failure are kept apart, and none of them becomes a verdict:

- :class:`TransportError`: connection refused, timeout, HTTP 5xx, 408 or 429 (a hosted API's rate
  limit). Retried with exponential
  backoff a few times (the request is identical, so at temperature 0 and a fixed seed so is the
  answer), then raised;
- :class:`PromptTooLongError`: the prompt plus the output budget does not fit the context window.
  Checked before sending where the server can count tokens, and detected from the server's
  response otherwise. Never silently truncated;
- :class:`ServerRejectedError`: any other 4xx (a bad request is a bug, not a verdict).

An HTTP 200 whose body lacks the answer's fields or carries malformed token counts is a server
fault like a 5xx (retried, then :class:`TransportError`). :meth:`ModelClient.abort` cuts off every
request in flight at once (Ctrl-C, SIGTERM); an aborted request raises :class:`Aborted`.

A response that arrives but does not parse *is* a verdict (clean at 0.5, see :mod:`.coerce`).
"""

from __future__ import annotations

import abc
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import httpx

from trajectory_judge.backends.errors import (  # noqa: F401 - re-exported: the clients' public errors
    Aborted,
    Completion,
    JudgeClientError,
    PromptTooLongError,
    ServerRejectedError,
    TransportError,
)
from trajectory_judge.backends.llama import LlamaServerExtras
from trajectory_judge.backends.transport import make_abortable, ollama_fault, openai_fault, token_count


def server_root(base_url: str) -> str:
    """``base_url`` without a trailing slash or ``/v1``: the clients add the API's own paths."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class ModelClient(abc.ABC):
    """A model behind a server: one method, :meth:`complete`.

    Subclasses hold the connection settings; the context window ``num_ctx`` and the output budget
    ``max_tokens`` are always explicit.
    """

    name: str = "client"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        num_ctx: int = 8192,
        max_tokens: int = 512,
        timeout: float = 600.0,
        retries: int = 3,
        backoff_s: float = 2.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], Any] | None = None,
        api_key: str | None = None,
    ) -> None:
        self.base_url = server_root(base_url)
        self.model = model
        self.num_ctx = int(num_ctx)
        self.max_tokens = int(max_tokens)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self._aborted = threading.Event()
        self._sleep = sleep if sleep is not None else self._aborted.wait  # a backoff ends on abort
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self._http = httpx.Client(base_url=self.base_url, timeout=self.timeout, transport=transport, headers=headers)
        self._backend = make_abortable(self._http)

    @abc.abstractmethod
    def complete(self, prompt: str, schema: dict[str, Any], *, temperature: float, seed: int) -> Completion:
        """Decode ``prompt`` under ``schema`` at ``temperature`` with ``seed``."""

    def server_info(self) -> dict[str, Any]:
        """What the server says about itself and its model (for the run metadata); may be empty."""
        return {}

    def decoding(self) -> dict[str, Any]:
        """Client-side decoding settings recorded in the run metadata."""
        return {"num_ctx": self.num_ctx, "max_tokens": self.max_tokens, "timeout_s": self.timeout}

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def abort(self) -> None:
        """Cut off every request in flight, from any thread; later requests raise :class:`Aborted`."""
        self._aborted.set()
        if self._backend is not None:
            self._backend.abort()

    # -- shared plumbing -------------------------------------------------------------------
    def _post(self, path: str, payload: dict[str, Any],
              fault: Callable[[Any], str | None] = lambda body: None) -> tuple[dict[str, Any], float]:
        """POST with retries on transport faults; returns the JSON body and the latency of the good try.

        ``fault(body)`` says why a 200 body is unusable (a server fault, retried like a 5xx).
        """
        last = ""
        for attempt in range(self.retries + 1):
            if attempt and not self._aborted.is_set():
                self._sleep(self.backoff_s * 2 ** (attempt - 1))
            if self._aborted.is_set():
                raise Aborted(f"{self.name} at {self.base_url}{path}: request cut off, the run is stopping")
            t0 = time.perf_counter()
            try:
                r = self._http.post(path, json=payload)
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            latency = time.perf_counter() - t0
            if r.status_code >= 500 or r.status_code in (408, 429):  # a server fault, a timeout, a rate limit
                last = f"HTTP {r.status_code}: {r.text[:300]}"
                continue
            if r.status_code >= 400:
                self._raise_for_client_error(r)
            try:
                body = r.json()
            except ValueError:
                last = f"HTTP {r.status_code} with a body that is not JSON: {r.text[:200]!r}"
                continue
            last = fault(body) or ""
            if not last:
                return body, latency
        raise TransportError(
            f"{self.name} at {self.base_url}{path}: gave up after {self.retries + 1} attempts; last error: {last}"
        )

    def _raise_for_client_error(self, r: httpx.Response) -> None:
        body = r.text[:500]
        low = body.lower()
        if "context" in low and ("exceed" in low or "too long" in low or "size" in low):
            raise PromptTooLongError(f"{self.name}: server refused the prompt as too long for its context: {body}")
        raise ServerRejectedError(f"{self.name}: HTTP {r.status_code} from {r.request.url}: {body}")

    def _too_long(self, n_prompt: int) -> PromptTooLongError:
        return PromptTooLongError(
            f"prompt is {n_prompt} tokens; with max_tokens={self.max_tokens} it does not fit "
            f"num_ctx={self.num_ctx}. Raise --num-ctx (and the server's context) rather than truncate."
        )


class OllamaClient(ModelClient):
    """Ollama's native API: ``POST /api/generate`` with ``format`` = schema and ``options.num_ctx``.

    The prompt goes in as the user turn of the model's template, with no system message
    (``raw=True`` sends it without any template). Ollama has no tokenizer endpoint and truncates
    an overlong prompt silently, so a prompt that may not fit (more bytes than the budget) is
    checked afterwards: a prompt evaluation count that reaches the budget is an error.
    """

    name = "ollama"

    def __init__(self, base_url: str, model: str, *, raw: bool = False, **kw: Any) -> None:
        super().__init__(base_url, model, **kw)
        self.raw = raw

    def complete(self, prompt: str, schema: dict[str, Any], *, temperature: float, seed: int) -> Completion:
        payload: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "format": schema,
            "stream": False,
            "raw": self.raw,
            "options": {
                "num_ctx": self.num_ctx,
                "num_predict": self.max_tokens,
                "temperature": temperature,
                "seed": seed,
            },
        }
        budget = self.num_ctx - self.max_tokens
        body, latency = self._post("/api/generate", payload, ollama_fault)
        n_prompt = int(token_count(body.get("prompt_eval_count")) or 0)
        # a token is at least one byte, so a prompt of at most `budget` bytes always fits
        if len(prompt.encode("utf-8")) > budget and n_prompt >= budget:
            raise self._too_long(n_prompt)
        done = body.get("done_reason")
        return Completion(
            text=body["response"],
            prompt_tokens=n_prompt,
            completion_tokens=int(token_count(body.get("eval_count")) or 0),
            latency_s=latency,
            finish_reason="length" if done == "length" else done,
        )

    def server_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"server": "ollama"}
        try:
            v = self._http.get("/api/version")
            if v.status_code == 200:
                info["build"] = v.json().get("version")
            tags = self._http.get("/api/tags")
            if tags.status_code == 200:
                for m in tags.json().get("models", []):
                    if m.get("name") == self.model or m.get("model") == self.model:
                        info["model_digest"] = m.get("digest")
        except (httpx.HTTPError, ValueError):
            pass
        return info


class OpenAIClient(LlamaServerExtras, ModelClient):
    """An OpenAI-compatible ``POST /v1/chat/completions`` with a strict JSON-schema response format.

    One user message, no system message, and only the standard OpenAI request fields, unless the
    server is llama.cpp's ``llama-server`` (``llama_cpp=True``, or ``None`` to ask its ``/props``
    once). For llama-server, ``cache_prompt`` is sent as configured (``None`` sends nothing) and
    the prompt is counted with its ``/tokenize`` endpoint (after ``/apply-template``) before
    sending, so a prompt that does not fit is an error and never reaches the server; the server's
    own context size (``/props``) must equal ``num_ctx``.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, *, cache_prompt: bool | None = None,
                 prefix_slots: Sequence[str] = (), slot_id: int = 0,
                 llama_cpp: bool | None = None, **kw: Any) -> None:
        super().__init__(base_url, model, **kw)
        self._llama_cpp = True if prefix_slots and llama_cpp is None else llama_cpp  # saved prefixes are llama-server's
        self._props: dict[str, Any] | None = None
        self.cache_prompt = cache_prompt
        self.prefix_slots = tuple(sorted(prefix_slots, key=len, reverse=True))
        self.slot_id = slot_id
        self._primed: dict[str, str] = {}
        self._can_tokenize: bool | None = None
        self._checked_ctx = False

    def _messages(self, prompt: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": prompt}]

    def complete(self, prompt: str, schema: dict[str, Any], *, temperature: float, seed: int) -> Completion:
        self._check_server_ctx()
        n = self.count_tokens(prompt)
        if n is not None and n + self.max_tokens > self.num_ctx:
            raise self._too_long(n)
        restore_s = 0.0
        if self.prefix_slots:
            t_restore = time.perf_counter()
            self._restore_prefix(prompt)
            restore_s = time.perf_counter() - t_restore  # counted in the verdict's latency
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(prompt),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": schema, "strict": True},
            },
            "temperature": temperature,
            "seed": seed,
            "max_tokens": self.max_tokens,
        }
        if self.prefix_slots:
            payload["cache_prompt"] = True
        elif self.cache_prompt is not None and self.llama_cpp:
            payload["cache_prompt"] = self.cache_prompt
        body, latency = self._post("/v1/chat/completions", payload, openai_fault)
        latency += restore_s
        try:
            choice = body["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ServerRejectedError(f"openai: response has no choices[0].message.content: {str(body)[:300]}") from None
        usage = body.get("usage") or {}
        n_prompt = int(token_count(usage.get("prompt_tokens")) or 0)
        if n is None and n_prompt + self.max_tokens > self.num_ctx:
            raise self._too_long(n_prompt)
        timings = body.get("timings") or {}
        return Completion(
            text=text,
            prompt_tokens=n_prompt,
            completion_tokens=int(token_count(usage.get("completion_tokens")) or 0),
            latency_s=latency,
            finish_reason=choice.get("finish_reason"),
            model_digest=body.get("system_fingerprint"),
            extra={k: timings[k] for k in ("cache_n", "prompt_n", "predicted_n") if k in timings},
        )

    def server_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"server": "openai-compatible"}
        props = self._read_props() if self._llama_cpp is not False else None
        if props is None:
            return info
        info["server"] = "llama-server"
        info["build"] = props.get("build_info")
        info["model_path"] = props.get("model_path")
        gen = props.get("default_generation_settings") or {}
        n_ctx = gen.get("n_ctx", props.get("n_ctx"))
        if isinstance(n_ctx, int):
            info["n_ctx"] = n_ctx
        path = props.get("model_path")
        if path and Path(path).is_file():
            from trajectory_judge.provenance.checksums import file_sha256

            info["model_sha256"] = file_sha256(path)
        return info

    def decoding(self) -> dict[str, Any]:
        mode = "saved-prefix" if self.prefix_slots else self.cache_prompt if self.llama_cpp else None
        return {**super().decoding(), "cache_prompt": mode}


BACKENDS: dict[str, type[ModelClient]] = {"ollama": OllamaClient, "openai": OpenAIClient}
"""Client class by ``--backend`` name."""
