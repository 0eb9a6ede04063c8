"""The data model: trajectories, labels, verdicts, organic episodes and judge ids, with JSONL I/O.

Field names and types match the published release exactly, so its files load unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator

from trajectory_judge.fileio import atomic_open, note_read

FailureType = Literal[
    "wrong_tool",
    "hallucinated_argument",
    "skipped_precondition",
    "ignored_observation",
    "premature_stop",
    "unsupported_claim",
]

FAILURE_TYPES: tuple[FailureType, ...] = get_args(FailureType)
"""The six failure types of the taxonomy, in the paper's order."""


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
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


def check_name(value: str, what: str = "judge id") -> str:
    """``value`` if it is a usable judge id or model name, else :class:`ValueError` saying why.

    A name is non-empty printable text without ``|`` (the separator of paired-delta keys); so no
    newline, tab or other control character. ``@``, ``/``, ``.`` and ``:`` are allowed (member ids
    look like ``step@T0.7/seed7:qwen2.5-coder:1.5b``).
    """
    if not value.strip():
        raise ValueError(f"{what} must not be empty")
    if "|" in value:
        raise ValueError(f"{what} {value!r} must not contain '|'")
    if not value.isprintable():
        raise ValueError(f"{what} {value!r} must be printable text (no newline, tab or control character)")
    return value


LLM_VIEWS, RULES_ID = ("outcome", "step", "reply"), "programmatic"
"""The views an LLM judge reads (single-pass LLM judge ids begin with one), and the rule engine's id."""
JUDGE_ID_GRAMMAR = (
    "'programmatic', 'VIEW:MODEL' (VIEW one of outcome, step, reply), 'VIEW+PROMPT:MODEL' (a prompt of "
    "one's own, PROMPT named as NAME below), 'selfconsK:MODEL', "
    "'VIEW@T<temperature>/seed<n>:MODEL', or a Python judge's 'NAME' or 'NAME:DETAIL' "
    "(NAME lower-case letters, digits, '_' or '-', starting with a letter)"
)
"""The judge-id grammar in one phrase, for error messages (the guide's "Judge ids" page says it at length)."""
_NAME, _ENSEMBLE = re.compile(r"[a-z][a-z0-9_-]*"), re.compile(r"selfcons(?P<k>[2-9]|[1-9]\d+)")
_MEMBER = re.compile(r"(?P<view>outcome|step|reply)@T(?P<temperature>\d+(\.\d+)?)/seed(?P<seed>\d+)")
_CUSTOM = re.compile(r"(?P<view>outcome|step|reply)\+(?P<prompt>.*)")


def check_prompt_name(name: str) -> str:
    """``name`` if it can name a prompt of one's own in a judge id (``step+NAME:MODEL``), else a ValueError.

    The grammar of a Python judge's NAME: lower-case letters, digits, ``_`` or ``-``, starting with a letter.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"prompt name {name!r} must be lower-case letters, digits, '_' or '-', starting with a letter "
            "(it is taken from the prompt file's name without its suffix)"
        )
    return name


JudgeKind = Literal["rules", "llm", "ensemble", "member", "python"]
"""What a judge id names: the rule engine, a single-pass LLM judge, the self-consistency ensemble,
one sampled member of an ensemble, or a judge written in Python."""

ENSEMBLE_FAMILY, ENSEMBLE_VIEW, PYTHON_FAMILY = "selfcons", "step", "python"
"""The family of the self-consistency ensemble and the view its samples read, and the family of every
judge written in Python."""


@dataclass(frozen=True)
class JudgeSpec:
    """A judge id parsed once (:meth:`parse`): what kind of judge it names, what it reads, and which model.

    ``str(spec)`` is the id exactly as written. The one parser of the grammar (README, "Judge ids";
    :data:`JUDGE_ID_GRAMMAR`); every part of the package that groups, names or renders judges reads
    these fields rather than the text.
    """

    judge_id: str
    """The id as it appears in the verdicts."""
    kind: JudgeKind
    """``rules``, ``llm``, ``ensemble``, ``member`` or ``python``."""
    family: str
    """``programmatic``, ``outcome``, ``step``, ``reply``, ``selfcons`` or ``python``; a member's family is
    the view it samples (a member is one sampled pass of that view's judge)."""
    view: str
    """What it reads: ``rules`` (the whole trajectory, by rule), one of :data:`LLM_VIEWS`, or ``python`` (its own)."""
    model: str | None = None
    """The model behind an LLM judge (everything after the first ``:``); None for the rules and a Python judge."""
    ensemble: int = 1
    """Samples per verdict: k for ``selfconsK``, 1 for every other judge (a member is one sample)."""
    temperature: float | None = None
    """A member's sampling temperature (``@T0.7``); None for any other judge."""
    seed: int | None = None
    """A member's seed (``/seed7``); None for any other judge."""
    detail: str | None = None
    """A Python judge's ``DETAIL`` (after the first ``:``), or None."""
    prompt: str | None = None
    """The NAME of a prompt of one's own (``step+NAME:MODEL``); None for a judge under the built-in prompts."""

    def __str__(self) -> str:
        return self.judge_id

    @property
    def head(self) -> str:
        """The id before its model or detail: ``step``, ``step+NAME``, ``selfcons3``, ``step@T0.7/seed7``, a Python
        judge's NAME."""
        return self.judge_id.partition(":")[0]

    @property
    def is_llm(self) -> bool:
        """True for every judge that is not the rule engine or a Python judge."""
        return self.kind not in ("rules", "python")

    @property
    def is_member(self) -> bool:
        """True for one sampled member of an ensemble (``VIEW@T<temperature>/seed<n>:MODEL``)."""
        return self.kind == "member"

    @property
    def rendered_view(self) -> str:
        """The view of a trajectory it is shown (:func:`trajectory_judge.judges.views.render_view`): its own
        LLM view; the full trajectory (``step``) for the rules, the ensemble and a Python judge."""
        return self.view if self.view in LLM_VIEWS else "step"

    @classmethod
    def parse(cls, judge_id: str) -> JudgeSpec:
        """The record of ``judge_id``, or :class:`ValueError` naming the id and what is wrong with it."""
        return _parse_judge_id(judge_id)

    @classmethod
    def rules(cls) -> JudgeSpec:
        """The rule engine, ``programmatic``."""
        return cls.parse(RULES_ID)

    @classmethod
    def llm(cls, view: str, model: str, prompt: str | None = None) -> JudgeSpec:
        """A single-pass LLM judge, ``VIEW:MODEL``; with ``prompt`` (a prompt of one's own), ``VIEW+PROMPT:MODEL``."""
        head = view if prompt is None else f"{view}+{check_prompt_name(prompt)}"
        return cls._kind_of(f"{head}:{model}", "llm")

    @classmethod
    def self_consistency(cls, k: int, model: str) -> JudgeSpec:
        """The self-consistency ensemble of ``k`` samples of the step view, ``selfconsK:MODEL``."""
        return cls._kind_of(f"{ENSEMBLE_FAMILY}{k}:{model}", "ensemble")

    @classmethod
    def member(cls, view: str, temperature: float, seed: int, model: str) -> JudgeSpec:
        """One sample of an ensemble, ``VIEW@T<temperature>/seed<n>:MODEL`` (the temperature written shortest, ``:g``)."""
        return cls._kind_of(f"{view}@T{temperature:g}/seed{seed}:{model}", "member")

    @classmethod
    def _kind_of(cls, judge_id: str, kind: JudgeKind) -> JudgeSpec:
        spec = cls.parse(judge_id)
        if spec.kind != kind:
            raise ValueError(f"judge id {judge_id!r} names {_KIND_NAMES[spec.kind]}, not {_KIND_NAMES[kind]}")
        return spec


def _check_separators(judge_id: str, head: str, sep: str, detail: str, needs_model: bool) -> None:
    """The grammar's checks on spaces and on the ``:`` before a model, each a ValueError naming the id."""
    if any(c.isspace() for c in judge_id):
        raise ValueError(f"judge id {judge_id!r} must not contain spaces; expected {JUDGE_ID_GRAMMAR}")
    if sep and not detail:
        raise ValueError(f"judge id {judge_id!r} ends in ':'; expected {JUDGE_ID_GRAMMAR}")
    if needs_model and not sep:
        raise ValueError(f"judge id {judge_id!r} names no model; an LLM judge's id reads {head}:MODEL")


_KIND_NAMES: dict[JudgeKind, str] = {
    "rules": "the rule engine",
    "llm": "an LLM judge",
    "ensemble": "a self-consistency ensemble",
    "member": "an ensemble member",
    "python": "a Python judge",
}
"""Each kind of judge as a sentence names it."""


@lru_cache(maxsize=4096)
def _parse_judge_id(judge_id: str) -> JudgeSpec:
    """:meth:`JudgeSpec.parse`, once per distinct id (a file holds a few ids on many lines; the record is immutable)."""
    check_name(judge_id)
    if judge_id == RULES_ID:
        return JudgeSpec(judge_id, "rules", RULES_ID, "rules")
    head, sep, detail = judge_id.partition(":")
    member, ensemble, custom = _MEMBER.fullmatch(head), _ENSEMBLE.fullmatch(head), _CUSTOM.fullmatch(head)
    _check_separators(judge_id, head, sep, detail, bool(head in LLM_VIEWS or member or ensemble or custom))
    if head in LLM_VIEWS:
        return JudgeSpec(judge_id, "llm", head, head, detail)
    if custom:
        try:
            name = check_prompt_name(custom["prompt"])
        except ValueError as exc:
            raise ValueError(f"judge id {judge_id!r}: {exc}") from None
        return JudgeSpec(judge_id, "llm", custom["view"], custom["view"], detail, prompt=name)
    if member:
        view = member["view"]
        return JudgeSpec(
            judge_id, "member", view, view, detail, temperature=float(member["temperature"]), seed=int(member["seed"])
        )
    if ensemble:
        return JudgeSpec(judge_id, "ensemble", ENSEMBLE_FAMILY, ENSEMBLE_VIEW, detail, ensemble=int(ensemble["k"]))
    if head.startswith(ENSEMBLE_FAMILY):
        raise ValueError(f"judge id {judge_id!r}: a self-consistency id names its size, 2 or more (selfcons3:MODEL)")
    if head == RULES_ID:
        raise ValueError(f"judge id {judge_id!r}: the rule engine takes no model (its id is 'programmatic')")
    if not _NAME.fullmatch(head):
        raise ValueError(f"judge id {judge_id!r}: {head!r} is not a judge name; expected {JUDGE_ID_GRAMMAR}")
    return JudgeSpec(judge_id, "python", PYTHON_FAMILY, PYTHON_FAMILY, detail=detail or None)


def judge_kind(judge_id: str) -> JudgeKind:
    """What a judge id names (:attr:`JudgeSpec.kind`), or a ValueError saying why it breaks the grammar."""
    return JudgeSpec.parse(judge_id).kind


def check_judge_id(value: str) -> str:
    """``value`` if it follows the judge-id grammar (:meth:`JudgeSpec.parse`), else :class:`ValueError`."""
    JudgeSpec.parse(value)
    return value


StepIndex = Annotated[int, Field(strict=True, ge=0)]
"""A step index: a non-negative integer (``2.0``, ``"2"`` and ``true`` are refused)."""

Count = Annotated[int, Field(strict=True, ge=0)]
"""A token count: a non-negative integer."""

Seconds = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
"""A duration: finite and non-negative."""

Probability = Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)]
"""A confidence: finite and in [0, 1]."""

JudgeId = Annotated[str, AfterValidator(check_name)]
"""A judge id as stored: see :func:`check_name` (the grammar, :func:`check_judge_id`, is checked where ids enter)."""


class ToolCall(_Strict):
    """One tool invocation: the tool's name and its keyword arguments."""

    tool: str
    """The tool's name, as the agent called it."""
    args: dict[str, Any]
    """The call's keyword arguments (any JSON object)."""


class Observation(_Strict):
    """What a tool returned: success flag, payload, and an error string on failure."""

    ok: StrictBool
    """Whether the call succeeded."""
    data: dict[str, Any]
    """What the tool returned (any JSON object; empty on failure)."""
    error: str | None = None
    """The tool's error message when ``ok`` is false."""


class Step(_Strict):
    """One step s_t = (thought, call, observation)."""

    index: StepIndex
    """The step's position, counted from 0."""
    thought: str
    """What the agent wrote before the call (may be empty)."""
    call: ToolCall
    """The tool call it made."""
    observation: Observation
    """What the call returned."""


class Label(_Strict):
    """Ground truth by construction: faulty, where, what, and whether the outcome survived."""

    faulty: StrictBool
    """Whether the trajectory contains a failure."""
    failure_step: StepIndex | None = None
    """The index of the step where the failure happens (null for a clean trajectory)."""
    failure_type: FailureType | None = None
    """Which of the six failure types it is (null for a clean trajectory)."""
    outcome_correct: StrictBool
    """Whether the customer-visible outcome is still the expected one (a fault that leaves it right is silent,
    one that breaks it loud)."""

    @model_validator(mode="after")
    def _fields_agree(self) -> Label:
        # clean: no type, no step, outcome right; faulty: a type and a step, or neither when only
        # the outcome is wrong (an organic episode no rule flagged, the organic chapter's "outcome only")
        if not self.faulty:
            if self.failure_type is not None or self.failure_step is not None:
                raise ValueError("a clean label (faulty false) carries no failure_type or failure_step")
            if not self.outcome_correct:
                raise ValueError("a clean label (faulty false) must have outcome_correct true")
        elif (self.failure_type is None) != (self.failure_step is None):
            raise ValueError("a faulty label names both failure_type and failure_step, or neither")
        elif self.failure_type is None and self.outcome_correct:
            raise ValueError("a faulty label with a correct outcome must name failure_type and failure_step")
        return self


class Trajectory(_Strict):
    """A goal, the steps taken, the final answer, and (when known) the label."""

    trajectory_id: str
    """Unique within a file. Judges never see it (they get an opaque id), so it may name the fault."""
    instance_id: str
    """The task the trajectory attempts; a clean trajectory and the faults made from it share it (a fault's
    clean parent). Give every trajectory its own when there are no such pairs."""
    goal: str
    """The task as the agent was given it."""
    steps: list[Step]
    """The steps taken, in order."""
    final_answer: str
    """The agent's final answer or reply."""
    label: Label | None = None
    """The ground truth; needed to score a judge (``report``), not to judge."""

    @model_validator(mode="after")
    def _label_step_in_range(self) -> Trajectory:
        if (idx := [s.index for s in self.steps]) != list(range(len(idx))):
            raise ValueError(f"steps: the step indices are {idx}, not 0..{len(idx) - 1} in order")
        step = self.label.failure_step if self.label is not None else None
        if step is not None and step not in valid_steps(self):
            raise ValueError(f"label.failure_step: {step} is not a step of this trajectory ({step_range(self)})")
        return self


class Verdict(_Strict):
    """One judge's verdict on one trajectory, with its cost.

    ``rationale`` may be ``None``: the committed projection of the release withholds it. The cost
    fields are optional: a judge that calls no model spends no tokens, and the runner measures the
    latency of a verdict that does not state its own.
    """

    trajectory_id: str
    judge_id: JudgeId
    faulty: StrictBool
    failure_step: StepIndex | None = None
    failure_type: FailureType | None = None
    confidence: Probability
    rationale: str | None = None
    latency_s: Seconds = 0.0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    error: str | None = None

    @property
    def unparseable(self) -> bool:
        """Whether the verdict was stored from an answer that did not parse (its own, or a member's)."""
        return self.error is not None and "unparseable" in self.error

    @model_validator(mode="after")
    def _clean_names_nothing(self) -> Verdict:
        if not self.faulty and (self.failure_type is not None or self.failure_step is not None):
            raise ValueError("a clean verdict (faulty false) carries no failure_type or failure_step")
        return self


def valid_steps(traj: Trajectory) -> set[int]:
    """The values a failure step of ``traj`` may take: its step indices.

    A trajectory with no steps fails at position 0, where its first step is missing (the rule
    checker reports an empty episode there).
    """
    return {s.index for s in traj.steps} or {0}


def step_range(traj: Trajectory) -> str:
    """The step indices of ``traj`` in words, for error messages."""
    if not traj.steps:
        return "it has no steps; only 0 names the missing first step"
    idx = [s.index for s in traj.steps]
    return f"steps {min(idx)}..{max(idx)}" if idx == list(range(min(idx), max(idx) + 1)) else f"steps {idx}"


def check_verdict_step(verdict: Verdict, traj: Trajectory) -> None:
    """Raise :class:`ValueError` when ``verdict`` names a step its trajectory does not have."""
    step = verdict.failure_step
    if step is not None and step not in valid_steps(traj):
        raise ValueError(
            f"failure_step: {step} is not a step of trajectory {traj.trajectory_id!r} ({step_range(traj)})"
        )


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
    msg = err["msg"].removeprefix("Value error, ")
    where = ".".join(str(p) for p in err["loc"])
    if err["type"] not in ("missing", "extra_forbidden", "value_error") and not isinstance(
        err.get("input"), (dict, list)
    ):
        got = repr(err["input"])
        msg += f" (got {got if len(got) <= 60 else got[:57] + '...'})"
    return f"{where}: {msg}" if where else msg


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file; a missing file or one that is not UTF-8 is a :class:`DataError`.

    Other operating-system errors (a directory, no permission) propagate as :class:`OSError`.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    try:
        text = (data := path.read_bytes()).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    note_read(path, data)  # what the book's provenance lines name (trajectory_judge.fileio.files_read)
    return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as Path.read_text


def parse_jsonl(path: str | Path, model: type[M], *, allow_torn_tail: bool = False) -> list[M]:
    """Read a JSONL file of ``model`` records; bad lines raise :class:`DataError` naming file and line.

    With ``allow_torn_tail`` a last line without a newline that does not parse is ignored
    (the signature of a crash mid-write); the caller is responsible for repairing it.
    """
    path = Path(path)
    text = read_text(path)
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
    """Load trajectories; an empty file, or a duplicate id, is an error."""
    trajs = parse_jsonl(path, Trajectory)
    if not trajs:
        raise DataError(f"{path}: no trajectories (the file is empty)")
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
    lines = [i for i, ln in enumerate(read_text(path).split("\n"), 1) if ln.strip()]
    for lineno, v in zip(lines, verdicts):
        key = (v.trajectory_id, v.judge_id)
        if key in seen:
            raise DataError(
                f"{path}:{lineno}: duplicate verdict for trajectory {v.trajectory_id!r}, judge {v.judge_id!r}"
            )
        seen.add(key)
        if known is not None and v.trajectory_id not in known:
            raise DataError(f"{path}:{lineno}: verdict for unknown trajectory {v.trajectory_id!r}")
    return verdicts


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
    latency_s: Seconds
    """Wall-clock seconds of all model calls."""
    prompt_tokens: Count
    """Prompt tokens over all steps."""
    completion_tokens: Count
    """Generated tokens over all steps."""


SCHEMA_VERSION = 1
"""The version of the trajectory, label and verdict formats (:func:`json_schema` states it).

Version 1 is the format of the published release and of every file this edition writes. It changes
only when a file that loads today would fail to load or would mean something else; an optional field
added with a default that keeps old files' meaning is not such a change.
"""

SCHEMA_RULES: dict[str, tuple[str, ...]] = {
    "trajectories": (
        "trajectory_id is unique within a file",
        "steps[i].index is i: the indices run 0, 1, 2, ... in order",
        "label.failure_step, when given, is the index of one of the trajectory's steps (0 for a trajectory "
        "with no steps)",
    ),
    "labels": (
        "a clean label (faulty false) names no failure_type or failure_step and has outcome_correct true",
        "a faulty label names both failure_type and failure_step, or neither; neither only when outcome_correct "
        "is false (a wrong outcome, its step unknown)",
    ),
    "verdicts": (
        "one verdict per (trajectory_id, judge_id); trajectory_id names a trajectory of the folder",
        "a clean verdict (faulty false) names no failure_type or failure_step; failure_step is a step of "
        "its trajectory",
        "judge_id follows the judge-id grammar: " + JUDGE_ID_GRAMMAR,
    ),
}
"""What each format requires beyond what a JSON Schema can say: checked by the loaders, listed in the schema."""

SCHEMA_KINDS: dict[str, type[BaseModel]] = {"trajectories": Trajectory, "labels": Label, "verdicts": Verdict}
"""The formats :func:`json_schema` exports: one JSON object per line of ``trajectories.jsonl`` or
``verdicts.jsonl``, and the ``label`` object inside a trajectory."""


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one format of :data:`SCHEMA_KINDS`, generated from its model.

    It carries :data:`SCHEMA_VERSION` (``x-schema-version`` and the version in ``$id``) and, under
    ``x-rules``, the rules of :data:`SCHEMA_RULES` that the loaders check and a schema cannot state.
    """
    if kind not in SCHEMA_KINDS:
        raise ValueError(f"no schema {kind!r}; choose one of {', '.join(SCHEMA_KINDS)}")
    body = _clean(SCHEMA_KINDS[kind].model_json_schema())
    rules = SCHEMA_RULES[kind] + (SCHEMA_RULES["labels"] if kind == "trajectories" else ())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:trajectory-judge:{kind}:v{SCHEMA_VERSION}",
        "title": f"trajectory-judge {kind}, version {SCHEMA_VERSION}",
        "x-schema-version": SCHEMA_VERSION,
        "x-rules": list(rules),
        **body,
    }


def _clean(node: Any) -> Any:
    # drop pydantic's cosmetic "title"s; the grammar does not need them
    if isinstance(node, dict):
        return {k: _clean(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node
