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
