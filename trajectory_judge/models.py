"""The data model: trajectories, labels and verdicts, with JSONL I/O.

Field names and types match the published release exactly, so its files load unchanged.
"""

from __future__ import annotations

import json
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

FAILURE_TYPES: tuple[str, ...] = (
    "wrong_tool",
    "hallucinated_argument",
    "skipped_precondition",
    "ignored_observation",
    "premature_stop",
    "unsupported_claim",
)
"""The six failure types of the taxonomy, in the paper's order."""


FailureType = Literal[
    "wrong_tool",
    "hallucinated_argument",
    "skipped_precondition",
    "ignored_observation",
    "premature_stop",
    "unsupported_claim",
]


DESIGN_CELLS: tuple[str, ...] = (
    "clean",
    "wrong_tool/silent",
    "hallucinated_argument/silent",
    "unsupported_claim/silent",
    "skipped_precondition/silent",
    "skipped_precondition/loud",
    "ignored_observation/loud",
    "premature_stop/loud",
)
"""The eight design cells: clean, and each failure type split by outcome survival."""


class DataError(ValueError):
    """Bad input data; the message names the file and line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Strict):
    """One tool invocation: the tool's name and its keyword arguments."""

    tool: str
    args: dict[str, Any]


class Observation(_Strict):
    """What a tool returned: success flag, payload, and an error string on failure."""

    ok: bool
    data: dict[str, Any]
    error: str | None = None


class Step(_Strict):
    """One step s_t = (thought, call, observation)."""

    index: int
    thought: str
    call: ToolCall
    observation: Observation


class Label(_Strict):
    """Ground truth by construction: faulty, where, what, and whether the outcome survived."""

    faulty: bool
    failure_step: int | None = None
    failure_type: FailureType | None = None
    outcome_correct: bool


class Trajectory(_Strict):
    """A goal, the steps taken, the final answer, and (when known) the label."""

    trajectory_id: str
    instance_id: str
    goal: str
    steps: list[Step]
    final_answer: str
    label: Label | None = None


class Verdict(_Strict):
    """One judge's verdict on one trajectory, with its cost.

    ``rationale`` may be ``None``: the committed projection of the release withholds it.
    """

    trajectory_id: str
    judge_id: str
    faulty: bool
    failure_step: int | None = None
    failure_type: FailureType | None = None
    confidence: float
    rationale: str | None = None
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None


def design_cell(label: Label | None) -> str:
    """The design cell of a label: ``clean`` or ``TYPE/silent`` / ``TYPE/loud``."""
    if label is None:
        raise ValueError("an unlabelled trajectory has no design cell")
    if not label.faulty:
        return "clean"
    return f"{label.failure_type}/{'silent' if label.outcome_correct else 'loud'}"


def stratum(label: Label) -> str:
    """``clean``, ``silent`` or ``loud``."""
    if not label.faulty:
        return "clean"
    return "silent" if label.outcome_correct else "loud"


M = TypeVar("M", bound=BaseModel)


def dumps(record: BaseModel) -> str:
    """One compact, deterministic JSON line (no trailing newline)."""
    return json.dumps(record.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return f"{where}: {err['msg']}"


def parse_jsonl(path: str | Path, model: type[M], *, allow_torn_tail: bool = False) -> list[M]:
    """Read a JSONL file of ``model`` records; bad lines raise :class:`DataError` naming file and line.

    With ``allow_torn_tail`` a last line without a newline that does not parse is ignored
    (the signature of a crash mid-write); the caller is responsible for repairing it.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    torn_ok = allow_torn_tail and not text.endswith("\n")
    out: list[M] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if torn_ok and lineno == len(lines):
                break
            raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        try:
            out.append(model.model_validate(obj))
        except ValidationError as exc:
            if torn_ok and lineno == len(lines):
                break
            raise DataError(f"{path}:{lineno}: invalid {model.__name__}: {_first_error(exc)}") from None
    return out


def load_trajectories(path: str | Path) -> list[Trajectory]:
    """Load trajectories; duplicate ids are an error naming the line."""
    trajs = parse_jsonl(path, Trajectory)
    seen: dict[str, int] = {}
    for i, t in enumerate(trajs):
        if t.trajectory_id in seen:
            raise DataError(f"{path}: duplicate trajectory_id {t.trajectory_id!r} (record {i + 1})")
        seen[t.trajectory_id] = i
    return trajs


def load_verdicts(path: str | Path, trajectory_ids: Iterable[str] | None = None) -> list[Verdict]:
    """Load verdicts; a duplicate (trajectory, judge) key or an unknown trajectory is an error."""
    path = Path(path)
    known = set(trajectory_ids) if trajectory_ids is not None else None
    verdicts = parse_jsonl(path, Verdict)
    seen: set[tuple[str, str]] = set()
    lineno = 0
    lines = [i for i, ln in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if ln.strip()]
    for lineno, v in zip(lines, verdicts):
        key = (v.trajectory_id, v.judge_id)
        if key in seen:
            raise DataError(f"{path}:{lineno}: duplicate verdict for trajectory {v.trajectory_id!r}, judge {v.judge_id!r}")
        seen.add(key)
        if known is not None and v.trajectory_id not in known:
            raise DataError(f"{path}:{lineno}: verdict for unknown trajectory {v.trajectory_id!r}")
    return verdicts


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` atomically.

    The one way this package writes a whole file: the data go to a hidden temporary file in the
    same folder, which is flushed, fsynced and moved into place with :func:`os.replace`. An error
    (a full disk, Ctrl-C) removes the temporary file and leaves the previous ``path`` untouched.
    The new file gets ordinary permissions (0666 less the umask), not the 0600 of ``mkstemp``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files; mode {mode!r} is not 'w' or 'wb'")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # pragma: no cover - a name collision
            continue
    try:
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> None:
    """Write records atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "w") as fh:
        for r in records:
            fh.write(dumps(r) + "\n")


class Episode(BaseModel):
    """One organic episode: the trajectory the model produced, its rule-checker label, its cost."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    """``{instance_id}-organic``."""
    stratum: str
    """The instance's stratum."""
    agent_model: str
    """The model that drove the agent."""
    trajectory: Trajectory
    """The steps taken, with the label from the checker and the outcome check."""
    violations: list[dict[str, Any]]
    """Every rule the checker found broken, in (step, priority) order."""
    outcome: dict[str, Any]
    """The customer-visible end state."""
    expected: dict[str, Any]
    """The instance's expected outcome."""
    stop: Literal["replied", "max_steps", "unparseable_action"]
    """Why the episode ended."""
    error: str | None = None
    """The unparseable model output that ended the episode, if any."""
    latency_s: float
    """Wall-clock seconds of all model calls."""
    prompt_tokens: int
    """Prompt tokens over all steps."""
    completion_tokens: int
    """Generated tokens over all steps."""


def _clean(node: Any) -> Any:
    # drop pydantic's cosmetic "title"s; the grammar does not need them
    if isinstance(node, dict):
        return {k: _clean(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node
