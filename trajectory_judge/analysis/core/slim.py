"""What the report reads of trajectories and verdicts, held in little memory.

``report`` needs of a trajectory its ids, its label, its step indices (to check a verdict's step),
its final answer (the invented sentence of an ``unsupported_claim`` fault) and whether each view of it
equals its clean parent's; not the text of its steps. The report's loader
(:func:`~trajectory_judge.analysis.core.loading.load_slim_data`) reads the models a line at a time
(:func:`~trajectory_judge.models.stream_trajectories`) and keeps of each a :class:`TrajectoryRecord` (with a
digest of every view's rendering) or a :class:`VerdictRecord` (without the rationale), the full object dropped
before the next line is read. :meth:`TrajectoryRecord.of` and :meth:`VerdictRecord.of` turn full objects into records.
Equal digests stand for equal renderings (BLAKE2b, 128 bits).
"""

from __future__ import annotations

import hashlib
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from trajectory_judge.judges.views import VIEWS, render_view
from trajectory_judge.models import Label, Trajectory, Verdict


@dataclass(frozen=True, slots=True)
class StepRef:
    """A step as the report sees it: its index only."""

    index: int


@dataclass
class Shared:
    """One object per distinct step list, label and stated confidence among the records of one load (a data set
    holds few of each), so that a record holds references rather than copies. Made by each load and dropped with it."""

    steps: dict[tuple[int, ...], tuple[StepRef, ...]] = field(default_factory=dict)
    labels: dict[tuple[object, ...], Label] = field(default_factory=dict)
    confidences: dict[tuple[float, float], float] = field(default_factory=dict)

    def step_refs(self, t: Trajectory) -> tuple[StepRef, ...]:
        """The steps of ``t`` as references to their indices."""
        key = tuple(s.index for s in t.steps)
        found = self.steps.get(key)
        if found is None:
            found = self.steps[key] = tuple(StepRef(i) for i in key)
        return found

    def label(self, label: Label | None) -> Label | None:
        """The one object of this label's value."""
        if label is None:
            return None
        return self.labels.setdefault(
            (label.faulty, label.failure_step, label.failure_type, label.outcome_correct), label
        )

    def confidence(self, x: float) -> float:
        """The one object of this stated confidence (at most 4,096 kept); ``-0.0`` stays apart from ``0.0``."""
        if len(self.confidences) >= 4096:
            return x
        return self.confidences.setdefault((x, math.copysign(1.0, x)), x)


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
    def of(cls, t: Trajectory, shared: Shared | None = None) -> TrajectoryRecord:
        """The record of a full trajectory (its steps and label shared through ``shared``)."""
        shared = Shared() if shared is None else shared
        return cls(
            sys.intern(t.trajectory_id),
            sys.intern(t.instance_id),
            shared.label(t.label),
            shared.step_refs(t),
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
    def of(cls, v: Verdict, shared: Shared | None = None) -> VerdictRecord:
        """The record of a full verdict (its confidence shared through ``shared``)."""
        return cls(
            sys.intern(v.trajectory_id),
            sys.intern(v.judge_id),
            v.faulty,
            v.failure_step,
            None if v.failure_type is None else sys.intern(v.failure_type),
            v.confidence if shared is None else shared.confidence(v.confidence),
            v.latency_s,
            v.prompt_tokens,
            v.completion_tokens,
            v.error,
        )

    @property
    def unparseable(self) -> bool:
        """As :attr:`~trajectory_judge.models.Verdict.unparseable`."""
        return self.error is not None and "unparseable" in self.error


def trajectory_ids(trajectories: Sequence[Trajectory | TrajectoryRecord]) -> list[str]:
    """The ids, in order."""
    return [t.trajectory_id for t in trajectories]
