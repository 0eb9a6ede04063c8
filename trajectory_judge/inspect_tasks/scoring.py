"""Scoring a judge's answer: parse it as our runner does, then compare it with the label.

The scorer coerces the model's text with :func:`~trajectory_judge.judges.coerce.coerce` (an
unparseable answer votes clean at confidence 0.5, exactly as in ``trajectory-judge run``) and scores
three exact matches against the label: ``detection`` (faulty or not), ``step`` (the failure step,
none on a clean run) and ``type`` (the failure type). The verdict and the label travel in the
score's metadata, from which the metrics here (F1, recall, false-alarm rate, exact step, typing
macro-F1: the definitions of :mod:`trajectory_judge.analysis.core.metrics`) and ``import-inspect`` read.
Intervals and paired comparisons are the analysis's: ``trajectory-judge report`` on the imported folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState

from trajectory_judge.analysis.core.metrics import confusion, detection, localisation, macro_f1
from trajectory_judge.judges.coerce import coerce
from trajectory_judge.judges.selfcons import aggregate
from trajectory_judge.models import JudgeSpec, Label, Verdict

TRUNCATED = "output truncated at max_tokens"
"""The note an answer cut at the output budget carries (as in our runner)."""


def judge_model_name(model: str) -> str:
    """The model name a judge id carries for inspect's model string: the name sent to the server, as
    ``trajectory-judge run --model`` takes it (``openai/gpt-4o-mini`` -> ``gpt-4o-mini``,
    ``openai-api/SERVICE/m`` -> ``m``, ``together/meta-llama/L-3`` -> ``meta-llama/L-3``)."""
    provider, _, rest = model.partition("/")
    if provider == "openai-api":  # openai-api/SERVICE/MODEL: the service names the environment variables
        rest = rest.partition("/")[2]
    return rest or model


def label_of(metadata: dict[str, Any]) -> Label:
    """The label a sample's metadata describes."""
    return Label(
        faulty=metadata["faulty"],
        failure_type=metadata["failure_type"],
        failure_step=metadata["failure_step"],
        outcome_correct=metadata["outcome_correct"],
    )


def said(v: Verdict) -> str:
    """A verdict in words: ``clean`` or ``faulty: TYPE at step K``."""
    if not v.faulty:
        return "clean"
    return (
        "faulty"
        + (f": {v.failure_type}" if v.failure_type else "")
        + (f" at step {v.failure_step}" if v.failure_step is not None else "")
    )


def verdict_score(v: Verdict, label: Label) -> Score:
    """The score of one verdict against its label (value: detection, step, type as 0 or 1)."""
    value = {
        "detection": int(v.faulty == label.faulty),
        "step": int(v.failure_step == label.failure_step),
        "type": int(v.failure_type == label.failure_type),
    }
    return Score(
        value=value,
        answer=said(v),
        explanation=(v.error or v.rationale or "")[:500],
        metadata={"verdict": v.model_dump(mode="json"), "label": label.model_dump(mode="json")},
    )


def _pairs(scores: Sequence[SampleScore]) -> list[tuple[Label, Verdict]]:
    return [
        (Label.model_validate(s.score.metadata["label"]), Verdict.model_validate(s.score.metadata["verdict"]))
        for s in scores
        if s.score.metadata
    ]


def _over_pairs(compute: Callable[[list[tuple[Label, Verdict]]], float | None]) -> Metric:
    def m(scores: list[SampleScore]) -> float:
        got = compute(_pairs(scores))
        return float("nan") if got is None else float(got)

    return m


@metric
def f1() -> Metric:
    """F1 of detection (faulty is the positive class)."""
    return _over_pairs(lambda p: detection(p)["f1"])


@metric
def recall() -> Metric:
    """Share of faulty trajectories flagged."""
    return _over_pairs(lambda p: detection(p)["recall"])


@metric
def false_alarm_rate() -> Metric:
    """Share of clean trajectories flagged."""
    return _over_pairs(lambda p: detection(p)["false_alarm_rate"])


@metric
def step_exact() -> Metric:
    """Exact failure step among detected faults where both sides name a step."""
    return _over_pairs(lambda p: localisation(p)["step_exact"])


@metric
def type_macro_f1() -> Metric:
    """Macro-F1 of the failure type over the faulty trajectories."""
    return _over_pairs(lambda p: macro_f1(confusion(p)))


@scorer(metrics=[f1(), recall(), false_alarm_rate(), step_exact(), type_macro_f1()])
def verdict_scorer() -> Scorer:
    """Parse the answer into a verdict (our coercion rules) and score it against the label."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        note = TRUNCATED if state.output.stop_reason == "max_tokens" else None
        v = coerce(
            state.output.completion,
            trajectory_id=meta["trajectory_id"],
            judge_id=JudgeSpec.llm(meta["view"], judge_model_name(str(state.model)), meta.get("prompt")).judge_id,
            step_indices=meta["steps"],
            note=note,
        )
        return verdict_score(v, label_of(meta))

    return score


@score_reducer(name="majority")
def majority() -> ScoreReducer:
    """The self-consistency vote over epochs: the strict-majority aggregate of the members' verdicts."""

    def reduce(scores: list[Score]) -> Score:
        members = [Verdict.model_validate(s.metadata["verdict"]) for s in scores if s.metadata]
        agg = aggregate(members, trajectory_id=members[0].trajectory_id, judge_id=members[0].judge_id)
        return verdict_score(agg, Label.model_validate(scores[0].metadata["label"]))  # type: ignore[index]

    return reduce
