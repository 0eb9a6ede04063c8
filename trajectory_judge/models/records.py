"""The records: trajectories (steps, tool calls, observations), their labels, judges' verdicts and
organic episodes, with the design cells and strata a label falls in.

Field names and types match the published release exactly, so its files load unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, model_validator

from trajectory_judge.models.judge_ids import check_name

FAILURE_TYPE_PATTERN = r"^[A-Za-z0-9_-]+$"
"""What a failure type's name may be: letters, digits, ``_`` and ``-``, at least one."""

FailureType = Annotated[str, Field(pattern=FAILURE_TYPE_PATTERN)]
"""A failure type: any name of :data:`FAILURE_TYPE_PATTERN`. A folder names its own types; the testbed's
six (:data:`TESTBED_FAILURE_TYPES`) are one vocabulary among others."""

TESTBED_FAILURE_TYPES: tuple[str, ...] = (
    "wrong_tool",
    "hallucinated_argument",
    "skipped_precondition",
    "ignored_observation",
    "premature_stop",
    "unsupported_claim",
)
"""The six failure types the testbed injects (the paper's taxonomy), in the paper's order."""

FAILURE_TYPES: tuple[str, ...] = TESTBED_FAILURE_TYPES
"""The testbed's six failure types: another name of :data:`TESTBED_FAILURE_TYPES`, kept for code written
against version 1 of the format, where they were the only names a label could give."""

OUTCOME_ONLY = "outcome only"
"""How tables name the kind of a fault labelled by its outcome only (no type, no step)."""


def type_order(types: Iterable[str | None]) -> tuple[str, ...]:
    """Failure-type names in the order every table lists them: the testbed's in the paper's order, then any
    others alphabetically (``None``, a fault labelled by outcome only, is no type and is left out)."""
    seen = {t for t in types if t is not None}
    return (*(t for t in TESTBED_FAILURE_TYPES if t in seen), *sorted(seen - set(TESTBED_FAILURE_TYPES)))


def folder_types(trajectories: Iterable[Trajectory]) -> tuple[str, ...]:
    """The failure types a folder is read against, in :func:`type_order`: the testbed's six when every type its
    labels name is one of them (a type it lacks is then a gap worth saying), else the types they name.

    A folder with types of its own is grouped by them alone: the testbed's vocabulary is not its schema.
    """
    present = type_order(t.label.failure_type for t in trajectories if t.label is not None and t.label.faulty)
    if present and set(present) <= set(TESTBED_FAILURE_TYPES):
        return TESTBED_FAILURE_TYPES
    return present


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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, defer_build=True)


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
    """The fault's type, a name of the folder's own (the testbed's six, or any name of letters, digits, ``_``
    and ``-``); null for a clean trajectory, and for a fault labelled by its outcome only."""
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


class _Indexed(Protocol):
    @property
    def index(self) -> int: ...


class Stepped(Protocol):
    """What the step checks read of a trajectory: its id and its steps' indices (a :class:`Trajectory`, or a
    record of one without the steps' text)."""

    @property
    def trajectory_id(self) -> str: ...

    @property
    def steps(self) -> Sequence[_Indexed]: ...


def valid_steps(traj: Stepped) -> set[int]:
    """The values a failure step of ``traj`` may take: its step indices.

    A trajectory with no steps fails at position 0, where its first step is missing (the rule
    checker reports an empty episode there).
    """
    return {s.index for s in traj.steps} or {0}


def step_range(traj: Stepped) -> str:
    """The step indices of ``traj`` in words, for error messages."""
    if not traj.steps:
        return "it has no steps; only 0 names the missing first step"
    idx = [s.index for s in traj.steps]
    return f"steps {min(idx)}..{max(idx)}" if idx == list(range(min(idx), max(idx) + 1)) else f"steps {idx}"


def check_verdict_step(verdict: Verdict, traj: Stepped) -> None:
    """Raise :class:`ValueError` when ``verdict`` names a step its trajectory does not have."""
    step = verdict.failure_step
    if step is not None and step not in valid_steps(traj):
        raise ValueError(
            f"failure_step: {step} is not a step of trajectory {traj.trajectory_id!r} ({step_range(traj)})"
        )


def design_cell(label: Label | None) -> str:
    """The design cell of a label: ``clean`` or ``TYPE/silent`` / ``TYPE/loud`` (``outcome only/loud`` for a fault
    labelled by its outcome only)."""
    if label is None:
        raise ValueError("an unlabelled trajectory has no design cell")
    if not label.faulty:
        return "clean"
    return f"{label.failure_type or OUTCOME_ONLY}/{'silent' if label.outcome_correct else 'loud'}"


def stratum(label: Label) -> str:
    """``clean``, ``silent`` or ``loud``."""
    if not label.faulty:
        return "clean"
    return "silent" if label.outcome_correct else "loud"


class Episode(BaseModel):
    """One organic episode: the trajectory the model produced, its rule-checker label, its cost."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

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
