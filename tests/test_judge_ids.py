"""Judge ids: the grammar (README, "Judge ids") checked where ids enter, and what the book makes of them."""

from __future__ import annotations

import json

import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.loading import load_data, unparseable_counts, unparseable_sentence
from trajectory_judge.book.style import PYTHON, judge_name, llm_judges, parse_judge_id
from trajectory_judge.cli import main
from trajectory_judge.models import DataError, dumps, judge_kind


@pytest.mark.parametrize("judge_id, kind", [
    ("programmatic", "rules"), ("step:qwen2.5:14b", "llm"), ("outcome:gpt-4o-mini", "llm"),
    ("selfcons3:qwen2.5:14b", "ensemble"), ("step@T0.7/seed7:qwen2.5-coder:1.5b", "member"),
    ("length:heuristic", "python"), ("short-run", "python"), ("my_judge2:v1.0", "python"),
])
def test_every_documented_judge_id_form_is_accepted_with_its_kind(judge_id, kind):
    assert judge_kind(judge_id) == kind


@pytest.mark.parametrize("judge_id, why", [
    ("steps>4:heuristic", "'steps>4' is not a judge name"),
    ("", "must not be empty"),
    ("a|b:c", "must not contain '|'"),
    ("reply", "names no model"),
    ("selfcons1:m", "names its size"),
    ("programmatic:m", "'programmatic' is not a judge name"),
])
def test_a_judge_id_outside_the_grammar_says_what_is_wrong(judge_id, why):
    with pytest.raises(ValueError, match=why):
        judge_kind(judge_id)


def test_a_python_judge_is_a_family_of_its_own_not_an_llm_view():
    spec = parse_judge_id("length:heuristic")
    assert (spec.family, spec.view, spec.model, spec.is_llm) == (PYTHON, PYTHON, None, False)
    assert llm_judges(["programmatic", "length:heuristic", "step:m"]) == ["step:m"]
    assert judge_name("length:heuristic") == "length:heuristic (Python judge)"


def _folder(tmp_path, verdicts):
    trajs = design(2)
    (tmp_path / "trajectories.jsonl").write_text("".join(dumps(t) + "\n" for t in trajs))
    (tmp_path / "verdicts.jsonl").write_text("".join(dumps(v) + "\n" for v in verdicts(trajs)))
    return tmp_path


def test_loading_names_file_and_line_of_a_judge_id_outside_the_grammar(tmp_path):
    d = _folder(tmp_path, lambda trajs: random_verdicts(trajs, "step:m", 1) + random_verdicts(trajs[:1], "steps>4:x", 2))
    with pytest.raises(DataError, match=r"verdicts.jsonl:15: invalid Verdict: judge id 'steps>4:x'"):
        load_data(d)
    assert main(["report", "--data", str(d)]) == 2


def _with_unparseable(trajs):
    vs = random_verdicts(trajs, "step:m", 1) + random_verdicts(trajs, "length:v1", 2)
    broken = [v.model_copy(update={"faulty": False, "failure_step": None, "failure_type": None, "confidence": 0.5,
                                   "error": "unparseable response: not valid JSON"}) for v in vs[:3]]
    return broken + vs[3:]


def test_report_shows_each_judges_unparseable_count_in_terminal_json_and_markdown(tmp_path, capsys):
    d = _folder(tmp_path, _with_unparseable)
    data = load_data(d)
    assert unparseable_counts(data.verdicts) == {"step:m": 3, "length:v1": 0}
    assert "step:m 3 of 14" in unparseable_sentence(data.verdicts)
    out = tmp_path / "out"
    assert main(["report", "--data", str(d), "--resamples", "20", "--json", str(out / "r.json"), "--markdown", str(out / "r.md")]) == 0
    assert "step:m 3 of 14" in capsys.readouterr().out
    assert json.loads((out / "r.json").read_text())["unparseable"] == {"step:m": 3, "length:v1": 0}
    assert "## Unparseable answers" in (out / "r.md").read_text()


def test_unparseable_sentence_when_every_answer_parsed():
    from analysis_synth import verdict

    assert unparseable_sentence([verdict("t", "step:m", True)]) == "The judge's answers all parsed"
    assert unparseable_sentence([verdict("t", "step:m", True), verdict("t", "reply:m", True)]) == "No judge's answers failed to parse"


def test_a_python_judges_axis_label_names_it_not_the_rules():
    from trajectory_judge.book.style import judge_label

    assert judge_label("length:v1", 16) == "length:v1\nPython judge\nn=16"
    assert judge_label("programmatic") == "programmatic\nrules"
