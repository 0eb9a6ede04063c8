"""Every ordinary mistake a user can make ends in one line ``trajectory-judge VERB: error: ...``.

Table-driven over the classes of issue 14 that concern input: argument ranges (argparse
converters), values inside data files (the pydantic models and the loader), files the system
cannot read or write, empty inputs, and ``manifest --check`` with nothing to check. Each case
asserts the exit status, that stderr is exactly one line naming the verb with the case's key
words and no traceback, and that every input file is byte-identical afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trajectory_judge.cli import main
from trajectory_judge.judges.programmatic import ProgrammaticJudge
from trajectory_judge.models import dumps
from trajectory_judge.testbed.dataset import build_dataset

RUN = ["run", "--model", "m", "--quiet"]
AGENT = ["agent", "--model", "m", "--quiet"]


# --- helpers ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rows() -> tuple[list[dict], list[dict]]:
    """A small valid data set as JSON objects: 16 trajectories and the rule engine's verdicts."""
    trajs = build_dataset(16, 7)
    verdicts = [ProgrammaticJudge().judge(t) for t in trajs]
    return [json.loads(dumps(t)) for t in trajs], [json.loads(dumps(v)) for v in verdicts]


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _data_dir(tmp_path: Path, rows: tuple[list[dict], list[dict]]) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    _write(d / "trajectories.jsonl", rows[0])
    _write(d / "verdicts.jsonl", rows[1])
    return d


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _expect_one_line(err: str, verb: str, words: tuple[str, ...]) -> None:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), f"expected one line on stderr, got {err!r}"
    prefix = f"trajectory-judge {verb}: error: " if verb else "trajectory-judge: error: "
    assert lines[0].startswith(prefix), lines[0]
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"


def _run(argv: list[str], capsys: Any, root: Path) -> tuple[int, str]:
    """``main(argv)``'s exit status and stderr; asserts every file under ``root`` is byte-identical after."""
    before = _digests(root)
    code = main(argv)
    err = capsys.readouterr().err
    after = _digests(root)
    changed = [k for k, v in before.items() if after.get(k) != v]
    assert not changed, f"input files changed or vanished: {changed}"
    return code, err


# --- 1. arguments out of range ---------------------------------------------------------------
BAD_ARGUMENTS = [
    # (argv, key words of the message)
    ([*RUN, "--limit", "-5"], ("--limit", "at least 1", "-5")),
    ([*RUN, "--limit", "0"], ("--limit", "at least 1")),
    ([*RUN, "--limit", "ten"], ("--limit", "integer", "'ten'")),
    ([*RUN, "--concurrency", "0"], ("--concurrency", "at least 1")),
    ([*RUN, "--concurrency", "-2"], ("--concurrency", "at least 1")),
    ([*RUN, "--timeout", "0"], ("--timeout", "greater than 0")),
    ([*RUN, "--timeout", "-3"], ("--timeout", "greater than 0")),
    ([*RUN, "--timeout", "nan"], ("--timeout", "finite")),
    ([*RUN, "--timeout", "inf"], ("--timeout", "finite")),
    ([*RUN, "--retries", "-1"], ("--retries", "0 or more")),
    ([*RUN, "--retries", "1.5"], ("--retries", "integer")),
    ([*RUN, "--retry-budget", "-5"], ("--retry-budget", "0 or more")),
    ([*RUN, "--retry-budget", "soon"], ("--retry-budget", "number")),
    ([*RUN, "--max-tokens", "0"], ("--max-tokens", "at least 1")),
    ([*RUN, "--num-ctx", "0"], ("--num-ctx", "at least 1")),
    ([*RUN, "--temperature", "-0.1"], ("--temperature", "0 or more")),
    ([*RUN, "--temperature", "nan"], ("--temperature", "finite")),
    ([*RUN, "--temperature=-inf"], ("--temperature", "finite")),
    ([*RUN, "--temperature", "hot"], ("--temperature", "number")),
    ([*RUN, "--seed", "-1"], ("--seed", "0 or more")),
    ([*RUN, "--judges", ""], ("--judges", "at least one")),
    ([*RUN, "--judges", "step,step"], ("--judges", "'step'", "more than once")),
    ([*RUN, "--judges", "outcome,final"], ("--judges", "unknown 'final'")),
    ([*RUN, "--judges", "step,,reply"], ("--judges", "empty name")),
    ([*RUN, "--base-url", ""], ("--base-url", "must not be empty")),
    ([*RUN, "--base-url", "   "], ("--base-url", "must not be empty")),
    ([*RUN, "--base-url", "localhost:8080"], ("--base-url", "http://")),
    ([*RUN, "--judge-model-name", ""], ("--judge-model-name", "must not be empty")),
    ([*RUN, "--judge-model-name", "a|b"], ("--judge-model-name", "'|'")),
    ([*RUN, "--judge-model-name", "a\nb"], ("--judge-model-name", "printable")),
    ([*RUN, "--judge-model-name", "a\tb"], ("--judge-model-name", "printable")),
    ([*RUN, "--judge-model-name", "a\x1bb"], ("--judge-model-name", "printable")),
    (["run", "--model", "", "--quiet"], ("--model", "must not be empty")),
    (["run", "--quiet"], ("required", "--model")),
    ([*RUN, "--backend", "vllm"], ("--backend", "invalid choice")),
    ([*RUN, "--cache-prompt", "maybe"], ("--cache-prompt", "invalid choice")),
    ([*RUN, "--cache-prompt", "prefix", "--concurrency", "2"], ("--cache-prompt prefix", "--concurrency 1")),
    ([*RUN, "--bogus"], ("unrecognized arguments", "--bogus")),
    ([*AGENT, "--episodes", "0"], ("--episodes", "at least 1")),
    ([*AGENT, "--episodes", "-3"], ("--episodes", "at least 1")),
    ([*AGENT, "--instance-seed", "-1"], ("--instance-seed", "0 or more")),
    ([*AGENT, "--seed", "-7"], ("--seed", "0 or more")),
    ([*AGENT, "--timeout", "0"], ("--timeout", "greater than 0")),
    ([*AGENT, "--retries", "-1"], ("--retries", "0 or more")),
    ([*AGENT, "--max-tokens", "-1"], ("--max-tokens", "at least 1")),
    ([*AGENT, "--temperature", "inf"], ("--temperature", "finite")),
    ([*AGENT, "--base-url", ""], ("--base-url", "must not be empty")),
    ([*AGENT, "--agent-model-name", "x|y"], ("--agent-model-name", "'|'")),
    (["build-dataset", "--n", "12"], ("--n", "multiple of 8", "12")),
    (["build-dataset", "--n", "0"], ("--n", "multiple of 8")),
    (["build-dataset", "--n", "-8"], ("--n", "multiple of 8")),
    (["build-dataset", "--n", "many"], ("--n", "integer")),
    (["build-dataset", "--seed", "-1"], ("--seed", "0 or more")),
    (["report", "--resamples", "0"], ("--resamples", "from 1 to 100000")),
    (["report", "--resamples", "-10"], ("--resamples", "from 1 to 100000")),
    (["report", "--resamples", "1000000000"], ("--resamples", "from 1 to 100000", "held in memory")),
    (["report", "--resamples", "1e4"], ("--resamples", "integer")),
    (["report", "--seed", "-1"], ("--seed", "0 or more")),
    (["fetch-release", "--base-url", ""], ("--base-url", "must not be empty")),
    (["fetch-release", "--base-url", "mirror"], ("--base-url", "http://")),
    (["manifest", "--frobnicate"], ("unrecognized arguments",)),
]


@pytest.mark.parametrize("argv,words", BAD_ARGUMENTS, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_bad_argument_is_one_line_and_exit_2(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # default --data data/ does not exist here; argparse must fail first
    code, err = _run(argv, capsys, tmp_path)
    assert code == 2
    _expect_one_line(err, argv[0], words)
    assert list(tmp_path.iterdir()) == []  # nothing was created


# --- 2. values inside data files -------------------------------------------------------------
def _first(records: list[dict], pred: Callable[[dict], bool]) -> int:
    return next(i for i, r in enumerate(records) if pred(r))


def _clean(t: dict) -> bool:
    return not t["label"]["faulty"]


def _faulty(t: dict) -> bool:
    return t["label"]["faulty"]


# (name, which record, change, key words): trajectories, checked by `check FILE` and `report`
BAD_LABELS: list[tuple[str, Callable[[dict], bool], Callable[[dict], None], tuple[str, ...]]] = [
    ("clean-with-type", _clean, lambda t: t["label"].update(failure_type="wrong_tool"), ("label", "clean label")),
    ("clean-with-step", _clean, lambda t: t["label"].update(failure_step=1), ("label", "clean label")),
    ("clean-wrong-outcome", _clean, lambda t: t["label"].update(outcome_correct=False), ("label", "outcome_correct")),
    (
        "faulty-no-type-silent",
        _faulty,
        lambda t: t["label"].update(failure_type=None, failure_step=None, outcome_correct=True),
        ("label", "must name failure_type"),
    ),
    ("type-without-step", _faulty, lambda t: t["label"].update(failure_step=None), ("label", "both")),
    ("step-without-type", _faulty, lambda t: t["label"].update(failure_type=None), ("label", "both")),
    (
        "step-out-of-range",
        _faulty,
        lambda t: t["label"].update(failure_step=99),
        ("label.failure_step", "99", "not a step"),
    ),
    (
        "step-negative",
        _faulty,
        lambda t: t["label"].update(failure_step=-1),
        ("label.failure_step", "greater than or equal to 0"),
    ),
    ("step-fraction", _faulty, lambda t: t["label"].update(failure_step=1.5), ("label.failure_step", "integer")),
    ("step-string", _faulty, lambda t: t["label"].update(failure_step="2"), ("label.failure_step", "integer")),
    ("type-not-a-name", _faulty, lambda t: t["label"].update(failure_type="wrong tool"), ("label.failure_type",)),
]


@pytest.mark.parametrize("verb", ["check", "report"])
@pytest.mark.parametrize("name,which,change,words", BAD_LABELS, ids=[c[0] for c in BAD_LABELS])
def test_bad_label_names_file_line_and_field(verb, name, which, change, words, rows, tmp_path, capsys):
    trajs = [json.loads(json.dumps(t)) for t in rows[0]]
    i = _first(trajs, which)
    change(trajs[i])
    d = _data_dir(tmp_path, (trajs, rows[1]))
    argv = ["check", str(d / "trajectories.jsonl")] if verb == "check" else ["report", "--data", str(d)]
    code, err = _run(argv, capsys, tmp_path)
    assert code == 2
    _expect_one_line(err, verb, (f"{d / 'trajectories.jsonl'}:{i + 1}:", "invalid Trajectory", *words))


def _flagged(v: dict) -> bool:
    return v["faulty"]


def _unflagged(v: dict) -> bool:
    return not v["faulty"]


def _any(v: dict) -> bool:
    return True


# verdicts, checked by `report --data DIR`
BAD_VERDICTS: list[tuple[str, Callable[[dict], bool], Callable[[dict], None], tuple[str, ...]]] = [
    (
        "confidence-above-one",
        _any,
        lambda v: v.update(confidence=1.7),
        ("confidence", "less than or equal to 1", "1.7"),
    ),
    ("confidence-negative", _any, lambda v: v.update(confidence=-0.1), ("confidence", "greater than or equal to 0")),
    ("confidence-nan", _any, lambda v: v.update(confidence=float("nan")), ("confidence", "finite")),
    ("confidence-infinite", _any, lambda v: v.update(confidence=float("inf")), ("confidence", "finite")),
    ("confidence-string", _any, lambda v: v.update(confidence="0.9"), ("confidence", "number")),
    ("confidence-bool", _any, lambda v: v.update(confidence=True), ("confidence", "number")),
    ("clean-with-type", _unflagged, lambda v: v.update(failure_type="wrong_tool"), ("clean verdict",)),
    ("clean-with-step", _unflagged, lambda v: v.update(failure_step=0), ("clean verdict",)),
    (
        "step-out-of-range",
        _flagged,
        lambda v: v.update(failure_step=99),
        ("failure_step", "99", "not a step of trajectory"),
    ),
    ("step-negative", _flagged, lambda v: v.update(failure_step=-1), ("failure_step", "greater than or equal to 0")),
    ("step-fraction", _flagged, lambda v: v.update(failure_step=0.5), ("failure_step", "integer")),
    ("judge-empty", _any, lambda v: v.update(judge_id=""), ("judge_id", "must not be empty")),
    ("judge-blank", _any, lambda v: v.update(judge_id="  "), ("judge_id", "must not be empty")),
    ("judge-pipe", _any, lambda v: v.update(judge_id="step|x"), ("judge_id", "'|'")),
    ("judge-newline", _any, lambda v: v.update(judge_id="step\nx"), ("judge_id", "printable")),
    ("judge-tab", _any, lambda v: v.update(judge_id="step\tx"), ("judge_id", "printable")),
    ("judge-control", _any, lambda v: v.update(judge_id="step\x07x"), ("judge_id", "printable")),
    ("judge-not-text", _any, lambda v: v.update(judge_id=7), ("judge_id", "string")),
    ("latency-negative", _any, lambda v: v.update(latency_s=-1.0), ("latency_s", "greater than or equal to 0")),
    ("latency-nan", _any, lambda v: v.update(latency_s=float("nan")), ("latency_s", "finite")),
    (
        "prompt-tokens-negative",
        _any,
        lambda v: v.update(prompt_tokens=-5),
        ("prompt_tokens", "greater than or equal to 0"),
    ),
    ("prompt-tokens-text", _any, lambda v: v.update(prompt_tokens="abc"), ("prompt_tokens", "integer")),
    ("completion-tokens-fraction", _any, lambda v: v.update(completion_tokens=1.5), ("completion_tokens", "integer")),
    ("unknown-field", _any, lambda v: v.update(score=3), ("score", "Extra inputs")),
]


@pytest.mark.parametrize("name,which,change,words", BAD_VERDICTS, ids=[c[0] for c in BAD_VERDICTS])
def test_bad_verdict_names_file_line_and_field(name, which, change, words, rows, tmp_path, capsys):
    verdicts = [dict(v) for v in rows[1]]
    i = _first(verdicts, which)
    change(verdicts[i])
    d = _data_dir(tmp_path, (rows[0], verdicts))
    code, err = _run(["report", "--data", str(d), "--resamples", "20"], capsys, tmp_path)
    assert code == 2
    _expect_one_line(err, "report", (f"{d / 'verdicts.jsonl'}:{i + 1}:", "invalid Verdict", *words))


def test_bad_episode_cost_names_file_line_and_field(rows, tmp_path, capsys):
    traj = dict(rows[0][0])
    traj.pop("label")
    ep = {
        "episode_id": "E1",
        "stratum": "happy",
        "agent_model": "m",
        "trajectory": traj,
        "violations": [],
        "outcome": {},
        "expected": {},
        "stop": "replied",
        "error": None,
        "latency_s": -2.0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }
    f = tmp_path / "organic.jsonl"
    _write(f, [ep])
    code, err = _run(["check", str(f)], capsys, tmp_path)
    assert code == 2
    _expect_one_line(err, "check", (f"{f}:1:", "invalid Episode", "latency_s", "greater than or equal to 0"))


# --- 3. files that cannot be used ------------------------------------------------------------
DIR = "<a directory>"
"""Replace the file by a directory of the same name."""


def _edit(path: Path, change: Any) -> None:
    if change == DIR:
        path.unlink(missing_ok=True)
        path.mkdir()
    elif callable(change):
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        path.write_bytes(change)


V, T = "data/verdicts.jsonl", "data/trajectories.jsonl"
# (name, files to prepare {path under tmp: bytes, DIR or text -> text}, argv with {d} = tmp, key words)
FILE_CASES: list[tuple[str, dict[str, Any], list[str], tuple[str, ...]]] = [
    ("check-missing", {}, ["check", "{d}/absent.jsonl"], ("absent.jsonl", "file not found")),
    ("check-directory", {}, ["check", "{d}"], ("holds no trajectories.jsonl",)),
    ("check-not-utf8", {"t.jsonl": b'{"x": "\xff\xfe"}\n'}, ["check", "{d}/t.jsonl"], ("t.jsonl", "not UTF-8", "0xff")),
    ("check-empty", {"t.jsonl": b""}, ["check", "{d}/t.jsonl"], ("t.jsonl", "empty")),
    ("check-blank-lines", {"t.jsonl": b"\n  \n"}, ["check", "{d}/t.jsonl"], ("t.jsonl", "empty")),
    ("check-not-json", {"t.jsonl": b"{oops\n"}, ["check", "{d}/t.jsonl"], ("t.jsonl:1:", "not valid JSON")),
    (
        "check-out-under-a-file",
        {},
        ["check", "{d}/" + T, "--out", "{d}/" + T + "/v.jsonl"],
        ("trajectories.jsonl", "File exists"),
    ),
    ("check-out-is-a-directory", {"out": DIR}, ["check", "{d}/" + T, "--out", "{d}/out"], ("out",)),
    ("report-missing-dir", {}, ["report", "--data", "{d}/nowhere"], ("nowhere", "file not found")),
    ("report-data-is-a-file", {}, ["report", "--data", "{d}/" + V], ("file not found",)),
    ("report-empty-verdicts", {V: b""}, ["report", "--data", "{d}/data"], ("verdicts.jsonl", "no verdicts")),
    (
        "report-empty-trajectories",
        {T: b""},
        ["report", "--data", "{d}/data"],
        ("trajectories.jsonl", "no trajectories"),
    ),
    (
        "report-trajectories-not-utf8",
        {T: b"\x80\n"},
        ["report", "--data", "{d}/data"],
        ("trajectories.jsonl", "not UTF-8"),
    ),
    ("report-verdicts-a-directory", {V: DIR}, ["report", "--data", "{d}/data"], ("verdicts.jsonl", "Is a directory")),
    (
        "report-unknown-trajectory",
        {V: lambda s: s.replace('"trajectory_id": "', '"trajectory_id": "zz', 1)},
        ["report", "--data", "{d}/data"],
        ("verdicts.jsonl:1:", "unknown trajectory"),
    ),
    (
        "report-duplicate-verdict",
        {V: lambda s: s * 2},
        ["report", "--data", "{d}/data"],
        ("verdicts.jsonl:17:", "duplicate verdict"),
    ),
    (
        "report-unlabelled",
        {T: lambda s: s.replace('"label": {', '"label": null, "x": {', 1).replace(', "x": {', "", 1)},
        ["report", "--data", "{d}/data"],
        ("trajectories.jsonl",),
    ),
    (
        "report-json-under-a-file",
        {},
        ["report", "--data", "{d}/data", "--resamples", "5", "--json", "{d}/" + V + "/r.json"],
        ("verdicts.jsonl", "File exists"),
    ),
    ("manifest-missing-dir", {}, ["manifest", "--data", "{d}/nowhere"], ("nowhere", "no such directory")),
    ("manifest-nothing-to-list", {"empty": DIR}, ["manifest", "--data", "{d}/empty"], ("nothing to list",)),
    ("manifest-check-missing-dir", {}, ["manifest", "--check", "--data", "{d}/nowhere"], ("no such directory",)),
    (
        "manifest-check-malformed",
        {"data/SHA256SUMS": b"abc\n"},
        ["manifest", "--check", "--data", "{d}/data"],
        ("SHA256SUMS:1:", "expected"),
    ),
    (
        "manifest-check-mismatch",
        {"data/SHA256SUMS": b"0" * 64 + b"  verdicts.jsonl\n"},
        ["manifest", "--check", "--data", "{d}/data"],
        ("verdicts.jsonl", "checksum mismatch"),
    ),
    (
        "manifest-check-listed-missing",
        {"data/SHA256SUMS": b"0" * 64 + b"  runs.jsonl\n"},
        ["manifest", "--check", "--data", "{d}/data"],
        ("runs.jsonl", "missing"),
    ),
    ("build-dataset-out-under-a-file", {}, ["build-dataset", "--n", "8", "--out", "{d}/" + V], ("verdicts.jsonl",)),
    ("run-missing-trajectories", {}, [*RUN, "--data", "{d}/nowhere"], ("nowhere", "file not found")),
    ("run-empty-trajectories", {T: b""}, [*RUN, "--data", "{d}/data"], ("no trajectories",)),
    ("run-trajectories-not-utf8", {T: b"\xc3(\n"}, [*RUN, "--data", "{d}/data"], ("not UTF-8",)),
    ("agent-data-is-a-file", {}, [*AGENT, "--data", "{d}/" + V], ("verdicts.jsonl",)),
]


@pytest.mark.parametrize("name,files,argv,words", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_unusable_file_is_one_line_and_exit_2(name, files, argv, words, rows, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _data_dir(tmp_path, rows)
    for rel, change in files.items():
        _edit(tmp_path / rel, change)
    argv = [a.format(d=tmp_path) for a in argv]
    code, err = _run(argv, capsys, tmp_path)
    assert code == 2
    _expect_one_line(err, argv[0], words)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes files whatever their permissions")
@pytest.mark.parametrize("target", ["input", "output-dir"])
def test_permission_denied_is_one_line_and_exit_2(target, rows, tmp_path, capsys):
    d = _data_dir(tmp_path, rows)
    src = d / "trajectories.jsonl"
    if target == "input":
        src.chmod(0o000)
        argv = ["check", str(src)]
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        argv = ["check", str(src), "--out", str(ro / "v.jsonl")]
    try:
        code, err = _run(argv, capsys, tmp_path)
    finally:
        src.chmod(0o644)
    assert code == 2
    _expect_one_line(err, "check", ("Permission denied",))


# --- 4. manifest --check with nothing to check -----------------------------------------------
@pytest.mark.parametrize("manifest", [None, "", "\n\n"], ids=["no-manifest", "empty-manifest", "blank-manifest"])
def test_manifest_check_with_nothing_to_check_exits_1(manifest, rows, tmp_path, capsys):
    d = _data_dir(tmp_path, rows)
    if manifest is not None:
        (d / "SHA256SUMS").write_text(manifest)
    code, err = _run(["manifest", "--check", "--data", str(d)], capsys, tmp_path)
    assert code == 1
    _expect_one_line(err, "manifest", ("nothing to check",))


def test_a_valid_data_set_passes_every_check_above(rows, tmp_path, capsys):
    # the fixture itself is good, so each case above fails for its own reason only
    d = _data_dir(tmp_path, rows)
    assert main(["check", str(d / "trajectories.jsonl")]) == 0
    assert main(["report", "--data", str(d), "--resamples", "20"]) == 0
    assert capsys.readouterr().err == ""


# --- 5. through a real process -----------------------------------------------------------------
@pytest.mark.parametrize(
    "argv,words",
    [
        (["check", "no-such-file.jsonl"], ("check", "file not found")),
        (["run", "--model", "m", "--limit", "-5"], ("run", "--limit", "at least 1")),
        (["report", "--data", "."], ("report", "file not found")),
    ],
    ids=["check-missing", "run-limit", "report-empty-dir"],
)
def test_no_traceback_reaches_the_terminal(argv, words, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "trajectory_judge.cli", *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    _expect_one_line(proc.stderr, argv[0], words)


@pytest.mark.parametrize(
    "text,ok", [("1", True), ("65535", True), ("0", False), ("65536", False), ("-1", False), ("http", False)]
)
def test_port_converter_accepts_exactly_1_to_65535(text, ok):
    # for `python tools/serve.py --port` (declared outside the trajectory-judge verbs)
    import argparse

    from trajectory_judge.cli.argtypes import port

    if ok:
        assert port(text) == int(text)
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="integer|1 to 65535"):
            port(text)
