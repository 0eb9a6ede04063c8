"""Five trivial Python judges, for the scale tests and benchmarks: each looks only at what a judge sees.

:func:`judge_all` applies them directly (no runner: fast enough for the fast tier at 4,000
trajectories); the benchmark scores a folder with them through the runner.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from trajectory_judge.models import FAILURE_TYPES, Trajectory, Verdict


def _digest(traj: Trajectory) -> int:
    text = traj.goal + "|" + "|".join(s.call.tool for s in traj.steps) + "|" + traj.final_answer
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


CONFIDENCES: tuple[str, ...] = ("tenths", "thousandths", "distinct")
"""How the judges state confidence: five tenths (0.5 to 0.9, and 0.6 when clean), three decimals, or a
value of its own for every verdict (as a model's token probabilities give)."""


def _confidence(judge_id: str, trajectory_id: str, h: int, flagged: bool, confidences: str) -> float:
    if confidences == "tenths":
        return (5 + h % 5) / 10 if flagged else 0.6
    own = int.from_bytes(hashlib.blake2b(f"{judge_id}|{trajectory_id}".encode(), digest_size=8).digest(), "big")
    if confidences == "thousandths":
        return (500 + own % 500) / 1000
    if confidences == "distinct":
        return 0.5 + (own >> 12) / 2.0**53  # 52 random bits in [0.5, 1): distinct on any folder of this size
    raise ValueError(f"confidences must be one of {CONFIDENCES}, got {confidences!r}")


class _Rule:
    judge_id = "rule:v1"

    def __init__(self, confidences: str = "tenths") -> None:
        _confidence(self.judge_id, "", 0, False, confidences)  # refuses an unknown kind here
        self.confidences = confidences

    def flag(self, traj: Trajectory) -> int | None:
        """The step it blames, or None for clean."""
        raise NotImplementedError

    def judge(self, traj: Trajectory) -> Verdict:
        step = self.flag(traj)
        h = _digest(traj)
        confidence = _confidence(self.judge_id, traj.trajectory_id, h, step is not None, self.confidences)
        if step is None:
            return Verdict(
                trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=confidence
            )
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=True,
            failure_step=step,
            failure_type=FAILURE_TYPES[h % len(FAILURE_TYPES)],
            confidence=confidence,
        )


class ShortRun(_Rule):
    """Flags a run of fewer than six steps, at its last step."""

    judge_id = "short-run:v1"

    def flag(self, traj: Trajectory) -> int | None:
        return (traj.steps[-1].index if traj.steps else 0) if len(traj.steps) < 6 else None


class FirstError(_Rule):
    """Flags the first step whose tool call failed."""

    judge_id = "first-error:v1"

    def flag(self, traj: Trajectory) -> int | None:
        return next((s.index for s in traj.steps if not s.observation.ok), None)


class Repeat(_Rule):
    """Flags a tool called twice in a row."""

    judge_id = "repeat:v1"

    def flag(self, traj: Trajectory) -> int | None:
        pairs = zip(traj.steps, traj.steps[1:])
        return next((b.index for a, b in pairs if a.call.tool == b.call.tool), None)


class ShortReply(_Rule):
    """Flags a reply of fewer than 120 characters, at the last step."""

    judge_id = "short-reply:v1"

    def flag(self, traj: Trajectory) -> int | None:
        return (traj.steps[-1].index if traj.steps else 0) if len(traj.final_answer) < 120 else None


class Coin(_Rule):
    """Flags about a third of the runs by a hash of what it sees, at a step the hash picks."""

    judge_id = "coin:v1"

    def flag(self, traj: Trajectory) -> int | None:
        h = _digest(traj) >> 8
        if h % 3 or not traj.steps:
            return None
        return traj.steps[h % len(traj.steps)].index


def judges(confidences: str = "tenths") -> tuple[_Rule, ...]:
    """The five judges, in the order they are run, stating confidence as ``confidences`` says (:data:`CONFIDENCES`)."""
    return tuple(cls(confidences) for cls in (ShortRun, FirstError, Repeat, ShortReply, Coin))


JUDGES = judges()
"""The five judges, in the order they are run (confidences in tenths)."""


def judge_all(trajectories: Sequence[Trajectory], confidences: str = "tenths") -> list[Verdict]:
    """Every judge's verdict on every trajectory, judge by judge."""
    return [j.judge(t) for j in judges(confidences) for t in trajectories]
