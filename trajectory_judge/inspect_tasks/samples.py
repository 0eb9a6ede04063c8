"""Trajectories as inspect_ai samples: the prompt our runner sends, our schema, the label as target.

A sample's ``input`` is :func:`~trajectory_judge.judges.prompts.build_prompt` of its view (one user
message, as ``trajectory-judge run`` sends it); its ``id`` is opaque (:func:`sample_id`: it names
neither the trajectory nor its fault); its ``target`` is the label as JSON; its ``metadata`` holds
what the analysis needs (trajectory id, design cell, outcome stratum, the label's fields, the step
indices). Nothing the model is shown gives the label away.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ResponseSchema
from inspect_ai.util import JSONSchema

from trajectory_judge.judges.prompts import build_prompt
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.models import DataError, Trajectory, design_cell, load_trajectories, stratum
from trajectory_judge.run.store import TRAJECTORIES

RESPONSE_NAME = "verdict"
"""The response schema's name, as ``trajectory-judge run`` sends it."""


def sample_id(traj: Trajectory) -> str:
    """The opaque id a sample carries (the one place that maps trajectories to sample ids)."""
    return "T" + hashlib.sha256(traj.trajectory_id.encode("utf-8")).hexdigest()[:12]


def response_format(view: str) -> ResponseSchema:
    """Our JSON schema for ``view`` as inspect's structured-output setting (strict, as our runner asks)."""
    return ResponseSchema(name=RESPONSE_NAME, json_schema=JSONSchema.model_validate(response_schema(view)), strict=True)


def trajectory_sample(view: str, traj: Trajectory) -> Sample:
    """One sample: ``traj`` rendered in ``view``'s prompt, its label as the target."""
    if traj.label is None:
        raise DataError(f"trajectory {traj.trajectory_id!r} has no label; a task scores against labels")
    lab = traj.label
    meta: dict[str, Any] = {
        "trajectory_id": traj.trajectory_id, "design_cell": design_cell(lab), "stratum": stratum(lab),
        "faulty": lab.faulty, "failure_type": lab.failure_type, "failure_step": lab.failure_step,
        "outcome_correct": lab.outcome_correct, "steps": [s.index for s in traj.steps], "view": view,
    }
    return Sample(id=sample_id(traj), input=build_prompt(view, traj), target=lab.model_dump_json(), metadata=meta)


def load_dataset(view: str, data: str | Path, limit: int | None = None) -> MemoryDataset:
    """The samples of ``data/trajectories.jsonl`` in ``view``; ``limit`` keeps the stratified prefix of N."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of trajectories, got {limit}")
    trajs: Sequence[Trajectory] = load_trajectories(Path(data) / TRAJECTORIES)
    trajs = trajs[:limit] if limit is not None else trajs
    return MemoryDataset([trajectory_sample(view, t) for t in trajs], name=f"trajectory-judge-{view}",
                         location=str(Path(data) / TRAJECTORIES))
