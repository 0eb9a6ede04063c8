"""Trajectories of one's own: the versioned format and its generated schema, ``check`` and ``report`` on a
folder without the testbed's construction, and the guide's worked example run from the page's commands."""

from __future__ import annotations

import json
import re
import runpy
import shlex
import sys
from pathlib import Path

import pytest
from fake_server import FakeModelServer

from trajectory_judge.analysis.core.loading import absent_parts
from trajectory_judge.cli import main
from trajectory_judge.models import (
    SCHEMA_VERSION,
    Label,
    Trajectory,
    Verdict,
    json_schema,
    load_trajectories,
    load_verdicts,
    write_jsonl,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "guide" / "own-trajectories.md"
EXAMPLE = ROOT / "book" / "guide" / "examples" / "library"


def _schema(capsys, kind: str) -> dict:
    assert main(["schema", kind]) == 0
    return json.loads(capsys.readouterr().out)


# --- the format ---------------------------------------------------------------------------------------
def test_the_schema_verb_prints_each_formats_json_schema_with_its_version_and_the_rules_beyond_it(capsys):
    for kind in ("trajectories", "labels", "verdicts"):
        schema = _schema(capsys, kind)
        assert schema == json_schema(kind)
        assert schema["x-schema-version"] == SCHEMA_VERSION == 2  # version 2: a folder names its own fault types
        assert schema["$id"].endswith(f":{kind}:v2")
        assert schema["x-rules"] and schema["additionalProperties"] is False
    traj = _schema(capsys, "trajectories")
    assert set(traj["required"]) == {"trajectory_id", "instance_id", "goal", "steps", "final_answer"}
    assert "clean parent" in traj["properties"]["instance_id"]["description"]  # field docs come from the model
    assert _schema(capsys, "labels")["required"] == ["faulty", "outcome_correct"]


def test_the_committed_data_validates_against_the_exported_schemas(capsys):
    jsonschema = pytest.importorskip("jsonschema")
    for kind, name in (("trajectories", "trajectories.jsonl"), ("verdicts", "verdicts.jsonl")):
        validator = jsonschema.Draft202012Validator(_schema(capsys, kind))
        lines = (ROOT / "data" / name).read_text(encoding="utf-8").splitlines()[:60]
        assert lines and all(not list(validator.iter_errors(json.loads(ln))) for ln in lines)
    bad = json.loads((ROOT / "data" / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()[0])
    bad["label"]["faulty"] = "no"
    assert list(jsonschema.Draft202012Validator(json_schema("trajectories")).iter_errors(bad))


def test_the_schema_goes_to_a_file_atomically_and_an_unknown_kind_is_one_line(tmp_path, capsys):
    out = tmp_path / "t.schema.json"
    assert main(["schema", "trajectories", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == json_schema("trajectories")
    assert main(["schema", "episodes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "episodes" in err and "trajectories" in err


# --- a folder without the testbed's construction ---------------------------------------------------
def _traj(tid: str, task: str, label: Label, n_steps: int = 3) -> Trajectory:
    steps = [
        {
            "index": i,
            "thought": "t",
            "call": {"tool": "lookup", "args": {"q": i}},
            "observation": {"ok": True, "data": {}},
        }
        for i in range(n_steps)
    ]
    return Trajectory.model_validate(
        {"trajectory_id": tid, "instance_id": task, "goal": "g", "steps": steps, "final_answer": "a", "label": label}
    )


def _foreign(folder: Path) -> list[Trajectory]:
    """Three clean runs and three loud wrong-tool faults, each its own task: no clean parents, no silent faults."""
    clean = Label(faulty=False, outcome_correct=True)
    fault = Label(faulty=True, failure_step=1, failure_type="wrong_tool", outcome_correct=False)
    trajs = [_traj(f"c{i}", f"task-c{i}", clean) for i in range(3)]
    trajs += [_traj(f"f{i}", f"task-f{i}", fault, n_steps=2 + i) for i in range(3)]
    folder.mkdir()
    write_jsonl(folder / "trajectories.jsonl", trajs)
    write_jsonl(
        folder / "verdicts.jsonl",
        [
            Verdict(trajectory_id=t.trajectory_id, judge_id="short:v1", faulty=len(t.steps) < 3, confidence=0.7)
            for t in trajs
        ],
    )
    return trajs


def test_report_says_once_what_a_folder_without_the_testbeds_construction_cannot_show(tmp_path, capsys):
    folder = tmp_path / "own"
    _foreign(folder)
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    assert main(["report", "--data", str(folder), "--resamples", "200", "--markdown", str(md), "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert out.count("Not measurable on these trajectories") == 1
    for what in ("paired discrimination", "silent recall and the loud-minus-silent gap", "unsupported_claim"):
        assert out.count(what) == 1, what
    per_type = out.split("Recall per failure type")[1].split("\n\n")[0]
    assert "wrong tool" in per_type and "premature stop" not in per_type and "nan" not in per_type.lower()
    text = md.read_text(encoding="utf-8")
    assert "Not measurable" in text and "No fault with a judged clean parent" in text
    per_type_md = text.split("## Recall per failure type")[1].split("##")[0]
    assert "| wrong_tool |" in per_type_md and "| premature_stop |" not in per_type_md
    absent = json.loads(js.read_text(encoding="utf-8"))["not_measurable"]
    assert any("paired discrimination" in a for a in absent) and len(absent) == 3


def test_the_testbeds_own_trajectories_lack_nothing_the_report_measures():
    assert absent_parts(load_trajectories(ROOT / "data" / "trajectories.jsonl")) == []


def test_faults_labelled_by_outcome_only_and_a_folder_without_clean_runs_are_named():
    outcome_only = Label(faulty=True, outcome_correct=False)
    parts = absent_parts([_traj("a", "t1", outcome_only), _traj("b", "t2", outcome_only)])
    assert any("false-alarm rate" in p for p in parts)
    assert any(p.startswith("the step and type of 2 faults labelled by outcome only") for p in parts)


def test_check_reads_a_folder_as_its_trajectories_file_and_notes_foreign_tools_once(tmp_path, capsys):
    folder = tmp_path / "own"
    _foreign(folder)
    assert main(["check", str(folder / "trajectories.jsonl")]) == 0
    by_file = capsys.readouterr()
    assert main(["check", str(folder)]) == 0
    by_folder = capsys.readouterr()
    assert by_folder.out == by_file.out
    assert by_folder.err.count("note:") == 1 and "6 of 6 trajectories" in by_folder.err and "lookup" in by_folder.err
    assert main(["check", str(ROOT / "data")]) == 0
    assert "note:" not in capsys.readouterr().err


def test_a_bad_line_in_a_folders_trajectories_is_one_line_naming_file_line_and_field(tmp_path, capsys):
    folder = tmp_path / "own"
    _foreign(folder)
    lines = (folder / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"faulty":true', '"faulty":"yes"')
    (folder / "trajectories.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for argv in (["check", str(folder)], ["report", "--data", str(folder), "--resamples", "100"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "trajectories.jsonl:4:" in err and "label.faulty" in err, err


# --- the worked example, as the page shows it --------------------------------------------------------
def page_commands() -> list[list[str]]:
    """The commands of the page's worked example (its bash block after the converter), split as a shell would."""
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    block = next(b for b in blocks if "convert.py" in b)
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def _answer(prompt: str) -> str:
    """A stand-in model that calls faulty every trajectory whose view mentions a hold."""
    faulty = "hold" in prompt.split("Final answer")[-1].lower()
    return json.dumps(
        {
            "reasoning": "stand-in",
            "faulty": faulty,
            "failure_step": 0 if faulty else None,
            "failure_type": "unsupported_claim" if faulty else None,
            "confidence": 0.7,
        }
    )


def _run_page_command(argv: list[str], library: Path, server_url: str, monkeypatch) -> int:
    argv = [str(library) if a == "library/" else a for a in argv]
    argv = [f"{server_url}/v1" if a.startswith("http://127.0.0.1:8080") else a for a in argv]
    if argv[0] == "python":  # the page's scripts, from the repository's root, as `python SCRIPT ARGS` runs them
        script = ROOT / argv[1]
        monkeypatch.setattr(
            sys, "argv", [str(script), *(str(ROOT / a) if a.startswith("book/") else a for a in argv[2:])]
        )
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as done:
            return int(done.code or 0)
        return 0
    assert argv[0] == "trajectory-judge"
    return main(argv[1:] + (["--quiet"] if argv[1] == "run" else []))


def test_the_worked_example_converts_checks_judges_and_reports_a_foreign_set_from_the_pages_commands(
    tmp_path, capsys, monkeypatch
):
    library = tmp_path / "library"
    commands = page_commands()
    assert [c[1] if c[0] == "trajectory-judge" else Path(c[1]).name for c in commands] == [
        "convert.py",
        "check",
        "claims_judge.py",
        "run",
        "report",
        "misses",
    ]
    outputs = {}
    with FakeModelServer(hosted=True, answer=_answer) as srv:
        for argv in commands:
            assert _run_page_command(argv, library, srv.url, monkeypatch) == 0, argv
            outputs[Path(argv[1]).name if argv[0] == "python" else argv[1]] = capsys.readouterr()
    trajs = load_trajectories(library / "trajectories.jsonl")
    assert len(trajs) == len(json.loads((EXAMPLE / "runs.json").read_text(encoding="utf-8")))
    assert sum(t.label.faulty for t in trajs) == 7 and len({t.instance_id for t in trajs}) == 6
    judges = {v.judge_id for v in load_verdicts(library / "verdicts.jsonl")}
    assert judges == {"claims:v1", "outcome:qwen2.5-coder:1.5b", "step:qwen2.5-coder:1.5b"}
    assert outputs["check"].err.count("note:") == 1
    report = outputs["report"].out
    assert report.count("Not measurable on these trajectories") == 1
    assert "ignored_observation" in report and "labelled by outcome only" in report
    assert "paired discrimination" not in report  # every fault but the outcome-only one has a clean parent
    assert "ignored obs." not in report and "nan" not in report.split("Recall per failure type")[1].split("\n\n")[0]
    for judge in judges:
        assert judge in report
    assert "miss" in outputs["misses"].out


def test_the_converter_refuses_a_bad_label_in_one_line_naming_file_and_line(tmp_path, capsys, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "runs.json").write_bytes((EXAMPLE / "runs.json").read_bytes())
    rows = (EXAMPLE / "labels.csv").read_text(encoding="utf-8").splitlines()
    rows[2] = rows[2].replace("wrong_tool", "wrong tool")  # a space: no type name
    (src / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["convert.py", str(src), str(tmp_path / "out")])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(EXAMPLE / "convert.py"), run_name="__main__")
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "labels.csv:3:" in err
    assert not (tmp_path / "out").exists()
