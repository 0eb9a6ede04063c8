"""Experiment folders of the shapes a user's run takes, for the book-on-any-folder tests.

Each folder is README's "Measure your own judge" flow: ``build-dataset`` then judges on a
stratified prefix, LLM judges answered by the loopback stand-in server (``fake_server.py``, as
an OpenAI-compatible API) and Python judges through ``run_judges``. The stand-in's verdict is a
hash of the prompt, so identical prompts get identical verdicts, as from a deterministic decoder.

Three folders break what the testbed guarantees by construction: ``garbled`` (every fourth answer
does not parse), ``unsteady`` (a judge that answers the same prompt differently each time it sees
it, as a hosted model sampled at temperature 0 may) and ``coding`` (another domain: a coding agent's
runs, written by :func:`coding_trajectories`, with fault types of their own, a type seen once, faults
labelled by their outcome only, tasks without a clean run, and a ``fault_types.json``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.models import (
    TESTBED_FAILURE_TYPES,
    Label,
    Observation,
    Step,
    ToolCall,
    Trajectory,
    Verdict,
    load_trajectories,
    write_jsonl,
)
from trajectory_judge.run.runner import run_judges

MODEL = "stand-in"
"""How the stand-in model is spelled in judge ids."""

SAMPLED_MODEL = "sampling-stand-in"
"""The model name of the ``unsteady`` folder's judges, whose stand-in samples: their ids differ from the others'."""


def stand_in_answer(prompt: str) -> str:
    """A stand-in model's verdict: faulty or not, and its type and confidence, by a hash of the prompt."""
    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    faulty = h % 3 != 0
    return json.dumps(
        {
            "reasoning": "stand-in",
            "faulty": faulty,
            "failure_step": 1 if faulty else None,
            "failure_type": TESTBED_FAILURE_TYPES[h % 6] if faulty else None,
            "confidence": 0.55 + (h % 5) / 10,
        }
    )


GARBLED = "I think the trajectory is fine {"
"""An answer that does not parse: a verdict is stored clean at the lowest confidence, its error said."""


class EveryFourthGarbled:
    """The stand-in's answers, but every fourth request of each view gets :data:`GARBLED` (counted per view, since
    the runner alternates the judges). The folder is judged four requests at a time, as a reader's run is, so which
    answers are garbled changes from one build to the next: every chapter must hold whichever they are."""

    def __init__(self) -> None:
        self.calls: Counter[bool] = Counter()
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        view = "STEPS:" in prompt
        with self.lock:
            self.calls[view] += 1
            garbled = self.calls[view] % 4 == 0
        return GARBLED if garbled else stand_in_answer(prompt)


class Unsteady:
    """A judge that answers a prompt it has seen before differently: its verdict is a hash of the prompt and
    how many times the prompt came before, so a fault and its clean parent shown as the same text part ways."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self.lock:
            k = self.seen[prompt]
            self.seen[prompt] += 1
        return stand_in_answer(f"{prompt}\n#{k}")


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
    answer: Callable[[], Callable[[str], str]] = field(default=lambda: stand_in_answer, compare=False)
    """Makes the stand-in model's answer function (called once per folder)."""
    concurrency: int = 4
    """Requests in flight at once (1 where the answer depends on the order of requests)."""
    coding: bool = False
    """A coding agent's runs (:func:`coding_trajectories`) in place of ``build-dataset``'s, with their own
    fault types and a Python judge of their own (:class:`UnrunTestsJudge`)."""


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
        Folder("garbled", 200, llm_judges=("outcome", "step"), answer=EveryFourthGarbled),
        Folder("unsteady", 200, llm_judges=("outcome", "step"), answer=Unsteady, concurrency=1, model=SAMPLED_MODEL),
        Folder("coding", 25, llm_judges=("outcome", "step"), coding=True),
    )
}
"""The folders the tests build the book on."""

MERGED: dict[str, tuple[str, ...]] = {"noisy": ("garbled", "unsteady")}
"""Folders made by ``trajectory-judge merge`` of folders of :data:`FOLDERS` (their judge ids differ by model)."""


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
    if spec.coding:
        write_coding_folder(out)
    else:
        assert main(["build-dataset", "--out", str(out)]) == 0
    if spec.llm_judges:
        with FakeModelServer(list(spec.script), hosted=True, answer=spec.answer()) as srv:
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
                    str(spec.concurrency),
                    *_prompt_args(root, spec),
                ]
            )
            assert rc == 0
    if spec.python or spec.coding:
        trajs = load_trajectories(out / "trajectories.jsonl")[: spec.limit]
        judge = UnrunTestsJudge() if spec.coding else ShortRunJudge()
        run_judges(trajs, [judge], out / "verdicts.jsonl", progress=False)
    return out


# --- another domain: a coding agent's runs ------------------------------------------------------------
CODING_TYPES: dict[str, str] = {
    "claims_tests_pass_unrun": "The reply says the tests pass, but the agent never ran them.",
    "edits_unread_file": "The agent edits a file it has not read in this run.",
    "skips_lint": "The agent commits without running the linter the task asks for.",
}
"""The coding folder's fault types and the one-line descriptions its ``fault_types.json`` gives them."""


_TASKS = (
    ("parse_date", "src/dates.py", "a date like 2024-02-30 is accepted"),
    ("slugify", "src/text.py", "slugify drops digits"),
    ("retry", "src/net.py", "the retry loop never gives up"),
    ("cache", "src/cache.py", "the cache ignores its size limit"),
    ("csv_quote", "src/export.py", "quoted commas split a CSV field"),
    ("timeout", "src/client.py", "a timeout of 0 blocks forever"),
    ("pagination", "src/api.py", "the last page is dropped"),
    ("locale", "src/fmt.py", "numbers print with the wrong decimal mark"),
)


def _step(i: int, thought: str, tool: str, args: dict, data: dict, ok: bool = True) -> Step:
    return Step(
        index=i,
        thought=thought,
        call=ToolCall(tool=tool, args=args),
        observation=Observation(ok=ok, data=data, error=None if ok else "failed"),
    )


def _clean_steps(path: str, bug: str) -> list[Step]:
    return [
        _step(0, f"Find where {bug}.", "search", {"query": bug.split()[0]}, {"hits": [path]}),
        _step(1, "Read the file before changing it.", "read_file", {"path": path}, {"lines": 120}),
        _step(2, "Fix the condition.", "edit_file", {"path": path, "line": 42}, {"changed": 1}),
        _step(3, "Run the tests.", "run_tests", {"target": "tests/"}, {"passed": 57, "failed": 0}),
        _step(4, "Lint before committing.", "run_linter", {"path": path}, {"warnings": 0}),
        _step(5, "Commit the fix.", "git_commit", {"message": f"Fix: {bug}"}, {"sha": "a1b2c3d"}),
    ]


def _reindexed(steps: list[Step]) -> list[Step]:
    return [s.model_copy(update={"index": i}) for i, s in enumerate(steps)]


def coding_trajectories() -> list[Trajectory]:
    """25 runs of a coding agent in the documented schema: six clean runs, seven of each of the two main fault
    types, one fault of a third type, and four faults labelled by their outcome only (one of them reads exactly as
    its clean parent in every view); the last two tasks have no clean run, so their faults have no clean parent."""
    out: list[Trajectory] = []
    answer = "Fixed: {bug}. I changed {path} and all 57 tests pass."

    def add(tid: str, task: int, steps: list[Step], reply: str, label: Label) -> None:
        name, path, bug = _TASKS[task]
        out.append(
            Trajectory(
                trajectory_id=tid,
                instance_id=f"fix-{name}",
                goal=f"In the repository, {bug}. Find the cause in {path}, fix it, run the tests and the linter, "
                "and commit.",
                steps=_reindexed(steps),
                final_answer=reply.format(bug=bug, path=path),
                label=label,
            )
        )

    clean = Label(faulty=False, outcome_correct=True)
    for task in range(6):
        _, path, bug = _TASKS[task]
        add(f"fix-{task}-clean", task, _clean_steps(path, bug), answer, clean)
    # claims_tests_pass_unrun: the test run is left out; the reply is the clean run's (silent) or the fix is wrong
    for k, task in enumerate((0, 1, 2, 3, 4, 6, 7)):
        _, path, bug = _TASKS[task]
        steps = [s for s in _clean_steps(path, bug) if s.call.tool != "run_tests"]
        silent = k < 4
        add(
            f"fix-{task}-untested",
            task,
            steps,
            answer,
            Label(faulty=True, failure_step=3, failure_type="claims_tests_pass_unrun", outcome_correct=silent),
        )
    # edits_unread_file: the read is left out and the edit lands on the wrong line (loud)
    for task in (0, 1, 2, 3, 5, 6, 7):
        _, path, bug = _TASKS[task]
        steps = [s for s in _clean_steps(path, bug) if s.call.tool != "read_file"]
        add(
            f"fix-{task}-unread",
            task,
            steps,
            "Fixed: {bug}. I changed {path} at line 42; the tests pass.",
            Label(faulty=True, failure_step=1, failure_type="edits_unread_file", outcome_correct=False),
        )
    _, path, bug = _TASKS[4]
    add(
        "fix-4-unlinted",
        4,
        [s for s in _clean_steps(path, bug) if s.call.tool != "run_linter"],
        answer,
        Label(faulty=True, failure_step=4, failure_type="skips_lint", outcome_correct=True),
    )
    # faults known only by their outcome: the fix did not hold, nobody said at which step
    for task in (1, 5, 7):
        _, path, bug = _TASKS[task]
        steps = _clean_steps(path, bug)
        steps[3] = steps[3].model_copy(
            update={"observation": Observation(ok=True, data={"passed": 55, "failed": 2}, error=None)}
        )
        add(f"fix-{task}-regressed", task, steps, answer, Label(faulty=True, outcome_correct=False))
    # a fault no view shows: the run reads as its clean parent, but the fix broke a build the log does not show
    _, path, bug = _TASKS[2]
    add("fix-2-unseen", 2, _clean_steps(path, bug), answer, Label(faulty=True, outcome_correct=False))
    return out


def write_coding_folder(out: Path) -> Path:
    """The coding agent's folder: ``trajectories.jsonl`` and ``fault_types.json``."""
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "trajectories.jsonl", coding_trajectories())
    (out / "fault_types.json").write_text(json.dumps(CODING_TYPES, indent=2) + "\n", encoding="utf-8")
    return out


class UnrunTestsJudge:
    """A Python judge of the coding domain: a reply that says the tests pass with no test run before it is a
    ``claims_tests_pass_unrun`` fault at the step where the run should have been."""

    judge_id = "tests-claim:v1"

    def judge(self, traj: Trajectory) -> Verdict:
        ran = any(s.call.tool == "run_tests" for s in traj.steps)
        claims = "tests pass" in traj.final_answer
        faulty = claims and not ran
        step = next((s.index for s in traj.steps if s.call.tool == "run_linter"), None) if faulty else None
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=faulty,
            failure_step=step,
            failure_type="claims_tests_pass_unrun" if faulty and step is not None else None,
            confidence=0.9 if faulty else 0.6,
        )


class LazyFolders(dict):
    """The folders of :data:`FOLDERS` under ``root``, each built the first time a test asks for it."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, name: str) -> Path:
        if name in MERGED:
            out = self.root / name
            if not (out / "verdicts.jsonl").exists():
                assert main(["merge", *(str(self[part]) for part in MERGED[name]), "--out", str(out)]) == 0
            self[name] = out
        else:
            self[name] = make_folder(self.root, FOLDERS[name])
        return self[name]
