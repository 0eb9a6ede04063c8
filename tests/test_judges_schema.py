"""Response schemas: reasoning first and bounded; outcome has no step; the type enum is 6 + none."""

from __future__ import annotations

import pytest

from trajectory_judge.judges.schema import REASONING_MAX_CHARS, response_schema
from trajectory_judge.models import FAILURE_TYPES


@pytest.mark.parametrize("view", ["outcome", "step", "reply"])
def test_reasoning_is_first_property(view):
    schema = response_schema(view)
    assert list(schema["properties"])[0] == "reasoning"
    assert schema["properties"]["reasoning"]["maxLength"] == REASONING_MAX_CHARS


def test_outcome_schema_has_no_failure_step():
    assert "failure_step" not in response_schema("outcome")["properties"]
    assert list(response_schema("outcome")["properties"]) == ["reasoning", "faulty", "failure_type", "confidence"]


def test_step_schema_properties_in_generation_order_all_required():
    s = response_schema("step")
    assert list(s["properties"]) == ["reasoning", "faulty", "failure_step", "failure_type", "confidence"]
    assert s["required"] == list(s["properties"])
    assert s["additionalProperties"] is False
    assert s["properties"]["failure_step"]["type"] == "integer"


@pytest.mark.parametrize("view", ["outcome", "step", "reply"])
def test_failure_type_enum_is_six_types_plus_none(view):
    assert response_schema(view)["properties"]["failure_type"]["enum"] == [*FAILURE_TYPES, "none"]


def test_schema_is_self_contained():
    # no $defs/$ref: every grammar compiler can take it
    assert "$ref" not in str(response_schema("step")) and "$defs" not in response_schema("step")
