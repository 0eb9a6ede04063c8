"""inspect_ai tasks: one per view, and the self-consistency ensemble.

Each task judges the trajectories of a data folder (``-T data=DIR``, required), or the stratified
prefix of ``limit`` of them (the dataset's order makes every prefix a quarter clean and the six
fault types in equal parts; inspect's own ``--limit`` takes the same prefix). Decoding defaults are
those of ``trajectory-judge run``: greedy, seed 7, 512 output tokens; the ensemble samples the step
prompt at temperature 0.7, one epoch per seed (7, 8, 9), and reduces the epochs by strict majority.

    inspect eval trajectory_judge/step_judge --model openai/gpt-4o-mini -T data=mine/ -T limit=40
    trajectory-judge import-inspect logs/*.eval --data mine/

Its log's verdicts are imported into the folder it judged, so a task refuses, as it is created
(before inspect calls a model or writes a log), to judge a folder pinned by ``SHA256SUMS`` that
``import-inspect`` would refuse to write into, unless ``-T force=true``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from inspect_ai import Epochs, Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from trajectory_judge.inspect_tasks.samples import load_dataset, response_format
from trajectory_judge.inspect_tasks.scoring import majority, verdict_scorer
from trajectory_judge.judges.custom import load_template
from trajectory_judge.judges.llm import DEFAULT_SEED, DEFAULT_TEMPERATURE
from trajectory_judge.judges.selfcons import SEEDS, TEMPERATURE
from trajectory_judge.models import DataError
from trajectory_judge.provenance.manifest import MANIFEST
from trajectory_judge.provenance.pins import is_pinned
from trajectory_judge.run.store import TRAJECTORIES

OWN = "judge a folder of your own (`trajectory-judge build-dataset --out mine/`, then -T data=mine/)"
"""Where a task's refusal points: the same 400 trajectories in an unpinned folder."""

MAX_TOKENS = 512
"""The output budget per answer (``trajectory-judge run --max-tokens``'s default)."""


_T = TypeVar("_T")


class TaskRefused(DataError, SystemExit):
    """A task refused as it is created (no folder, a pinned one, a bad prompt file): a :class:`DataError`
    to a caller in Python, and to the ``inspect`` command one line on stderr and exit status 1 (Python
    prints a :class:`SystemExit`'s text and no traceback)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = f"trajectory_judge task: error: {message}"


def refusing(make: Callable[[], _T]) -> _T:
    """``make()``, its :class:`DataError` raised again as :class:`TaskRefused` (one line at the command line)."""
    try:
        return make()
    except TaskRefused:
        raise
    except DataError as exc:
        raise TaskRefused(str(exc)) from None


def user_dir() -> str:
    """The folder the user ran inspect from, against which a task's relative paths are read.

    A task named by the registry (``trajectory_judge/step_judge``) is created where the user stands. A task
    named by its file (``.../inspect_tasks/tasks.py@step_judge``, the name ``inspect list tasks`` prints)
    is created by inspect with that file's folder as the working directory; there the shell's ``PWD``
    (which a process's ``chdir`` leaves alone) still names where the user stands.
    """
    cwd = os.getcwd()
    if Path(cwd).resolve() == Path(__file__).resolve().parent:
        pwd = os.environ.get("PWD")
        if pwd and Path(pwd).is_dir():
            return pwd
    return cwd


def user_path(path: str) -> str:
    """``path`` made absolute against :func:`user_dir` (``~`` expanded); an absolute path as it is."""
    p = Path(str(path).strip()).expanduser()
    return str(p if p.is_absolute() else Path(user_dir()) / p)


def task_folder(data: str | None, force: bool = False) -> str:
    """The folder a task judges: ``data``, which is required, and not pinned by ``SHA256SUMS`` unless ``force``.

    Its verdicts are imported there (``import-inspect --data``), so a pinned folder is refused now,
    before a model is called, in one line naming ``-T force=true``.
    """
    if data is None or not str(data).strip():
        raise DataError(
            "-T data=DIR is required: it names the folder whose trajectories this task judges, and into which "
            f"`trajectory-judge import-inspect --data DIR` imports its log (no folder is judged by default); {OWN}"
        )
    data = user_path(data)
    if not (Path(data) / TRAJECTORIES).is_file():
        what = "no such folder" if not Path(data).exists() else f"it holds no {TRAJECTORIES}"
        raise DataError(f"-T data={data}: {what}; {OWN}")
    if is_pinned(data) and not _truthy(force):
        raise DataError(
            f"{data} is pinned by {Path(data) / MANIFEST}, which report and the book verify: importing this task's "
            f"verdicts there would break its checksums, so the task was not created and no model was called; "
            f"{OWN}, or pass -T force=true to judge {data} anyway"
        )
    return data


def _truthy(value: object) -> bool:
    """A task argument as a boolean (``-T force=true`` may arrive as text)."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def view_task(view: str, data: str | None, limit: int | None, force: bool = False, prompt: str | None = None) -> Task:
    """The single-pass judge of ``view``: one greedy answer per trajectory under the view's schema; with
    ``prompt`` (a template file of one's own, :mod:`~trajectory_judge.judges.custom`) the template over the view."""
    return refusing(lambda: _view_task(view, data, limit, force, prompt))


def _view_task(view: str, data: str | None, limit: int | None, force: bool, prompt: str | None) -> Task:
    data = task_folder(data, force)
    template = load_template(user_path(prompt)) if prompt is not None and str(prompt).strip() else None
    return Task(
        dataset=load_dataset(view, data, limit, template),
        solver=generate(),
        scorer=verdict_scorer(),
        config=GenerateConfig(
            temperature=DEFAULT_TEMPERATURE,
            seed=DEFAULT_SEED,
            max_tokens=MAX_TOKENS,
            response_schema=response_format(view),
        ),
        metadata={
            "trajectory_judge": {
                "view": view,
                "data": data,
                "limit": limit,
                **({"prompt": template.record()} if template else {}),
            }
        },
    )


@task
def outcome_judge(
    data: str | None = None, limit: int | None = None, force: bool = False, prompt: str | None = None
) -> Task:
    """The outcome view: the goal and the final answer only.

    Args:
        data: folder holding ``trajectories.jsonl`` (required).
        limit: judge the stratified prefix of this many trajectories (default all).
        force: judge a folder pinned by ``SHA256SUMS`` all the same (default false).
        prompt: a prompt template file of your own over this view (judge id ``VIEW+NAME:MODEL``).
    """
    return view_task("outcome", data, limit, force, prompt)


@task
def step_judge(
    data: str | None = None, limit: int | None = None, force: bool = False, prompt: str | None = None
) -> Task:
    """The step view: every thought, call and observation, held against the procedure.

    Args:
        data: folder holding ``trajectories.jsonl`` (required).
        limit: judge the stratified prefix of this many trajectories (default all).
        force: judge a folder pinned by ``SHA256SUMS`` all the same (default false).
        prompt: a prompt template file of your own over this view (judge id ``VIEW+NAME:MODEL``).
    """
    return view_task("step", data, limit, force, prompt)


@task
def reply_judge(
    data: str | None = None, limit: int | None = None, force: bool = False, prompt: str | None = None
) -> Task:
    """The reply view: the full trajectory, asked only whether the reply is backed by the observations.

    Args:
        data: folder holding ``trajectories.jsonl`` (required).
        limit: judge the stratified prefix of this many trajectories (default all).
        force: judge a folder pinned by ``SHA256SUMS`` all the same (default false).
        prompt: a prompt template file of your own over this view (judge id ``VIEW+NAME:MODEL``).
    """
    return view_task("reply", data, limit, force, prompt)


@solver
def seeded_sample(temperature: float = TEMPERATURE, seeds: Sequence[int] = SEEDS) -> Solver:
    """One sample of the step prompt per epoch, epoch ``e`` at ``seeds[e - 1]`` (recorded as the sample's ``seed``)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = seeds[(state.epoch - 1) % len(seeds)]
        state.metadata["seed"], state.metadata["temperature"] = seed, temperature
        return await generate(state, temperature=temperature, seed=seed)

    return solve


@task
def selfcons_judge(
    data: str | None = None,
    limit: int | None = None,
    temperature: float = TEMPERATURE,
    seeds: Sequence[int] = SEEDS,
    force: bool = False,
    prompt: str | None = None,
) -> Task:
    """Self-consistency: the step prompt sampled once per seed, reduced by strict majority.

    Args:
        data: folder holding ``trajectories.jsonl`` (required).
        limit: judge the stratified prefix of this many trajectories (default all).
        temperature: sampling temperature of every member (default 0.7).
        seeds: one member per seed, an odd number of them (default 7, 8, 9).
        force: judge a folder pinned by ``SHA256SUMS`` all the same (default false).
        prompt: a prompt template file of your own, sampled over the step view in place of the step prompt
            (judge id ``selfconsK+NAME:MODEL``, members ``step+NAME@T<t>/seed<n>:MODEL``).
    """
    data = refusing(lambda: task_folder(data, force))
    template = (
        refusing(lambda: load_template(user_path(prompt))) if prompt is not None and str(prompt).strip() else None
    )
    seeds = tuple(int(s) for s in seeds)
    if len(seeds) % 2 == 0:
        raise ValueError(f"need an odd number of seeds for a strict majority, got {len(seeds)}")
    return Task(
        dataset=load_dataset("step", data, limit, template),
        solver=seeded_sample(temperature, seeds),
        scorer=verdict_scorer(),
        epochs=Epochs(len(seeds), majority()),
        config=GenerateConfig(max_tokens=MAX_TOKENS, response_schema=response_format("step")),
        metadata={
            "trajectory_judge": {
                "view": "selfcons",
                "data": data,
                "limit": limit,
                "temperature": temperature,
                "seeds": list(seeds),
                **({"prompt": template.record()} if template else {}),
            }
        },
    )
