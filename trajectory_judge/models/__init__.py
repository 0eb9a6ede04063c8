"""The data model: trajectories, labels, verdicts, organic episodes and judge ids, with JSONL I/O.

Field names and types match the published release exactly, so its files load unchanged. One module
per role: :mod:`.judge_ids` (the judge-id grammar and :class:`JudgeSpec`), :mod:`.records` (the
records and what a label says), :mod:`.fingerprint` (what a judge is beyond its id), :mod:`.jsonl`
(reading and writing JSON lines) and :mod:`.schema`
(the formats' version and JSON Schemas). Every public name is importable from here.
"""

from __future__ import annotations

from trajectory_judge.models.fingerprint import Fingerprint, OnRecord, recorded_fingerprints
from trajectory_judge.models.jsonl import (
    DataError,
    M,
    dumps,
    load_trajectories,
    load_verdicts,
    parse_jsonl,
    read_text,
    write_jsonl,
)
from trajectory_judge.models.judge_ids import (
    ENSEMBLE_FAMILY,
    ENSEMBLE_VIEW,
    JUDGE_ID_GRAMMAR,
    LLM_VIEWS,
    PYTHON_FAMILY,
    RULES_ID,
    JudgeKind,
    JudgeSpec,
    check_judge_id,
    check_name,
    check_prompt_name,
    judge_kind,
)
from trajectory_judge.models.records import (
    DESIGN_CELLS,
    FAILURE_TYPES,
    Count,
    Episode,
    FailureType,
    JudgeId,
    Label,
    Observation,
    Probability,
    Seconds,
    Step,
    StepIndex,
    ToolCall,
    Trajectory,
    Verdict,
    check_verdict_step,
    design_cell,
    step_range,
    stratum,
    valid_steps,
)
from trajectory_judge.models.schema import (
    SCHEMA_KINDS,
    SCHEMA_RULES,
    SCHEMA_VERSION,
    json_schema,
)

__all__ = [
    "Count",
    "DESIGN_CELLS",
    "DataError",
    "ENSEMBLE_FAMILY",
    "ENSEMBLE_VIEW",
    "Episode",
    "FAILURE_TYPES",
    "FailureType",
    "Fingerprint",
    "JUDGE_ID_GRAMMAR",
    "JudgeId",
    "JudgeKind",
    "JudgeSpec",
    "LLM_VIEWS",
    "Label",
    "M",
    "Observation",
    "OnRecord",
    "PYTHON_FAMILY",
    "Probability",
    "RULES_ID",
    "SCHEMA_KINDS",
    "SCHEMA_RULES",
    "SCHEMA_VERSION",
    "Seconds",
    "Step",
    "StepIndex",
    "ToolCall",
    "Trajectory",
    "Verdict",
    "check_judge_id",
    "check_name",
    "check_prompt_name",
    "check_verdict_step",
    "design_cell",
    "dumps",
    "json_schema",
    "judge_kind",
    "load_trajectories",
    "load_verdicts",
    "parse_jsonl",
    "read_text",
    "recorded_fingerprints",
    "step_range",
    "stratum",
    "valid_steps",
    "write_jsonl",
]
