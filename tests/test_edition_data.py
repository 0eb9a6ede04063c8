"""The committed edition: every LLM verdict traces to a recorded run under one set of settings."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from tools.serve import MODELS
from trajectory_judge.judges.prompts import prompt_digests

DATA = Path(os.environ.get("TJ_DATA") or Path(__file__).resolve().parents[1] / "data")
JUDGE_ID = re.compile(r"^(outcome|step|reply|selfcons3):(qwen2\.5-coder:(?:1\.5b|0\.5b))$")


def jsonl(name: str) -> list[dict]:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"data/{name} is not committed")
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def judge_runs() -> list[dict]:
    """Run records of `trajectory-judge run` that wrote at least one verdict."""
    return [r for r in jsonl("runs.jsonl") if "judges" in r and r.get("written")]


def test_llm_judge_ids_name_the_model_as_ollama_would():
    ids = {v["judge_id"] for v in jsonl("verdicts.jsonl")} - {"programmatic"}
    assert ids and all(JUDGE_ID.match(j) for j in ids), sorted(ids)


MEMBER_ID = re.compile(r"^step@T0\.7/seed[789]:qwen2\.5-coder:1\.5b$")


def members() -> list[dict]:
    """The self-consistency members (none before they were kept)."""
    return jsonl("members.jsonl") if (DATA / "members.jsonl").exists() else []


def test_member_ids_name_view_temperature_and_seed():
    assert all(MEMBER_ID.match(m["judge_id"]) for m in members())


def test_every_llm_verdict_is_accounted_for_by_a_run_record():
    on_disk = Counter(v["judge_id"] for v in jsonl("verdicts.jsonl") + members() if v["judge_id"] != "programmatic")
    recorded = Counter()
    for r in judge_runs():
        for judge, per in (r.get("per_judge") or {}).items():
            recorded[judge] += per.get("verdicts", 0)
    assert recorded == on_disk


def test_the_edition_keeps_one_set_of_decoding_settings():
    runs = judge_runs()
    assert runs
    for r in runs:
        d = r["decoding"]
        assert (d["temperature"], d["seed"], d["num_ctx"], d["max_tokens"]) == (0.0, 7, 8192, 512), r["started"]
        assert d["cache_prompt"] == "saved-prefix" and r["concurrency"] == 1, r["started"]
        if any(j.startswith("selfcons") for j in r["judges"]):
            assert d["selfcons"] == {"temperature": 0.7, "seeds": [7, 8, 9]}


def test_committed_verdicts_come_from_the_prompts_in_the_code():
    assert {json.dumps(r["prompt_sha256"], sort_keys=True) for r in judge_runs()} == {
        json.dumps(prompt_digests(), sort_keys=True)
    }


def test_every_run_used_the_recipes_model_file():
    for r in judge_runs():
        model = r["judge_model_name"]
        assert r["server"]["model_sha256"] == MODELS[model].sha256, (r["started"], model)


def test_organic_episodes_are_accounted_for_by_agent_run_records():
    episodes = jsonl("organic.jsonl")
    runs = [r for r in jsonl("runs.jsonl") if r.get("kind") in ("agent", "organic")]
    assert sum(r["written"] for r in runs) == len(episodes)
    assert {e["agent_model"] for e in episodes} == {"qwen2.5-coder:1.5b"}
    assert all(r["decoding"]["temperature"] == 0 and r["decoding"]["seed"] == 7 for r in runs)
