"""Clients against an in-process fake HTTP server (httpx.MockTransport): request and response shapes."""

from __future__ import annotations

import json

import httpx
import pytest
from llm_fakes import make_trajectory, response

from trajectory_judge.backends.clients import (
    OllamaClient,
    OpenAIClient,
    PromptTooLongError,
    ServerRejectedError,
    TransportError,
)
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.judges.schema import response_schema

SCHEMA = response_schema("step")


def llama_server(seen: list, *, n_ctx: int = 8192, n_tokens: int = 100, content: str | None = None):
    """A fake llama-server: /props, /apply-template, /tokenize, /v1/chat/completions."""

    def handler(req: httpx.Request) -> httpx.Response:
        body = json.loads(req.content) if req.content else None
        seen.append((req.method, req.url.path, body))
        if req.url.path == "/props":
            return httpx.Response(
                200,
                json={
                    "build_info": "b1234-abc",
                    "model_path": "/nonexistent/m.gguf",
                    "default_generation_settings": {"n_ctx": n_ctx},
                    "total_slots": 1,
                },
            )
        if req.url.path == "/apply-template":
            return httpx.Response(200, json={"prompt": "<|user|>" + body["messages"][0]["content"]})
        if req.url.path == "/tokenize":
            return httpx.Response(200, json={"tokens": list(range(n_tokens))})
        if req.url.path == "/v1/chat/completions":
            return httpx.Response(
                200,
                json={
                    "choices": [
                        {"message": {"role": "assistant", "content": content or response()}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": n_tokens, "completion_tokens": 42},
                    "timings": {"cache_n": 0, "prompt_n": n_tokens, "predicted_n": 42},
                },
            )
        return httpx.Response(404, text="not found")

    return httpx.MockTransport(handler)


def test_openai_client_request_and_response_shape():
    seen: list = []
    c = OpenAIClient("http://srv", "qwen", cache_prompt=False, transport=llama_server(seen))
    out = c.complete("PROMPT", SCHEMA, temperature=0.0, seed=7)
    method, path, body = seen[-1]
    assert (method, path) == ("POST", "/v1/chat/completions")
    assert body["messages"] == [{"role": "user", "content": "PROMPT"}]  # one user message, no system
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }
    assert (body["temperature"], body["seed"], body["max_tokens"], body["cache_prompt"]) == (0.0, 7, 512, False)
    assert (out.prompt_tokens, out.completion_tokens, out.finish_reason) == (100, 42, "stop")
    assert json.loads(out.text)["faulty"] is True


def test_openai_client_sends_no_cache_prompt_when_unset():
    seen: list = []
    OpenAIClient("http://srv", "m", transport=llama_server(seen)).complete("P", SCHEMA, temperature=0, seed=7)
    assert "cache_prompt" not in seen[-1][2]


def test_ollama_client_request_and_response_shape():
    seen: list = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append((req.url.path, json.loads(req.content)))
        return httpx.Response(
            200,
            json={
                "response": response(),
                "prompt_eval_count": 321,
                "eval_count": 55,
                "done": True,
                "done_reason": "stop",
            },
        )

    c = OllamaClient("http://srv", "qwen2.5-coder:1.5b", transport=httpx.MockTransport(handler))
    out = c.complete("PROMPT", SCHEMA, temperature=0.0, seed=7)
    path, body = seen[-1]
    assert path == "/api/generate"
    assert body["format"] == SCHEMA and body["prompt"] == "PROMPT" and body["stream"] is False
    assert "system" not in body
    assert body["options"] == {"num_ctx": 8192, "num_predict": 512, "temperature": 0.0, "seed": 7}
    assert (out.prompt_tokens, out.completion_tokens) == (321, 55)


def test_prompt_too_long_is_an_error_not_truncation():
    seen: list = []
    c = OpenAIClient("http://srv", "m", num_ctx=8192, max_tokens=512, transport=llama_server(seen, n_tokens=7800))
    with pytest.raises(PromptTooLongError, match="7800 tokens.*does not fit num_ctx=8192"):
        c.complete("P" * 10, SCHEMA, temperature=0, seed=7)
    assert all(path != "/v1/chat/completions" for _, path, _ in seen)  # never sent


def test_prompt_too_long_detected_from_ollama_counts():
    def handler(req):
        return httpx.Response(200, json={"response": response(), "prompt_eval_count": 1024, "eval_count": 5})

    c = OllamaClient("http://srv", "m", num_ctx=1100, max_tokens=76, transport=httpx.MockTransport(handler))
    with pytest.raises(PromptTooLongError, match="does not fit num_ctx=1100"):
        c.complete("x" * 5000, SCHEMA, temperature=0, seed=7)


def test_server_context_refusal_is_prompt_too_long():
    def handler(req):
        if req.url.path == "/v1/chat/completions":
            return httpx.Response(400, json={"error": {"message": "the request exceeds the available context size"}})
        return httpx.Response(404)

    c = OpenAIClient("http://srv", "m", transport=httpx.MockTransport(handler))
    with pytest.raises(PromptTooLongError, match="too long for its context"):
        c.complete("P", SCHEMA, temperature=0, seed=7)


def test_server_context_must_equal_num_ctx():
    c = OpenAIClient("http://srv", "m", num_ctx=8192, transport=llama_server([], n_ctx=4096))
    with pytest.raises(ServerRejectedError, match="4096 but num_ctx=8192.*-c 8192"):
        c.complete("P", SCHEMA, temperature=0, seed=7)


@pytest.mark.parametrize("fault", ["refused", "timeout", "http500"])
def test_transport_faults_retried_with_backoff_then_raised(fault):
    calls: list = []
    sleeps: list = []

    def handler(req):
        calls.append(req.url.path)
        if fault == "refused":
            raise httpx.ConnectError("connection refused", request=req)
        if fault == "timeout":
            raise httpx.ReadTimeout("timed out", request=req)
        return httpx.Response(500, text="internal error")

    c = OllamaClient(
        "http://srv", "m", retries=3, backoff_s=1.0, transport=httpx.MockTransport(handler), sleep=sleeps.append
    )
    with pytest.raises(TransportError, match="gave up after 4 attempts"):
        c.complete("P", SCHEMA, temperature=0, seed=7)
    # exponential backoff, each wait less up to half of it at random (jitter)
    assert len(calls) == 4 and all(d / 2 <= s <= d for s, d in zip(sleeps, [1.0, 2.0, 4.0], strict=True))


def test_transport_fault_then_success_gives_one_completion():
    n = {"i": 0}

    def handler(req):
        n["i"] += 1
        if n["i"] == 1:
            return httpx.Response(503, text="loading model")
        return httpx.Response(200, json={"response": response(), "prompt_eval_count": 1, "eval_count": 1})

    c = OllamaClient("http://srv", "m", transport=httpx.MockTransport(handler), sleep=lambda s: None)
    assert json.loads(c.complete("P", SCHEMA, temperature=0, seed=7).text)["faulty"] is True


def test_client_error_is_rejected_not_retried():
    calls: list = []

    def handler(req):
        calls.append(1)
        return httpx.Response(400, text="invalid json schema")

    c = OllamaClient("http://srv", "m", transport=httpx.MockTransport(handler), sleep=lambda s: None)
    with pytest.raises(ServerRejectedError, match="HTTP 400"):
        c.complete("P", SCHEMA, temperature=0, seed=7)
    assert len(calls) == 1


def test_llm_judge_over_fake_llama_server_end_to_end():
    seen: list = []
    client = OpenAIClient("http://srv", "m", transport=llama_server(seen))
    v = LLMJudge("step", client, "qwen2.5-coder:1.5b").judge(make_trajectory())
    assert v.judge_id == "step:qwen2.5-coder:1.5b"
    assert (v.faulty, v.failure_step, v.failure_type, v.prompt_tokens, v.completion_tokens) == (
        True,
        2,
        "wrong_tool",
        100,
        42,
    )


def test_truncated_output_is_recorded_as_unparseable():
    client = OpenAIClient("http://srv", "m", transport=llama_server([], content='{"reasoning": "aaaa'))
    v = LLMJudge("outcome", client, "m").judge(make_trajectory())
    assert v.faulty is False and v.confidence == 0.5 and v.error.startswith("unparseable")


def test_server_info_reports_build_and_context():
    info = OpenAIClient("http://srv", "m", transport=llama_server([])).server_info()
    assert info["build"] == "b1234-abc" and info["n_ctx"] == 8192 and info["server"] == "llama-server"


def test_saved_prefix_is_restored_before_every_request():
    seen: list = []
    base = llama_server(seen)

    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path.startswith("/slots/"):
            seen.append(("POST", f"slot:{req.url.params['action']}", json.loads(req.content)))
            return httpx.Response(200, json={})
        return base.handle_request(req)

    from trajectory_judge.judges.prompts import build_prompt, view_prefix

    c = OpenAIClient(
        "http://srv",
        "m",
        prefix_slots=[view_prefix("step"), view_prefix("outcome")],
        transport=httpx.MockTransport(handler),
    )
    traj = make_trajectory()
    for _ in range(2):
        c.complete(build_prompt("step", traj), SCHEMA, temperature=0, seed=7)
    paths = [p for _, p, _ in seen if p.startswith("slot:") or p == "/v1/chat/completions"]
    # primed once from an erased slot, then restored before each of the two requests
    assert paths == [
        "slot:erase",
        "/v1/chat/completions",
        "slot:save",
        "slot:restore",
        "/v1/chat/completions",
        "slot:restore",
        "/v1/chat/completions",
    ]
    completions = [b for _, p, b in seen if p == "/v1/chat/completions"]
    assert completions[0]["messages"][0]["content"] == view_prefix("step") and completions[0]["max_tokens"] == 1
    assert all(b["cache_prompt"] is True for b in completions)
    assert c.decoding()["cache_prompt"] == "saved-prefix"


def test_saved_prefix_needs_slot_save_path():
    def handler(req):
        if req.url.path.startswith("/slots/"):
            return httpx.Response(501, json={"error": "This server does not support slots action."})
        return httpx.Response(404)

    c = OpenAIClient("http://srv", "m", prefix_slots=["You are"], transport=httpx.MockTransport(handler))
    with pytest.raises(ServerRejectedError, match="--slot-save-path"):
        c.complete("You are auditing", SCHEMA, temperature=0, seed=7)


def hosted_api(seen: list):
    """A fake hosted OpenAI-compatible API: only /v1/chat/completions (no llama-server endpoints)."""

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(
            (
                req.method,
                req.url.path,
                json.loads(req.content) if req.content else None,
                req.headers.get("authorization"),
            )
        )
        if req.url.path == "/v1/chat/completions":
            return httpx.Response(
                200,
                json={
                    "choices": [{"message": {"content": response()}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                },
            )
        return httpx.Response(404, json={"error": "not found"})

    return httpx.MockTransport(handler)


def test_hosted_api_gets_only_standard_openai_fields():
    seen: list = []
    c = OpenAIClient("https://api.example/v1", "m", cache_prompt=False, transport=hosted_api(seen))
    c.complete("P", SCHEMA, temperature=0, seed=7)
    body = [b for _, p, b, _ in seen if p == "/v1/chat/completions"][-1]
    assert set(body) == {"model", "messages", "response_format", "temperature", "seed", "max_tokens"}
    assert not any(p in ("/tokenize", "/apply-template") for _, p, _, _ in seen)
    assert c.server_info() == {"server": "openai-compatible"}


@pytest.mark.parametrize(
    "base", ["https://api.example", "https://api.example/", "https://api.example/v1", "https://api.example/v1/"]
)
def test_base_url_with_or_without_v1_reaches_the_same_endpoint(base):
    seen: list = []
    OpenAIClient(base, "m", transport=hosted_api(seen)).complete("P", SCHEMA, temperature=0, seed=7)
    assert seen[-1][1] == "/v1/chat/completions"


@pytest.mark.parametrize(
    "base", ["https://api.example/v1/chat/completions", "https://api.example/v1/chat/completions/"]
)
def test_a_base_url_that_is_already_the_completions_endpoint_is_used_as_it_is(base):
    seen: list = []
    OpenAIClient(base, "m", transport=hosted_api(seen)).complete("P", SCHEMA, temperature=0, seed=7)
    posted = [p for _, p, _, _ in seen if p.endswith("/chat/completions")]
    assert posted == ["/v1/chat/completions"] and not any("completions/" in p for _, p, _, _ in seen)


def test_a_query_string_of_the_base_url_stays_the_query_of_the_request():
    seen: list = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append((req.url.path, req.url.query))
        return hosted_api([]).handle_request(req)

    c = OpenAIClient("https://api.example/v1/?api-version=2026-10-01", "m", transport=httpx.MockTransport(handler))
    c.complete("P", SCHEMA, temperature=0, seed=7)
    assert [s for s in seen if s[0].endswith("/chat/completions")] == [
        ("/v1/chat/completions", b"api-version=2026-10-01")
    ]


def test_api_key_is_sent_as_a_bearer_token_to_the_completions_endpoint_only():
    seen: list = []
    c = OpenAIClient("https://api.example/v1", "m", api_key="sk-secret", transport=hosted_api(seen))
    c.complete("P", SCHEMA, temperature=0, seed=7)
    assert {(p, auth) for _, p, _, auth in seen} == {("/props", None), ("/v1/chat/completions", "Bearer sk-secret")}
    assert "sk-secret" not in json.dumps(c.server_info()) + json.dumps(c.decoding())


def test_llama_server_is_detected_and_gets_its_own_fields():
    seen: list = []
    c = OpenAIClient("http://srv/v1", "m", cache_prompt=False, transport=llama_server(seen))
    c.complete("P", SCHEMA, temperature=0, seed=7)
    assert c.llama_cpp and seen[-1][2]["cache_prompt"] is False
    assert any(p == "/tokenize" for _, p, _ in seen)


def test_llama_cpp_declared_skips_the_detection():
    seen: list = []
    c = OpenAIClient("http://srv", "m", cache_prompt=True, llama_cpp=True, transport=llama_server(seen))
    c.complete("P", SCHEMA, temperature=0, seed=7)
    assert seen[-1][2]["cache_prompt"] is True


def test_a_rate_limit_is_retried_with_backoff_not_a_rejection():
    calls = []

    def handler(req):
        calls.append(req.url.path)
        if len(calls) == 1:
            return httpx.Response(429, json={"error": {"message": "rate limit reached"}})
        return httpx.Response(200, json={"choices": [{"message": {"content": response()}, "finish_reason": "stop"}]})

    slept: list = []
    c = OpenAIClient(
        "https://api.example/v1", "m", llama_cpp=False, transport=httpx.MockTransport(handler), sleep=slept.append
    )
    assert json.loads(c.complete("P", SCHEMA, temperature=0, seed=7).text)["faulty"] is True
    assert calls == ["/v1/chat/completions"] * 2 and len(slept) == 1 and 1.0 <= slept[0] <= 2.0
