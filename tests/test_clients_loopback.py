"""The real clients over real sockets against tests/fake_server.py (127.0.0.1, ephemeral ports).

Complements test_judges_clients.py (httpx.MockTransport): here connection refusal, read
timeouts, retries and latency go through the actual TCP stack.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from fake_server import FakeModelServer
from llm_fakes import make_trajectory

from trajectory_judge.backends.clients import (
    Aborted,
    OllamaClient,
    OpenAIClient,
    ServerRejectedError,
    TransportError,
)
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.judges.schema import response_schema

SCHEMA = response_schema("step")
BACKENDS = {"ollama": OllamaClient, "openai": OpenAIClient}
GEN_PATH = {"ollama": "/api/generate", "openai": "/v1/chat/completions"}


class Sleeps(list):
    """A recording stand-in for time.sleep (backoff without waiting)."""

    def __call__(self, s: float) -> None:
        self.append(s)


def client(backend: str, url: str, *, sleeps: Sleeps | None = None, **kw):
    kw.setdefault("retries", 2)
    kw.setdefault("backoff_s", 0.001)
    kw.setdefault("timeout", 5.0)
    return BACKENDS[backend](url, "fake", sleep=sleeps if sleeps is not None else (lambda s: None), **kw)


def gen_requests(srv: FakeModelServer, backend: str) -> int:
    return sum(1 for _, p, _ in srv.requests if p == GEN_PATH[backend])


@pytest.fixture
def dead_port():
    """A port bound but not listening: connecting to it is refused, and nobody else can take it."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    yield s.getsockname()[1]
    s.close()


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_ok_reads_token_counts_and_latency(backend):
    with FakeModelServer(["ok"], prompt_tokens=321, completion_tokens=54) as srv:
        c = client(backend, srv.url)
        try:
            comp = c.complete("judge this", SCHEMA, temperature=0.0, seed=7)
        finally:
            c.close()
    assert comp.prompt_tokens == 321 and comp.completion_tokens == 54
    assert comp.finish_reason == "stop"
    assert comp.latency_s > 0
    if backend == "openai":
        assert comp.model_digest == "b9999-fake"
        assert comp.extra == {"cache_n": 0, "prompt_n": 321, "predicted_n": 54}
        paths = [p for _, p, _ in srv.requests]
        assert paths[:3] == ["/props", "/apply-template", "/tokenize"]  # checked before sending
    # the request really carried the schema and the seed
    body = next(b for _, p, b in srv.requests if p == GEN_PATH[backend])
    if backend == "ollama":
        assert body["format"] == SCHEMA and body["options"]["seed"] == 7 and body["options"]["num_ctx"] == 8192
    else:
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA and body["seed"] == 7


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_connection_refused_is_transport_error_after_retries(backend, dead_port):
    sleeps = Sleeps()
    c = client(backend, f"http://127.0.0.1:{dead_port}", sleeps=sleeps, retries=3)
    try:
        with pytest.raises(TransportError, match="gave up after 4 attempts"):
            c.complete("p", SCHEMA, temperature=0.0, seed=7)
    finally:
        c.close()
    # exponential backoff between the 4 attempts, each less up to half of it at random (jitter)
    assert all(d / 2 <= s <= d for s, d in zip(sleeps, [0.001, 0.002, 0.004], strict=True))


def test_giving_up_after_one_attempt_says_attempt_not_attempts(dead_port):
    c = client("openai", f"http://127.0.0.1:{dead_port}", retries=0)
    try:
        with pytest.raises(TransportError, match=r"gave up after 1 attempt;"):
            c.complete("p", SCHEMA, temperature=0.0, seed=7)
    finally:
        c.close()


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_timeout_is_transport_error(backend):
    with FakeModelServer([("slow", 1.5)]) as srv:
        c = client(backend, srv.url, timeout=0.3, retries=1)
        t0 = time.perf_counter()
        try:
            with pytest.raises(TransportError, match="(?i)timeout"):
                c.complete("p", SCHEMA, temperature=0.0, seed=7)
        finally:
            c.close()
        elapsed = time.perf_counter() - t0
        assert gen_requests(srv, backend) == 2
    assert elapsed < 1.5  # gave up on the client's timeout, not the server's answer


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize(
    "behaviour, retries, message",
    [
        ("500", 2, "HTTP 500"),
        # the *envelope* not being JSON is a server fault (retried, then raised), never a verdict
        ("bad-body", 1, "not JSON"),
    ],
)
def test_server_faults_are_retried_then_a_transport_error(backend, behaviour, retries, message):
    with FakeModelServer([behaviour]) as srv:
        c = client(backend, srv.url, retries=retries)
        try:
            with pytest.raises(TransportError, match=message):
                c.complete("p", SCHEMA, temperature=0.0, seed=7)
        finally:
            c.close()
        assert gen_requests(srv, backend) == retries + 1


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_500_then_ok_recovers(backend):
    with FakeModelServer(["500", "500", "ok"]) as srv:
        c = client(backend, srv.url, retries=2)
        try:
            comp = c.complete("p", SCHEMA, temperature=0.0, seed=7)
        finally:
            c.close()
        assert gen_requests(srv, backend) == 3
    assert comp.prompt_tokens == 123


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize(
    "behaviour, fragment", [("bad-content", "not valid JSON"), ("schema", "'faulty' missing or not a boolean")]
)
def test_unparseable_model_text_votes_clean_at_half(backend, behaviour, fragment):
    with FakeModelServer([behaviour], prompt_tokens=77, completion_tokens=11) as srv:
        c = client(backend, srv.url)
        try:
            v = LLMJudge("step", c, "fake:1b").judge(make_trajectory())
        finally:
            c.close()
        assert gen_requests(srv, backend) == 1  # never silently retried
    assert v.faulty is False and v.confidence == 0.5
    assert v.error is not None and v.error.startswith("unparseable") and fragment in v.error
    assert v.prompt_tokens == 77 and v.completion_tokens == 11 and v.latency_s > 0


def test_openai_envelope_without_choices_is_rejected():
    with FakeModelServer(["envelope"]) as srv:
        c = client("openai", srv.url)
        try:
            with pytest.raises(ServerRejectedError, match="choices"):
                c.complete("p", SCHEMA, temperature=0.0, seed=7)
        finally:
            c.close()


def test_ollama_envelope_without_response_is_a_server_fault_not_a_verdict():
    with FakeModelServer(["envelope"]) as srv:
        c = client("ollama", srv.url, retries=1)
        try:
            with pytest.raises(TransportError, match="without a 'response' text"):
                LLMJudge("step", c, "fake:1b").judge(make_trajectory())
        finally:
            c.close()
        assert gen_requests(srv, "ollama") == 2  # retried like a 5xx, then given up


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_slow_within_timeout_succeeds_with_latency(backend):
    with FakeModelServer([("slow", 0.4)]) as srv:
        c = client(backend, srv.url, timeout=3.0)
        try:
            v = LLMJudge("step", c, "fake:1b").judge(make_trajectory())
        finally:
            c.close()
        assert gen_requests(srv, backend) == 1
    assert v.error is None and v.faulty is True and v.failure_step == 2 and v.failure_type == "wrong_tool"
    assert 0.4 <= v.latency_s < 3.0
    assert v.prompt_tokens == 123 and v.completion_tokens == 45


def test_openai_server_context_mismatch_is_rejected_before_generating():
    with FakeModelServer(["ok"], n_ctx=4096) as srv:
        c = client("openai", srv.url, num_ctx=8192)
        try:
            with pytest.raises(ServerRejectedError, match="context size is 4096"):
                c.complete("p", SCHEMA, temperature=0.0, seed=7)
        finally:
            c.close()
        assert gen_requests(srv, "openai") == 0


def test_server_info_over_the_wire():
    with FakeModelServer() as srv:
        o, a = client("ollama", srv.url), client("openai", srv.url)
        try:
            assert o.server_info() == {"server": "ollama", "build": "0.0.0-fake", "model_digest": "sha256:fake"}
            info = a.server_info()
        finally:
            o.close()
            a.close()
    assert info["server"] == "llama-server" and info["n_ctx"] == 8192 and info["build"] == "b9999-fake"


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_abort_cuts_off_a_request_blocked_on_a_hung_server_at_once(backend):
    with FakeModelServer([("slow", 60)]) as srv:
        c = client(backend, srv.url, timeout=30.0)
        raised: list[BaseException] = []

        def ask() -> None:
            try:
                c.complete("p", SCHEMA, temperature=0.0, seed=7)
            except BaseException as exc:  # noqa: BLE001 - the test reads what the request raised
                raised.append(exc)

        t = threading.Thread(target=ask)
        t.start()
        deadline = time.monotonic() + 10
        while srv.generations < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        t0 = time.monotonic()
        c.abort()
        t.join(timeout=10)
        elapsed = time.monotonic() - t0
        c.close()
    assert not t.is_alive() and elapsed < 2, elapsed
    assert len(raised) == 1 and isinstance(raised[0], Aborted), raised


def test_requests_go_through_the_proxy_the_environment_names(monkeypatch):
    """A one-shot HTTP proxy on a real socket: the request reaches it in absolute form."""
    body = json.dumps(FakeModelServer().ollama_body(json.dumps({"faulty": False, "confidence": 0.5}))).encode()
    seen: list[bytes] = []
    proxy = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = proxy.accept()
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            seen.append(head.split(b"\r\n", 1)[0])
            length = int(
                next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1]
            )
            rest = head.split(b"\r\n\r\n", 1)[1]
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
            conn.sendall(body)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    c = client("ollama", "http://model.invalid:11434")
    try:
        comp = c.complete("p", SCHEMA, temperature=0.0, seed=7)
    finally:
        c.close()
        proxy.close()
    assert seen == [b"POST http://model.invalid:11434/api/generate HTTP/1.1"]
    assert comp.prompt_tokens == 123
