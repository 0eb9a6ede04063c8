"""Model clients: one abstract base with one method, two thin HTTP subclasses.

``ModelClient.complete(prompt, schema, *, temperature, seed)`` sends one flat prompt, decodes
under a JSON schema and returns a :class:`Completion`. The subclasses differ only in request and
response shape:

- :class:`OllamaClient`: Ollama's native ``POST /api/generate`` (``format`` = the schema,
  ``options.num_ctx`` set explicitly);
- :class:`OpenAIClient`: any OpenAI-compatible chat API, including llama.cpp's ``llama-server``
  and hosted APIs. The base URL is the OpenAI base URL, used as the OpenAI SDK uses it:
  requests go to ``{base}/chat/completions``. Only a base without a path (``http://host:port``)
  is completed with ``/v1``, and only when ``{base}/chat/completions`` answers 404 and
  ``{base}/v1/chat/completions`` answers.

An ``api_key`` is sent as a Bearer token with generation requests only (never to ``/props``,
``/tokenize`` or any other endpoint) and kept only in memory (never in a record, a message or a file).

Three kinds of failure are kept apart, and none of them becomes a verdict:

- :class:`TransportError`: connection refused, timeout, HTTP 5xx or 408, retried with jittered
  exponential backoff; a rate limit (HTTP 429, or 503) is waited out (``Retry-After`` honoured)
  while every request of the client pauses and fewer are let in flight (see :mod:`.retry`).
  Past ``retries`` or the retry budget: :class:`RetryBudgetExhausted`;
- :class:`PromptTooLongError`: the prompt plus the output budget does not fit the context window.
  Checked before sending where the server can count tokens, and detected from the server's
  response otherwise. Never silently truncated;
- :class:`ServerRejectedError`: any other 4xx (a bad request is a bug, not a verdict), and a
  429 that says the account's quota is used up.

An HTTP 200 whose body lacks the answer's fields or carries malformed token counts is a server
fault like a 5xx. :meth:`ModelClient.abort` cuts off every request in flight at once (Ctrl-C,
SIGTERM); an aborted request raises :class:`Aborted`.

A response that arrives but does not parse *is* a verdict (clean at 0.5, see :mod:`.coerce`).
"""

from __future__ import annotations

import abc
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from trajectory_judge.backends.errors import (  # noqa: F401 - re-exported: the clients' public errors
    Aborted,
    Completion,
    JudgeClientError,
    PromptTooLongError,
    RetryBudgetExhausted,
    ServerRejectedError,
    TransportError,
)
from trajectory_judge.backends.llama import LlamaServerExtras
from trajectory_judge.backends.resilient import RetryingPost
from trajectory_judge.backends.retry import RateGate, RetryPolicy
from trajectory_judge.backends.strict import strict_subset
from trajectory_judge.backends.transport import AbortableTransport, ollama_fault, openai_fault, token_count


def server_root(base_url: str) -> str:
    """``base_url`` without its query, a trailing slash, ``/chat/completions`` or ``/v1``: where a server's
    own endpoints (Ollama's, llama-server's) live."""
    scheme, netloc, path, _, _ = urlsplit(base_url.strip())
    path = path.rstrip("/").removesuffix("/chat/completions").removesuffix("/v1")
    return urlunsplit((scheme, netloc, path, "", ""))


class ModelClient(RetryingPost, abc.ABC):
    """A model behind a server: one method, :meth:`complete`.

    Subclasses hold the connection settings; the context window ``num_ctx`` and the output budget
    ``max_tokens`` are always explicit. ``concurrency`` is how many requests the caller may have
    in flight: the client's :class:`~.retry.RateGate` lowers it while the server rate-limits.
    ``sleep``, ``clock`` and ``rng`` (backoff jitter) can be injected, so tests never wait.
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
        retry_budget_s: float = 600.0,
        concurrency: int = 1,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], Any] | None = None,
        clock: Callable[[], float] | None = None,
        rng: random.Random | None = None,
        api_key: str | None = None,
        on_event: Callable[[str], Any] | None = None,
    ) -> None:
        self.base_url = server_root(base_url)
        self.model = model
        self.num_ctx = int(num_ctx)
        self.max_tokens = int(max_tokens)
        self.timeout = float(timeout)
        self.policy = RetryPolicy(retries=int(retries), budget_s=float(retry_budget_s), backoff_s=float(backoff_s))
        self.retries = self.policy.retries
        self._aborted = threading.Event()
        self._sleep = sleep if sleep is not None else self._aborted.wait  # a backoff ends on abort
        self._clock = clock if clock is not None else time.monotonic
        self._rng = rng if rng is not None else random.Random()  # jitter only: never touches a verdict
        # the key goes only with generation requests (see _post's ``auth``), never to a server's other endpoints
        self._auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if transport is None:
            transport = AbortableTransport()
        # an injected transport (a test's mock, a caller's own) has no sockets of ours to abort
        self._abortable = transport if isinstance(transport, AbortableTransport) else None
        self._http = httpx.Client(base_url=self.base_url, timeout=self.timeout, transport=transport)
        self.gate = RateGate(
            concurrency, clock=lambda: self._clock(), sleep=lambda s: self._sleep(s), on_event=on_event
        )

    @property
    def on_event(self) -> Callable[[str], Any] | None:
        """Called with one line whenever the client slows down or recovers (the CLI prints it)."""
        return self.gate.on_event

    @on_event.setter
    def on_event(self, fn: Callable[[str], Any] | None) -> None:
        self.gate.on_event = fn

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
        self.gate.close("the run is stopping")
        if self._abortable is not None:
            self._abortable.abort()

    # -- shared plumbing (the retrying POST is in .resilient) --------------------------------
    def _raise_for_client_error(self, r: httpx.Response) -> None:
        body = r.text[:500]
        low = body.lower()
        if "context" in low and ("exceed" in low or "too long" in low or "size" in low):
            raise PromptTooLongError(f"{self.name}: server refused the prompt as too long for its context: {body}")
        raise ServerRejectedError(f"{self.name}: HTTP {r.status_code} from {r.request.url}: {body}", r.status_code)

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
        body, latency = self._post("/api/generate", payload, ollama_fault, auth=True)
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


def chat_endpoints(base_url: str) -> list[str]:
    """Where ``POST chat/completions`` may live: ``{base}/chat/completions``, then (for a base with no path)
    ``{base}/v1/chat/completions``. A query string (``?api-version=...``, as Azure's endpoints take) stays
    a query string of each; a base already ending in ``/chat/completions`` is the endpoint itself."""
    scheme, netloc, path, query, _ = urlsplit(base_url.strip())
    path = path.rstrip("/")
    at = lambda p: urlunsplit((scheme, netloc, p, query, ""))
    if path.endswith("/chat/completions"):
        return [at(path)]
    urls = [at(f"{path}/chat/completions")]
    if path == "":
        urls.append(at("/v1/chat/completions"))
    return urls


class OpenAIClient(LlamaServerExtras, ModelClient):
    """An OpenAI-compatible ``POST {base}/chat/completions`` with a strict JSON-schema response format.

    One user message, no system message, and only the standard OpenAI request fields, with the
    schema cut to the strict subset hosted APIs accept (:func:`~.strict.strict_subset`), unless
    the server is llama.cpp's ``llama-server`` (``llama_cpp=True``, or ``None`` to recognise it by
    its ``/props`` fields). llama-server gets the full schema (``maxLength`` included), and ``cache_prompt`` is sent as configured (``None`` sends nothing) and
    the prompt is counted with its ``/tokenize`` endpoint (after ``/apply-template``) before
    sending, so a prompt that does not fit is an error and never reaches the server; the server's
    own context size (``/props``) must equal ``num_ctx``.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        cache_prompt: bool | None = None,
        prefix_slots: Sequence[str] = (),
        slot_id: int = 0,
        llama_cpp: bool | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(base_url, model, **kw)
        self._llama_cpp = True if prefix_slots and llama_cpp is None else llama_cpp  # saved prefixes are llama-server's
        self._props: dict[str, Any] | None = None
        self.cache_prompt = cache_prompt
        self.prefix_slots = tuple(sorted(prefix_slots, key=len, reverse=True))
        self.slot_id = slot_id
        self._primed: dict[str, str] = {}
        self._can_tokenize: bool | None = None
        self._checked_ctx = False
        self._endpoints = chat_endpoints(base_url)
        self.endpoint: str | None = None
        """The chat-completions URL in use, once the server has answered there (not 404)."""
        self._resolving = threading.Lock()

    def post_chat(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """POST one chat-completions request body as it is, retried and rate-limited like every request
        of :meth:`complete`; returns the response body and the latency of the good try."""
        return self._chat(payload)

    def _chat(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """POST to the chat-completions endpoint with the key; the first request finds which URL answers.

        Every request body :meth:`complete` builds goes through here: a client that answers from
        elsewhere (a batch's exported requests, their imported answers) overrides this one method."""
        if self.endpoint is None:
            with self._resolving:
                if self.endpoint is None:
                    return self._resolve(payload)
        return self._post(self.endpoint, payload, openai_fault, auth=True)

    def _resolve(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        tried: list[str] = []
        last = ""
        for url in self._endpoints:
            try:
                out = self._post(url, payload, openai_fault, auth=True)
            except ServerRejectedError as exc:
                if exc.status != 404:
                    raise
                tried.append(url)
                last = str(exc).split(": ", 2)[-1]
                continue
            self.endpoint = url
            if tried and self.on_event is not None:
                self.on_event(f"{tried[0]} answered 404; using {url}")
            return out
        raise ServerRejectedError(
            f"openai: HTTP 404 at {' and at '.join(tried)}; --base-url is the OpenAI base URL, the part before "
            f"/chat/completions (for example https://api.openai.com/v1); the server said: {last[:200]}",
            404,
        )

    def sent_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema as sent: full to llama-server, else the strict subset hosted APIs accept."""
        return schema if self.llama_cpp else strict_subset(schema)

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
                "json_schema": {"name": "verdict", "schema": self.sent_schema(schema), "strict": True},
            },
            "temperature": temperature,
            "seed": seed,
            "max_tokens": self.max_tokens,
        }
        if self.prefix_slots:
            payload["cache_prompt"] = True
        elif self.cache_prompt is not None and self.llama_cpp:
            payload["cache_prompt"] = self.cache_prompt
        body, latency = self._chat(payload)
        latency += restore_s
        try:
            choice = body["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ServerRejectedError(
                f"openai: response has no choices[0].message.content: {str(body)[:300]}"
            ) from None
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
        schema = "full" if self.llama_cpp else "strict subset"
        return {**super().decoding(), "cache_prompt": mode, "response_schema": schema}
