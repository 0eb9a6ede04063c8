"""trajectory-judge: what outcome-only LLM judges miss on agent trajectories.

The public names below are imported on first use (PEP 562), so that ``trajectory-judge --help``
does not pay for numpy, scipy and pandas.
"""

from __future__ import annotations

from trajectory_judge.lazy import lazy_exports

__version__ = "0.2.0"

_EXPORTS: dict[str, str] = {
    "BootstrapResult": "trajectory_judge.analysis.core.bootstrap",
    "bootstrap": "trajectory_judge.analysis.core.bootstrap",
    "load_data": "trajectory_judge.analysis.core.loading",
    "Report": "trajectory_judge.analysis.core.report",
    "build_report": "trajectory_judge.analysis.core.report",
    "Judge": "trajectory_judge.judges.base",
    "run_judges": "trajectory_judge.run.runner",
    **{
        name: "trajectory_judge.models"
        for name in (
            "DESIGN_CELLS",
            "FAILURE_TYPES",
            "TESTBED_FAILURE_TYPES",
            "DataError",
            "Episode",
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
        )
    },
    "build_dataset": "trajectory_judge.testbed.dataset",
}

__all__ = [*_EXPORTS, "__version__"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
