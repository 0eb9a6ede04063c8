"""A judge is a prompt, a view and a model: ``run --prompt FILE [--view V]`` against the loopback stand-in server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fake_server import FakeModelServer

from trajectory_judge.cli import main
from trajectory_judge.judges.blind import judge_view
from trajectory_judge.judges.custom import PLACEHOLDERS, load_template
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.judges.views import render_view
from trajectory_judge.models import JudgeSpec, load_trajectories, load_verdicts
from trajectory_judge.testbed.procedure import PROCEDURE

ROOT = Path(__file__).resolve().parents[1]

RUBRIC = """\
Audit this support agent. The rules it must follow:
{procedure}

Request: {goal}
Reply sent: {reply}

The record, as you are shown it:
{view}

Answer as JSON, for example {{"faulty": false}}.
"""


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    shutil.copy(ROOT / "data" / "trajectories.jsonl", d / "trajectories.jsonl")
    return d


def _run(folder: Path, srv: FakeModelServer, *extra: str) -> int:
    return main(
        ["run", "--data", str(folder), "--base-url", srv.url + "/v1", "--model", "m", "--limit", "4", "--quiet", *extra]
    )


def _runs(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("view", ["outcome", "step", "reply"])
def test_a_prompt_of_ones_own_is_sent_over_its_view_and_judged_under_the_views_schema_and_id(folder, tmp_path, view):
    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    with FakeModelServer(hosted=True) as srv:
        assert _run(folder, srv, "--prompt", str(prompt), "--view", view) == 0
    sent = [b for _, p, b in srv.requests if p.endswith("/chat/completions")]
    trajs = load_trajectories(folder / "trajectories.jsonl")[:4]
    assert len(sent) == 4
    for body, t in zip(sent, trajs):
        text = body["messages"][0]["content"]
        assert render_view(view, t) in text and PROCEDURE in text and t.goal in text
        assert '{"faulty": false}' in text and "{view}" not in text
        assert t.trajectory_id not in text and t.instance_id not in text  # a judge is shown only its view
        assert body["response_format"]["json_schema"]["schema"]["properties"].keys() == (
            response_schema(view)["properties"].keys()
        )
    verdicts = load_verdicts(folder / "verdicts.jsonl")
    assert {v.judge_id for v in verdicts} == {f"{view}+rubric:m"} and len(verdicts) == 4
    spec = JudgeSpec.parse(f"{view}+rubric:m")
    assert (spec.kind, spec.family, spec.view, spec.prompt, spec.model) == ("llm", view, view, "rubric", "m")


def test_the_run_record_holds_the_templates_digest_and_text_beside_model_decoding_and_server(folder, tmp_path):
    import hashlib

    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    with FakeModelServer(hosted=True) as srv:
        assert _run(folder, srv, "--prompt", str(prompt)) == 0
    (rec,) = _runs(folder)
    assert rec["judges"] == ["step+rubric:m"] and rec["model"] == "m"
    kept = rec["prompts"]["step+rubric:m"]
    assert kept["sha256"] == hashlib.sha256(RUBRIC.encode()).hexdigest() and kept["text"] == RUBRIC
    assert rec["decoding"]["temperature"] == 0.0 and rec["decoding"]["seed"] == 7 and rec["server"]
    assert "latency_s" in rec["latency"] and "succeeded" in rec["latency"]


def test_prompt_beside_built_in_judges_runs_both_and_view_alone_is_refused(folder, tmp_path, capsys):
    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    with FakeModelServer(hosted=True) as srv:
        assert _run(folder, srv, "--judges", "step", "--prompt", str(prompt)) == 0
        assert {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")} == {"step:m", "step+rubric:m"}
        capsys.readouterr()
        assert _run(folder, srv, "--view", "reply") == 2
    assert "--view" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, stem, named",
    [
        ("{view} {label}", "rubric", ("{label}", "label", ":1:")),
        ("{view}\n{trajectory_id}", "rubric", ("{trajectory_id}", ":2:")),
        ("{view} {instance_id}", "rubric", ("{instance_id}",)),
        ("{view} {id}", "rubric", ("{id}",)),
        ("{view.steps}", "rubric", ("{view.steps}", "reaches inside")),
        ("{view[0]}", "rubric", ("{view[0]}", "reaches inside")),
        ("{view} {label.faulty}", "rubric", ("{label.faulty}", "label")),
        ("{view} {views}", "rubric", ("unknown placeholder {views}",)),
        ("{} {view}", "rubric", ("positional", "{}")),
        ("{0} {view}", "rubric", ("positional", "{0}")),
        ("{view!r}", "rubric", ("{view!r}", "conversion")),
        ("{view:{label}}", "rubric", ("{view:{label}}",)),
        ("{goal} only", "rubric", ("{view}",)),
        ("{view} }", "rubric", ("not a str.format template",)),
        ("", "rubric", ("empty",)),
        ("{view}", "My Rubric", ("'My Rubric'", "lower-case")),
    ],
)
def test_a_template_that_would_leak_the_label_or_id_or_breaks_the_rules_is_refused_in_one_line_before_any_request(
    folder, tmp_path, capsys, text, stem, named
):
    prompt = tmp_path / f"{stem}.txt"
    prompt.write_text(text, encoding="utf-8")
    with FakeModelServer(hosted=True) as srv:
        assert _run(folder, srv, "--prompt", str(prompt)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(prompt) in err and "Traceback" not in err
    assert all(part in err for part in named), err
    assert not srv.requests and not (folder / "verdicts.jsonl").exists() and not (folder / "runs.jsonl").exists()


def test_every_allowed_placeholder_is_filled_from_the_label_free_copy_a_judge_is_handed(tmp_path):
    prompt = tmp_path / "all.txt"
    prompt.write_text(" | ".join("{" + p + "}" for p in PLACEHOLDERS), encoding="utf-8")
    template = load_template(prompt)
    t = load_trajectories(ROOT / "data" / "trajectories.jsonl")[5]
    shown = judge_view(t, b"k")
    text = template.render("outcome", shown)
    assert text == " | ".join([render_view("outcome", t), t.goal, t.final_answer, PROCEDURE])
    assert t.trajectory_id not in text and shown.label is None


def test_a_missing_prompt_file_is_one_line(folder, tmp_path, capsys):
    with FakeModelServer(hosted=True) as srv:
        assert _run(folder, srv, "--prompt", str(tmp_path / "nope.txt")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.txt" in err and "not found" in err and not srv.requests


def _export(folder: Path, tmp_path: Path, *extra: str) -> int:
    argv = ["export-requests", "--data", str(folder), "--model", "m", "--limit", "4", "--quiet"]
    return main([*argv, "--out", str(tmp_path / "requests.jsonl"), *extra])


@pytest.mark.parametrize("verb", ["run", "export-requests"])
@pytest.mark.parametrize(
    "extra, named",
    [
        (("--view", "outcome"), ("--judges selfcons with --prompt", "step view", "--view outcome")),
        (("--selfcons-seeds", "7"), ("--selfcons-seeds 7", "odd number of seeds, 3 or more", "got 1")),
        (("--selfcons-seeds", "7,8"), ("--selfcons-seeds 7,8", "odd number", "got 2")),
        (("--selfcons-seeds", "7,7,8"), ("--selfcons-seeds 7,7,8", "a seed repeats")),
        (("--selfcons-seeds", "7,,8"), ("--selfcons-seeds", "comma-separated integers")),
        (("--selfcons-seeds", "7,-1,8"), ("--selfcons-seeds", "0 or more")),
        (("--selfcons-temperature", "-1"), ("--selfcons-temperature", "0 or more")),
    ],
)
def test_a_prompt_ensemble_over_another_view_or_with_too_few_seeds_is_refused_in_one_line_before_any_request(
    folder, tmp_path, capsys, verb, extra, named
):
    prompt = tmp_path / "rubric.txt"
    prompt.write_text(RUBRIC, encoding="utf-8")
    own = ("--prompt", str(prompt), "--judges", "selfcons", *extra)
    with FakeModelServer(hosted=True) as srv:
        assert (_run(folder, srv, *own) if verb == "run" else _export(folder, tmp_path, *own)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and f"trajectory-judge {verb}: error" in err, err
    assert all(part in err for part in named), err
    assert not srv.requests and not (folder / "verdicts.jsonl").exists() and not (tmp_path / "requests.jsonl").exists()


@pytest.mark.parametrize("verb", ["run", "export-requests"])
def test_a_prompt_ensembles_template_without_its_view_placeholder_is_refused_in_one_line(
    folder, tmp_path, capsys, verb
):
    prompt = tmp_path / "rubric.txt"
    prompt.write_text("Judge {goal} only.\n", encoding="utf-8")
    own = ("--prompt", str(prompt), "--judges", "selfcons")
    with FakeModelServer(hosted=True) as srv:
        assert (_run(folder, srv, *own) if verb == "run" else _export(folder, tmp_path, *own)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(prompt) in err and "{view}" in err and not srv.requests, err


def test_the_ensemble_without_a_prompt_keeps_its_id_and_takes_the_same_temperature_and_seed_options(folder, tmp_path):
    with FakeModelServer(hosted=True) as srv:
        assert (
            _run(folder, srv, "--judges", "selfcons", "--selfcons-temperature", "1", "--selfcons-seeds", "1,2,3") == 0
        )
    assert {v.judge_id for v in load_verdicts(folder / "verdicts.jsonl")} == {"selfcons3:m"}
    assert {v.judge_id for v in load_verdicts(folder / "members.jsonl")} == {f"step@T1/seed{s}:m" for s in (1, 2, 3)}
    sent = [b for _, p, b in srv.requests if p.endswith("/chat/completions")]
    assert sorted((b["temperature"], b["seed"]) for b in sent) == [(1.0, s) for s in (1, 2, 3) for _ in range(4)]
