"""What a report's bootstrap resamples: the design's cells, the trajectories, or whole instances.

Three choices, one for each way a folder of labelled trajectories can have come about:

* ``design``: a planted design, as the testbed's (:func:`~trajectory_judge.testbed.dataset.build_dataset`):
  how many trajectories each design cell (failure type by outcome, and the clean runs) holds was fixed by
  whoever made the folder, so trajectories are resampled within their cell and the cells keep their sizes.
  An interval then measures the judge's variation over trajectories like these, at these proportions.
* ``trajectories``: a sample, as a researcher's runs labelled by hand: the cells' sizes are themselves
  chance, so trajectories are resampled from the whole folder.
* ``instances``: a sample of base runs each of which holds several trajectories (a fault and its clean
  parent, several faults planted in one run): whole instances (``instance_id``) are resampled, so that
  trajectories that share a run are never counted as independent.

A folder says it is a planted design with a file ``design.json`` (``build-dataset`` writes one); the
command line then resamples by design, and any other folder by trajectory. ``report --resample`` chooses
otherwise. Every choice is paired: all judges are read on the same resampled trajectories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from trajectory_judge.models import DESIGN_FILE, declares_design

Resampling = Literal["design", "trajectories", "instances"]
"""What the bootstrap resamples (the module's text)."""

RESAMPLINGS: tuple[Resampling, ...] = ("design", "trajectories", "instances")
"""Every choice, the library's default first."""

METHOD: dict[str, str] = {
    "design": "stratified paired bootstrap within the design's cells",
    "trajectories": "paired bootstrap over trajectories",
    "instances": "paired cluster bootstrap over instances (a base run and every trajectory made from it)",
}
"""How an interval of each choice was made, as a report's heading says it."""


def folder_resampling(folder: str | Path) -> Resampling:
    """``design`` when ``folder`` declares itself a planted design (its :data:`~trajectory_judge.models.DESIGN_FILE`;
    one that is not a declaration is refused with :class:`~trajectory_judge.models.DataError`), else ``trajectories``."""
    return "design" if declares_design(folder) else "trajectories"


__all__ = ["DESIGN_FILE", "METHOD", "RESAMPLINGS", "Resampling", "folder_resampling"]
