"""What a report's bootstrap resamples: the design's cells, the trajectories, or whole instances.

Four choices, for the ways a folder of labelled trajectories can have come about:

* ``design``: a planted design, as the testbed's (:func:`~trajectory_judge.testbed.dataset.build_dataset`):
  how many trajectories each design cell (failure type by outcome, and the clean runs) holds was fixed by
  whoever made the folder, so trajectories are resampled within their cell and the cells keep their sizes.
  An interval then measures the judge's variation over trajectories like these, at these proportions.
* ``trajectories``: a sample, as a researcher's runs labelled by hand: the cells' sizes are themselves
  chance, so trajectories are resampled from the whole folder.
* ``instances``: a sample of base runs each of which holds several trajectories (a fault and its clean
  parent, several faults planted in one run): whole instances (``instance_id``) are resampled, so that
  trajectories that share a run are never counted as independent.
* ``design-instances``: a planted design whose trajectories share base runs, as the testbed's do (a clean run
  and the faults planted in it): whole instances are drawn within groups of instances of the same make-up
  (how many clean runs and how many faults each holds), so the folder keeps its numbers of clean and faulty
  trajectories while runs that share a base are drawn together. ``report --cluster instance`` asks for it
  on a design (and for ``instances`` on a sample).

A folder says it is a planted design with a file ``design.json`` (``build-dataset`` writes one); the
command line then resamples by design, and any other folder by trajectory. ``report --resample`` chooses
otherwise. Every choice is paired: all judges are read on the same resampled trajectories.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from trajectory_judge.models import DESIGN_FILE, declares_design

Resampling = Literal["design", "trajectories", "instances", "design-instances"]
"""What the bootstrap resamples (the module's text)."""

RESAMPLINGS: tuple[Resampling, ...] = ("design", "trajectories", "instances", "design-instances")
"""Every choice, the library's default first."""

METHOD: dict[str, str] = {
    "design": "stratified paired bootstrap within the design's cells",
    "trajectories": "paired bootstrap over trajectories",
    "instances": "paired cluster bootstrap over instances (a base run and every trajectory made from it)",
    "design-instances": (
        "stratified paired cluster bootstrap over instances (whole base runs, drawn within groups of the same "
        "numbers of clean and faulty trajectories)"
    ),
}
"""How an interval of each choice was made, as a report's heading says it."""


def folder_resampling(folder: str | Path) -> Resampling:
    """``design`` when ``folder`` declares itself a planted design (its :data:`~trajectory_judge.models.DESIGN_FILE`;
    one that is not a declaration is refused with :class:`~trajectory_judge.models.DataError`), else ``trajectories``."""
    return "design" if declares_design(folder) else "trajectories"


def clustered(resampling: Resampling) -> Resampling:
    """``resampling`` with whole instances drawn: ``design-instances`` for a design, ``instances`` otherwise."""
    return "design-instances" if resampling in ("design", "design-instances") else "instances"


def instance_makeup(clean: Sequence[bool], instances: Sequence[str]) -> list[str]:
    """Each row's stratum under ``design-instances``: its instance's make-up, ``"C clean, F faulty"``
    (``clean[i]`` says whether row ``i`` is a clean run), so that instances are drawn among their like."""
    counts: dict[str, list[int]] = {}
    for is_clean, inst in zip(clean, instances, strict=True):
        counts.setdefault(inst, [0, 0])[0 if is_clean else 1] += 1
    return [f"{counts[i][0]} clean, {counts[i][1]} faulty" for i in instances]


__all__ = [
    "DESIGN_FILE",
    "METHOD",
    "RESAMPLINGS",
    "Resampling",
    "clustered",
    "folder_resampling",
    "instance_makeup",
]
