"""HTTP for hosted APIs, against tests/fake_server.py on loopback, with an injected clock and sleeper.

Rate limits (Retry-After, the retry budget, jitter, lower concurrency), the OpenAI base URL as
the SDK uses it, llama-server recognised by its own /props fields, the key only on completion
requests, and the response schema held to the documented strict structured-output subset.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
from datetime import UTC, datetime, timedelta

import pytest
from fake_server import FakeModelServer
from llm_fakes import make_trajectory
from strict_schema import strict_violations

from trajectory_judge.backends.clients import OpenAIClient, RetryBudgetExhausted, ServerRejectedError
from trajectory_judge.backends.retry import RateGate, RetryPolicy, backoff_delay, retry_after
from trajectory_judge.backends.strict import strict_subset
from trajectory_judge.judges.schema import RESPONSE_MODELS, response_schema
from trajectory_judge.models import Verdict, parse_jsonl, write_jsonl
from trajectory_judge.run import settings

SCHEMA = response_schema("step")


class FakeTime:
    """A clock and a sleeper: sleeping moves the clock, and nothing really waits."""

    def __init__(self) -> None:
        self.t, self.slept, self._lock = 1000.0, [], threading.Lock()

    def clock(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        with self._lock:
            self.slept.append(round(s, 6))
            self.t += s


def hosted_client(srv: FakeModelServer, ft: FakeTime, base: str | None = None, **kw) -> OpenAIClient:
    return OpenAIClient(base or srv.url + "/v1", "m", sleep=ft.sleep, clock=ft.clock, timeout=5.0, **kw)


def chats(srv: FakeModelServer, path: str = "/v1/chat/completions") -> list:
    return [b for m, p, b in srv.requests if m == "POST" and p == path]


# --- Retry-After, budget, jitter --------------------------------------------------------------
def test_retry_after_is_read_in_seconds_and_as_an_http_date():
    now = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
    assert retry_after({"retry-after": "7"}, now=now) == 7.0
    assert retry_after({"retry-after": "1.5"}, now=now) == 1.5
    assert retry_after({"retry-after": "Tue, 01 Dec 2026 10:00:30 GMT"}, now=now) == 30.0
    assert retry_after({"retry-after": "Tue, 01 Dec 2026 09:59:00 GMT"}, now=now) == 0.0  # already past
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}, now=now) == 0.25
    assert retry_after({"retry-after": "soon"}, now=now) is None and retry_after({}, now=now) is None


def test_a_429_waits_exactly_what_retry_after_asks():
    ft = FakeTime()
    with FakeModelServer([("429", 7), "ok"], hosted=True) as srv:
        c = hosted_client(srv, ft)
        assert json.loads(c.complete("P", SCHEMA, temperature=0, seed=7).text)["faulty"] is True
    assert ft.slept == [7.0] and len(chats(srv)) == 2


def test_a_429_with_an_http_date_waits_until_that_date():
    ft = FakeTime()
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=40), usegmt=True)
    with FakeModelServer([("429", when), "ok"], hosted=True) as srv:
        hosted_client(srv, ft).complete("P", SCHEMA, temperature=0, seed=7)
    assert len(ft.slept) == 1 and 37 <= ft.slept[0] <= 40


def test_the_retry_budget_bounds_the_waiting_of_one_request():
    ft = FakeTime()
    with FakeModelServer([("429", 100)], hosted=True) as srv:  # rate limited for ever
        c = hosted_client(srv, ft, retry_budget_s=250)
        with pytest.raises(
            RetryBudgetExhausted,
            match=r"3 attempts and 200 s .*--retry-budget 250 s.* 100 s",  # attempts, waited, budget, asked
        ):
            c.complete("P", SCHEMA, temperature=0, seed=7)
    assert ft.slept == [100.0, 100.0] and sum(ft.slept) <= 250


def test_a_retry_after_beyond_the_budget_gives_up_at_once():
    ft = FakeTime()
    with (
        FakeModelServer([("429", 3600)], hosted=True) as srv,
        pytest.raises(RetryBudgetExhausted, match="asks to wait 3600 s"),
    ):
        hosted_client(srv, ft, retry_budget_s=60).complete("P", SCHEMA, temperature=0, seed=7)
    assert ft.slept == [] and len(chats(srv)) == 1


def test_a_used_up_quota_is_not_retried():
    ft = FakeTime()
    with FakeModelServer(hosted=True) as srv:
        srv.script = ["quota"]
        c = hosted_client(srv, ft)
        with pytest.raises(ServerRejectedError, match="quota is used up, waiting will not help"):
            c.complete("P", SCHEMA, temperature=0, seed=7)
    assert ft.slept == []


def test_backoff_jitter_is_bounded_and_really_random():
    policy = RetryPolicy(backoff_s=2.0, backoff_max_s=60.0, jitter=0.5)
    rng = random.Random(1)
    for attempt, full in [(1, 2.0), (2, 4.0), (3, 8.0), (6, 60.0), (12, 60.0)]:  # doubling, capped at 60 s
        draws = [backoff_delay(policy, attempt, rng) for _ in range(200)]
        assert all(full / 2 <= d <= full for d in draws)
        assert max(draws) - min(draws) > full / 4  # spread, so parallel workers do not come back together


def test_5xx_faults_back_off_with_jitter_and_stop_after_retries():
    ft = FakeTime()
    with (
        FakeModelServer(["500"], hosted=True) as srv,
        pytest.raises(RetryBudgetExhausted, match="gave up after 3 attempts"),
    ):
        hosted_client(srv, ft, retries=2, backoff_s=2.0).complete("P", SCHEMA, temperature=0, seed=7)
    assert len(ft.slept) == 2 and 1.0 <= ft.slept[0] <= 2.0 and 2.0 <= ft.slept[1] <= 4.0


# --- a rate-limited run slows down -----------------------------------------------------------
def test_a_rate_limit_halves_concurrency_once_per_round_and_successes_raise_it_back():
    ft, events = FakeTime(), []
    gate = RateGate(4, clock=ft.clock, sleep=ft.sleep, on_event=events.append)
    epoch = gate.epoch
    gate.slowed(5, epoch, "HTTP 429")
    gate.slowed(5, epoch, "HTTP 429")  # a second answer from the same round: no second cut
    assert gate.limit == 2 and gate.remaining_pause() == 5
    gate.slowed(5, gate.epoch, "HTTP 429")
    assert gate.limit == 1 and gate.lowest == 1
    for _ in range(1 + 2 + 3):  # `limit` successes in a row allow one more in flight
        gate.succeeded()
    assert gate.limit == 4
    # each event and the summary carry the gate's numbers: the pause, and the limit before -> after of the maximum
    assert events[0].startswith("rate limited (HTTP 429)") and "paused 5 s" in events[0] and "4 -> 2 of 4" in events[0]
    assert events[-1].startswith("rate limit eased") and events[-1].endswith(" 4 of 4")
    assert gate.summary().startswith("rate limited 3 times") and "5 s" in gate.summary() and "1 of 4" in gate.summary()


def test_a_rate_limit_pauses_every_request_of_the_client():
    ft = FakeTime()
    gate = RateGate(2, clock=ft.clock, sleep=ft.sleep)
    gate.slowed(30, gate.epoch, "HTTP 429")
    with gate.slot() as (_, waited):  # a request that was not itself refused waits out the pause too
        assert waited == 30
    with pytest.raises(TimeoutError):
        gate.slowed(30, gate.epoch, "HTTP 429")
        with gate.slot(budget_left=10):
            pass


def _cli(tmp_path, monkeypatch, srv, ft, *extra):
    from trajectory_judge.cli import main

    real = settings.make_client

    def patched(args):
        c = real(args)
        c._sleep, c._clock = ft.sleep, ft.clock
        return c

    monkeypatch.setattr(settings, "make_client", patched)
    return main(
        [
            "run",
            "--data",
            str(tmp_path),
            "--judges",
            "step",
            "--backend",
            "openai",
            "--base-url",
            srv.url + "/v1",
            "--model",
            "m",
            "--judge-model-name",
            "hosted-m",
            *extra,
        ]
    )


def test_a_rate_limited_run_slows_down_says_so_and_finishes(tmp_path, monkeypatch, capsys):
    write_jsonl(tmp_path / "trajectories.jsonl", [make_trajectory(f"t-{i:04d}") for i in range(12)])
    ft = FakeTime()
    script = ["ok", ("429", 5), ("429", 5), "ok"]
    with FakeModelServer(script, hosted=True, delay=0.02) as srv:
        assert _cli(tmp_path, monkeypatch, srv, ft, "--concurrency", "4") == 0
    err = capsys.readouterr().err
    pause = next(line for line in err.splitlines() if line.startswith("trajectory-judge: rate limited (HTTP 429"))
    assert "Retry-After 5 s" in pause and "paused 5 s" in pause and "4 -> 2 of 4" in pause
    assert "12 written" in err and "; rate limited 2 times" in err
    assert len(parse_jsonl(tmp_path / "verdicts.jsonl", Verdict)) == 12
    assert 5.0 in ft.slept


def test_an_exhausted_budget_stops_in_one_line_with_exit_75_and_the_rerun_resumes(tmp_path, monkeypatch, capsys):
    write_jsonl(tmp_path / "trajectories.jsonl", [make_trajectory(f"t-{i:04d}") for i in range(4)])
    ft = FakeTime()
    with FakeModelServer(["ok", "ok", ("429", 400)], hosted=True) as srv:
        assert _cli(tmp_path, monkeypatch, srv, ft, "--retry-budget", "100", "--quiet") == 75
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--retry-budget 100 s" in err and "400 s" in err  # the budget, and what was asked
    assert "2 verdicts written by this run are kept" in err and "resume" in err
    assert len(parse_jsonl(tmp_path / "verdicts.jsonl", Verdict)) == 2
    with FakeModelServer(["ok"], hosted=True) as srv:
        assert _cli(tmp_path, monkeypatch, srv, ft, "--quiet") == 0
    assert "2 written, 2 already on disk" in capsys.readouterr().err


# --- the base URL as the OpenAI SDK uses it --------------------------------------------------
def test_a_base_url_with_a_path_of_its_own_is_used_as_given():
    ft = FakeTime()
    with FakeModelServer(hosted=True, chat_path="/v1beta/openai/chat/completions") as srv:
        hosted_client(srv, ft, base=srv.url + "/v1beta/openai/").complete("P", SCHEMA, temperature=0, seed=7)
    posts = [p for m, p, _ in srv.requests if m == "POST"]
    assert posts == ["/v1beta/openai/chat/completions"]


def test_v1_is_added_to_a_bare_host_only_when_the_server_answers_there():
    ft = FakeTime()
    with FakeModelServer(hosted=True) as srv:  # answers at /v1/chat/completions only
        c = hosted_client(srv, ft, base=srv.url)
        for _ in range(2):
            c.complete("P", SCHEMA, temperature=0, seed=7)
    assert [p for m, p, _ in srv.requests if m == "POST"] == [
        "/chat/completions",
        "/v1/chat/completions",
        "/v1/chat/completions",
    ]
    with FakeModelServer(hosted=True, chat_path="/chat/completions") as srv:  # answers without /v1
        hosted_client(srv, ft, base=srv.url).complete("P", SCHEMA, temperature=0, seed=7)
    assert [p for m, p, _ in srv.requests if m == "POST"] == ["/chat/completions"]


def test_a_base_with_a_path_never_gets_v1_added():
    ft = FakeTime()
    with (
        FakeModelServer(hosted=True) as srv,
        pytest.raises(ServerRejectedError, match=r"HTTP 404 at http://.*/api/chat/completions; --base-url"),
    ):
        hosted_client(srv, ft, base=srv.url + "/api").complete("P", SCHEMA, temperature=0, seed=7)
    assert [p for m, p, _ in srv.requests if m == "POST"] == ["/api/chat/completions"]


# --- llama-server by its own /props; nothing else non-standard; the key ----------------------
def test_a_generic_json_props_does_not_make_a_server_llama_server():
    ft = FakeTime()
    with FakeModelServer(props={"status": "ok", "version": "2.1", "n_ctx": 8192}) as srv:
        c = hosted_client(srv, ft)
        c.complete("P", SCHEMA, temperature=0, seed=7)
        assert c.llama_cpp is False and c.server_info() == {"server": "openai-compatible"}
    body = chats(srv)[-1]
    assert set(body) == {"model", "messages", "response_format", "temperature", "seed", "max_tokens"}  # no cache_prompt
    assert not {p for _, p, _ in srv.requests} & {"/tokenize", "/apply-template"}
    assert "maxLength" not in json.dumps(body["response_format"])


def test_llama_servers_own_props_fields_make_it_llama_server():
    ft = FakeTime()
    with FakeModelServer() as srv:  # /props with default_generation_settings and total_slots
        c = hosted_client(srv, ft, cache_prompt=False)
        c.complete("P", SCHEMA, temperature=0, seed=7)
    assert c.llama_cpp and chats(srv)[-1]["cache_prompt"] is False
    assert chats(srv)[-1]["response_format"]["json_schema"]["schema"] == SCHEMA  # maxLength kept for llama-server


def test_the_api_key_goes_only_with_completion_requests():
    ft = FakeTime()
    with FakeModelServer() as srv:  # a llama-server: /props, /apply-template, /tokenize are all asked
        hosted_client(srv, ft, api_key="sk-very-secret").complete("P", SCHEMA, temperature=0, seed=7)
    assert {p for p, _ in srv.auth_by_path} >= {"/props", "/apply-template", "/tokenize", "/v1/chat/completions"}
    assert {(p, a) for p, a in srv.auth_by_path if a} == {("/v1/chat/completions", "Bearer sk-very-secret")}
    assert all(a == "Bearer sk-very-secret" for p, a in srv.auth_by_path if p == "/v1/chat/completions")


# --- the strict structured-output subset -----------------------------------------------------
@pytest.mark.parametrize("view", sorted(RESPONSE_MODELS))
def test_the_schema_sent_to_a_hosted_api_keeps_to_the_strict_subset(view):
    ft = FakeTime()
    with FakeModelServer(hosted=True) as srv:
        hosted_client(srv, ft).complete("P", response_schema(view), temperature=0, seed=7)
    sent = chats(srv)[-1]["response_format"]["json_schema"]
    assert sent["strict"] is True and strict_violations(sent["schema"]) == []
    assert "at most 600 characters" in sent["schema"]["properties"]["reasoning"]["description"]  # the bound, in words
    assert list(sent["schema"]["properties"]) == list(response_schema(view)["properties"])  # generation order kept


def test_the_full_schema_is_outside_the_subset_for_its_max_length():
    assert strict_violations(SCHEMA) == ["$.reasoning: keyword 'maxLength' is not supported for type string"]
    assert strict_violations(strict_subset(SCHEMA)) == []


def test_the_subset_validator_catches_what_strict_modes_refuse():
    open_obj = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    optional = {**open_obj, "additionalProperties": False, "required": []}
    assert strict_violations(open_obj) == ["$: additionalProperties must be false"]
    assert strict_violations(optional) == ["$: every property must be required; not required: a"]
    root = strict_violations({"anyOf": [open_obj]})[0]
    assert root.startswith("$: ") and "anyOf" in root  # the path, and what is refused there
    bad = {
        "type": "object",
        "additionalProperties": False,
        "required": ["n", "s"],
        "properties": {"n": {"type": "integer", "minimum": 0, "default": 1}, "s": {"allOf": [{"type": "string"}]}},
    }
    assert strict_violations(bad) == [
        "$.n: keyword 'default' is not supported for type integer",
        "$.s: keyword 'allOf' is not supported",
    ]


def test_ollama_gets_the_key_only_with_generate_requests():
    from trajectory_judge.backends.clients import OllamaClient

    ft = FakeTime()
    with FakeModelServer() as srv:
        c = OllamaClient(srv.url, "fake", api_key="sk-o", sleep=ft.sleep, clock=ft.clock, timeout=5.0)
        c.server_info()
        c.complete("P", SCHEMA, temperature=0, seed=7)
    assert {p for p, _ in srv.auth_by_path} == {"/api/version", "/api/tags", "/api/generate"}
    assert {(p, a) for p, a in srv.auth_by_path if a} == {("/api/generate", "Bearer sk-o")}


def test_a_retry_after_of_zero_cannot_spin_past_the_budget():
    ft = FakeTime()
    with (
        FakeModelServer([("429", 0)], hosted=True) as srv,
        pytest.raises(RetryBudgetExhausted, match="--retry-budget 5 s"),
    ):
        hosted_client(srv, ft, retry_budget_s=5).complete("P", SCHEMA, temperature=0, seed=7)
    assert ft.slept == [1.0] * 5 and len(chats(srv)) == 6


def test_rate_limit_lines_come_one_per_change_of_state_not_one_per_429(tmp_path, monkeypatch, capsys):
    write_jsonl(tmp_path / "trajectories.jsonl", [make_trajectory(f"t-{i:04d}") for i in range(48)])
    ft = FakeTime()
    # every other request refused for 2 s, then every other for 30 s, then none: three states
    script = [("429", 2), "ok"] * 16 + [("429", 30), "ok"] * 16 + ["ok"]
    with FakeModelServer(script, hosted=True) as srv:
        assert _cli(tmp_path, monkeypatch, srv, ft) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("trajectory-judge: rate limit")]
    assert len(lines) == 3, lines
    assert "paused 2 s" in lines[0] and "30 s" in lines[1] and "over" in lines[2] and "32 requests" in lines[2]
    assert "48 written" in err and "; rate limited 32 times" in err
