"""Opt-in integration test against a real model server (marker ``llm``).

Skipped unless ``TJ_LLM_BASE_URL`` is set. ``TJ_LLM_BACKEND`` is ``openai`` (default) or
``ollama``; ``TJ_LLM_MODEL`` names the model (default ``default``); ``TJ_LLM_NUM_CTX`` must
match the server's context for llama-server (default 8192). Three trajectories from
``data/trajectories.jsonl`` are judged by the step view into a temporary directory::

    TJ_LLM_BASE_URL=http://127.0.0.1:8081 TJ_LLM_MODEL=qwen2.5-coder:1.5b \\
        python -m pytest -o addopts="" -m llm tests/test_llm_integration.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trajectory_judge.backends.clients import OllamaClient, OpenAIClient
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.models import Verdict, load_trajectories, parse_jsonl
from trajectory_judge.run.runner import run_judges

ROOT = Path(__file__).resolve().parents[1]
BASE_URL = os.environ.get("TJ_LLM_BASE_URL")
BACKENDS = {"ollama": OllamaClient, "openai": OpenAIClient}  # client class by TJ_LLM_BACKEND

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(
        not BASE_URL,
        reason="needs a real model server: set TJ_LLM_BASE_URL (and TJ_LLM_BACKEND=openai|ollama, TJ_LLM_MODEL)",
    ),
]


def test_three_trajectories_through_a_real_server(tmp_path):
    src = ROOT / "data" / "trajectories.jsonl"
    if not src.exists():
        pytest.skip(f"{src} not found (run `trajectory-judge build` first)")
    trajs = load_trajectories(src)[:3]
    backend = os.environ.get("TJ_LLM_BACKEND", "openai")
    model = os.environ.get("TJ_LLM_MODEL", "default")
    client = BACKENDS[backend](
        BASE_URL, model, num_ctx=int(os.environ.get("TJ_LLM_NUM_CTX", "8192")), max_tokens=512, timeout=300.0, retries=1
    )
    out = tmp_path / "verdicts.jsonl"
    try:
        r = run_judges(trajs, [LLMJudge("step", client, model)], out, progress=False)
    finally:
        client.close()
    assert r.status == "ok" and r.written == 3
    verdicts = parse_jsonl(out, Verdict)
    assert [v.trajectory_id for v in verdicts] == [t.trajectory_id for t in trajs]
    for v in verdicts:
        assert v.judge_id == f"step:{model}"
        assert 0.5 <= v.confidence <= 1.0
        assert v.prompt_tokens > 0 and v.latency_s > 0
