"""A folder's declaration that it is a planted design (``design.json``).

A planted design fixes how many trajectories each design cell holds (the testbed's ``build-dataset``
writes one beside its trajectories); a folder without one is read as a sample of runs. What follows
from the difference for intervals is :mod:`trajectory_judge.analysis.core.resampling`'s.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajectory_judge.models.jsonl import DataError

DESIGN_FILE = "design.json"
"""The file by which a folder declares itself a planted design."""


def design_declaration() -> str:
    """The text of the :data:`DESIGN_FILE` that ``build-dataset`` writes (the same whatever its size and seed,
    so that building a folder again never rewrites it)."""
    return json.dumps({"design": "planted", "made_by": "trajectory-judge build-dataset"}, indent=1) + "\n"


def declares_design(folder: str | Path) -> bool:
    """Whether ``folder`` holds a :data:`DESIGN_FILE` declaring a planted design.

    One that is not a JSON object with ``"design": "planted"`` is refused with :class:`DataError` naming it.
    """
    path = Path(folder) / DESIGN_FILE
    if not path.is_file():
        return False
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("design") != "planted":
        raise DataError(f'{path}: design: expected {{"design": "planted", ...}}, got {json.dumps(doc)[:80]}')
    return True
