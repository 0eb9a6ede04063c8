"""Compute spent: CPU time is measured from the server process itself, and summed honestly."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from trajectory_judge.analysis.core import cost
from trajectory_judge.cli import main
from trajectory_judge.fileio import READ_EVENT
from trajectory_judge.models import DataError
from trajectory_judge.run import meter as run_meter

BURN = "import time\nt = time.time()\nwhile time.time() - t < 120: pass"


@pytest.fixture
def burner():
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    yield proc
    proc.kill()
    proc.wait()


def _wait_for_cpu(pid: int, above: float, deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if (run_meter.process_cpu_seconds(pid) or 0.0) > above:
            return
        time.sleep(0.05)
    pytest.fail(f"process {pid} did not use {above} CPU seconds within {deadline_s} s")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_server_cpu_seconds_are_read_from_the_launched_process(burner):
    meter = run_meter.CpuMeter({"pid": burner.pid, "binary": sys.executable})
    start = run_meter.process_cpu_seconds(burner.pid, sys.executable)
    assert start is not None
    _wait_for_cpu(burner.pid, start + 0.2)
    got = meter.read()
    assert got["server"] >= 0.2 and got["server_pid"] == burner.pid and got["client"] >= 0.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_recycled_or_vanished_pid_is_never_counted(burner, tmp_path):
    assert run_meter.process_cpu_seconds(burner.pid, str(tmp_path / "llama-server")) is None  # another binary
    assert run_meter.CpuMeter({"pid": burner.pid, "binary": "/bin/true"}).read()["server"] is None
    meter = run_meter.CpuMeter({"pid": burner.pid, "binary": sys.executable})
    burner.kill()
    burner.wait()
    assert run_meter.process_cpu_seconds(burner.pid) is None
    assert meter.read()["server"] is None  # gone before the run ended: unknown, not zero
    assert run_meter.CpuMeter(None).read()["server"] is None  # no launch record


def _write_runs(tmp_path, recs):
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_compute_spent_counts_cpu_only_where_it_was_measured(tmp_path):
    trio = ["outcome:m:1b", "step:m:1b", "reply:m:1b"]
    per = {j: {"verdicts": 10} for j in trio}
    _write_runs(
        tmp_path,
        [
            {"judges": trio, "judge_model_name": "m:1b", "per_judge": per, "wall_s": 3600.0},  # before CpuMeter
            {
                "judges": trio,
                "judge_model_name": "m:1b",
                "per_judge": per,
                "wall_s": 1800.0,
                "cpu_s": {"server": 3000.0, "client": 600.0, "server_pid": 5},
            },
            {
                "judges": trio,
                "judge_model_name": "m:1b",
                "per_judge": per,
                "wall_s": 900.0,
                "cpu_s": {"server": None, "client": 60.0, "server_pid": 5},
            },  # server restarted mid-run
            {
                "kind": "organic",
                "agent_model": "m:1b",
                "written": 4,
                "wall_s": 720.0,
                "cpu_s": {"server": 1440.0, "client": 0.0, "server_pid": 9},
            },
        ],
    )
    spent = cost.compute_spent(tmp_path)
    df = spent.to_frame()
    assert list(df.index) == ["outcome+step+reply · m:1b", "organic agent · m:1b", "total"]
    assert df.loc["outcome+step+reply · m:1b"].tolist() == [3, 90, 1.75, 1.0, 1]
    assert df.loc["organic agent · m:1b"].tolist() == [1, 4, 0.2, 0.4, 1]
    assert (spent.runs, spent.cpu_runs) == (4, 2) and spent.cpu_h == pytest.approx(1.4)
    text = spent.sentence()  # every number is the record's, at the precision it prints (hours to two decimals)
    assert (
        f"{spent.runs} runs " in text and f" {spent.wall_h:.2f} h " in text and f" {spent.cpu_h:.2f} CPU hours" in text
    )
    assert f"the {spent.cpu_runs} runs that measured it" in text
    assert f"the other {spent.runs - spent.cpu_runs} runs did not" in text


def test_no_run_records_means_no_claim_about_compute(tmp_path):
    spent = cost.compute_spent(tmp_path)
    assert spent.to_frame().empty and "not known" in spent.sentence()
    _write_runs(tmp_path, [{"judges": ["step:m"], "per_judge": {"step:m": {"verdicts": 2}}, "wall_s": 36.0}])
    unmeasured = cost.compute_spent(tmp_path)
    assert unmeasured.sentence().endswith("none of their records measured CPU time") and unmeasured.cpu_h is None
    assert unmeasured.to_frame()["cpu_h"].isna().all()  # unknown, never a zero


def test_a_bad_run_record_is_named_by_file_and_line(tmp_path):
    (tmp_path / "runs.jsonl").write_text('{"wall_s": 1}\n\n{"wall_s": \n')
    with pytest.raises(DataError, match=r"runs\.jsonl:3: not valid JSON"):
        cost.compute_spent(tmp_path)
    (tmp_path / "runs.jsonl").write_text('{"wall_s": 1}\n[1, 2]\n')
    with pytest.raises(DataError, match=r"runs\.jsonl:2: expected a JSON object"):
        cost.read_run_records(tmp_path)


class _Busy:
    """A Python judge that spends CPU time (no server behind it)."""

    judge_id = "busy:v1"

    def judge(self, t):
        from trajectory_judge.models import Verdict

        sum(i * i for i in range(200_000))
        return Verdict(trajectory_id=t.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.6)


def test_a_python_judges_cpu_time_is_counted_and_report_shows_it(tmp_path, dataset, capsys):
    from trajectory_judge.cli import main
    from trajectory_judge.models import write_jsonl
    from trajectory_judge.run.runner import run_judges

    write_jsonl(tmp_path / "trajectories.jsonl", dataset[:8])
    run_judges(dataset[:8], [_Busy()], tmp_path / "verdicts.jsonl", progress=False)
    (rec,) = cost.read_run_records(tmp_path)
    assert rec["cpu_s"]["client"] > 0 and rec["cpu_s"]["server"] is None  # measured: the run has no server
    spent = cost.compute_spent(tmp_path)
    assert spent.cpu_runs == 1 and spent.cpu_h == pytest.approx(rec["cpu_s"]["client"] / 3600)
    assert "none of their records measured CPU time" not in spent.sentence()
    assert main(["report", "--data", str(tmp_path), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    compute = out[out.index("\nThe 1 run took") :]
    assert "NaN" not in compute and "nan" not in compute and "CPU seconds" in compute


def test_report_says_not_measured_where_a_run_measured_no_cpu_time(tmp_path, dataset, capsys):
    from trajectory_judge.cli import main
    from trajectory_judge.models import write_jsonl
    from trajectory_judge.run.runner import run_judges

    write_jsonl(tmp_path / "trajectories.jsonl", dataset[:4])
    run_judges(dataset[:4], [_Busy()], tmp_path / "verdicts.jsonl", progress=False)
    hosted = {"backend": "openai", "judges": ["step:m"], "wall_s": 7.0, "cpu_s": {"client": 1.0, "server": None}}
    with open(tmp_path / "runs.jsonl", "a") as fh:
        fh.write(json.dumps(hosted) + "\n")
    assert main(["report", "--data", str(tmp_path), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    compute = out[out.index("\nThe 2 runs took") :]
    assert "nan" not in compute.lower() and "not measured" in compute and "the other 1 run did not" in compute


def test_report_reads_each_data_file_once_the_run_records_included(capsys):
    """``report`` on the committed folder (run records, ensemble members) reads ``runs.jsonl`` once, and the
    trajectories and verdicts once each (the ensembles' check reads the verdicts whole a second time)."""
    data = (Path(__file__).resolve().parents[1] / "data").resolve()
    reads: Counter[str] = Counter()
    listening = [True]
    sys.addaudithook(
        lambda event, args: (
            reads.update([args[0].name]) if listening[0] and event == READ_EVENT and args[0].parent == data else None
        )
    )
    try:
        assert main(["report", "--data", str(data), "--resamples", "20"]) == 0
    finally:
        listening[0] = False
    capsys.readouterr()
    assert reads["runs.jsonl"] == 1 and reads["trajectories.jsonl"] == 1, reads
    assert reads["verdicts.jsonl"] == 2 and reads["members.jsonl"] >= 1, reads
