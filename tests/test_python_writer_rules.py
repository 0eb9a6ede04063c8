"""``run_judges``, the Python API's writer, obeys a folder's rules as the command line's writers do:
a pinned folder is refused before anything is written, the folder's lock is held (a second writer is
refused, a writer inside the lock's holder shares it), and a torn last line is set aside."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from trajectory_judge.cli import main
from trajectory_judge.models import DataError, Verdict, load_trajectories
from trajectory_judge.run.runner import run_judges
from trajectory_judge.run.store import data_dir_lock


class Always:
    judge_id = "always:v1"

    def judge(self, traj):
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=True, confidence=0.9)


def folder(tmp_path: Path, pinned: bool) -> Path:
    d = tmp_path / "mine"
    assert main(["build-dataset", "--n", "8", "--out", str(d)]) == 0
    if pinned:
        assert main(["manifest", "--data", str(d)]) == 0
    return d


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def test_run_judges_into_a_pinned_folder_raises_the_clis_refusal_and_writes_nothing(tmp_path, capsys):
    d = folder(tmp_path, pinned=True)
    before = snapshot(d)
    trajs = load_trajectories(d / "trajectories.jsonl")
    with pytest.raises(DataError, match=r"is pinned by .*SHA256SUMS.*nothing was written.*force=True"):
        run_judges(trajs, [Always()], d / "verdicts.jsonl", progress=False)
    assert snapshot(d) == before
    # the command line refuses the same folder with the same sentence, naming its own option
    code = main(["run", "--data", str(d), "--judges", "step", "--model", "m", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "is pinned by" in err and "--force" in err
    r = run_judges(trajs, [Always()], d / "verdicts.jsonl", progress=False, force=True)
    assert r.written == 8


def test_run_judges_is_refused_while_another_process_writes_the_folder(tmp_path):
    from lock_holder import held_by_another_process

    d = folder(tmp_path, pinned=False)
    with held_by_another_process(d) as pid, pytest.raises(DataError, match=rf"is being written by pid {pid}"):
        run_judges(load_trajectories(d / "trajectories.jsonl"), [Always()], d / "verdicts.jsonl", progress=False)
    assert not (d / "verdicts.jsonl").exists()


def test_a_writer_called_inside_the_locks_holder_shares_the_lock(tmp_path):
    d = folder(tmp_path, pinned=False)
    trajs = load_trajectories(d / "trajectories.jsonl")
    with data_dir_lock(d):
        assert run_judges(trajs, [Always()], d / "verdicts.jsonl", progress=False).written == 8
    started = time.monotonic()
    with data_dir_lock(d):  # let go by the outermost holder: free again
        pass
    assert time.monotonic() - started < 5


def test_run_judges_sets_a_torn_last_line_aside_and_resumes(tmp_path, capsys):
    d = folder(tmp_path, pinned=False)
    trajs = load_trajectories(d / "trajectories.jsonl")
    run_judges(trajs[:3], [Always()], d / "verdicts.jsonl", progress=False)
    with open(d / "verdicts.jsonl", "ab") as f:
        f.write(b'{"trajectory_id": "tor')
    r = run_judges(trajs, [Always()], d / "verdicts.jsonl", progress=False)
    assert r.written == 5
    assert (d / "verdicts.jsonl.torn-1").read_bytes() == b'{"trajectory_id": "tor'


def test_another_thread_of_the_process_is_refused_as_another_process_is(tmp_path):
    import threading

    d = folder(tmp_path, pinned=False)
    seen: list[BaseException] = []

    def second() -> None:
        try:
            run_judges(load_trajectories(d / "trajectories.jsonl"), [Always()], d / "verdicts.jsonl", progress=False)
        except DataError as exc:
            seen.append(exc)

    with data_dir_lock(d):
        t = threading.Thread(target=second)
        t.start()
        t.join(timeout=30)
    assert len(seen) == 1 and "another thread of this process" in str(seen[0])
    assert not (d / "verdicts.jsonl").exists()
