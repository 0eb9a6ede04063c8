"""trajectory-judge: what outcome-only LLM judges miss on agent trajectories."""

from .models import (
    DESIGN_CELLS,
    FAILURE_TYPES,
    DataError,
    Label,
    Observation,
    Step,
    ToolCall,
    Trajectory,
    Verdict,
    design_cell,
    load_trajectories,
    load_verdicts,
    stratum,
    write_jsonl,
)

__version__ = "0.1.0"

__all__ = [
    "DESIGN_CELLS",
    "FAILURE_TYPES",
    "DataError",
    "Label",
    "Observation",
    "Step",
    "ToolCall",
    "Trajectory",
    "Verdict",
    "design_cell",
    "load_trajectories",
    "load_verdicts",
    "stratum",
    "write_jsonl",
    "__version__",
]
