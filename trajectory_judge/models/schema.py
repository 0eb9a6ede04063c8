"""The formats' version and their JSON Schemas, generated from the records' models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from trajectory_judge.models.judge_ids import JUDGE_ID_GRAMMAR
from trajectory_judge.models.records import TESTBED_FAILURE_TYPES, Label, Trajectory, Verdict

SCHEMA_VERSION = 2
"""The version of the trajectory, label and verdict formats (:func:`json_schema` states it).

Version 1 is the format of the published release: a failure type was one of the testbed's six.
Version 2 lets a folder name its own types (any name of letters, digits, ``_`` and ``-``); every
version-1 file is a version-2 file and loads unchanged, with the same meaning. The version changes
only when a file that loads today would fail to load or would mean something else, or when the
format admits files an older reader would refuse; an optional field added with a default that keeps
old files' meaning is not such a change.
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
        "failure_type is a name of the folder's own (letters, digits, _ and -); the testbed's six are "
        + ", ".join(TESTBED_FAILURE_TYPES),
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


def decoding_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model's answer is decoded under: ``model``'s, without pydantic's cosmetic titles, with
    every property required, in order (the order of generation under constrained decoding)."""
    schema = _clean(model.model_json_schema())
    schema["required"] = list(schema["properties"])
    return schema


def _clean(node: Any) -> Any:
    # drop pydantic's cosmetic "title"s; the grammar does not need them
    if isinstance(node, dict):
        return {k: _clean(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node
