"""Exported requests, answered anywhere, imported: the verdicts of a direct run.

Every flow here is offline: the answers come from the loopback stand-in server (``fake_server.py``,
as a hosted OpenAI-compatible API whose verdict is a hash of the prompt).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from book_folders import stand_in_answer
from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.run import batch

JUDGES = "outcome,step,selfcons"
LIMIT = "8"


def _folder(root: Path, name: str) -> Path:
    d = root / name
    assert main(["build-dataset", "--out", str(d), "--n", "40"]) == 0
    return d


def _export(d: Path, out: Path, *extra: str) -> int:
    return main(
        ["export-requests", "--data", str(d), "--judges", JUDGES, "--model", "stand-in", "--limit", LIMIT]
        + ["--out", str(out), "--quiet", *extra]
    )


def _direct(d: Path, srv: FakeModelServer) -> None:
    argv = ["run", "--data", str(d), "--judges", JUDGES, "--model", "stand-in", "--limit", LIMIT]
    assert main([*argv, "--base-url", srv.url + "/v1", "--quiet", "--concurrency", "4"]) == 0


def verdicts(d: Path, name: str = "verdicts.jsonl") -> list[dict]:
    """The verdicts of a folder's file, sorted by key, without their timing."""
    rows = [json.loads(line) for line in (d / name).read_text().splitlines()]
    for r in rows:
        r.pop("latency_s")
    return sorted(rows, key=lambda r: (r["trajectory_id"], r["judge_id"]))


def _stand_in() -> FakeModelServer:
    return FakeModelServer(["ok"], hosted=True, answer=stand_in_answer)


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """A folder judged directly, and a twin with its requests exported and answered by the same stand-in."""
    root = tmp_path_factory.mktemp("batch")
    direct, mine = _folder(root, "direct"), _folder(root, "mine")
    req, res = root / "requests.jsonl", root / "results.jsonl"
    assert _export(mine, req) == 0
    with _stand_in() as srv:
        _direct(direct, srv)
        assert main(["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--quiet"]) == 0
    return root, direct, mine, req, res


def test_export_answer_and_import_give_the_verdicts_and_members_of_a_direct_run(flow, capsys):
    root, direct, mine, req, res = flow
    assert main(["import-results", str(res), "--data", str(mine), "--requests", str(req)]) == 0
    assert "48 written, 0 already on disk" in capsys.readouterr().err  # 24 verdicts (8 x 3) and 24 members
    assert verdicts(mine) == verdicts(direct) and len(verdicts(mine)) == 24
    assert verdicts(mine, "members.jsonl") == verdicts(direct, "members.jsonl")
    record = json.loads((mine / "runs.jsonl").read_text().splitlines()[-1])
    assert record["backend"] == "batch" and record["written"] == 48
    assert record["batch"]["unanswered_requests"] == 0
    assert set(record["judges"]) == {"outcome:stand-in", "step:stand-in", "selfcons3:stand-in"}


def test_a_reimport_adds_nothing_not_even_a_run_record(flow, capsys):
    root, direct, mine, req, res = flow
    assert main(["import-results", str(res), "--data", str(mine), "--requests", str(req)]) == 0
    before = {p.name: p.read_bytes() for p in mine.iterdir() if p.is_file() and p.name != ".lock"}
    assert main(["import-results", str(res), "--data", str(mine), "--requests", str(req)]) == 0
    assert "0 written, 48 already on disk" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in mine.iterdir() if p.is_file() and p.name != ".lock"} == before


def test_every_request_is_a_batch_line_whose_custom_id_hashes_the_judge_and_body(flow):
    root, direct, mine, req, res = flow
    lines = [json.loads(x) for x in req.read_text().splitlines()]
    assert {(x["method"], x["url"]) for x in lines} == {("POST", "/v1/chat/completions")}
    ids = [x["custom_id"] for x in lines]
    assert len(set(ids)) == len(ids) and all(len(i) <= 64 and i.startswith("tj-") for i in ids)
    settings = json.loads(batch.settings_path(req).read_text())
    judge_of = {}
    for x in lines:
        matches = [j for j in settings["judge_ids"] if batch.custom_id(j, x["body"]) == x["custom_id"]]
        assert len(matches) == 1
        judge_of[x["custom_id"]] = matches[0]
    seeds = sorted(x["body"]["seed"] for x in lines if judge_of[x["custom_id"]] == "selfcons3:stand-in")
    assert seeds == [7] * 8 + [8] * 8 + [9] * 8  # one request per judge x trajectory x seed
    # what determines the answer changes the id: the seed, the judge id
    body = lines[0]["body"]
    assert batch.custom_id("step:a", body) != batch.custom_id("step:b", body)
    assert batch.custom_id("step:a", body) != batch.custom_id("step:a", {**body, "seed": 8})
    assert batch.custom_id("step:a", body) == batch.custom_id("step:a", json.loads(json.dumps(body)))


def test_a_prompt_ensemble_at_its_own_temperature_and_seeds_exported_and_imported_gives_the_direct_runs_verdicts(
    tmp_path, capsys
):
    d, direct = _folder(tmp_path, "mine"), _folder(tmp_path, "direct")
    prompt = tmp_path / "strict.txt"
    prompt.write_text("Judge this agent strictly.\n{procedure}\n{view}\n", encoding="utf-8")
    own = [
        "--prompt",
        str(prompt),
        "--judges",
        "selfcons",
        "--selfcons-temperature",
        "0.5",
        "--selfcons-seeds",
        "1,2,3",
    ]
    own += ["--model", "stand-in", "--limit", "4"]
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    assert main(["export-requests", "--data", str(d), "--out", str(req), "--quiet", *own]) == 0
    settings = json.loads(batch.settings_path(req).read_text())
    assert settings["judge_ids"] == ["selfcons3+strict:stand-in", "step+strict:stand-in"]
    assert settings["members"] == {
        "selfcons3+strict:stand-in": [f"step+strict@T0.5/seed{s}:stand-in" for s in (1, 2, 3)]
    }
    assert (settings["selfcons_temperature"], settings["selfcons_seeds"]) == (0.5, [1, 2, 3])
    bodies = [json.loads(x)["body"] for x in req.read_text().splitlines()]
    sampled = sorted((b["temperature"], b["seed"]) for b in bodies if b["temperature"] > 0)
    assert sampled == [(0.5, s) for s in (1, 2, 3) for _ in range(4)]
    assert all(b["messages"][0]["content"].startswith("Judge this agent strictly.") for b in bodies)
    with _stand_in() as srv:
        argv = ["run", "--data", str(direct), "--base-url", srv.url + "/v1", "--quiet", *own]
        assert main(argv) == 0
        assert main(["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--quiet"]) == 0
    assert main(["import-results", str(res), "--data", str(d), "--requests", str(req)]) == 0
    assert "20 written, 0 already on disk" in capsys.readouterr().err  # 4 x (3 members, the ensemble, the single pass)
    assert verdicts(d) == verdicts(direct) and verdicts(d, "members.jsonl") == verdicts(direct, "members.jsonl")
    rec, run = (json.loads((f / "runs.jsonl").read_text().splitlines()[-1]) for f in (d, direct))
    assert rec["fingerprints"] == run["fingerprints"] and rec["members"] == run["members"]
    assert rec["decoding"]["selfcons"] == run["decoding"]["selfcons"] == {"temperature": 0.5, "seeds": [1, 2, 3]}


def test_identical_requests_are_written_once(tmp_path):
    d = _folder(tmp_path, "d")
    rows = (d / "trajectories.jsonl").read_text().splitlines()
    twin = json.loads(rows[0]) | {"trajectory_id": "TWIN-0", "instance_id": "TWIN-0"}
    (d / "trajectories.jsonl").write_text("\n".join([rows[0], json.dumps(twin), *rows[1:]]) + "\n")
    out = tmp_path / "r.jsonl"
    assert main(["export-requests", "--data", str(d), "--judges", "step", "--model", "m", "--limit", "2"]
                + ["--out", str(out), "--quiet"]) == 0  # fmt: skip
    assert len(out.read_text().splitlines()) == 1


@pytest.mark.slow
def test_a_half_written_results_file_imports_what_is_whole_and_lists_what_is_missing(flow, tmp_path, capsys):
    root, direct, _, req, res = flow
    mine = _folder(tmp_path, "mine")
    whole = res.read_text().splitlines(keepends=True)
    half = tmp_path / "half.jsonl"
    half.write_text("".join(whole[:15]) + whole[15][:40])  # a download cut off mid-line
    missing = tmp_path / "missing.txt"
    args = ["import-results", str(half), "--data", str(mine), "--requests", str(req), "--missing", str(missing)]
    assert main(args) == 0
    err = capsys.readouterr().err
    ids = missing.read_text().split()
    n_requests = len(req.read_text().splitlines())
    assert len(ids) == n_requests - 15 and f"{len(ids)} requests have no answer" in err
    assert "half.jsonl:16" in err and ids[0] in err
    got = {(v["trajectory_id"], v["judge_id"]): v for v in verdicts(mine)}
    want = {(v["trajectory_id"], v["judge_id"]): v for v in verdicts(direct)}
    assert got and len(got) < len(want) and all(want[k] == v for k, v in got.items())
    # the rest of the file later: the import completes the folder
    assert main(["import-results", str(res), "--data", str(mine), "--requests", str(req)]) == 0
    assert verdicts(mine) == verdicts(direct)


@pytest.mark.slow
def test_run_requests_resumes_asking_only_what_is_unanswered(tmp_path, capsys):
    d = _folder(tmp_path, "d")
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert _export(d, req) == 0
    lines = req.read_text().splitlines(keepends=True)
    with _stand_in() as srv:
        assert main(["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--quiet"]) == 0
        first = srv.generations
        with open(res, "a") as fh:
            fh.write('{"id": "x", "custom_id": "tj-')  # killed mid-append
        assert main(["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res)]) == 0
        assert srv.generations == first == len(lines)
    err = capsys.readouterr().err
    assert "0 answered" in err and f"{len(lines)} already in" in err and "res.jsonl.torn-1" in err
    assert len(res.read_text().splitlines()) == len(lines)


def endpoint_counts(err: str, url: str) -> dict[str, int | bool]:
    """What the summary's line for the endpoint ``url`` counts (its words as keys), and whether it was given up."""
    import re

    [line] = [ln for ln in err.splitlines() if f" endpoint {url}/v1: " in ln]
    patterns = {"answered": r"(\d+) answered", "refused": r"(\d+) refused", "rate_limited": r"rate limited (\d+) time"}
    got: dict[str, int | bool] = {k: int(m.group(1)) if (m := re.search(p, line)) else 0 for k, p in patterns.items()}
    handed_on = re.search(r"given up after (\d+) failed", line)
    got["failed"] = int(handed_on.group(1)) if handed_on else 0
    got["given_up"] = handed_on is not None
    return got


def totals(err: str) -> tuple[int, int, int]:
    """The summary's answered, refused and unanswered counts, over every endpoint."""
    import re

    [line] = [ln for ln in err.splitlines() if re.search(r": \d+ answered, \d+ refused by the server", ln)]
    counts = [re.search(p, line) for p in (r"(\d+) answered", r"(\d+) refused", r"(\d+) unanswered")]
    answered, refused, unanswered = (int(m.group(1)) if m else 0 for m in counts)
    return answered, refused, unanswered


@pytest.mark.slow
def test_an_endpoint_that_keeps_failing_is_given_up_and_another_answers_its_requests(tmp_path, capsys):
    d = _folder(tmp_path, "d")
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert _export(d, req, "--judges", "step") == 0
    with FakeModelServer(["500"], hosted=True) as bad, _stand_in() as good:
        argv = ["run-requests", str(req), "--endpoint", bad.url + "/v1", "--endpoint", good.url + "/v1"]
        assert main([*argv, "--out", str(res), "--retries", "0", "--concurrency", "2"]) == 0
    err = capsys.readouterr().err
    gone = endpoint_counts(err, bad.url)
    assert gone["given_up"] and gone["answered"] == 0 and gone["failed"] >= 1  # what it had in flight
    assert endpoint_counts(err, good.url) == dict(answered=8, refused=0, rate_limited=0, failed=0, given_up=False)
    assert "HTTP 500" in err and totals(err) == (8, 0, 0)
    assert good.generations == 8 and len(res.read_text().splitlines()) == 8


def _killed_and_live(tmp_path: Path, engine: str, capsys) -> tuple[FakeModelServer, FakeModelServer, str, Path, Path]:
    """40 requests over an endpoint killed after one answer and a live one that rate-limits once at first.

    The killed one answers its first request slowly (a client sends one request alone until the
    endpoint has answered) and dies with the next two in flight, by when the live one has taken
    every other request: only a live endpoint that takes over the killed one's requests answers
    them all.
    """
    d = _folder(tmp_path, "d")
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert _export(d, req) == 0
    killed = FakeModelServer(["ok"], hosted=True, answer=stand_in_answer, delay=1.5, kill_after=1)
    live = FakeModelServer([("429", 0), "ok"], hosted=True, answer=stand_in_answer)
    with killed, live:
        argv = ["run-requests", str(req), "--endpoint", killed.url + "/v1", "--endpoint", live.url + "/v1"]
        argv += ["--out", str(res), "--retries", "0", "--concurrency", "2", "--engine", engine]
        code = main(argv)
        assert killed.killed
    err = capsys.readouterr().err
    assert code == 0, err
    return killed, live, err, req, res


def _assert_every_request_answered_once(req: Path, res: Path) -> None:
    asked = [json.loads(x)["custom_id"] for x in req.read_text().splitlines()]
    answered = [json.loads(x) for x in res.read_text().splitlines()]
    assert sorted(r["custom_id"] for r in answered) == sorted(asked) and len(asked) == 40
    assert {r["response"]["status_code"] for r in answered} == {200}


@pytest.mark.slow
def test_a_killed_endpoints_requests_are_answered_by_the_other_endpoint_with_the_local_engine(tmp_path, capsys):
    killed, live, err, req, res = _killed_and_live(tmp_path, "local", capsys)
    _assert_every_request_answered_once(req, res)
    assert killed.generations == 1 and live.generations == 40  # 39 answers and one rate limit
    # it answered one; what it had in flight when it died (one or two, as the threads ran) was handed on
    gone = endpoint_counts(err, killed.url)
    assert gone["given_up"] and gone["answered"] == 1 and gone["failed"] in (1, 2)
    assert endpoint_counts(err, live.url) == dict(answered=39, refused=0, rate_limited=1, failed=0, given_up=False)
    assert totals(err) == (40, 0, 0)


@pytest.mark.slow
def test_with_every_endpoint_dead_the_rest_is_left_for_a_rerun_and_the_exit_is_75(tmp_path, capsys):
    d = _folder(tmp_path, "d")
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert _export(d, req, "--judges", "step") == 0
    with FakeModelServer(["ok"], hosted=True, answer=stand_in_answer, kill_after=3) as srv:
        argv = ["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--retries", "0"]
        assert main([*argv, "--concurrency", "1", "--quiet"]) == 75
    err = capsys.readouterr().err
    assert totals(err) == (3, 0, 5) and "rerun" in err
    assert endpoint_counts(err, srv.url) == dict(answered=3, refused=0, rate_limited=0, failed=1, given_up=True)
    assert len(res.read_text().splitlines()) == 3


@pytest.mark.slow
def test_an_export_answered_through_the_format_imports_to_the_verdicts_of_a_direct_run(flow, tmp_path, capsys):
    from trajectory_judge.run.batch_format import BatchResult, read_requests

    root, direct, _, req, _ = flow
    mine = _folder(tmp_path, "mine")
    res = tmp_path / "by-hand.jsonl"
    with _stand_in() as srv:  # its answer bodies, built here: no server is asked
        lines = [
            BatchResult.of(n, r.custom_id, 200, srv.openai_body(stand_in_answer(r.body["messages"][0]["content"])))
            for n, r in enumerate(read_requests(req).values())
        ]
    res.write_text("".join(x.line() + "\n" for x in reversed(lines)))  # the order does not matter
    assert srv.generations == 0
    assert main(["import-results", str(res), "--data", str(mine), "--requests", str(req)]) == 0
    assert "48 written" in capsys.readouterr().err
    assert verdicts(mine) == verdicts(direct)
    assert verdicts(mine, "members.jsonl") == verdicts(direct, "members.jsonl")


@pytest.mark.slow
def test_run_requests_waits_out_a_rate_limit_as_run_does_and_answers_everything(tmp_path, capsys):
    d = _folder(tmp_path, "d")
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert _export(d, req, "--judges", "outcome", "--limit", "2") == 0
    with FakeModelServer([("429", 0), "ok"], hosted=True, answer=stand_in_answer) as srv:
        argv = ["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--concurrency", "1"]
        assert main(argv) == 0
    assert srv.generations == 3  # the rate-limited request was asked again, after the pause
    assert sorted(json.loads(x)["response"]["status_code"] for x in res.read_text().splitlines()) == [200, 200]


@pytest.mark.slow
def test_a_refused_request_is_an_error_line_the_import_names(tmp_path, capsys):
    d = _folder(tmp_path, "d")
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert _export(d, req, "--judges", "outcome", "--limit", "2") == 0
    with FakeModelServer(["quota", "ok"], hosted=True, answer=stand_in_answer) as srv:
        assert (
            main(["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--concurrency", "1"])
            == 0
        )
    err = capsys.readouterr().err
    assert "1 answered" in err and "1 refused" in err
    statuses = sorted(json.loads(x)["response"]["status_code"] for x in res.read_text().splitlines())
    assert statuses == [200, 429]
    assert main(["import-results", str(res), "--data", str(d), "--requests", str(req)]) == 0
    err = capsys.readouterr().err
    assert "1 written" in err and "1 requests have no answer" in err and "1 of them" in err


def test_the_commands_refuse_bad_input_with_one_line_and_exit_2(flow, tmp_path, capsys):
    root, direct, mine, req, res = flow
    cases = {
        "is the requests file": ["run-requests", str(req), "--endpoint", "http://127.0.0.1:9/v1", "--out", str(req)],
        "an input of this command": _export_argv(mine, mine / "trajectories.jsonl"),
        "settings.json: not found": ["import-results", str(res), "--data", str(mine), "--requests", str(res)],
    }
    bad = tmp_path / "bad.jsonl"
    bad.write_text(res.read_text().splitlines()[0] + "\nnot json\n" + res.read_text().splitlines()[1] + "\n")
    cases["bad.jsonl:2"] = ["import-results", str(bad), "--data", str(mine), "--requests", str(req)]
    edited = tmp_path / "edited.jsonl"
    edited.write_text(req.read_text().replace('"seed": 7', '"seed": 70', 1))
    batch.settings_path(edited).write_text(batch.settings_path(req).read_text())
    cases["its bytes are not those"] = ["import-results", str(res), "--data", str(mine), "--requests", str(edited)]
    other = _folder(tmp_path, "other")
    (other / "trajectories.jsonl").write_text("".join((other / "trajectories.jsonl").read_text().splitlines(True)[:24]))
    cases["not the trajectories"] = ["import-results", str(res), "--data", str(other), "--requests", str(req)]
    capsys.readouterr()
    for words, argv in cases.items():
        assert main(argv) == 2, words
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (words, err)


def _export_argv(d: Path, out: Path) -> list[str]:
    return ["export-requests", "--data", str(d), "--model", "m", "--out", str(out)]


def test_import_refuses_a_pinned_folder_and_a_folder_another_process_writes(flow, tmp_path, capsys):
    from lock_holder import held_by_another_process

    root, direct, mine, req, res = flow
    argv = ["import-results", str(res), "--data", str(mine), "--requests", str(req)]
    with held_by_another_process(mine):
        assert main(argv) == 2
    assert "is being written by" in capsys.readouterr().err
    (mine / "SHA256SUMS").write_text("")
    try:
        assert main(argv) == 2
        assert "SHA256SUMS" in capsys.readouterr().err
    finally:
        (mine / "SHA256SUMS").unlink()


def test_engine_ray_without_ray_says_how_to_get_it(flow, monkeypatch, tmp_path, capsys):
    root, direct, mine, req, res = flow
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed: importing it fails
    argv = ["run-requests", str(req), "--endpoint", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o.jsonl")]
    assert main([*argv, "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert "trajectory-judge[scale]" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()


@pytest.fixture(scope="module")
def ray_session():
    """One local Ray session for the tests here that drive the Ray engine in this process (the engine joins it)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_over_two_stand_ins_then_import_gives_the_verdicts_of_a_direct_run(flow, ray_session, tmp_path, capsys):
    root, direct, _, req, _ = flow
    mine = _folder(tmp_path, "mine")
    out = tmp_path / "ray.jsonl"
    with _stand_in() as a, _stand_in() as b:
        argv = ["run-requests", str(req), "--endpoint", a.url + "/v1", "--endpoint", b.url + "/v1"]
        assert main([*argv, "--out", str(out), "--engine", "ray", "--concurrency", "2"]) == 0
    n = len(req.read_text().splitlines())
    assert a.generations > 0 and b.generations > 0 and a.generations + b.generations == n
    assert main(["import-results", str(out), "--data", str(mine), "--requests", str(req)]) == 0
    assert verdicts(mine) == verdicts(direct)
    assert verdicts(mine, "members.jsonl") == verdicts(direct, "members.jsonl")


@pytest.mark.slow
def test_a_killed_endpoints_requests_are_answered_by_the_other_endpoint_with_the_ray_engine(
    ray_session, tmp_path, capsys
):
    killed, live, err, req, res = _killed_and_live(tmp_path, "ray", capsys)
    _assert_every_request_answered_once(req, res)
    assert killed.generations == 1 and live.generations == 40  # 39 answers and one rate limit
    # its share was every other request: 1 answered, 2 cut off when it died, 17 not yet sent, all handed on
    assert endpoint_counts(err, killed.url) == dict(answered=1, refused=0, rate_limited=0, failed=19, given_up=True)
    assert endpoint_counts(err, live.url) == dict(answered=39, refused=0, rate_limited=1, failed=0, given_up=False)
    assert totals(err) == (40, 0, 0)


# --- the guide page, as a user runs it -------------------------------------------------------------
PAGE = Path(__file__).resolve().parents[1] / "book" / "guide" / "scale.md"


def page_commands() -> list[str]:
    """The package's commands in the page's bash blocks, in order (continuations joined)."""
    import re

    blocks = re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.M | re.S)
    lines = [ln.strip() for b in blocks for ln in b.replace("\\\n", " ").splitlines()]
    return [ln for ln in lines if ln.startswith(("trajectory-judge ", "RAY_ADDRESS="))]


def _shell(cmd: str, cwd: Path, urls: dict[str, str]) -> None:
    import os
    import shlex
    import subprocess

    for page_url, real in urls.items():
        cmd = cmd.replace(page_url, real)
    words = shlex.split(cmd)
    words[0] = str(Path(sys.executable).with_name("trajectory-judge"))
    env = {**os.environ, "PYTHONPATH": str(PAGE.parents[2])}
    done = subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (cmd, done.stderr[-2000:])


@pytest.mark.slow
def test_the_scale_pages_commands_give_the_verdicts_of_a_direct_run_with_either_engine(tmp_path):
    pytest.importorskip("ray")
    cmds = page_commands()
    verb = {c: c.split()[2 if c.startswith("RAY_ADDRESS=") else 1] for c in cmds}
    setup = [c for c in cmds if verb[c] in ("build-dataset", "export-requests")]
    engines = [c for c in cmds if verb[c] == "run-requests"]
    back = [c for c in cmds if verb[c] in ("import-results", "report")]
    assert len(setup) == 2 and len(back) == 2 and len(engines) == 3
    local, on_ray, cluster = engines
    assert "--engine ray" in on_ray and cluster.startswith("RAY_ADDRESS=") and "--engine ray" in cluster
    assert "--engine" not in local
    export = shlex_words(setup[1])
    direct = tmp_path / "direct"
    assert main(shlex_words(setup[0].replace("mine/", str(direct)))[1:]) == 0  # the page's dataset
    with _stand_in() as a, _stand_in() as b:
        argv = ["run", "--data", str(direct), "--quiet", "--base-url", a.url + "/v1", "--concurrency", "4"]
        argv += [w for opt in ("--judges", "--model", "--limit") for w in (opt, export[export.index(opt) + 1])]
        assert main(argv) == 0
        urls = {
            "http://127.0.0.1:8000/v1": a.url + "/v1",
            "http://127.0.0.1:8001/v1": b.url + "/v1",
        }
        for engine in (local, on_ray):  # the cluster's command is the Ray one with an address: no cluster here
            work = tmp_path / engine.split("--engine")[-1].split()[0] if "--engine" in engine else tmp_path / "local"
            work.mkdir()
            before = a.generations + b.generations
            for cmd in [*setup, engine, *back]:
                _shell(cmd, work, urls)
            asked = len((work / "requests.jsonl").read_text().splitlines())
            answered = [json.loads(line)["custom_id"] for line in (work / "results.jsonl").read_text().splitlines()]
            assert len(answered) == len(set(answered)) == asked  # every request answered once in the results
            # each generated once by the local engine; Ray Data runs a batch (four times the default concurrency of
            # 4) again when its actor fails, so a request may be generated twice there, and kept once
            generated = a.generations + b.generations - before
            assert generated == asked if "--engine" not in engine else asked <= generated <= asked + 16, generated
            assert verdicts(work / "mine") == verdicts(direct), engine
            assert verdicts(work / "mine", "members.jsonl") == verdicts(direct, "members.jsonl"), engine


def shlex_words(cmd: str) -> list[str]:
    import shlex

    return shlex.split(cmd)
