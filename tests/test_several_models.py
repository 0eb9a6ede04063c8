"""Several models in one study: ``run --model a,b``, ``merge`` of data folders, and inspect's ``eval-set`` over
several models imported into one folder (the slow tier)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_server import FakeModelServer
from reader_book import judged

from trajectory_judge.cli import main
from trajectory_judge.models import Verdict, load_verdicts

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 8


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "study"
    d.mkdir()
    shutil.copy(ROOT / "data" / "trajectories.jsonl", d / "trajectories.jsonl")
    return d


def _runs(folder: Path) -> list[dict]:
    return [json.loads(ln) for ln in (folder / "runs.jsonl").read_text(encoding="utf-8").splitlines()]


# --- run --model a,b ------------------------------------------------------------------------------
def test_run_with_two_models_judges_each_under_its_own_ids_with_its_own_run_record(folder):
    with FakeModelServer(hosted=True) as srv:
        argv = ["run", "--data", str(folder), "--judges", "outcome,step", "--backend", "openai", "--base-url"]
        argv += [srv.url + "/v1", "--model", "small,large", "--limit", "4", "--quiet"]
        assert main(argv) == 0
        sent = [body["model"] for _, path, body in srv.requests if path.endswith("/chat/completions")]
    verdicts = load_verdicts(folder / "verdicts.jsonl")
    ids = {v.judge_id for v in verdicts}
    assert ids == {"outcome:small", "step:small", "outcome:large", "step:large"}
    assert len(verdicts) == 4 * 4
    assert sent == ["small"] * 2 * 4 + ["large"] * 2 * 4  # one model after the other, never interleaved
    assert [r["model"] for r in _runs(folder)] == ["small", "large"]


def test_run_with_two_models_names_them_in_ids_as_judge_model_name_says_and_refuses_a_mismatch(folder, capsys):
    with FakeModelServer(hosted=True) as srv:
        base = ["run", "--data", str(folder), "--judges", "step", "--backend", "openai", "--base-url", srv.url + "/v1"]
        base += ["--limit", "2", "--quiet", "--model", "m-1,m-2"]
        assert main([*base, "--judge-model-name", "one"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "one name per model" in err
        assert not (folder / "verdicts.jsonl").exists() and not srv.requests
        assert main([*base, "--judge-model-name", "small,small"]) == 2
        assert "repeats" in capsys.readouterr().err
        assert main([*base, "--judge-model-name", "small,large"]) == 0
    assert {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")} == {"step:small", "step:large"}


def test_when_one_models_run_fails_the_models_after_it_are_named_and_not_run(folder, capsys):
    with FakeModelServer(["quota"], hosted=True) as srv:
        argv = ["run", "--data", str(folder), "--judges", "step", "--backend", "openai", "--base-url", srv.url + "/v1"]
        code = main([*argv, "--model", "a,b", "--limit", "2", "--quiet", "--retries", "0"])
        models = {body["model"] for _, path, body in srv.requests if path.endswith("/chat/completions")}
    assert code != 0 and models == {"a"}
    assert "not run: b" in capsys.readouterr().err


# --- merge ----------------------------------------------------------------------------------------
def _judged(folder: Path, judge_id: str, n: int = LIMIT, confidence: float = 0.7) -> list[Verdict]:
    return judged(folder, judge_id, n, confidence)


def _copy_of(folder: Path, name: str) -> Path:
    d = folder.parent / name
    d.mkdir()
    shutil.copy(folder / "trajectories.jsonl", d / "trajectories.jsonl")
    return d


def test_merge_joins_folders_of_the_same_trajectories_keeping_a_shared_verdict_once(folder, capsys):
    a, b = _copy_of(folder, "a"), _copy_of(folder, "b")
    _judged(a, "short:v1")
    _judged(b, "long:v1")
    shutil.copy(a / "verdicts.jsonl", b / "copied.jsonl")
    (b / "verdicts.jsonl").write_text(
        (b / "verdicts.jsonl").read_text(encoding="utf-8") + (a / "verdicts.jsonl").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    (a / "runs.jsonl").write_text('{"run": 1}\n', encoding="utf-8")
    (b / "runs.jsonl").write_text('{"run": 1}\n{"run": 2}\n', encoding="utf-8")
    before = {p: p.read_bytes() for d in (a, b) for p in d.iterdir()}
    out = folder.parent / "merged"
    assert main(["merge", str(a), str(b), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{b / 'copied.jsonl'}" in err and "not merged" in err  # a file merge does not know is named
    assert f"{LIMIT} records were in more than one folder" in err
    merged = load_verdicts(out / "verdicts.jsonl")
    assert len(merged) == 2 * LIMIT and {v.judge_id for v in merged} == {"short:v1", "long:v1"}
    assert (out / "trajectories.jsonl").read_bytes() == (a / "trajectories.jsonl").read_bytes()
    assert (out / "runs.jsonl").read_text(encoding="utf-8") == '{"run": 1}\n{"run": 2}\n'
    assert {p: p.read_bytes() for d in (a, b) for p in d.iterdir()} == before  # the sources are only read
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left
    assert main(["report", "--data", str(out), "--resamples", "200"]) == 0
    report = capsys.readouterr().out
    assert "short:v1" in report and "long:v1" in report


def test_merge_refuses_two_different_verdicts_for_one_judge_naming_both_lines_and_writes_nothing(folder, capsys):
    a, b = _copy_of(folder, "a"), _copy_of(folder, "b")
    _judged(a, "short:v1")
    _judged(b, "short:v1", confidence=0.9)
    out = folder.parent / "merged"
    assert main(["merge", str(a), str(b), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{b / 'verdicts.jsonl'}:1" in err and f"{a / 'verdicts.jsonl'}:1" in err
    assert "confidence" in err and "short:v1" in err
    assert not out.exists()


def test_merge_refuses_folders_whose_trajectories_differ_by_a_byte(folder, capsys):
    a, b = _copy_of(folder, "a"), _copy_of(folder, "b")
    (b / "trajectories.jsonl").write_bytes((a / "trajectories.jsonl").read_bytes().replace(b"refund", b"Refund", 1))
    assert main(["merge", str(a), str(b), "--out", str(folder.parent / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "differs" in err and not (folder.parent / "m").exists()


def test_merge_into_a_pinned_folder_needs_force_and_then_says_how_to_repin(folder, capsys):
    b = _copy_of(folder, "b")
    _judged(folder, "short:v1")
    _judged(b, "long:v1")
    assert main(["manifest", "--data", str(folder)]) == 0
    pinned = (folder / "verdicts.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["merge", str(b), "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err and (folder / "verdicts.jsonl").read_bytes() == pinned
    assert main(["merge", str(b), "--out", str(folder), "--force"]) == 0
    err = capsys.readouterr().err
    assert "merged as the first folder" in err and "trajectory-judge manifest" in err
    assert {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")} == {"short:v1", "long:v1"}


def test_merge_refuses_a_torn_or_broken_line_in_one_line(folder, capsys):
    a = _copy_of(folder, "a")
    _judged(a, "short:v1")
    (a / "runs.jsonl").write_text('{"run": 1}\n{"run": 2', encoding="utf-8")
    assert main(["merge", str(a), "--out", str(folder.parent / "m")]) == 2
    assert "runs.jsonl: the last line is incomplete" in capsys.readouterr().err
    (a / "runs.jsonl").write_text('{"run": 1}\nnot json\n', encoding="utf-8")
    assert main(["merge", str(a), "--out", str(folder.parent / "m")]) == 2
    assert "runs.jsonl:2: not valid JSON" in capsys.readouterr().err
    assert not (folder.parent / "m").exists()


# --- inspect eval-set over several models ---------------------------------------------------------
@pytest.mark.slow  # two tasks under two models through the inspect CLI
def test_inspect_eval_set_over_two_models_imports_into_one_folder_whose_report_shows_both(folder, tmp_path, capsys):
    pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[inspect]'")
    inspect_cli = Path(sys.executable).with_name("inspect")
    with FakeModelServer(hosted=True, api_key="test-key") as srv:
        env = {**os.environ, "LOCAL_BASE_URL": srv.url + "/v1", "LOCAL_API_KEY": "test-key"}
        argv = [str(inspect_cli), "eval-set", "trajectory_judge/outcome_judge", "trajectory_judge/step_judge"]
        argv += ["--model", "openai-api/local/small-model,openai-api/local/large-model", "--log-dir", "logs/study"]
        argv += ["-T", f"data={folder.name}", "-T", "limit=4", "--display", "none"]
        r = subprocess.run(argv, cwd=folder.parent, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    logs = sorted((folder.parent / "logs" / "study").glob("*.eval"))
    assert len(logs) == 4
    assert main(["import-inspect", *map(str, logs), "--data", str(folder)]) == 0
    ids = {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")}
    models = ("small-model", "large-model")  # the names the server was sent: provider and service stripped
    assert ids == {f"{view}:{m}" for view in ("outcome", "step") for m in models}
    assert main(["import-inspect", *map(str, logs), "--data", str(folder)]) == 0  # again: adds nothing
    assert len(load_verdicts(folder / "verdicts.jsonl")) == 4 * 4
    capsys.readouterr()
    assert main(["report", "--data", str(folder), "--resamples", "200"]) == 0
    report = capsys.readouterr().out
    assert all(j in report for j in ids)
    # one view across the two models is compared (judges in report order: either direction)
    assert any(f"step · {b} − {a}" in report for a, b in (models, models[::-1])), report


@pytest.mark.slow  # the whole book, built once on the merged folder of tests/reader_book.py
def test_the_book_builds_with_warnings_as_errors_on_a_merged_folder_and_shows_every_folders_judges(reader_book):
    from reader_book import STUDY_JUDGES

    merged = {v.judge_id for v in load_verdicts(reader_book.folder / "verdicts.jsonl")}
    for source in ("a", "b", "n40", "own-prompt", "mine", "imported"):
        own = {v.judge_id for v in load_verdicts(reader_book.root / source / "verdicts.jsonl")}
        assert own <= merged, source
    page = reader_book.page("notebooks/judges")
    assert all(j in page for j in STUDY_JUDGES) and all(j in page for j in merged)
