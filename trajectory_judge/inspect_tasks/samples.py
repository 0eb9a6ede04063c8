"""Trajectories as inspect_ai samples: the prompt our runner sends, our schema, the label as target.

A sample's ``input`` is :func:`~trajectory_judge.judges.prompts.build_prompt` of its view (one user
message, as ``trajectory-judge run`` sends it, of the label-free copy a judge is handed); its ``id``
is opaque (:func:`sample_id`: it names neither the trajectory nor its fault, and is stable for a
given trajectories file, so epochs and ``inspect eval-retry`` find the same samples); its ``target`` is the label as JSON; its ``metadata`` holds
what the analysis needs (trajectory id, design cell, outcome stratum, the label's fields, the step
indices). Nothing the model is shown gives the label away.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ResponseSchema
from inspect_ai.util import JSONSchema

from trajectory_judge.backends.strict import strict_subset
from trajectory_judge.judges.blind import judge_view, opaque_id
from trajectory_judge.judges.custom import PromptTemplate
from trajectory_judge.judges.prompts import build_prompt
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.models import DataError, Trajectory, design_cell, load_trajectories, stratum
from trajectory_judge.run.store import TRAJECTORIES

RESPONSE_NAME = "verdict"
"""The response schema's name, as ``trajectory-judge run`` sends it."""


def folder_key(trajectories_file: str | Path) -> bytes:
    """The key of a folder's opaque sample ids: the SHA-256 of its trajectories file."""
    return hashlib.sha256(Path(trajectories_file).read_bytes()).digest()


def sample_id(traj: Trajectory, key: bytes) -> str:
    """The opaque id a sample carries (:func:`~trajectory_judge.judges.blind.opaque_id` under ``key``)."""
    return opaque_id(traj.trajectory_id, key)


def response_format(view: str) -> ResponseSchema:
    """Our JSON schema for ``view`` as inspect's structured-output setting: strict, in the subset hosted
    strict modes accept (:func:`~trajectory_judge.backends.strict.strict_subset`), as our runner sends a hosted API."""
    schema = strict_subset(response_schema(view))
    return ResponseSchema(name=RESPONSE_NAME, json_schema=JSONSchema.model_validate(schema), strict=True)


def sample_prompt(view: str, traj: Trajectory, template: PromptTemplate | None = None) -> str:
    """The prompt of ``traj`` in ``view``: the built-in prompt, or ``template`` over the view."""
    return template.render(view, traj) if template is not None else build_prompt(view, traj)


def trajectory_sample(view: str, traj: Trajectory, key: bytes, template: PromptTemplate | None = None) -> Sample:
    """One sample: ``traj`` as a judge is handed it, rendered in ``view``'s prompt (or ``template`` over the
    view); its label as the target."""
    if traj.label is None:
        raise DataError(f"trajectory {traj.trajectory_id!r} has no label; a task scores against labels")
    lab = traj.label
    meta: dict[str, Any] = {
        "trajectory_id": traj.trajectory_id,
        "design_cell": design_cell(lab),
        "stratum": stratum(lab),
        "faulty": lab.faulty,
        "failure_type": lab.failure_type,
        "failure_step": lab.failure_step,
        "outcome_correct": lab.outcome_correct,
        "steps": [s.index for s in traj.steps],
        "view": view,
        "prompt": template.name if template is not None else None,
    }
    return Sample(
        id=sample_id(traj, key),
        input=sample_prompt(view, judge_view(traj, key), template),
        target=lab.model_dump_json(),
        metadata=meta,
    )


def load_dataset(
    view: str, data: str | Path, limit: int | None = None, template: PromptTemplate | None = None
) -> MemoryDataset:
    """The samples of ``data/trajectories.jsonl`` in ``view`` (under ``template`` when given); ``limit`` keeps
    the stratified prefix of N."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of trajectories, got {limit}")
    trajs: Sequence[Trajectory] = load_trajectories(Path(data) / TRAJECTORIES)
    trajs = trajs[:limit] if limit is not None else trajs
    key = folder_key(Path(data) / TRAJECTORIES)
    return MemoryDataset(
        [trajectory_sample(view, t, key, template) for t in trajs],
        name=f"trajectory-judge-{view}",
        location=str(Path(data) / TRAJECTORIES),
    )
