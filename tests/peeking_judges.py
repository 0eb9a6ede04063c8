"""Python judges that try to see more than their view, for the isolation tests (importable by name, as an
isolated judge must be)."""

from __future__ import annotations

import gc
import inspect
import time
from typing import Any

from trajectory_judge.models import Label, Trajectory, Verdict


def _trajectories_in(value: Any) -> list[Trajectory]:
    if isinstance(value, Trajectory):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value[:10_000] if isinstance(v, Trajectory)]
    if isinstance(value, dict):
        return [v for v in list(value.values())[:10_000] if isinstance(v, Trajectory)]
    return []


def peek_label(view: Trajectory) -> Label | None:
    """The label of the labelled trajectory whose steps and reply are the view's, found by walking the
    caller's frames and then every object the garbage collector tracks; None if nothing holds one."""

    def same(t: Trajectory) -> bool:
        return (
            t.label is not None
            and t.goal == view.goal
            and t.final_answer == view.final_answer
            and t.steps == view.steps
        )

    frame = inspect.currentframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            for t in _trajectories_in(value):
                if same(t):
                    return t.label
        frame = frame.f_back
    for obj in gc.get_objects():
        for t in _trajectories_in(obj):
            if same(t):
                return t.label
    return None


class FrameWalker:
    """Flags a trajectory as its label says, when it can find the label; flags everything when it cannot."""

    judge_id = "frame-walker:v1"

    def judge(self, traj: Trajectory) -> Verdict:
        label = peek_label(traj)
        faulty = True if label is None else label.faulty
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=faulty, confidence=0.9)


class Raises:
    """Raises on every trajectory with more than five steps."""

    judge_id = "raises:v1"

    def judge(self, traj: Trajectory) -> Verdict:
        if len(traj.steps) > 5:
            raise ValueError(f"too long: {len(traj.steps)} steps")
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.6)


class Busy:
    """Spends a tenth of a second of CPU on each trajectory."""

    judge_id = "busy:v1"

    def judge(self, traj: Trajectory) -> Verdict:
        end = time.process_time() + 0.1
        while time.process_time() < end:
            pass
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=True, confidence=0.5)


class CountsItsPickles:
    """Flags nothing, and counts (in the process that pickles it) how often it was pickled."""

    judge_id = "counts-pickles:v1"
    pickled = 0

    def __getstate__(self) -> dict:
        type(self).pickled += 1
        return {}

    def judge(self, traj: Trajectory) -> Verdict:
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.5)
