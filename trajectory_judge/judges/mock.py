"""A deterministic mock judge (no model) for demos, tests and runner benchmarks.

``MockJudge(view="step", seed=7)`` has the id ``mock-step:seed7``; its verdict on a trajectory is
a pure function of what it is shown (the goal, the steps and the final answer), its view and its
seed, through SHA-256 (never Python's ``hash()``, which is salted per process), so the same
trajectory gets the same verdict in every process and every run, whatever opaque id the runner
hands it under. It
fits the :class:`~trajectory_judge.judges.base.Judge` protocol, so :func:`~trajectory_judge.run.runner.run_judges`
runs it like any other judge. ``delay_s`` sleeps before each verdict (to stand in for a model's
latency); the recorded ``latency_s`` is the time actually spent.
"""

from __future__ import annotations

import hashlib
import json
import time

from trajectory_judge.judges.views import VIEWS
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Trajectory, Verdict


class MockJudge:
    """A judge that flips a seeded, hash-derived coin per trajectory (``faulty_rate`` of them faulty)."""

    def __init__(self, view: str = "step", seed: int = 7, *, faulty_rate: float = 0.5, delay_s: float = 0.0) -> None:
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
        if not 0.0 <= faulty_rate <= 1.0:
            raise ValueError(f"faulty_rate must be in [0, 1], got {faulty_rate}")
        self.view = view
        self.seed = int(seed)
        self.faulty_rate = float(faulty_rate)
        self.delay_s = float(delay_s)
        self.judge_id = f"mock-{view}:seed{self.seed}"

    def _digest(self, traj: Trajectory) -> bytes:
        shown = json.dumps(traj.model_dump(mode="json", include={"goal", "steps", "final_answer"}), sort_keys=True)
        return hashlib.sha256(f"{self.view}\x00{self.seed}\x00{shown}".encode()).digest()

    def judge(self, traj: Trajectory) -> Verdict:
        """The verdict on ``traj``: deterministic in (what ``traj`` shows, view, seed)."""
        t0 = time.perf_counter()
        if self.delay_s > 0:
            time.sleep(self.delay_s)
        d = self._digest(traj)
        u = int.from_bytes(d[:8], "big") / 2**64  # uniform in [0, 1)
        faulty = u < self.faulty_rate
        confidence = 0.5 + 0.5 * (d[8] / 255)
        step = ftype = None
        if faulty and traj.steps:
            step = traj.steps[d[9] % len(traj.steps)].index
            ftype = TESTBED_FAILURE_TYPES[d[10] % len(TESTBED_FAILURE_TYPES)]
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=faulty,
            failure_step=step,
            failure_type=ftype,
            confidence=round(confidence, 4),
            rationale=f"mock verdict (sha256 {d[:4].hex()})",
            latency_s=time.perf_counter() - t0,
        )
