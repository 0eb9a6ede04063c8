"""A judge id pins what the judge is: its fingerprint (model, prompt and schema digests, decoding) is recorded
by every writer, and a run, import or merge that would put another judge under the same id is refused in one
line that writes nothing. Offline, against the loopback stand-in server (``fake_server.py``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from book_folders import stand_in_answer
from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.models import Fingerprint, load_verdicts, recorded_fingerprints

ROOT = Path(__file__).resolve().parents[1]
V1 = "Judge this support agent.\n{procedure}\n\n{view}\n"
V2 = "Judge this support agent strictly.\n{procedure}\n\n{view}\n"


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    shutil.copy(ROOT / "data" / "trajectories.jsonl", d / "trajectories.jsonl")
    return d


@pytest.fixture(scope="module")
def srv():
    with FakeModelServer(["ok"], hosted=True, answer=stand_in_answer) as s:
        yield s


def _prompt(where: Path, text: str, name: str = "rubric.txt") -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / name).write_text(text, encoding="utf-8")
    return where / name


def _run(folder: Path, srv, *extra: str, limit: int = 4) -> int:
    argv = ["run", "--data", str(folder), "--base-url", srv.url + "/v1", "--model", "m", "--quiet"]
    return main([*argv, "--limit", str(limit), *extra])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".lock"}


def _refused(capsys, *words: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line
    assert "fingerprint" in err and "nothing was written" in err and "trajectory-judge forget" in err, err
    for w in words:
        assert w in err, (w, err)
    return err


# --- the record ----------------------------------------------------------------------------------
def test_a_fingerprint_names_what_differs_in_words_and_spells_one_value_one_way():
    a = Fingerprint(model="m", prompt_sha256="p1", schema_sha256="s", temperature=0, max_tokens=512, seed=7)
    assert a == Fingerprint(model="m", prompt_sha256="p1", schema_sha256="s", temperature=0.0, max_tokens=512, seed=7)
    b = Fingerprint(model="n", prompt_sha256="p2", schema_sha256="s", temperature=0.9, max_tokens=256, seed=7, top_p=1)
    assert a.differences(b) == [
        "prompt",
        "model m → n",
        "temperature 0 → 0.9",
        "max tokens 512 → 256",
        "top-p unset → 1",
    ]
    assert a.digest != b.digest and len(a.short) == 12 and Fingerprint.from_record(a.record()) == a


def test_only_a_record_that_wrote_a_judges_verdicts_speaks_for_it():
    fp = Fingerprint(model="m", prompt_sha256="p", schema_sha256="s", temperature=0, max_tokens=512, seed=7)
    other = Fingerprint(model="m", prompt_sha256="q", schema_sha256="s", temperature=0, max_tokens=512, seed=7)
    wrote = {"fingerprints": {"step:m": fp.record()}, "per_judge": {"step:m": {"verdicts": 3}}}
    stopped = {"fingerprints": {"step:m": other.record()}, "per_judge": {}}  # stopped before its first verdict
    members = {"fingerprints": {"selfcons3:m": fp.record()}, "members": {"selfcons3:m": ["step@T0.7/seed7:m"]}}
    members["per_judge"] = {"step@T0.7/seed7:m": {"verdicts": 1}}  # only members judged again
    got = recorded_fingerprints([("a:1", wrote), ("a:2", stopped), ("a:3", members), ("a:4", {"judges": ["x"]})])
    assert {j: [o.fingerprint for o in v] for j, v in got.items()} == {"step:m": [fp], "selfcons3:m": [fp]}
    assert got["step:m"][0].where == "a:1"


# --- run ---------------------------------------------------------------------------------------
def test_run_records_each_judges_fingerprint_and_resumes_under_the_same_one(folder, srv, tmp_path, capsys):
    prompt = _prompt(tmp_path / "p", V1)
    assert _run(folder, srv, "--prompt", str(prompt), "--judges", "step,selfcons") == 0
    assert _run(folder, srv, "--prompt", str(prompt), "--judges", "step,selfcons", limit=6) == 0
    first, second = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert set(first["fingerprints"]) == {"step:m", "step+rubric:m", "selfcons3+rubric:m"}  # selfcons samples it
    assert first["fingerprints"] == second["fingerprints"]
    own = first["fingerprints"]["step+rubric:m"]
    assert own["prompt_sha256"] == first["prompts"]["step+rubric:m"]["sha256"] and own["model"] == "m"
    ensemble = first["fingerprints"]["selfcons3+rubric:m"]
    assert ensemble["prompt_sha256"] == own["prompt_sha256"] == first["prompts"]["selfcons3+rubric:m"]["sha256"]
    assert (ensemble["temperature"], ensemble["seeds"], ensemble["seed"]) == (0.7, [7, 8, 9], None)
    assert (own["temperature"], own["max_tokens"], own["seed"]) == (0.0, 512, 7)


@pytest.mark.parametrize("where", ["edited in place", "same name, another folder"])
def test_resuming_with_an_edited_template_of_the_same_name_is_refused_in_one_line_and_writes_nothing(
    folder, srv, tmp_path, capsys, where
):
    prompt = _prompt(tmp_path / "p", V1)
    assert _run(folder, srv, "--prompt", str(prompt)) == 0
    edited = _prompt(tmp_path / ("p" if where == "edited in place" else "elsewhere"), V2)
    capsys.readouterr()
    before, sent = _files(folder), srv.generations
    assert _run(folder, srv, "--prompt", str(edited), limit=8) == 2
    _refused(capsys, "step+rubric:m", "differ in prompt", "rename the --prompt file", "--judge-model-name")
    assert _files(folder) == before and srv.generations == sent  # no verdict, no run record, no request
    # the ways out: a new name, or the old judge forgotten
    renamed = _prompt(tmp_path / "p", V2, "rubric-strict.txt")
    assert _run(folder, srv, "--prompt", str(renamed), limit=8) == 0
    assert main(["forget", "--data", str(folder), "--judge", "step+rubric:m"]) == 0
    assert _run(folder, srv, "--prompt", str(edited), limit=8) == 0
    ids = {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")}
    assert ids == {"step+rubric:m", "step+rubric-strict:m"}


def test_resuming_at_another_temperature_is_refused_in_one_line_and_writes_nothing(folder, srv, capsys):
    assert _run(folder, srv, "--judges", "step") == 0
    capsys.readouterr()
    before = _files(folder)
    assert _run(folder, srv, "--judges", "step", "--temperature", "0.9", limit=8) == 2
    err = _refused(capsys, "step:m", "temperature 0 → 0.9")
    first = json.loads((folder / "runs.jsonl").read_text().splitlines()[0])["fingerprints"]["step:m"]["sha256"]
    assert first[:12] in err and "rename the --prompt" not in err  # a built-in judge is renamed by its model name
    assert _files(folder) == before
    assert _run(folder, srv, "--judges", "step", "--temperature", "0.9", "--judge-model-name", "m-hot", limit=8) == 0


def _ids(folder: Path, name: str = "verdicts.jsonl") -> set[str]:
    return {v.judge_id for v in load_verdicts(folder / name)}


def test_selfcons_over_a_prompt_of_ones_own_samples_the_template_and_stores_members_and_ensemble_under_its_ids(
    folder, srv, tmp_path
):
    from trajectory_judge.judges.selfcons import aggregate

    prompt = _prompt(tmp_path / "p", V1)
    sent = srv.generations
    assert _run(folder, srv, "--prompt", str(prompt), "--judges", "selfcons", "--selfcons-seeds", "3,4,5,6,11") == 0
    assert srv.generations - sent == 4 * 6  # five members and the template's single pass, per trajectory
    assert _ids(folder) == {"step+rubric:m", "selfcons5+rubric:m"}
    assert _ids(folder, "members.jsonl") == {f"step+rubric@T0.7/seed{s}:m" for s in (3, 4, 5, 6, 11)}
    members = load_verdicts(folder / "members.jsonl")
    for v in load_verdicts(folder / "verdicts.jsonl"):  # each ensemble verdict is the aggregate of its members
        if v.judge_id == "selfcons5+rubric:m":
            mine = [m for m in members if m.trajectory_id == v.trajectory_id]
            again = aggregate(mine, trajectory_id=v.trajectory_id, judge_id=v.judge_id)
            assert again.model_dump(exclude={"latency_s"}) == v.model_dump(exclude={"latency_s"})
    prompts = [b["messages"][0]["content"] for _, p, b in srv.requests[-24:] if p.endswith("/chat/completions")]
    assert all(p.startswith("Judge this support agent.") for p in prompts)  # the template, not the step prompt
    (rec,) = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert rec["decoding"]["selfcons"] == {"temperature": 0.7, "seeds": [3, 4, 5, 6, 11]}
    assert rec["members"] == {"selfcons5+rubric:m": [f"step+rubric@T0.7/seed{s}:m" for s in (3, 4, 5, 6, 11)]}


def test_resuming_the_prompt_ensemble_skips_the_members_on_disk(folder, srv, tmp_path, capsys):
    prompt = _prompt(tmp_path / "p", V1)
    own = ("--prompt", str(prompt), "--judges", "selfcons")
    assert _run(folder, srv, *own) == 0
    sent = srv.generations
    capsys.readouterr()
    assert (
        main(["run", "--data", str(folder), "--base-url", srv.url + "/v1", "--model", "m", "--limit", "6", *own]) == 0
    )
    assert srv.generations - sent == 2 * 4  # only the two new trajectories: three members and the single pass
    assert "20 already on disk" in capsys.readouterr().err  # 4 x (3 members, the ensemble, the single pass)
    assert len(load_verdicts(folder / "members.jsonl")) == 6 * 3


def test_report_keeps_the_prompt_ensemble_and_the_built_in_one_apart_in_order_pairs_and_members(
    folder, srv, tmp_path, capsys
):
    prompt = _prompt(tmp_path / "p", V1)
    assert _run(folder, srv, "--prompt", str(prompt), "--judges", "selfcons") == 0
    assert _run(folder, srv, "--judges", "step,selfcons") == 0
    capsys.readouterr()
    js = tmp_path / "r.json"
    assert main(["report", "--data", str(folder), "--resamples", "50", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    body = json.loads(js.read_text())
    assert list(body["judges"]) == [
        "step+rubric:m",
        "step:m",
        "selfcons3+rubric:m",
        "selfcons3:m",
    ]  # family, then first seen
    for ensemble in ("selfcons3+rubric:m", "selfcons3:m"):  # each re-derived from its own three members
        (line,) = [ln for ln in out.splitlines() if ln.startswith(f"{ensemble} re-derived")]
        assert re.findall(r"\d+", line.removeprefix(ensemble))[:3] == ["3", "4", "4"]  # members, trajectories, same
    for member in ("step@T0.7/seed7:m", "step+rubric@T0.7/seed9:m"):
        assert any(line.startswith(member + " ") for line in out.splitlines())
    assert "selfcons3+rubric − step+rubric · m" in out and "selfcons3 − step · m" in out
    prints = [line for line in out.splitlines() if line.startswith("Fingerprints")][0]
    assert "selfcons3+rubric:m " in prints and "selfcons3:m " in prints


@pytest.mark.parametrize(
    "change, differs",
    [
        ("template", "differ in prompt"),
        ("temperature", "temperature 0.7 → 0.9"),
        ("seeds", "seeds 7,8,9 → 7,8,10"),
    ],
)
def test_resuming_the_prompt_ensemble_with_an_edited_template_or_other_decoding_is_refused_in_one_line(
    folder, srv, tmp_path, capsys, change, differs
):
    prompt = _prompt(tmp_path / "p", V1)
    assert _run(folder, srv, "--prompt", str(prompt), "--judges", "selfcons") == 0
    capsys.readouterr()
    before, sent = _files(folder), srv.generations
    extra = {
        "template": ["--prompt", str(_prompt(tmp_path / "p", V2))],
        "temperature": ["--prompt", str(prompt), "--selfcons-temperature", "0.9"],
        "seeds": ["--prompt", str(prompt), "--selfcons-seeds", "7,8,10"],
    }[change]
    assert _run(folder, srv, *extra, "--judges", "selfcons", limit=6) == 2
    _refused(capsys, "judge selfcons3+rubric:m", differs, "rename the --prompt file")
    assert _files(folder) == before and srv.generations == sent


# --- export-requests, run-requests, import-results ---------------------------------------------------
def _export(folder: Path, out: Path, *extra: str) -> int:
    return main(["export-requests", "--data", str(folder), "--limit", "6", "--out", str(out), "--quiet", *extra])


def _answer(srv, req: Path, res: Path) -> None:
    assert main(["run-requests", str(req), "--endpoint", srv.url + "/v1", "--out", str(res), "--quiet"]) == 0


def _without_latency(folder: Path, name: str = "verdicts.jsonl") -> list[dict]:
    rows = [json.loads(line) for line in (folder / name).read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k != "latency_s"} for r in rows), key=json.dumps)


def test_export_with_a_prompt_of_ones_own_and_two_models_imports_to_the_verdicts_of_run(folder, srv, tmp_path):
    prompt = _prompt(tmp_path / "p", V1)
    direct = tmp_path / "direct"
    direct.mkdir()
    shutil.copy(folder / "trajectories.jsonl", direct / "trajectories.jsonl")
    own = ["--prompt", str(prompt), "--view", "step", "--model", "a,b", "--judges", "selfcons"]
    argv = ["run", "--data", str(direct), "--base-url", srv.url + "/v1", "--quiet", "--limit", "6", *own]
    assert main(argv) == 0
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    assert _export(folder, req, *own) == 0
    _answer(srv, req, res)
    assert main(["import-results", str(res), "--data", str(folder), "--requests", str(req)]) == 0
    assert _without_latency(folder) == _without_latency(direct)
    assert _without_latency(folder, "members.jsonl") == _without_latency(direct, "members.jsonl")
    ids = {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")}
    assert ids == {"step+rubric:a", "step+rubric:b", "selfcons3+rubric:a", "selfcons3+rubric:b"}
    members = {v.judge_id for v in load_verdicts(folder / "members.jsonl")}
    assert members == {f"step+rubric@T0.7/seed{s}:{m}" for s in (7, 8, 9) for m in "ab"}
    recs = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    runs = [json.loads(line) for line in (direct / "runs.jsonl").read_text().splitlines()]
    assert [r["model"] for r in recs] == ["a", "b"]  # one run record per model, as `run --model a,b` writes
    assert [r["fingerprints"] for r in recs] == [r["fingerprints"] for r in runs]


def test_import_results_of_an_edited_template_is_refused_in_one_line_and_writes_nothing(folder, srv, tmp_path, capsys):
    one, two = _prompt(tmp_path / "one", V1), _prompt(tmp_path / "two", V2)
    for name, prompt in (("v1", one), ("v2", two)):  # both exported before either is imported
        assert _export(folder, tmp_path / f"{name}.jsonl", "--prompt", str(prompt), "--model", "m") == 0
        _answer(srv, tmp_path / f"{name}.jsonl", tmp_path / f"{name}-results.jsonl")
    imp = lambda name: main(
        ["import-results", str(tmp_path / f"{name}-results.jsonl"), "--data", str(folder)]
        + ["--requests", str(tmp_path / f"{name}.jsonl")]
    )
    assert imp("v1") == 0
    capsys.readouterr()
    before = _files(folder)
    assert imp("v2") == 2
    _refused(capsys, "step+rubric:m", "differ in prompt", "this import")
    assert _files(folder) == before
    # and an export the import would refuse is refused before a request is written
    assert _export(folder, tmp_path / "v3.jsonl", "--prompt", str(two), "--model", "m") == 2
    _refused(capsys, "this export", "differ in prompt")
    assert not (tmp_path / "v3.jsonl").exists()


def test_export_view_without_prompt_is_refused(folder, tmp_path, capsys):
    assert _export(folder, tmp_path / "r.jsonl", "--view", "reply", "--model", "m") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--view" in err and "--prompt FILE" in err


# --- merge -------------------------------------------------------------------------------------------
def test_merge_of_an_edited_template_under_one_id_is_refused_in_one_line_and_writes_nothing(
    folder, srv, tmp_path, capsys
):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(folder / "trajectories.jsonl", other / "trajectories.jsonl")
    assert _run(folder, srv, "--prompt", str(_prompt(tmp_path / "one", V1))) == 0
    assert _run(other, srv, "--prompt", str(_prompt(tmp_path / "two", V2)), "--temperature", "0.9", limit=6) == 0
    capsys.readouterr()
    out = tmp_path / "merged"
    assert main(["merge", str(folder), str(other), "--out", str(out)]) == 2
    _refused(capsys, "step+rubric:m", "prompt, temperature 0 → 0.9", str(folder / "runs.jsonl"), str(other))
    assert not out.exists()
    before = _files(folder)  # into an existing folder: not a byte changes
    assert main(["merge", str(other), "--out", str(folder)]) == 2
    assert _files(folder) == before


def test_merge_folds_verdicts_that_differ_only_in_latency_or_tokens_and_says_how_many(folder, srv, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(folder / "trajectories.jsonl", other / "trajectories.jsonl")
    assert _run(folder, srv, "--judges", "step") == 0
    assert _run(other, srv, "--judges", "step", limit=6) == 0
    rows = [json.loads(line) for line in (other / "verdicts.jsonl").read_text().splitlines()]
    for r in rows[:4]:  # the same answers, timed and counted by another path
        r["latency_s"], r["prompt_tokens"] = r["latency_s"] + 1.5, r["prompt_tokens"] + 3
    (other / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    out = tmp_path / "merged"
    assert main(["merge", str(folder), str(other), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "; 4 verdicts differed" in err and "latency or tokens" in err
    merged = (out / "verdicts.jsonl").read_text().splitlines()
    assert len(merged) == 6 and merged[:4] == (folder / "verdicts.jsonl").read_text().splitlines()  # the first kept
    # a difference in what the judge decided is still a conflict
    rows[0]["confidence"] = 0.51 if rows[0]["confidence"] != 0.51 else 0.52
    (other / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["merge", str(folder), str(other), "--out", str(tmp_path / "again")]) == 2
    assert "confidence" in capsys.readouterr().err and not (tmp_path / "again").exists()


# --- report ------------------------------------------------------------------------------------------
def test_report_shows_each_judges_fingerprint_in_json_markdown_and_one_terminal_line(folder, srv, tmp_path, capsys):
    assert _run(folder, srv, "--judges", "outcome,step", limit=8) == 0
    capsys.readouterr()
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    argv = ["report", "--data", str(folder), "--resamples", "50", "--json", str(js), "--markdown", str(md)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    prints = json.loads((folder / "runs.jsonl").read_text().splitlines()[0])["fingerprints"]
    line = [ln for ln in out.splitlines() if ln.startswith("Fingerprints")]
    assert len(line) == 1 and all(f"{j} {p['sha256'][:12]}" in line[0] for j, p in prints.items())
    body = json.loads(js.read_text())["fingerprints"]
    assert {j: [p["sha256"] for p in ps] for j, ps in body.items()} == {j: [p["sha256"]] for j, p in prints.items()}
    text = md.read_text()
    assert "## Judge fingerprints" in text and f"| step:m | {prints['step:m']['sha256'][:12]} | m |" in text


def test_forgetting_one_judge_of_a_run_takes_its_fingerprint_out_of_the_record_kept_for_the_others(folder, srv):
    assert _run(folder, srv, "--judges", "outcome,step") == 0
    assert main(["forget", "--data", str(folder), "--judge", "step:m"]) == 0
    (kept,) = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert set(kept["fingerprints"]) == {"outcome:m"}
    assert _run(folder, srv, "--judges", "step", "--temperature", "0.9") == 0  # the old step:m is gone
