"""Experiment folders of the shapes a user's run takes, for the book-on-any-folder tests.

Each folder is README's "Measure your own judge" flow: ``build-dataset`` then judges on a
stratified prefix, LLM judges answered by the loopback stand-in server (``fake_server.py``, as
an OpenAI-compatible API) and Python judges through ``run_judges``. The stand-in's verdict is a
hash of the prompt, so identical prompts get identical verdicts, as from a deterministic decoder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.models import FAILURE_TYPES, Trajectory, Verdict, load_trajectories
from trajectory_judge.run.runner import run_judges

MODEL = "stand-in"
"""How the stand-in model is spelled in judge ids."""


def stand_in_answer(prompt: str) -> str:
    """A stand-in model's verdict: faulty or not, and its type and confidence, by a hash of the prompt."""
    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    faulty = h % 3 != 0
    return json.dumps(
        {
            "reasoning": "stand-in",
            "faulty": faulty,
            "failure_step": 1 if faulty else None,
            "failure_type": FAILURE_TYPES[h % 6] if faulty else None,
            "confidence": 0.55 + (h % 5) / 10,
        }
    )


class ShortRunJudge:
    """A Python judge: a run of fewer than five steps is faulty."""

    judge_id = "short-run:v1"

    def judge(self, traj: Trajectory) -> Verdict:
        short = len(traj.steps) < 5
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=short, confidence=0.7)


OWN_PROMPT = "You audit a support agent. Its rules:\n{procedure}\n\nWhat it did:\n{view}\n"
"""A reader's own template (the ``own-prompt`` folder's ``rubric.txt``)."""


@dataclass(frozen=True)
class Folder:
    """One experiment folder's recipe."""

    name: str
    limit: int
    llm_judges: tuple[str, ...] = ("outcome", "step", "reply")
    python: bool = False
    script: tuple[str, ...] = ("ok",)
    """The stand-in's behaviours (``"bad-content"``: an answer that does not parse)."""
    notes: dict = field(default_factory=dict, compare=False)
    prompt: str | None = None
    """A prompt template of one's own, run as ``--prompt rubric.txt`` over the step view beside the LLM judges."""
    model: str = MODEL
    """The model name the LLM judges' ids carry."""


FOLDERS: dict[str, Folder] = {
    f.name: f
    for f in (
        Folder("n10", 10),
        Folder("n40", 40),
        Folder("n120", 120),
        Folder("n400", 400, python=True),
        Folder("python-only", 40, llm_judges=(), python=True),
        Folder("selfcons-only", 40, llm_judges=("selfcons",)),
        Folder("unparseable", 40, script=("bad-content",)),
        Folder("own-prompt", 40, llm_judges=("outcome", "step"), prompt=OWN_PROMPT),
    )
}
"""The folders the tests build the book on."""


def _prompt_args(root: Path, spec: Folder) -> list[str]:
    if spec.prompt is None:
        return []
    (root / "rubric.txt").write_text(spec.prompt, encoding="utf-8")
    return ["--prompt", str(root / "rubric.txt"), "--view", "step"]


def make_folder(root: Path, spec: Folder) -> Path:
    """Build ``root/spec.name`` from the dataset through the judges' runs; the folder."""
    out = root / spec.name
    if (out / "verdicts.jsonl").exists():
        return out
    assert main(["build-dataset", "--out", str(out)]) == 0
    if spec.llm_judges:
        with FakeModelServer(list(spec.script), hosted=True, answer=stand_in_answer) as srv:
            rc = main(
                [
                    "run",
                    "--data",
                    str(out),
                    "--limit",
                    str(spec.limit),
                    "--quiet",
                    "--judges",
                    ",".join(spec.llm_judges),
                    "--backend",
                    "openai",
                    "--base-url",
                    srv.url + "/v1",
                    "--model",
                    spec.model,
                    "--concurrency",
                    "4",
                    *_prompt_args(root, spec),
                ]
            )
            assert rc == 0
    if spec.python:
        trajs = load_trajectories(out / "trajectories.jsonl")[: spec.limit]
        run_judges(trajs, [ShortRunJudge()], out / "verdicts.jsonl", progress=False)
    return out
