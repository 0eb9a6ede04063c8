"""The data model: trajectories, labels, verdicts, organic episodes and judge ids, with JSONL I/O.

Field names and types match the published release exactly, so its files load unchanged. One module
per role: :mod:`.judge_ids` (the judge-id grammar and :class:`JudgeSpec`), :mod:`.records` (the
records and what a label says), :mod:`.fingerprint` (what a judge is beyond its id), :mod:`.jsonl`
(reading and writing JSON lines), :mod:`.design` (a folder's declaration that it is a planted design) and :mod:`.schema`
(the formats' version and JSON Schemas). The names the other layers and the book import are re-exported
here; every public name is importable from its own module.
"""

from __future__ import annotations

from trajectory_judge.models.design import DESIGN_FILE, declares_design, design_declaration
from trajectory_judge.models.fault_types import fault_types_lines, load_fault_types
from trajectory_judge.models.fingerprint import Fingerprint, OnRecord, recorded_fingerprints
from trajectory_judge.models.jsonl import (
    DataError,
    dumps,
    jsonl_lines,
    load_trajectories,
    load_verdicts,
    parse_jsonl,
    parse_line,
    read_text,
    stream_trajectories,
    stream_verdicts,
    write_jsonl,
)
from trajectory_judge.models.judge_ids import (
    ENSEMBLE_FAMILY,
    ENSEMBLE_VIEW,
    LLM_VIEWS,
    PYTHON_FAMILY,
    RULES_ID,
    JudgeSpec,
    check_judge_id,
    check_name,
    check_prompt_name,
)
from trajectory_judge.models.records import (
    DESIGN_CELLS,
    FAILURE_TYPES,
    OUTCOME_ONLY,
    TESTBED_FAILURE_TYPES,
    Episode,
    Label,
    Observation,
    Step,
    ToolCall,
    Trajectory,
    Verdict,
    check_verdict_step,
    design_cell,
    folder_types,
    stratum,
    type_order,
)
from trajectory_judge.models.schema import SCHEMA_VERSION, json_schema

__all__ = [
    "DESIGN_FILE",
    "declares_design",
    "design_declaration",
    "DESIGN_CELLS",
    "DataError",
    "ENSEMBLE_FAMILY",
    "ENSEMBLE_VIEW",
    "Episode",
    "FAILURE_TYPES",
    "OUTCOME_ONLY",
    "Fingerprint",
    "JudgeSpec",
    "LLM_VIEWS",
    "Label",
    "Observation",
    "OnRecord",
    "PYTHON_FAMILY",
    "RULES_ID",
    "SCHEMA_VERSION",
    "TESTBED_FAILURE_TYPES",
    "Step",
    "ToolCall",
    "Trajectory",
    "Verdict",
    "check_judge_id",
    "check_name",
    "check_prompt_name",
    "check_verdict_step",
    "design_cell",
    "dumps",
    "jsonl_lines",
    "fault_types_lines",
    "folder_types",
    "load_fault_types",
    "json_schema",
    "load_trajectories",
    "load_verdicts",
    "parse_jsonl",
    "parse_line",
    "read_text",
    "stream_trajectories",
    "stream_verdicts",
    "recorded_fingerprints",
    "stratum",
    "type_order",
    "write_jsonl",
]
