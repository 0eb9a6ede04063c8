"""A Python judge run with ``isolate=True`` is handed its view in a process of its own: no frame or object
it can reach holds a label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from peeking_judges import Busy, CountsItsPickles, FrameWalker, Raises

from trajectory_judge.models import Verdict, load_trajectories, load_verdicts
from trajectory_judge.run.isolated import Isolated, IsolationError
from trajectory_judge.run.runner import run_judges

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sample():
    trajs = load_trajectories(ROOT / "data" / "trajectories.jsonl")
    clean = [t for t in trajs if not t.label.faulty][:6]
    faulty = [t for t in trajs if t.label.faulty][:10]
    return clean + faulty


def _flags(path: Path) -> dict[str, bool]:
    return {v.trajectory_id: v.faulty for v in load_verdicts(path)}


def test_a_judge_walking_its_callers_frames_reads_every_label_in_the_runners_process(sample, tmp_path):
    # the attack works without isolation: this is what isolate=True has to stop
    run_judges(sample, [FrameWalker()], tmp_path / "verdicts.jsonl", progress=False)
    assert _flags(tmp_path / "verdicts.jsonl") == {t.trajectory_id: t.label.faulty for t in sample}


def test_isolated_the_frame_walker_finds_no_label_and_scores_as_flagging_everything(sample, tmp_path):
    result = run_judges(sample, [FrameWalker()], tmp_path / "verdicts.jsonl", progress=False, isolate=True)
    flags = _flags(tmp_path / "verdicts.jsonl")
    assert result.status == "ok" and set(flags) == {t.trajectory_id for t in sample}
    assert all(flags.values())  # it found no label anywhere, so it flagged everything


def test_an_isolated_judge_that_raises_costs_its_trajectory_with_the_childs_traceback(sample, tmp_path):
    run_judges(sample, [Raises()], tmp_path / "verdicts.jsonl", progress=False, isolate=True)
    verdicts = load_verdicts(tmp_path / "verdicts.jsonl")
    long = [v for v in verdicts if v.error]
    assert long and len(long) < len(verdicts)  # the short ones were judged, the long ones cost only themselves
    assert all("JudgeRaised: ValueError: too long" in v.error and "peeking_judges.py" in v.error for v in long)


def test_an_isolated_judges_cpu_time_counts_in_the_run_record(sample, tmp_path):
    run_judges(sample[:5], [Busy()], tmp_path / "verdicts.jsonl", progress=False, isolate=True)
    record = json.loads((tmp_path / "runs.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert record["cpu_s"]["client"] >= 0.45  # five tenths of a second, spent in the child


class InMain:
    judge_id = "in-main:v1"

    def judge(self, traj):
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=True, confidence=0.5)


def test_an_isolated_judge_is_pickled_once_and_judges_every_trajectory(sample, tmp_path):
    CountsItsPickles.pickled = 0
    r = run_judges(sample, [CountsItsPickles()], tmp_path / "verdicts.jsonl", progress=False, isolate=True)
    assert (r.written, r.failed, CountsItsPickles.pickled) == (len(sample), 0, 1)


def test_a_judge_the_child_cannot_import_is_refused_before_anything_is_written(sample, tmp_path):
    InMain.__module__ = "__main__"  # as a class typed into a script or a notebook is
    with pytest.raises(IsolationError, match="InMain is defined in __main__.*isolate=False"):
        run_judges(sample, [InMain()], tmp_path / "verdicts.jsonl", progress=False, isolate=True)
    assert not (tmp_path / "verdicts.jsonl").exists() and not (tmp_path / "runs.jsonl").exists()


def test_an_isolated_judges_process_that_dies_stops_the_run(sample):
    judge = Isolated(FrameWalker())
    judge._proc.kill()
    judge._proc.wait()
    with pytest.raises(IsolationError, match="has ended"):
        judge.judge(sample[0])
    judge.close()
