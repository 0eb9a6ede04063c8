import json
import subprocess
import sys
from pathlib import Path

import pytest

from trajectory_judge.cli import main
from trajectory_judge.models import load_verdicts

ROOT = Path(__file__).resolve().parents[1]


def test_check_writes_one_programmatic_verdict_per_trajectory(tmp_path, capsys):
    out = tmp_path / "v.jsonl"
    assert main(["check", str(ROOT / "data" / "trajectories.jsonl"), "--out", str(out)]) == 0
    verdicts = load_verdicts(out)
    assert len(verdicts) == 400 and {v.judge_id for v in verdicts} == {"programmatic"}
    assert "wrong_tool" in capsys.readouterr().out


def test_check_accepts_unlabelled_episodes(tmp_path, capsys):
    src = (ROOT / "data" / "trajectories.jsonl").read_text().splitlines()[:3]
    rows = [json.loads(line) for line in src]
    for r in rows:
        r.pop("label")
    f = tmp_path / "episodes.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["check", str(f)]) == 0
    assert "unlabelled" in capsys.readouterr().out


def test_malformed_file_names_file_and_line_exits_2_writes_nothing(tmp_path, capsys):
    src = (ROOT / "data" / "trajectories.jsonl").read_text().splitlines()[:3]
    src[1] = src[1][:50]
    f, out = tmp_path / "bad.jsonl", tmp_path / "v.jsonl"
    f.write_text("\n".join(src) + "\n")
    assert main(["check", str(f), "--out", str(out)]) == 2
    assert f"{f}:2: not valid JSON" in capsys.readouterr().err
    assert not out.exists()


def test_missing_field_names_the_field_and_line(tmp_path, capsys):
    row = json.loads((ROOT / "data" / "trajectories.jsonl").read_text().splitlines()[0])
    del row["goal"]
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps(row) + "\n")
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{f}:1: " in err and "goal: Field required" in err  # file, line and field


def test_check_reads_an_agent_episodes_file(tmp_path, capsys):

    src = json.loads((ROOT / "data" / "trajectories.jsonl").read_text().splitlines()[0])
    src.pop("label")
    ep = {
        "episode_id": "E1",
        "stratum": "happy",
        "agent_model": "m",
        "trajectory": src,
        "violations": [],
        "outcome": {"refunded_eur": 0.0, "escalated": False, "replied": True},
        "expected": {"refunded_eur": 0.0, "escalated": True, "replied": True},
        "stop": "replied",
        "error": None,
        "latency_s": 0.0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }
    f = tmp_path / "organic.jsonl"
    f.write_text(json.dumps(ep) + "\n")
    assert main(["check", str(f)]) == 0
    assert "unlabelled" in capsys.readouterr().out


@pytest.mark.parametrize("verb", ["run", "report", "export-requests", "agent"])
def test_a_verbs_help_imports_no_numerics_client_runner_or_report(verb):
    # every verb is declared on every start, so the declarations must stay light: the handlers import the rest
    code = (
        "import sys\nfrom trajectory_judge.cli import main\n"
        f"try:\n    main([{verb!r}, '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('numpy', 'pandas', 'scipy', 'httpx', 'trajectory_judge.run.runner', 'trajectory_judge.judges.llm',"
        " 'trajectory_judge.cli.report', 'trajectory_judge.testbed.agent')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"
