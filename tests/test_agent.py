"""Organic episodes: the flat action schema, the step limit, and labels from checker plus outcome."""

from __future__ import annotations

import json

from llm_fakes import ScriptedClient

from trajectory_judge import models
from trajectory_judge.run import organic
from trajectory_judge.testbed import agent
from trajectory_judge.testbed.env import generate_instances
from trajectory_judge.testbed.oracle import oracle_calls

BLANK = {"email": "", "order_id": "", "sku": "", "amount_eur": 0, "reason": "", "text": ""}


def act(tool: str, **fields) -> str:
    return json.dumps({"thought": f"do {tool}", "tool": tool, **{**BLANK, **fields}})


def oracle_actions(inst) -> list[str]:
    return [act(c.tool, **c.args) for c in oracle_calls(inst)]


def test_action_schema_is_flat_with_fixed_keyword_fields():
    s = agent.action_schema()
    assert list(s["properties"]) == ["thought", "tool", "email", "order_id", "sku", "amount_eur", "reason", "text"]
    assert s["properties"]["tool"]["enum"] == list(agent.TOOL_ARGS)
    assert s["required"] == list(s["properties"])


def test_agent_prompt_carries_the_judges_procedure_text():
    from trajectory_judge.testbed.procedure import PROCEDURE

    assert PROCEDURE in agent.agent_prompt("goal", [])


def test_agent_following_the_oracle_is_clean():
    inst = generate_instances(6)[0]
    ep = agent.play(inst, ScriptedClient(oracle_actions(inst)), agent_model="fake")
    assert ep.stop == "replied" and len(ep.trajectory.steps) == 6
    assert ep.trajectory.label.faulty is False and ep.trajectory.label.outcome_correct and ep.violations == []


def test_only_the_tools_fields_become_arguments():
    call = agent.action_call(json.loads(act("issue_refund", order_id="ORD-1", amount_eur=3.5, text="ignored")))
    assert call.args == {"order_id": "ORD-1", "amount_eur": 3.5}


def test_stopping_without_acting_is_premature_stop_and_loud():
    inst = generate_instances(6)[0]
    texts = oracle_actions(inst)[:2] + [act("reply", text="I am looking into it.")]
    ep = agent.play(inst, ScriptedClient(texts), agent_model="fake")
    lb = ep.trajectory.label
    assert lb.faulty and lb.failure_type == "premature_stop" and not lb.outcome_correct


def test_episode_ends_after_ten_steps():
    inst = generate_instances(6)[0]
    ep = agent.play(inst, ScriptedClient(act("get_customer", email=inst.customer.email)), agent_model="fake")
    assert ep.stop == "max_steps" and len(ep.trajectory.steps) == agent.MAX_STEPS == 10


def test_unparseable_action_ends_the_episode_and_is_recorded():
    inst = generate_instances(6)[0]
    ep = agent.play(inst, ScriptedClient("not json"), agent_model="fake")
    assert ep.stop == "unparseable_action" and "not json" in ep.error and ep.trajectory.label.faulty


def test_episodes_are_resumable(tmp_path):
    insts = generate_instances(6)[:2]
    out = tmp_path / "organic.jsonl"

    class Oracle(ScriptedClient):
        def complete(self, prompt, schema, **kw):
            inst = next(i for i in insts if i.goal in prompt)
            n = prompt.count(" -> ")
            self.texts = [oracle_actions(inst)[n]]
            self.calls.clear()
            return super().complete(prompt, schema, **kw)

    assert len(organic.run_episodes(insts[:1], Oracle(), out, agent_model="fake", progress=False)) == 1
    assert len(organic.run_episodes(insts, Oracle(), out, agent_model="fake", progress=False)) == 1
    eps = [models.Episode.model_validate_json(ln) for ln in out.read_text().splitlines()]
    assert [e.episode_id for e in eps] == [f"{i.instance_id}-organic-fake" for i in insts]
    s = agent.summarise(eps)
    assert s["episodes"] == 2 and s["flagged_or_wrong_outcome"] == 0 and s["episodes_with_eligibility_check"] == 2


def test_agent_command_appends_its_own_run_record_and_resumes(tmp_path, capsys):
    """`trajectory-judge agent` over a real socket: episodes on disk, one metadata line per invocation."""
    from fake_server import FakeModelServer

    from trajectory_judge.cli import main

    reply = act("reply", text="Done.")
    argv = [
        "agent",
        "--data",
        str(tmp_path),
        "--episodes",
        "2",
        "--backend",
        "openai",
        "--model",
        "m",
        "--agent-model-name",
        "qwen2.5-coder:1.5b",
        "--retries",
        "0",
        "--timeout",
        "10",
        "--quiet",
    ]
    with FakeModelServer(["ok"], content=reply) as srv:
        assert main([*argv, "--base-url", srv.url]) == 0
        assert main([*argv, "--base-url", srv.url, "--episodes", "3"]) == 0
    eps = [json.loads(ln) for ln in (tmp_path / "organic.jsonl").read_text().splitlines()]
    assert [e["agent_model"] for e in eps] == ["qwen2.5-coder:1.5b"] * 3
    recs = [json.loads(ln) for ln in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [(r["kind"], r["status"], r["written"]) for r in recs] == [("organic", "ok", 2), ("organic", "ok", 1)]
    first = recs[0]
    assert first["agent_model"] == "qwen2.5-coder:1.5b" and first["decoding"]["num_ctx"] == 8192
    assert first["decoding"]["temperature"] == 0.0 and first["decoding"]["seed"] == 7
    assert first["server"] and first["started"] <= first["ended"] and first["wall_s"] >= 0
    assert first["cpu_s"]["client"] >= 0 and first["cpu_s"]["server"] is None  # no launch record names a PID


def test_organic_progress_counts_episodes_not_verdicts(tmp_path, capsys):
    """The agent's progress lines give its rate per episode, not per verdict."""
    insts = generate_instances(6)[:1]
    organic.run_episodes(
        insts, ScriptedClient(act("reply", text="Done.")), tmp_path / "o.jsonl", agent_model="fake", progress=True
    )
    err = capsys.readouterr().err
    assert "organic:fake 1/1 (100%)" in err and "s/episode" in err and "s/verdict" not in err
