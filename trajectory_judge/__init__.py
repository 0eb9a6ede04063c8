"""trajectory-judge: what outcome-only LLM judges miss on agent trajectories."""

from trajectory_judge.analysis.bootstrap import BootstrapResult, bootstrap
from trajectory_judge.analysis.loading import load_data
from trajectory_judge.analysis.report import Report, build_report
from trajectory_judge.judges.base import Judge
from trajectory_judge.run.runner import run_judges
from trajectory_judge.models import (
    DESIGN_CELLS,
    FAILURE_TYPES,
    DataError,
    Episode,
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
from trajectory_judge.testbed.dataset import build_dataset

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
    "Episode",
    "Judge",
    "run_judges",
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
