"""Coercion (Appendix D): clamp, keep only valid flagged types and in-range steps, never drop."""

from __future__ import annotations

import json

import pytest
from llm_fakes import response

from trajectory_judge.judges.coerce import coerce

KW = dict(trajectory_id="t1", judge_id="step:m", step_indices=range(6))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        '{"reasoning": "x", "faulty": "yes", "confidence": 0.9}',
        '{"reasoning": "x", "faulty": true}',
        '{"faulty": true, "confidence": NaN}',
        '{"reasoning": "cut off mid-stri',
    ],
)
def test_unparseable_response_votes_clean_not_dropped(text):
    v = coerce(text, **KW)
    assert v.faulty is False and v.confidence == 0.5
    assert v.failure_type is None and v.failure_step is None
    assert v.error is not None and v.error.startswith("unparseable response")


@pytest.mark.parametrize("raw, expected", [(0.2, 0.5), (0.5, 0.5), (0.73, 0.73), (1.0, 1.0), (7, 1.0), (-1, 0.5)])
def test_confidence_is_clamped_to_half_one(raw, expected):
    assert coerce(response(confidence=raw), **KW).confidence == expected


def test_failure_type_kept_only_when_flagged_and_valid():
    assert coerce(response(faulty=True, ftype="wrong_tool"), **KW).failure_type == "wrong_tool"
    assert coerce(response(faulty=True, ftype="none"), **KW).failure_type is None  # flagged but untyped
    assert coerce(response(faulty=True, ftype="made_up"), **KW).failure_type is None
    assert coerce(response(faulty=False, ftype="wrong_tool"), **KW).failure_type is None


@pytest.mark.parametrize("step, expected", [(0, 0), (5, 5), (6, None), (-1, None), (99, None)])
def test_out_of_range_step_is_discarded(step, expected):
    assert coerce(response(step=step), **KW).failure_step == expected


def test_step_is_not_kept_on_a_clean_verdict():
    assert coerce(response(faulty=False, step=3, ftype="none"), **KW).failure_step is None


def test_valid_response_keeps_reasoning_and_cost():
    v = coerce(response(), latency_s=1.5, prompt_tokens=10, completion_tokens=3, **KW)
    assert (v.rationale, v.latency_s, v.prompt_tokens, v.completion_tokens, v.error) == ("checked", 1.5, 10, 3, None)


def test_outcome_response_without_step_has_no_step():
    v = coerce(
        json.dumps({"reasoning": "r", "faulty": True, "failure_type": "premature_stop", "confidence": 0.9}), **KW
    )
    assert v.failure_step is None and v.failure_type == "premature_stop"
