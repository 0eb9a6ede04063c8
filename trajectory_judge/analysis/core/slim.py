"""What the report reads of trajectories and verdicts, held in little memory.

``report`` needs of a trajectory its ids, its label, its step indices (to check a verdict's step),
its final answer (the invented sentence of an ``unsupported_claim`` fault) and whether each view of it
equals its clean parent's; not the text of its steps. :func:`load_slim_data` streams
``trajectories.jsonl`` and ``verdicts.jsonl`` one line at a time, validates each line as the full
loaders do (the same messages, naming file and line), and keeps a :class:`TrajectoryRecord` (with a
digest of every view's rendering) and a :class:`VerdictRecord` (without the rationale) per line.
:func:`slim_trajectories` and :func:`slim_verdicts` turn full objects into the same records.
Equal digests stand for equal renderings (BLAKE2b, 128 bits).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajectory_judge.fileio import note_read_hashed
from trajectory_judge.judges.views import VIEWS, render_view
from trajectory_judge.models import FAILURE_TYPES, DataError, Label, Trajectory, Verdict, check_name
from trajectory_judge.models.jsonl import _first_error


@dataclass(frozen=True, slots=True)
class StepRef:
    """A step as the report sees it: its index only."""

    index: int


_STEPS: dict[int, StepRef] = {}
_LABELS: dict[tuple[Any, ...], Label] = {}
_FLOATS: dict[tuple[float, float], float] = {}  # stated confidences: one object per distinct value


def _shared(x: float) -> float:
    """One object per distinct stated confidence (a judge states few); ``-0.0`` stays apart from ``0.0``."""
    if len(_FLOATS) >= 4096:
        return x
    return _FLOATS.setdefault((x, math.copysign(1.0, x)), x)


def _step(i: int) -> StepRef:
    ref = _STEPS.get(i)
    if ref is None:
        ref = _STEPS[i] = StepRef(i)
    return ref


def _label(label: Label | None) -> Label | None:
    """One shared object per distinct label (a data set holds few)."""
    if label is None:
        return None
    key = (label.faulty, label.failure_step, label.failure_type, label.outcome_correct)
    return _LABELS.setdefault(key, label)


@dataclass(frozen=True, slots=True)
class TrajectoryRecord:
    """A trajectory without its steps' text: ids, label, step indices, final answer, view digests."""

    trajectory_id: str
    instance_id: str
    label: Label | None
    steps: tuple[StepRef, ...]
    final_answer: str
    view_digests: tuple[bytes, ...]
    """Digest of :func:`~trajectory_judge.judges.views.render_view` of each view of :data:`VIEWS`, in order."""

    @classmethod
    def of(cls, t: Trajectory) -> TrajectoryRecord:
        """The record of a full trajectory."""
        return cls(
            sys.intern(t.trajectory_id),
            sys.intern(t.instance_id),
            _label(t.label),
            tuple(_step(s.index) for s in t.steps),
            t.final_answer,
            tuple(view_digest(v, t) for v in VIEWS),
        )

    def view(self, view: str) -> bytes:
        """The digest of ``view``'s rendering."""
        return self.view_digests[VIEWS.index(view)]


def view_digest(view: str, t: Trajectory) -> bytes:
    """A 128-bit digest of ``render_view(view, t)``."""
    return hashlib.blake2b(render_view(view, t).encode("utf-8"), digest_size=16).digest()


def view_key(view: str, t: Trajectory | TrajectoryRecord) -> bytes:
    """What tells two trajectories' ``view`` apart: the digest of its rendering (kept by a record, else computed)."""
    if isinstance(t, TrajectoryRecord):
        return t.view(view)
    return view_digest(view, t)


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """A verdict without its rationale: what metrics, intervals and the unparseable counts read."""

    trajectory_id: str
    judge_id: str
    faulty: bool
    failure_step: int | None
    failure_type: str | None
    confidence: float
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    error: str | None

    @classmethod
    def of(cls, v: Verdict) -> VerdictRecord:
        """The record of a full verdict."""
        return cls(
            sys.intern(v.trajectory_id),
            sys.intern(v.judge_id),
            v.faulty,
            v.failure_step,
            None if v.failure_type is None else sys.intern(v.failure_type),
            _shared(v.confidence),
            v.latency_s,
            v.prompt_tokens,
            v.completion_tokens,
            v.error,
        )

    @property
    def unparseable(self) -> bool:
        """As :attr:`~trajectory_judge.models.Verdict.unparseable`."""
        return self.error is not None and "unparseable" in self.error


def slim_trajectories(trajectories: Iterable[Trajectory | TrajectoryRecord]) -> list[TrajectoryRecord]:
    """Records of ``trajectories`` (records pass through)."""
    return [t if isinstance(t, TrajectoryRecord) else TrajectoryRecord.of(t) for t in trajectories]


def slim_verdicts(verdicts: Iterable[Verdict | VerdictRecord]) -> list[VerdictRecord]:
    """Records of ``verdicts`` (records pass through)."""
    return [v if isinstance(v, VerdictRecord) else VerdictRecord.of(v) for v in verdicts]


# --- streaming -------------------------------------------------------------------------------------
def jsonl_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line of a UTF-8 file, read a line at a time.

    Numbered as :func:`~trajectory_judge.models.read_text` with ``split("\\n")`` numbers them
    (universal newlines); a missing file or bytes that are not UTF-8 are a :class:`DataError`. When
    the whole file has been read it is recorded as read (its SHA-256), as ``read_text`` records it.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    sha, size, lineno = hashlib.sha256(), 0, 0
    with path.open("rb") as fh:
        for raw in fh:
            sha.update(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {size + exc.start})"
                ) from None
            size += len(raw)
            body = text[:-1] if text.endswith("\n") else text
            body = body[:-1] if body.endswith("\r") else body
            for part in body.split("\r"):
                lineno += 1
                if part.strip():
                    yield lineno, part
    note_read_hashed(path, sha.hexdigest(), size)


def _load(path: Path, lineno: int, line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None


def _parse(path: Path, lineno: int, obj: Any, model: type[Any]) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise DataError(f"{path}:{lineno}: invalid {model.__name__}: {_first_error(exc)}") from None


# --- the plain checks: a line the model surely accepts, read without it -------------------------------
# Each function below returns None unless every field is of the exact type and range the model requires
# (strict booleans and integers, finite floats, the known keys only, the validators' rules), and then the
# record the model's object would give; anything else is handed to the model, which accepts it or says why.
# So the model is built and run only for a line it has something to say about.
_TYPES = frozenset(FAILURE_TYPES)
_TRAJECTORY_KEYS = frozenset(("trajectory_id", "instance_id", "goal", "steps", "final_answer", "label"))
_STEP_KEYS = frozenset(("index", "thought", "call", "observation"))
_CALL_KEYS = frozenset(("tool", "args"))
_OBSERVATION_KEYS = frozenset(("ok", "data", "error"))
_LABEL_KEYS = frozenset(("faulty", "failure_step", "failure_type", "outcome_correct"))
_VERDICT_KEYS = frozenset(
    (
        "trajectory_id",
        "judge_id",
        "faulty",
        "failure_step",
        "failure_type",
        "confidence",
        "rationale",
        "latency_s",
        "prompt_tokens",
        "completion_tokens",
        "error",
    )
)


def _index(x: Any) -> bool:
    return type(x) is int and x >= 0


def _optional_str(x: Any) -> bool:
    return x is None or type(x) is str


@dataclass(frozen=True, slots=True)
class _Call:
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Observation:
    ok: bool
    data: dict[str, Any]
    error: str | None


@dataclass(frozen=True, slots=True)
class _Step:
    index: int
    thought: str
    call: _Call
    observation: _Observation


@dataclass(frozen=True, slots=True)
class _Steps:
    """What :func:`~trajectory_judge.judges.views.render_view` reads of a trajectory."""

    goal: str
    steps: list[_Step]
    final_answer: str


def _plain_step(obj: Any) -> _Step | None:
    if type(obj) is not dict or obj.keys() != _STEP_KEYS:
        return None
    call, obs = obj["call"], obj["observation"]
    if not (_index(obj["index"]) and type(obj["thought"]) is str and type(call) is dict and type(obs) is dict):
        return None
    if call.keys() != _CALL_KEYS or type(call["tool"]) is not str or type(call["args"]) is not dict:
        return None
    if not (obs.keys() <= _OBSERVATION_KEYS and type(obs.get("ok")) is bool and type(obs.get("data")) is dict):
        return None
    error = obs.get("error")
    if not _optional_str(error):
        return None
    return _Step(
        obj["index"], obj["thought"], _Call(call["tool"], call["args"]), _Observation(obs["ok"], obs["data"], error)
    )


def _plain_label(obj: Any) -> Label | None:
    if type(obj) is not dict or not obj.keys() <= _LABEL_KEYS:
        return None
    faulty, correct = obj.get("faulty"), obj.get("outcome_correct")
    step, kind = obj.get("failure_step"), obj.get("failure_type")
    if type(faulty) is not bool or type(correct) is not bool or not (step is None or _index(step)):
        return None
    if not (kind is None or (type(kind) is str and kind in _TYPES)):
        return None
    if not faulty:
        if kind is not None or step is not None or not correct:
            return None
    elif (kind is None) != (step is None) or (kind is None and correct):
        return None
    found = _LABELS.get((faulty, step, kind, correct))  # shared, as :func:`_label` shares a validated one
    return found if found is not None else Label.model_construct(**obj)  # the model's object, unvalidated


def _plain_trajectory(obj: Any) -> TrajectoryRecord | None:
    if type(obj) is not dict or not obj.keys() <= _TRAJECTORY_KEYS:
        return None
    tid, iid, goal, answer, raw = (
        obj.get(k) for k in ("trajectory_id", "instance_id", "goal", "final_answer", "steps")
    )
    if not (type(tid) is str and type(iid) is str and type(goal) is str and type(answer) is str and type(raw) is list):
        return None
    steps = [_plain_step(s) for s in raw]
    if any(s is None for s in steps) or [s.index for s in steps] != list(range(len(steps))):  # type: ignore[union-attr]
        return None
    label = obj.get("label")
    if label is not None:
        label = _plain_label(label)
        if label is None:
            return None
        if label.failure_step is not None and label.failure_step not in (set(range(len(steps))) or {0}):
            return None
    seen = _Steps(goal, steps, answer)  # type: ignore[arg-type]
    return TrajectoryRecord(
        sys.intern(tid),
        sys.intern(iid),
        _label(label),
        tuple(_step(i) for i in range(len(steps))),
        answer,
        tuple(
            hashlib.blake2b(render_view(v, seen).encode("utf-8"), digest_size=16).digest()  # type: ignore[arg-type]
            for v in VIEWS
        ),
    )


def _plain_verdict(obj: Any) -> VerdictRecord | None:
    if type(obj) is not dict or not obj.keys() <= _VERDICT_KEYS:
        return None
    tid, jid, faulty, conf = obj.get("trajectory_id"), obj.get("judge_id"), obj.get("faulty"), obj.get("confidence")
    step, kind = obj.get("failure_step"), obj.get("failure_type")
    latency, prompt, completion = (
        obj.get("latency_s", 0.0),
        obj.get("prompt_tokens", 0),
        obj.get("completion_tokens", 0),
    )
    rationale, error = obj.get("rationale"), obj.get("error")
    if not (type(tid) is str and type(jid) is str and type(faulty) is bool and type(conf) is float):
        return None
    if not (0.0 <= conf <= 1.0 and type(latency) is float and 0.0 <= latency < math.inf):
        return None
    if not (_index(prompt) and _index(completion) and (step is None or _index(step))):
        return None
    if not (kind is None or (type(kind) is str and kind in _TYPES)) or not (
        _optional_str(rationale) and _optional_str(error)
    ):
        return None
    if not faulty and (kind is not None or step is not None):
        return None
    try:
        check_name(jid)
    except ValueError:
        return None
    return VerdictRecord(
        sys.intern(tid),
        sys.intern(jid),
        faulty,
        step,
        None if kind is None else sys.intern(kind),
        _shared(conf),
        latency,
        prompt,
        completion,
        error,
    )


def stream_trajectories(path: str | Path) -> Iterator[tuple[int, TrajectoryRecord]]:
    """``(line number, record)`` of each trajectory, validated as :func:`~trajectory_judge.models.load_trajectories`
    validates it (duplicate ids included); an empty file is an error."""
    path = Path(path)
    seen: set[str] = set()
    for i, (lineno, line) in enumerate(jsonl_lines(path)):
        obj = _load(path, lineno, line)
        t = _plain_trajectory(obj) or TrajectoryRecord.of(_parse(path, lineno, obj, Trajectory))
        if t.trajectory_id in seen:
            raise DataError(f"{path}: duplicate trajectory_id {t.trajectory_id!r} (record {i + 1})")
        seen.add(t.trajectory_id)
        yield lineno, t
    if not seen:
        raise DataError(f"{path}: no trajectories (the file is empty)")


def stream_verdicts(path: str | Path, known: set[str] | None = None) -> Iterator[tuple[int, VerdictRecord]]:
    """``(line number, record)`` of each verdict, validated as :func:`~trajectory_judge.models.load_verdicts`
    validates it: a duplicate (trajectory, judge) or an unknown trajectory is an error."""
    path = Path(path)
    seen: dict[str, set[str]] = {}  # judge -> its trajectories (of interned ids: no object per verdict)
    for lineno, line in jsonl_lines(path):
        obj = _load(path, lineno, line)
        v = _plain_verdict(obj) or VerdictRecord.of(_parse(path, lineno, obj, Verdict))
        judged = seen.setdefault(v.judge_id, set())
        if v.trajectory_id in judged:
            raise DataError(
                f"{path}:{lineno}: duplicate verdict for trajectory {v.trajectory_id!r}, judge {v.judge_id!r}"
            )
        judged.add(v.trajectory_id)
        if known is not None and v.trajectory_id not in known:
            raise DataError(f"{path}:{lineno}: verdict for unknown trajectory {v.trajectory_id!r}")
        yield lineno, v


def trajectory_ids(trajectories: Sequence[Trajectory | TrajectoryRecord]) -> list[str]:
    """The ids, in order."""
    return [t.trajectory_id for t in trajectories]
