"""README's "Measure your own judge" flow, end to end, in an experiment folder of one's own.

A stand-in model server (``tests/fake_server.py``) plays an Ollama server and a hosted
OpenAI-compatible API that wants a key; a judge written in Python joins them through the API. The
folder is built, judged, retried, reported and rendered as a book with ``-W``, and the committed
``data/`` is left as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.models import Trajectory, Verdict, load_trajectories
from trajectory_judge.run.runner import run_judges

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-5a7c1e9d0b3f"
LIMIT = 16  # a stratified prefix: a quarter clean, the six fault types in equal parts
OLLAMA_JUDGE = "step:ollama-model"
HOSTED_JUDGE = "outcome:hosted-model"
PYTHON_JUDGE = "short-run:heuristic"


def _answer(prompt: str) -> str:
    """A stand-in model's verdict: faulty or not by a hash of the prompt, so judges differ."""
    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    return json.dumps(
        {
            "reasoning": "stand-in",
            "faulty": h % 3 != 0,
            "failure_step": 1,
            "failure_type": "wrong_tool",
            "confidence": 0.6 + (h % 4) / 10,
        }
    )


class ShortRunJudge:
    """A Python judge: a run of fewer than five steps is faulty. It states no cost at all."""

    judge_id = PYTHON_JUDGE

    def judge(self, traj: Trajectory) -> Verdict:
        short = len(traj.steps) < 5
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=short,
            failure_type="premature_stop" if short else None,
            failure_step=traj.steps[-1].index if short and traj.steps else None,
            confidence=0.7,
        )


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _run(mine: Path, *args: str) -> int:
    return main(["run", "--data", str(mine), "--limit", str(LIMIT), "--quiet", *args])


@pytest.mark.slow
def test_own_experiment_folder_from_dataset_to_book(tmp_path, monkeypatch, capsys):
    committed = _digests(ROOT / "data")
    mine = tmp_path / "mine"
    assert main(["build-dataset", "--out", str(mine)]) == 0

    # an Ollama judge whose first two answers do not parse
    with FakeModelServer(["bad-content", "bad-content", "ok"], answer=_answer) as ollama:
        assert (
            _run(
                mine,
                "--judges",
                "step",
                "--backend",
                "ollama",
                "--base-url",
                ollama.url,
                "--model",
                "fake",
                "--judge-model-name",
                "ollama-model",
            )
            == 0
        )
        assert "2 unparseable" in capsys.readouterr().err
        ollama.script = ["ok"]
        assert (
            _run(
                mine,
                "--judges",
                "step",
                "--backend",
                "ollama",
                "--base-url",
                ollama.url,
                "--model",
                "fake",
                "--judge-model-name",
                "ollama-model",
                "--retry-unparseable",
            )
            == 0
        )
        assert "2 unparseable verdicts judged again" in capsys.readouterr().err

    # a hosted judge: the key comes from the environment, the base URL ends in /v1
    monkeypatch.setenv("TJ_TEST_API_KEY", KEY)
    with FakeModelServer(hosted=True, api_key=KEY, answer=_answer) as hosted:
        assert (
            _run(
                mine,
                "--judges",
                "outcome",
                "--backend",
                "openai",
                "--base-url",
                hosted.url + "/v1",
                "--model",
                "hosted-model",
                "--api-key-env",
                "TJ_TEST_API_KEY",
            )
            == 0
        )
        # the key goes with every completion request and nowhere else
        assert {(p, a) for p, a in hosted.auth_by_path if a or p == "/v1/chat/completions"} == {
            ("/v1/chat/completions", f"Bearer {KEY}")
        }
        chats = [b for m, p, b in hosted.requests if p == "/v1/chat/completions"]
        assert len(chats) == LIMIT and all("cache_prompt" not in b for b in chats)

    # a Python judge through the API, with a run record like any run
    trajs = load_trajectories(mine / "trajectories.jsonl")[:LIMIT]
    assert run_judges(trajs, [ShortRunJudge()], mine / "verdicts.jsonl", progress=False).written == LIMIT

    verdicts = [json.loads(ln) for ln in (mine / "verdicts.jsonl").read_text().splitlines()]
    assert {v["judge_id"] for v in verdicts} == {OLLAMA_JUDGE, HOSTED_JUDGE, PYTHON_JUDGE}
    assert not any(v["error"] for v in verdicts)  # the retried answers parsed
    assert len((mine / "retried.jsonl").read_text().splitlines()) == 2
    runs = [json.loads(ln) for ln in (mine / "runs.jsonl").read_text().splitlines()]
    assert [r["backend"] for r in runs] == ["ollama", "ollama", "openai", "python"]
    assert runs[1]["retried"] == 2 and runs[-1]["judge_kinds"] == {PYTHON_JUDGE: "python"}
    for path in (p for p in mine.rglob("*") if p.is_file()):
        assert KEY.encode() not in path.read_bytes(), f"the API key was written to {path.name}"
    capsys.readouterr()

    # the report, with no manifest step
    assert main(["report", "--data", str(mine), "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert all(j in out for j in (OLLAMA_JUDGE, HOSTED_JUDGE, PYTHON_JUDGE))

    # the book, with -W, on that folder
    build = tmp_path / "book"
    env = {**os.environ, "TJ_DATA": str(mine)}
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("jupyter-book")),
            "build",
            str(ROOT),
            "--all",
            "-W",
            "--keep-going",
            "--path-output",
            str(build),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    page = (build / "_build" / "html" / "notebooks" / "judges.html").read_text()
    for judge in (OLLAMA_JUDGE, HOSTED_JUDGE, PYTHON_JUDGE):
        assert judge in page
    assert "Python judge" in page
    # its downloads are the reader's own files, copied byte for byte, with their sha256
    sha = hashlib.sha256((mine / "verdicts.jsonl").read_bytes()).hexdigest()
    link = re.search(rf'href="\.\./(_downloads/tj/data/outside/{sha[:16]}/verdicts\.jsonl)"', page)  # not the paper's
    assert link and (build / "_build" / "html" / link.group(1)).read_bytes() == (mine / "verdicts.jsonl").read_bytes()
    assert f'data-sha256="{hashlib.sha256((mine / "verdicts.jsonl").read_bytes()).hexdigest()}"' in page
    execution = (build / "_build" / "html" / "book" / "execution.html").read_text()  # how the chapters ran, truthfully
    assert "executed for this build on $TJ_DATA" in execution and "shown as committed" not in execution
    runs = (build / "_build" / "html" / "notebooks" / "runs.html").read_text()  # this edition's runs, beyond the paper
    assert re.search(r"<td[^>]*>\s*not reported\s*</td>", runs)  # a hosted API names no model file
    for path in (p for p in build.rglob("*") if p.is_file()):
        assert KEY.encode() not in path.read_bytes(), f"the API key reached the book: {path}"
    assert _digests(ROOT / "data") == committed
