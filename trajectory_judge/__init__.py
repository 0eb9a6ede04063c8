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
from .bootstrap import BootstrapResult, bootstrap
from .dataset import build_dataset
from .report import Report, build_report, load_data

__version__ = "0.1.0"

__all__ = [
    "BootstrapResult",
    "Report",
    "bootstrap",
    "build_dataset",
    "build_report",
    "load_data",
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
