"""The judge protocol: anything with a ``judge_id`` and ``judge(traj) -> Verdict`` can be scored.

The runner, the metrics and the report only ever see this protocol, so a user's own judge (or a
library's) is scored exactly like the paper's: write a class with these two members and pass an
instance to :func:`trajectory_judge.run.runner.run_judges`. The runner hands ``judge`` the
trajectory as the judge may see it (:func:`~trajectory_judge.judges.blind.judge_view`: no label,
an opaque id); the verdict names that id, and is stored under the real one.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from trajectory_judge.models import Trajectory, Verdict


@runtime_checkable
class Judge(Protocol):
    """A judge: an id naming it in every verdict, and one verdict per trajectory."""

    judge_id: str

    def judge(self, traj: Trajectory) -> Verdict:
        """This judge's verdict on ``traj`` (``judge_id == self.judge_id``, ``trajectory_id == traj.trajectory_id``)."""
        ...
