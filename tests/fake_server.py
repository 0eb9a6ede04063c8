"""A fake model server on a real socket (127.0.0.1, ephemeral port) speaking Ollama and OpenAI.

Endpoints: Ollama ``POST /api/generate``, ``GET /api/version``, ``GET /api/tags``; llama-server /
OpenAI ``GET /props``, ``POST /apply-template``, ``POST /tokenize``, ``POST /v1/chat/completions``.

The generation endpoints follow a script of behaviours, one per request (the last one repeats):

- ``"ok"``: a well-formed answer (``content`` as the model's text);
- ``"500"``: HTTP 500;
- ``"bad-body"``: HTTP 200 whose body is not JSON;
- ``"bad-content"``: a well-formed envelope whose model text is not JSON;
- ``"schema"``: a well-formed envelope whose model text is JSON breaking the verdict schema;
- ``"envelope"``: HTTP 200 JSON without the API's answer fields (no ``choices`` / ``response``);
- ``("slow", seconds)``: sleep, then answer ``"ok"``;
- ``("hold", event)``: wait until the ``threading.Event`` is set (a minute at most), then answer ``"ok"``;
- ``"429"`` / ``("429", retry_after)``: HTTP 429 (rate limited), with ``Retry-After: retry_after`` when given
  (a number of seconds or an HTTP date, sent as is); ``("503", retry_after)`` likewise;
- ``"quota"``: HTTP 429 with OpenAI's ``insufficient_quota`` error (no waiting helps).

``kill_after`` makes the server die as a killed process would when it is sent one generation request
more than that: from then on every request it has not answered, in flight or sent later on a
connection already open, is dropped without an answer (after ``delay``), and the listening socket is
closed, so a new connection is refused. ``killed`` says whether it has died; ``generations`` counts
only the requests it answered.

``chat_path`` moves the chat endpoint (a hosted API's ``/v1beta/openai/chat/completions``);
``props`` replaces the ``/props`` answer (None: 404). ``in_flight_max`` is the most generation
requests the server was answering at once; ``delay`` makes every generation take that long.

Usage::

    with FakeModelServer(["500", "ok"]) as srv:
        client = OpenAIClient(srv.url, "m", ...)
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VALID_CONTENT = json.dumps(
    {"reasoning": "checked", "faulty": True, "failure_step": 2, "failure_type": "wrong_tool", "confidence": 0.8}
)
SCHEMA_BREAKING = json.dumps({"reasoning": "hmm", "faulty": "maybe", "confidence": "high"})
NOT_JSON = "I think the trajectory is fine {"


class FakeModelServer:
    """A threaded HTTP server in a background thread; ``requests`` records ``(method, path, body)``."""

    def __init__(
        self,
        script: list[Any] | None = None,
        *,
        content: str = VALID_CONTENT,
        n_ctx: int = 8192,
        prompt_tokens: int = 123,
        completion_tokens: int = 45,
        n_tokenize: int = 100,
        hosted: bool = False,
        api_key: str | None = None,
        answer: Any = None,
        chat_path: str = "/v1/chat/completions",
        props: Any = "llama",
        delay: float = 0.0,
        kill_after: int | None = None,
    ) -> None:
        self.script: list[Any] = list(script or ["ok"])
        self.content = content
        self.hosted = hosted  # a hosted API: no llama-server endpoints (/props, /tokenize, slots)
        self.api_key = api_key  # when set, a request without "Authorization: Bearer <key>" gets 401
        self.answer = answer  # when set, answer(prompt) -> the model's text for an "ok" request
        self.authorizations: list[str | None] = []
        self.auth_by_path: list[tuple[str, str | None]] = []
        self.chat_path = chat_path
        self.props = props
        self.delay = delay
        self.kill_after = kill_after
        self.killed = False
        self.arrivals = 0
        self.in_flight = 0
        self.in_flight_max = 0
        self.n_ctx = n_ctx
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.n_tokenize = n_tokenize
        self.requests: list[tuple[str, str, Any]] = []
        self.generations = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def dies_now(self) -> None:
        """Count one generation request, and die if it is one more than ``kill_after``."""
        with self._lock:
            self.arrivals += 1
            if self.kill_after is None or self.killed or self.arrivals <= self.kill_after:
                return
            self.killed = True
        threading.Thread(target=self._die, daemon=True).start()

    def _die(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def next_behaviour(self) -> Any:
        with self._lock:
            b = self.script[min(self.generations, len(self.script) - 1)]
            self.generations += 1
            return b

    # -- bodies ----------------------------------------------------------------------------
    def ollama_body(self, text: str) -> dict[str, Any]:
        return {
            "model": "fake",
            "response": text,
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": self.prompt_tokens,
            "eval_count": self.completion_tokens,
        }

    def openai_body(self, text: str) -> dict[str, Any]:
        return {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "system_fingerprint": "b9999-fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
            },
            "timings": {"cache_n": 0, "prompt_n": self.prompt_tokens, "predicted_n": self.completion_tokens},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body leave in two writes: without TCP_NODELAY the body waits for the client's delayed
            # acknowledgement of the headers, about 40 ms a request on loopback
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(
                self, status: int, body: Any, *, raw: bool = False, headers: dict[str, str] | None = None
            ) -> None:
                data = body.encode() if raw else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "text/plain" if raw else "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _unauthorised(self) -> bool:
                got = self.headers.get("Authorization")
                server.authorizations.append(got)
                server.auth_by_path.append((self.path.split("?")[0], got))
                if server.api_key is not None and got != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "missing or wrong API key"}})
                    return True
                return False

            def do_GET(self) -> None:
                server.requests.append(("GET", self.path, None))
                if self._unauthorised():
                    return
                if server.hosted and self.path != "/v1/models":
                    self._send(404, {"error": "not found"})
                elif self.path == "/props" and server.props == "llama":  # the fields llama-server's /props has
                    self._send(
                        200,
                        {
                            "build_info": "b9999-fake",
                            "model_path": "/nonexistent/fake.gguf",
                            "total_slots": 1,
                            "default_generation_settings": {"n_ctx": server.n_ctx, "params": {}},
                        },
                    )
                elif self.path == "/props" and server.props is not None:
                    self._send(200, server.props)
                elif self.path == "/api/version":
                    self._send(200, {"version": "0.0.0-fake"})
                elif self.path == "/api/tags":
                    self._send(200, {"models": [{"name": "fake", "model": "fake", "digest": "sha256:fake"}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = self._body()
                server.requests.append(("POST", self.path.split("?")[0], body))
                path = self.path.split("?")[0]
                if self._unauthorised():
                    return
                if server.hosted and path != server.chat_path:
                    self._send(404, {"error": "not found"})
                elif path == "/apply-template":
                    self._send(200, {"prompt": "<|user|>" + body["messages"][0]["content"]})
                elif path == "/tokenize":
                    self._send(200, {"tokens": list(range(server.n_tokenize))})
                elif path in ("/api/generate", server.chat_path):
                    with server._lock:
                        server.in_flight += 1
                        server.in_flight_max = max(server.in_flight_max, server.in_flight)
                    try:
                        server.dies_now()
                        if server.delay:
                            time.sleep(server.delay)
                        if server.killed:
                            self._drop()
                        else:
                            self._generate(path, body)
                    finally:
                        with server._lock:
                            server.in_flight -= 1
                else:
                    self._send(404, {"error": "not found"})

            def _drop(self) -> None:  # as a killed process does: the connection closes, nothing is answered
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

            def _generate(self, path: str, body: Any) -> None:
                b = server.next_behaviour()
                if b == "ok" and server.answer is not None:
                    prompt = body["prompt"] if path == "/api/generate" else body["messages"][0]["content"]
                    make = server.ollama_body if path == "/api/generate" else server.openai_body
                    self._send(200, make(server.answer(prompt)))
                    return
                make = server.ollama_body if path == "/api/generate" else server.openai_body
                if isinstance(b, tuple) and b[0] == "slow":
                    time.sleep(float(b[1]))
                    b = "ok"
                if isinstance(b, tuple) and b[0] == "hold":
                    b[1].wait(timeout=60)
                    b = "ok"
                if b == "quota":  # OpenAI's answer when the account has no quota left
                    self._send(
                        429,
                        {
                            "error": {
                                "message": "You exceeded your current quota",
                                "type": "insufficient_quota",
                                "code": "insufficient_quota",
                            }
                        },
                    )
                    return
                if b in ("429", "503") or isinstance(b, tuple) and b[0] in ("429", "503"):
                    code, after = (b, None) if isinstance(b, str) else b
                    self._send(
                        int(code),
                        {"error": {"message": "rate limit reached (scripted)", "code": "rate_limit_exceeded"}},
                        headers={} if after is None else {"Retry-After": str(after)},
                    )
                    return
                if b == "ok":
                    self._send(200, make(server.content))
                elif b == "500":
                    self._send(500, {"error": "internal server error (scripted)"})
                elif b == "bad-body":
                    self._send(200, "<html>definitely not json", raw=True)
                elif b == "bad-content":
                    self._send(200, make(NOT_JSON))
                elif b == "schema":
                    self._send(200, make(SCHEMA_BREAKING))
                elif b == "envelope":
                    self._send(200, {"unexpected": True})
                else:  # pragma: no cover - a typo in a test's script
                    self._send(500, {"error": f"unknown scripted behaviour {b!r}"})

        return Handler
