"""The testbed as inspect_ai tasks, run offline against the loopback stand-in server, read back by
``import-inspect`` into a folder that ``report``, ``misses`` and the book work on.

inspect's ``openai-api`` provider is pointed at tests/fake_server.py with ``FAKE_BASE_URL`` and
``FAKE_API_KEY`` (model ``openai-api/fake/m``); its ``mockllm`` is not used, since it downloads a tokenizer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[inspect]'")

from fake_server import NOT_JSON, VALID_CONTENT, FakeModelServer
from inspect_ai import eval as inspect_eval
from strict_schema import strict_violations

from trajectory_judge.cli import main
from trajectory_judge.inspect_tasks import outcome_judge, reply_judge, selfcons_judge, step_judge
from trajectory_judge.inspect_tasks.samples import load_dataset, response_format
from trajectory_judge.judges.prompts import build_prompt
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.models import FAILURE_TYPES, DataError, Label, load_trajectories, load_verdicts

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai-api/fake/m"
STEP_ID = "step:m"
"""The step judge's id on the stand-in's model ``m``, whether ``run`` or an import of inspect's log made it."""
JM = "m"  # the name the stand-in server is sent, which judge ids carry (as `run --model m` gives them)


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    shutil.copy(ROOT / "data" / "trajectories.jsonl", d / "trajectories.jsonl")
    return d


@pytest.fixture(scope="module")
def stand_in():
    # one server for the module: inspect keeps a model's client for the process, so its base URL must not move
    with FakeModelServer(hosted=True, api_key="test-key") as srv:
        saved = {k: os.environ.get(k) for k in ("FAKE_BASE_URL", "FAKE_API_KEY")}
        os.environ.update(FAKE_BASE_URL=srv.url + "/v1", FAKE_API_KEY="test-key")
        yield srv
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.update({k: v})


@pytest.fixture
def server(stand_in):
    stand_in.requests.clear()
    stand_in.content = VALID_CONTENT
    yield stand_in
    stand_in.content = VALID_CONTENT


def run_eval(tasks, log_dir: Path) -> list[str]:
    logs = inspect_eval(tasks, model=MODEL, log_dir=str(log_dir), display="none", max_retries=1, timeout=60)
    assert all(log.status == "success" for log in logs), [str(log.error)[:500] for log in logs]
    return [str(log.location) for log in logs]


def test_samples_are_the_prompt_our_runner_sends_under_ids_that_name_no_fault(folder):
    trajs = load_trajectories(folder / "trajectories.jsonl")
    for view in ("outcome", "step", "reply"):
        samples = list(load_dataset(view, folder))
        assert len(samples) == 400
        for s, t in zip(samples, trajs):
            assert s.input == build_prompt(view, t)
            assert t.trajectory_id not in str(s.id) and not any(ft in str(s.id) for ft in (*FAILURE_TYPES, "clean"))
            assert Label.model_validate_json(s.target) == t.label
            assert s.metadata["trajectory_id"] == t.trajectory_id
    assert len({s.id for s in load_dataset("step", folder)}) == 400
    assert [s.id for s in load_dataset("step", folder)] == [
        s.id for s in load_dataset("step", folder)
    ]  # eval-retry finds them


def test_the_response_format_is_our_schema_in_the_subset_hosted_strict_modes_accept():
    for view in ("outcome", "step", "reply"):
        fmt = response_format(view)
        assert fmt.strict and fmt.name == "verdict"
        assert not strict_violations(fmt.json_schema.model_dump(exclude_none=True))
        assert list(fmt.json_schema.properties) == list(response_schema(view)["properties"])


def test_limit_is_the_stratified_prefix_run_limit_takes(folder):
    trajs = load_trajectories(folder / "trajectories.jsonl")
    assert [s.metadata["trajectory_id"] for s in load_dataset("step", folder, 40)] == [
        t.trajectory_id for t in trajs[:40]
    ]
    with pytest.raises(ValueError, match="limit must be a positive"):
        load_dataset("step", folder, 0)


@pytest.fixture(scope="module")
def listed_tasks() -> list[str]:
    """What ``inspect list tasks trajectory_judge`` prints from the repository's root, one task a line."""
    inspect_cli = Path(sys.executable).with_name("inspect")
    argv = [str(inspect_cli), "list", "tasks", "trajectory_judge"]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120).stdout.split()


@pytest.mark.slow  # the inspect CLI in a subprocess
def test_inspect_list_tasks_finds_one_task_per_view_and_the_ensemble(listed_tasks):
    assert {line.split("@")[1] for line in listed_tasks} == {
        "outcome_judge",
        "step_judge",
        "reply_judge",
        "selfcons_judge",
    }


@pytest.mark.slow  # three inspect evals end to end
def test_eval_then_import_gives_verdicts_report_and_misses_read(folder, server, tmp_path, capsys):
    logs = run_eval(
        [
            step_judge(data=str(folder), limit=16),
            outcome_judge(data=str(folder), limit=16),
            selfcons_judge(data=str(folder), limit=16),
        ],
        tmp_path / "logs",
    )
    sent = [b for m, p, b in server.requests if p == "/v1/chat/completions"]
    assert len(sent) == 16 + 16 + 48
    assert all(b["response_format"]["json_schema"]["strict"] for b in sent)
    sampled = sorted((b["temperature"], b["seed"]) for b in sent if b.get("temperature") == 0.7)
    assert sampled == sorted([(0.7, s) for s in (7, 8, 9)] * 16)  # one epoch per seed of the ensemble
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    verdicts = load_verdicts(folder / "verdicts.jsonl")
    assert sorted({v.judge_id for v in verdicts}) == [f"outcome:{JM}", f"selfcons3:{JM}", f"step:{JM}"]
    assert len(verdicts) == 48 and len(load_verdicts(folder / "members.jsonl")) == 48
    assert all(
        v.prompt_tokens == 123 and v.completion_tokens == 45 for v in verdicts if not v.judge_id.startswith("selfcons")
    )
    runs = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 3 and {r["backend"] for r in runs} == {"inspect_ai"} and {r["model"] for r in runs} == {MODEL}
    assert {r["inspect"]["log"] for r in runs} == set(logs)


@pytest.mark.slow  # two inspect evals end to end
def test_importing_a_log_twice_adds_nothing(folder, server, tmp_path):
    logs = run_eval([step_judge(data=str(folder), limit=8)], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    before = {p.name: p.read_bytes() for p in folder.glob("*.jsonl")}
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    assert {p.name: p.read_bytes() for p in folder.glob("*.jsonl")} == before and len(before) == 4


@pytest.mark.slow  # an inspect eval, import, report and misses end to end
def test_report_and_misses_work_on_an_imported_folder_and_misses_names_the_transcript(folder, server, tmp_path, capsys):
    logs = run_eval([selfcons_judge(data=str(folder), limit=8)], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    capsys.readouterr()
    assert main(["report", "--data", str(folder), "--resamples", "200"]) == 0
    assert f"selfcons3:{JM}" in capsys.readouterr().out
    assert main(["misses", "--data", str(folder), "--judge", f"selfcons3:{JM}", "--json"]) == 0
    alarms = json.loads(capsys.readouterr().out)["false_alarms"]
    assert alarms and all(
        a["transcript"].startswith(str(Path(logs[0]).resolve())) and "epochs 1, 2, 3" in a["transcript"] for a in alarms
    )


def test_an_unparseable_answer_is_stored_as_our_runner_stores_it(folder, server, tmp_path):
    server.content = NOT_JSON
    logs = run_eval([outcome_judge(data=str(folder), limit=8)], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    verdicts = load_verdicts(folder / "verdicts.jsonl")
    assert len(verdicts) == 8 and all(v.unparseable and not v.faulty and v.confidence == 0.5 for v in verdicts)


def test_a_log_of_another_folder_or_a_file_that_is_no_log_is_refused_in_one_line(folder, server, tmp_path, capsys):
    logs = run_eval([step_judge(data=str(folder), limit=8)], tmp_path / "logs")
    other = tmp_path / "other"
    assert main(["build-dataset", "--seed", "8", "--out", str(other)]) == 0
    capsys.readouterr()
    assert main(["import-inspect", *logs, "--data", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sample" in err and ("not in this folder" in err or "prompt in the log" in err)
    assert not (other / "verdicts.jsonl").exists()
    junk = tmp_path / "junk.eval"
    junk.write_text("not a log")
    assert main(["import-inspect", str(junk), "--data", str(folder)]) == 2
    assert "not an inspect eval log" in capsys.readouterr().err


@pytest.mark.slow  # the whole book, built once on the merged folder of tests/reader_book.py
def test_the_book_builds_on_an_imported_folder(reader_book):
    from reader_book import INSPECT_JUDGES

    imported = reader_book.root / "imported"
    verdicts = load_verdicts(imported / "verdicts.jsonl")
    assert sorted({v.judge_id for v in verdicts}) == sorted(INSPECT_JUDGES) and len(verdicts) == 2 * 40
    runs = [json.loads(line) for line in (imported / "runs.jsonl").read_text().splitlines()]
    assert {r["backend"] for r in runs} == {"inspect_ai"}
    assert {r["inspect"]["log"] for r in runs} == set(reader_book.flows["imported"]["logs"])
    page = reader_book.page("notebooks/judges")
    assert all(j in page for j in INSPECT_JUDGES)


def test_a_selfcons_log_without_its_sampling_temperature_is_refused_in_one_line(folder, server, tmp_path, capsys):
    from inspect_ai.log import read_eval_log, write_eval_log

    (path,) = run_eval([selfcons_judge(data=str(folder), limit=2)], tmp_path / "logs")
    log = read_eval_log(path)
    del log.eval.metadata["trajectory_judge"]["temperature"]
    write_eval_log(log, path)
    assert main(["import-inspect", path, "--data", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trajectory_judge.temperature" in err
    assert not (folder / "verdicts.jsonl").exists()


# --- a task names its folder, and leaves a pinned one alone ------------------------------------------
@pytest.fixture
def pinned(folder):
    assert main(["manifest", "--data", str(folder)]) == 0
    return folder


@pytest.mark.parametrize("make", [outcome_judge, step_judge, reply_judge, selfcons_judge], ids=lambda f: f.__name__)
def test_a_task_without_a_folder_or_on_a_pinned_one_refuses_in_one_line_naming_force(make, pinned):
    with pytest.raises(DataError, match=r"^-T data=DIR is required: ") as exc:
        make(limit=4)
    assert "\n" not in str(exc.value)
    with pytest.raises(DataError, match=r"is pinned by .*SHA256SUMS.*-T force=true") as exc:
        make(data=str(pinned), limit=4)
    assert "\n" not in str(exc.value)
    for force in (True, "true"):  # -T force=true reaches the task as a boolean or as text
        assert make(data=str(pinned), limit=4, force=force).metadata["trajectory_judge"]["data"] == str(pinned)


@pytest.mark.slow
def test_inspect_eval_of_a_pinned_folder_calls_no_model_and_writes_no_log(pinned, server, tmp_path):
    """``inspect eval trajectory_judge/step_judge -T data=PINNED`` from a folder of one's own, as a user types it."""
    before = {p.name: p.read_bytes() for p in pinned.iterdir()}
    inspect_cli = Path(sys.executable).with_name("inspect")
    argv = [str(inspect_cli), "eval", "trajectory_judge/step_judge", "--model", MODEL, "-T", f"data={pinned}"]
    argv += ["-T", "limit=4", "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "-T force=true" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert not (tmp_path / "logs").exists() and not server.requests
    assert {p.name: p.read_bytes() for p in pinned.iterdir()} == before


def test_import_into_a_pinned_folder_needs_force_and_then_says_how_to_repin(folder, server, tmp_path, capsys):
    logs = run_eval([step_judge(data=str(folder), limit=8)], tmp_path / "logs")
    assert main(["manifest", "--data", str(folder)]) == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    capsys.readouterr()
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is pinned by" in err and "--force" in err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # no verdicts, no record, no lock file
    assert main(["import-inspect", *logs, "--data", str(folder), "--force"]) == 0
    err = capsys.readouterr().err
    assert "8 written" in err and "no longer pins verdicts.jsonl, runs.jsonl" in err
    assert f"`trajectory-judge manifest --data {folder}`" in err


# --- transcript links name the path that wrote each verdict ---------------------------------------
def _links(folder: Path) -> set[tuple[str, str]]:
    path = folder / "transcripts.jsonl"
    if not path.exists():
        return set()
    return {(r["trajectory_id"], r["judge_id"]) for r in map(json.loads, path.read_text().splitlines())}


def _run_step(folder: Path, server, limit: int) -> int:
    """``run`` the step judge on the stand-in under the id an import of its inspect log gives."""
    argv = ["run", "--data", str(folder), "--judges", "step", "--base-url", server.url + "/v1", "--model", "m"]
    argv += ["--api-key-env", "FAKE_API_KEY", "--limit", str(limit), "--quiet"]
    return main(argv)


def test_import_links_transcripts_only_for_the_verdicts_it_wrote_so_misses_names_no_log_for_a_run_verdict(
    folder, server, tmp_path, capsys
):
    assert _run_step(folder, server, 2) == 0
    run_made = {(v.trajectory_id, v.judge_id) for v in load_verdicts(folder / "verdicts.jsonl")}
    logs = run_eval([step_judge(data=str(folder), limit=4)], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    assert "2 written, 2 already on disk" in capsys.readouterr().err
    links = _links(folder)
    assert len(run_made) == 2 and len(links) == 2 and not links & run_made
    assert main(["misses", "--data", str(folder), "--judge", STEP_ID, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    named = {a["trajectory_id"]: a["transcript"] for kind in ("misses", "false_alarms") for a in found[kind]}
    assert named and all((t in {tid for tid, _ in links}) == (n is not None) for t, n in named.items())


@pytest.mark.slow  # inspect evals, imports and forget end to end
def test_forget_removes_a_judges_transcript_links_so_a_new_import_links_afresh(folder, server, tmp_path, capsys):
    first = run_eval([step_judge(data=str(folder), limit=4)], tmp_path / "first")
    assert main(["import-inspect", *first, "--data", str(folder)]) == 0
    assert len(_links(folder)) == 4
    assert main(["forget", "--data", str(folder), "--judge", STEP_ID]) == 0
    assert not _links(folder)
    kept = [json.loads(line) for line in (folder / "forgotten.jsonl").read_text().splitlines()]
    assert sum("log" in r and "sample_id" in r for r in kept) == 4  # set aside, not lost
    second = run_eval([step_judge(data=str(folder), limit=4)], tmp_path / "second")
    assert main(["import-inspect", *second, "--data", str(folder)]) == 0
    logs = {r["log"] for r in map(json.loads, (folder / "transcripts.jsonl").read_text().splitlines())}
    assert logs == {str(Path(second[0]).resolve())}


# --- one judge, one id, one cost, whichever path ran it ---------------------------------------------
RUBRIC = "Check the agent against its procedure.\n{procedure}\n\n{view}\n"


def _run_cli(folder: Path, server, *extra: str) -> int:
    base = os.environ["FAKE_BASE_URL"]
    argv = ["run", "--data", str(folder), "--base-url", base, "--model", JM, "--api-key-env", "FAKE_API_KEY"]
    return main([*argv, "--limit", "6", "--quiet", *extra])


@pytest.mark.parametrize("own_prompt", [False, True], ids=["built-in prompt", "own prompt"])
def test_run_and_inspect_give_the_same_judge_one_id_and_latency_and_tokens_that_mean_the_same(
    folder, server, tmp_path, own_prompt
):
    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    task = step_judge(data=str(folder), limit=4, prompt=str(prompt) if own_prompt else None)
    logs = run_eval([task], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    assert _run_cli(folder, server, *(["--prompt", str(prompt)] if own_prompt else ["--judges", "step"])) == 0
    judge = "step+rubric:m" if own_prompt else "step:m"
    verdicts = load_verdicts(folder / "verdicts.jsonl")
    assert {v.judge_id for v in verdicts} == {judge} and len(verdicts) == 6  # 4 imported, 2 judged by run
    inspect_rec, run_rec = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert inspect_rec["judges"] == run_rec["judges"] == [judge]
    assert inspect_rec["latency"] == run_rec["latency"]
    per_i, per_r = inspect_rec["per_judge"][judge], run_rec["per_judge"][judge]
    assert (per_i["prompt_tokens"], per_i["completion_tokens"]) == (per_r["prompt_tokens"], per_r["completion_tokens"])
    # the model call's own seconds in both: well under the sample's working time, which adds inspect's own work
    from inspect_ai.log import read_eval_log

    samples = read_eval_log(logs[0]).samples
    assert per_i["s_per_verdict"] < sum(s.total_time for s in samples) / len(samples)
    if own_prompt:
        assert inspect_rec["prompts"][judge]["sha256"] == run_rec["prompts"][judge]["sha256"]
        assert inspect_rec["prompts"][judge]["text"] == RUBRIC
        sent = [b["messages"][0]["content"] for _, p, b in server.requests if p == "/v1/chat/completions"]
        assert all(s.startswith("Check the agent") for s in sent) and len(sent) == 6


def test_the_selfcons_task_over_a_prompt_of_ones_own_imports_under_the_ids_run_gives_and_run_resumes_it(
    folder, server, tmp_path
):
    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    logs = run_eval([selfcons_judge(data=str(folder), limit=2, prompt=str(prompt))], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(folder)]) == 0
    sent = [b["messages"][0]["content"] for _, p, b in server.requests if p == "/v1/chat/completions"]
    assert len(sent) == 6 and all(s.startswith("Check the agent") for s in sent)  # the template, three seeds
    assert {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")} == {"selfcons3+rubric:m"}
    members = {v.judge_id for v in load_verdicts(folder / "members.jsonl")}
    assert members == {f"step+rubric@T0.7/seed{s}:m" for s in (7, 8, 9)}
    # run resumes the same judge (its fingerprint is the log's): only the trajectories the log did not judge
    assert _run_cli(folder, server, "--prompt", str(prompt), "--judges", "selfcons") == 0
    verdicts = load_verdicts(folder / "verdicts.jsonl")
    assert sum(v.judge_id == "selfcons3+rubric:m" for v in verdicts) == 6
    inspect_rec, run_rec = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert inspect_rec["fingerprints"]["selfcons3+rubric:m"] == run_rec["fingerprints"]["selfcons3+rubric:m"]
    assert inspect_rec["prompts"]["selfcons3+rubric:m"]["text"] == RUBRIC


@pytest.mark.parametrize(
    "model, name",
    [
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("openai-api/fake/m", "m"),
        ("ollama/qwen2.5:14b", "qwen2.5:14b"),
        ("together/meta-llama/Llama-3-8b", "meta-llama/Llama-3-8b"),
    ],
)
def test_an_imported_judge_carries_the_model_name_the_server_was_sent(model, name):
    from trajectory_judge.inspect_tasks.scoring import judge_model_name

    assert judge_model_name(model) == name


def test_a_log_whose_prompt_text_was_changed_is_refused_in_one_line(folder, server, tmp_path, capsys):
    from inspect_ai.log import read_eval_log, write_eval_log

    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    (path,) = run_eval([step_judge(data=str(folder), limit=2, prompt=str(prompt))], tmp_path / "logs")
    log = read_eval_log(path)
    log.eval.metadata["trajectory_judge"]["prompt"]["text"] += "x"
    write_eval_log(log, path)
    assert main(["import-inspect", path, "--data", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SHA-256" in err and not (folder / "verdicts.jsonl").exists()


# --- inspect as a user calls it ------------------------------------------------------------------------
TASKS_DIR = ROOT / "trajectory_judge" / "inspect_tasks"


def test_a_file_task_reads_relative_data_and_prompt_from_where_the_user_stands(folder, tmp_path, monkeypatch):
    """inspect creates a task named by its file in that file's folder; the shell's PWD still says where the user is."""
    (tmp_path / "rubric.txt").write_text(RUBRIC, encoding="utf-8")
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.chdir(TASKS_DIR)
    task = step_judge(data="mine", limit=2, prompt="rubric.txt")
    meta = task.metadata["trajectory_judge"]
    assert meta["data"] == str(folder) and meta["prompt"]["text"] == RUBRIC
    monkeypatch.chdir(tmp_path)  # a registry task: created where the user stands
    assert step_judge(data="mine", limit=2).metadata["trajectory_judge"]["data"] == str(folder)


@pytest.mark.parametrize("make", [outcome_judge, step_judge, reply_judge, selfcons_judge], ids=lambda f: f.__name__)
def test_a_missing_data_folder_is_one_line_naming_it(make, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match=r"-T data=.*nowhere: no such folder") as exc:
        make(data="nowhere", limit=2)
    assert "\n" not in str(exc.value) and str(tmp_path / "nowhere") in str(exc.value)


@pytest.mark.slow  # the inspect CLI in a subprocess
def test_inspect_eval_of_the_name_list_tasks_prints_judges_a_relative_folder(listed_tasks, folder, server, tmp_path):
    inspect_cli = Path(sys.executable).with_name("inspect")
    name = str(ROOT / next(n for n in listed_tasks if n.endswith("@step_judge")))  # a file task, from another folder
    env = {**os.environ, "PWD": str(tmp_path), "PYTHONPATH": str(ROOT)}
    argv = [str(inspect_cli), "eval", name, "--model", MODEL, "-T", "data=mine", "-T", "limit=2"]
    r = subprocess.run(
        [*argv, "--log-dir", "logs", "--display", "none"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-2000:]
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 1
    assert main(["import-inspect", str(logs[0]), "--data", str(folder)]) == 0
    assert len(load_verdicts(folder / "verdicts.jsonl")) == 2


@pytest.mark.slow  # the inspect CLI in a subprocess
def test_inspect_eval_of_a_missing_folder_is_one_line_and_no_traceback(server, tmp_path):
    inspect_cli = Path(sys.executable).with_name("inspect")
    argv = [str(inspect_cli), "eval", "trajectory_judge/step_judge", "--model", MODEL, "-T", "data=nowhere"]
    r = subprocess.run([*argv, "--display", "none"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode != 0 and "Traceback" not in out and out.count("\n") == 0
    assert str(tmp_path / "nowhere") in out and "no such folder" in out and not server.requests


# --- one id, one fingerprint, whichever path ran the judge ----------------------------------------------
V1 = "Judge this support agent.\n{procedure}\n\n{view}\n"
V2 = "Judge this support agent strictly.\n{procedure}\n\n{view}\n"


def _prompt_file(where: Path, text: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "rubric.txt").write_text(text, encoding="utf-8")
    return where / "rubric.txt"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".lock"}


def test_import_inspect_of_an_edited_template_is_refused_in_one_line_and_writes_nothing(
    folder, server, tmp_path, capsys
):
    one, two = _prompt_file(tmp_path / "one", V1), _prompt_file(tmp_path / "two", V2)
    assert _run_cli(folder, server, "--prompt", str(one)) == 0  # 6 verdicts of step+rubric:m under V1
    edited = run_eval([step_judge(data=str(folder), limit=8, prompt=str(two))], tmp_path / "edited")
    same = run_eval([step_judge(data=str(folder), limit=8, prompt=str(one))], tmp_path / "same")
    capsys.readouterr()
    before = _files(folder)
    assert main(["import-inspect", *same, *edited, "--data", str(folder)]) == 2  # the good log is not written either
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing was written" in err and "trajectory-judge forget" in err
    assert "step+rubric:m" in err and "differ in prompt" in err and "rename the -T prompt file" in err
    assert _files(folder) == before
    assert main(["import-inspect", *same, "--data", str(folder)]) == 0  # run's judge and inspect's are one judge
    assert "2 written, 6 already on disk" in capsys.readouterr().err
    run_rec, inspect_rec = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert run_rec["fingerprints"] == inspect_rec["fingerprints"]


def test_merge_takes_one_model_judged_through_run_in_one_folder_and_inspect_in_another(
    folder, server, tmp_path, capsys
):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(folder / "trajectories.jsonl", other / "trajectories.jsonl")
    assert _run_cli(folder, server, "--judges", "step") == 0
    logs = run_eval([step_judge(data=str(other), limit=6)], tmp_path / "logs")
    assert main(["import-inspect", *logs, "--data", str(other)]) == 0
    capsys.readouterr()
    assert main(["merge", str(folder), str(other), "--out", str(tmp_path / "merged")]) == 0
    err = capsys.readouterr().err
    assert "; 6 verdicts differed" in err and "latency or tokens" in err
    assert load_verdicts(tmp_path / "merged" / "verdicts.jsonl") == load_verdicts(folder / "verdicts.jsonl")
