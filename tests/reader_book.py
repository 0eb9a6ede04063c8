"""One book on one reader's folder, built once with ``-W`` for every test that reads a reader's book.

The folder is what a reader who tried everything would hold: the folders of five flows, each made from
the same 400 labelled trajectories, joined by ``trajectory-judge merge`` (their judge ids differ, which
is what merge is for):

- ``n40``: README's run, three LLM judges on a 40-trajectory prefix (``tests/book_folders.py``);
- ``own-prompt``: a prompt template of one's own over the step view, beside two built-in judges;
- ``mine``: README's "Measure your own judge" flow, an Ollama judge whose first answers do not parse
  and are judged again, a hosted judge that wants a key, and a Python judge through the API;
- ``imported``: two inspect_ai evals through the inspect CLI, read back by ``import-inspect``;
- ``a`` and ``b``: one judge each, as a study of several machines would leave them.

What each flow's steps printed and sent is kept in ``flows.json``, so that the tests of each flow
assert on it as they would on the steps themselves. Under pytest-xdist the workers share one build
(a file lock in the session's temporary folder); alone, the session builds it in its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from book_folders import FOLDERS, OWN_PROMPT, make_folder
from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.models import Trajectory, Verdict, load_trajectories, load_verdicts, write_jsonl
from trajectory_judge.run.runner import run_judges

ROOT = Path(__file__).resolve().parents[1]
NAME = "reader"
"""The merged folder's name, which the book's wording quotes ("Your folder (reader)")."""

KEY = "sk-test-5a7c1e9d0b3f"
"""The hosted judge's API key, which must reach no file."""
OWN_LIMIT = 16  # the own-experiment flow's stratified prefix: a quarter clean, the six fault types in equal parts
OLLAMA_JUDGE = "step:ollama-model"
HOSTED_JUDGE = "outcome:hosted-model"
PYTHON_JUDGE = "short-run:heuristic"

PROMPT_MODEL = "own-model"
"""The own-prompt flow's model name: its built-in judges then differ in id from README's run's."""
OWN_PROMPT_JUDGE = f"step+rubric:{PROMPT_MODEL}"

INSPECT_MODEL = "openai-api/fake/m"
INSPECT_JUDGES = ("step:m", "outcome:m")
"""The imported folder's judges (the model name the stand-in is sent)."""

STUDY_JUDGES = ("short:v1", "long:v1")
"""The judges of the two folders of a study of several machines, one each."""


# --- the own-experiment flow -----------------------------------------------------------------------------
def stand_in_verdict(prompt: str) -> str:
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


def digests(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by its relative path, with its sha256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _main(*argv: str) -> tuple[int, str, str]:
    """``trajectory-judge ARGV`` in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _ok(*argv: str) -> tuple[str, str]:
    code, out, err = _main(*argv)
    assert code == 0, (argv, err[-2000:])
    return out, err


def own_experiment(mine: Path) -> dict[str, Any]:
    """README's "Measure your own judge" flow in ``mine``; what its steps printed and sent."""
    notes: dict[str, Any] = {}
    _ok("build-dataset", "--out", str(mine))
    run = ("run", "--data", str(mine), "--limit", str(OWN_LIMIT), "--quiet")
    ollama_args = ("--judges", "step", "--backend", "ollama", "--model", "fake", "--judge-model-name", "ollama-model")
    with FakeModelServer(["bad-content", "bad-content", "ok"], answer=stand_in_verdict) as ollama:
        notes["ollama_err"] = _ok(*run, *ollama_args, "--base-url", ollama.url)[1]
        ollama.script = ["ok"]
        notes["retry_err"] = _ok(*run, *ollama_args, "--base-url", ollama.url, "--retry-unparseable")[1]
    # a hosted judge: the key comes from the environment, the base URL ends in /v1
    saved = os.environ.get("TJ_TEST_API_KEY")
    os.environ["TJ_TEST_API_KEY"] = KEY
    try:
        with FakeModelServer(hosted=True, api_key=KEY, answer=stand_in_verdict) as hosted:
            hosted_args = ("--judges", "outcome", "--backend", "openai", "--base-url", hosted.url + "/v1")
            _ok(*run, *hosted_args, "--model", "hosted-model", "--api-key-env", "TJ_TEST_API_KEY")
            notes["hosted_auth"] = sorted({(p, a) for p, a in hosted.auth_by_path if a or p == "/v1/chat/completions"})
            notes["hosted_chats"] = [b for m, p, b in hosted.requests if p == "/v1/chat/completions"]
    finally:
        os.environ.pop("TJ_TEST_API_KEY") if saved is None else os.environ.update(TJ_TEST_API_KEY=saved)
    # a Python judge through the API, with a run record like any run
    trajs = load_trajectories(mine / "trajectories.jsonl")[:OWN_LIMIT]
    notes["python_written"] = run_judges(trajs, [ShortRunJudge()], mine / "verdicts.jsonl", progress=False).written
    # the report, with no manifest step
    notes["report_out"] = _ok("report", "--data", str(mine), "--resamples", "200")[0]
    return notes


# --- the other flows ---------------------------------------------------------------------------------
def imported(folder: Path, logs: Path) -> dict[str, Any]:
    """Two inspect evals of the testbed's tasks through the inspect CLI, imported into ``folder``."""
    folder.mkdir()
    shutil.copy(ROOT / "data" / "trajectories.jsonl", folder / "trajectories.jsonl")
    inspect_cli = Path(sys.executable).with_name("inspect")
    with FakeModelServer(hosted=True, api_key="test-key") as srv:
        env = {**os.environ, "FAKE_BASE_URL": srv.url + "/v1", "FAKE_API_KEY": "test-key"}
        argv = [str(inspect_cli), "eval", "trajectory_judge/step_judge", "trajectory_judge/outcome_judge"]
        argv += ["--model", INSPECT_MODEL, "-T", f"data={folder}", "-T", "limit=40", "--log-dir", str(logs)]
        argv += ["--max-retries", "1", "--timeout", "60", "--display", "none"]
        done = subprocess.run(argv, cwd=folder.parent, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found = sorted(str(p) for p in logs.glob("*.eval"))
    _ok("import-inspect", *found, "--data", str(folder))
    return {"logs": found}


def judged(folder: Path, judge_id: str, n: int, confidence: float = 0.7) -> list[Verdict]:
    """Verdicts of a judge that calls a run of an even number of steps faulty, on ``folder``'s first ``n``, appended."""
    trajs = load_trajectories(folder / "trajectories.jsonl")[:n]
    verdicts = [
        Verdict(trajectory_id=t.trajectory_id, judge_id=judge_id, faulty=len(t.steps) % 2 == 0, confidence=confidence)
        for t in trajs
    ]
    path = folder / "verdicts.jsonl"
    old = load_verdicts(path) if path.exists() else []
    write_jsonl(path, [*old, *verdicts])
    return verdicts


def study(root: Path) -> list[Path]:
    """Two folders of one study, each with one judge of its own on the first 40 trajectories."""
    out = []
    for name, judge in zip("ab", STUDY_JUDGES, strict=True):
        (root / name).mkdir()
        shutil.copy(ROOT / "data" / "trajectories.jsonl", root / name / "trajectories.jsonl")
        judged(root / name, judge, 40)
        out.append(root / name)
    return out


# --- the merged folder and its book ------------------------------------------------------------------------
@dataclass(frozen=True)
class ReaderBook:
    """The merged folder, the flows' folders and notes, and the book built on the merged folder."""

    root: Path
    flows: dict[str, Any]
    """What each flow's steps printed and sent, by flow."""

    @property
    def folder(self) -> Path:
        """The merged folder the book was built on."""
        return self.root / NAME

    @property
    def build(self) -> Path:
        """The build's ``--path-output``."""
        return self.root / "book"

    @property
    def html(self) -> Path:
        return self.build / "_build" / "html"

    def page(self, rel: str) -> str:
        """A built page's HTML, by its path under the site without ``.html`` (``notebooks/judges``)."""
        return (self.html / f"{rel}.html").read_text(encoding="utf-8")

    def executed(self) -> dict[str, Any]:
        """Every chapter's execution the build shows, by chapter, read from the build's jupyter-cache folder."""
        from jupyter_cache import get_cache

        (folder,) = (self.build / "_build" / ".jupyter_cache").iterdir()  # one folder: the data the build named
        cache = get_cache(folder)
        return {Path(r.uri).stem: cache.get_cache_bundle(r.pk).nb for r in cache.list_cache_records()}

    def pages(self, under: str = "notebooks") -> dict[str, str]:
        """Every built page under ``under``, by name."""
        return {p.stem: p.read_text(encoding="utf-8") for p in sorted((self.html / under).glob("*.html"))}


def build_reader_book(root: Path) -> ReaderBook:
    """Make every flow's folder under ``root``, merge them and build the book on the merge with ``-W``.

    A failure is kept in ``root/failed.txt``, so that another worker reports it rather than building again.
    """
    shutil.rmtree(root, ignore_errors=True)  # a build another worker left half done
    root.mkdir(parents=True)
    try:
        return _build(root)
    except AssertionError as exc:
        (root / "failed.txt").write_text(str(exc), encoding="utf-8")
        raise


def _build(root: Path) -> ReaderBook:
    flows: dict[str, Any] = {"committed": digests(ROOT / "data")}
    sources = [
        make_folder(root, FOLDERS["n40"]),
        make_folder(root, replace(FOLDERS["own-prompt"], model=PROMPT_MODEL)),
    ]
    flows["own_experiment"] = own_experiment(root / "mine")
    flows["imported"] = imported(root / "imported", root / "logs")
    sources += [root / "mine", root / "imported", *study(root)]
    flows["merge_err"] = _ok("merge", *map(str, sources), "--out", str(root / NAME))[1]
    flows["merged_judges"] = sorted({v.judge_id for v in load_verdicts(root / NAME / "verdicts.jsonl")})
    jb = str(Path(sys.executable).with_name("jupyter-book"))
    argv = [jb, "build", str(ROOT), "--all", "-W", "--keep-going", "--path-output", str(root / "book")]
    done = subprocess.run(argv, env={**os.environ, "TJ_DATA": str(root / NAME)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    (root / "flows.json").write_text(json.dumps(flows, indent=1), encoding="utf-8")
    return reader_book_at(root)  # as JSON gives it back, the same in every worker


def reader_book_at(root: Path) -> ReaderBook:
    """The book on ``root``, built unless a finished build is there."""
    notes, failed = root / "flows.json", root / "failed.txt"
    if failed.exists():
        raise AssertionError(f"the reader's book failed to build (in another worker):\n{failed.read_text()}")
    if notes.exists():
        return ReaderBook(root, json.loads(notes.read_text(encoding="utf-8")))
    return build_reader_book(root)


__all__ = ["KEY", "OWN_PROMPT", "ReaderBook", "build_reader_book", "reader_book_at"]
