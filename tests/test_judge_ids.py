"""Judge ids: the grammar (the guide's "Judge ids" page) checked where ids enter, and what the book makes of them."""

from __future__ import annotations

import json

import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.loading import load_data, unparseable_counts, unparseable_sentence
from trajectory_judge.book.render.style import PYTHON, judge_name, llm_judges, parse_judge_id
from trajectory_judge.cli import main
from trajectory_judge.models import DataError, dumps, judge_kind


@pytest.mark.parametrize(
    "judge_id, kind",
    [
        ("programmatic", "rules"),
        ("step:qwen2.5:14b", "llm"),
        ("outcome:gpt-4o-mini", "llm"),
        ("selfcons3:qwen2.5:14b", "ensemble"),
        ("step@T0.7/seed7:qwen2.5-coder:1.5b", "member"),
        ("length:heuristic", "python"),
        ("short-run", "python"),
        ("my_judge2:v1.0", "python"),
    ],
)
def test_every_documented_judge_id_form_is_accepted_with_its_kind(judge_id, kind):
    assert judge_kind(judge_id) == kind


@pytest.mark.parametrize(
    "judge_id, why",
    [
        ("steps>4:heuristic", "'steps>4' is not a judge name"),
        ("", "must not be empty"),
        ("a|b:c", "must not contain '|'"),
        ("reply", "names no model"),
        ("selfcons1:m", "names its size"),
        ("programmatic:m", "the rule engine takes no model"),
    ],
)
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
    d = _folder(
        tmp_path, lambda trajs: random_verdicts(trajs, "step:m", 1) + random_verdicts(trajs[:1], "steps>4:x", 2)
    )
    with pytest.raises(DataError, match=r"verdicts.jsonl:15: invalid Verdict: judge id 'steps>4:x'"):
        load_data(d)
    assert main(["report", "--data", str(d)]) == 2


def _with_unparseable(trajs):
    vs = random_verdicts(trajs, "step:m", 1) + random_verdicts(trajs, "length:v1", 2)
    broken = [
        v.model_copy(
            update={
                "faulty": False,
                "failure_step": None,
                "failure_type": None,
                "confidence": 0.5,
                "error": "unparseable response: not valid JSON",
            }
        )
        for v in vs[:3]
    ]
    return broken + vs[3:]


def test_report_shows_each_judges_unparseable_count_in_terminal_json_and_markdown(tmp_path, capsys):
    d = _folder(tmp_path, _with_unparseable)
    data = load_data(d)
    assert unparseable_counts(data.verdicts) == {"step:m": 3, "length:v1": 0}
    assert "step:m 3 of 14" in unparseable_sentence(data.verdicts)
    out = tmp_path / "out"
    assert (
        main(
            [
                "report",
                "--data",
                str(d),
                "--resamples",
                "20",
                "--json",
                str(out / "r.json"),
                "--markdown",
                str(out / "r.md"),
            ]
        )
        == 0
    )
    assert "step:m 3 of 14" in capsys.readouterr().out
    assert json.loads((out / "r.json").read_text())["unparseable"] == {"step:m": 3, "length:v1": 0}
    assert "## Unparseable answers" in (out / "r.md").read_text()


def test_unparseable_sentence_when_every_answer_parsed():
    from analysis_synth import verdict

    assert unparseable_sentence([verdict("t", "step:m", True)]) == "The judge's answers all parsed"
    assert (
        unparseable_sentence([verdict("t", "step:m", True), verdict("t", "reply:m", True)])
        == "No judge's answers failed to parse"
    )


def test_a_python_judges_axis_label_names_it_not_the_rules():
    from trajectory_judge.book.render.style import judge_label

    assert judge_label("length:v1", 16) == "length:v1\nPython judge\nn=16"
    assert judge_label("programmatic") == "programmatic\nrules"


def _record(judge: str, backend: str, server: dict, verdicts: int = 4) -> dict:
    dec = {"num_ctx": 8192, "max_tokens": 512, "temperature": 0.0, "seed": 7} if backend != "python" else None
    return {
        "backend": backend,
        "model": None if backend == "python" else "m",
        "judges": [judge],
        "decoding": dec,
        "server": server,
        "per_judge": {judge: {"verdicts": verdicts}},
        "started": "2026-11-30T20:00:00+00:00",
        "wall_s": 1.0,
    }


def test_the_judges_chapter_reads_what_a_backend_did_not_report_and_loses_no_run(tmp_path):
    from trajectory_judge.book.chapters.edition_runs import NOT_REPORTED, builds_sentence, run_settings, run_summary, runs_sentence

    records = [
        _record("outcome:hosted", "openai", {"server": "openai-compatible"}),
        _record("step:local", "ollama", {"server": "ollama", "build": "0.5.1"}),
        _record("step:local", "ollama", {"server": "ollama", "build": "0.5.1"}, 2),
        _record("short-run:v1", "python", {}),
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    settings = run_settings(tmp_path)
    summary = run_summary(settings)
    assert summary["verdicts"].sum() == settings["verdicts"].sum() == 14  # no row dropped by a missing key
    hosted = summary.set_index("judge").loc["outcome:hosted"]
    assert (hosted["model_sha256"], hosted["builds"]) == (NOT_REPORTED, NOT_REPORTED)
    assert summary.set_index("judge").loc["short-run:v1", "server"] == "Python judge"
    assert runs_sentence(settings, ["outcome:hosted", "step:local"]) == "The run records cover both LLM judges"
    assert "short-run" not in builds_sentence(summary)


def test_the_judges_chapter_says_when_a_single_pass_judge_sampled_above_zero():
    import pandas as pd

    from trajectory_judge.book.chapters.edition_runs import RUN_COLUMNS, greedy_sentence

    row = dict.fromkeys(RUN_COLUMNS, None)
    settings = pd.DataFrame(
        [
            {**row, "judge": "step:a", "ensemble": 1, "temperature": 0.0},
            {**row, "judge": "step:b", "ensemble": 1, "temperature": 0.7},
        ]
    )
    assert greedy_sentence(settings, ["step:a", "step:b"]).endswith("a rerun may give other verdicts: Step · b")
    assert greedy_sentence(settings, ["step:a"]).startswith("Single-pass judges decode greedily")
    assert greedy_sentence(settings, []) == "No single-pass LLM judge has a run record"


def test_the_judges_chapter_says_what_kinds_of_judge_the_data_holds_in_words():
    from trajectory_judge.book.chapters.judge_panel import holdings_sentence
    from trajectory_judge.book.render.style import judges_frame

    ids = ["programmatic", "step:a", "reply:a", "length:v1"]
    assert holdings_sentence(judges_frame(ids), ids[1:3], 400) == (
        "The data holds 4 judges on a set of 400 trajectories: 2 LLM judges over one model, the rule engine and one Python judge"
    )
    assert holdings_sentence(judges_frame(["step:a"]), ["step:a"], 16) == (
        "The data holds one judge on a set of 16 trajectories: one LLM judge over one model"
    )


def test_settings_sentence_counts_only_judges_that_decode():
    import pandas as pd

    from trajectory_judge.book.chapters.edition_runs import settings_sentence

    def summary(judges, servers):
        return pd.DataFrame({"judge": judges, "server": servers})

    assert settings_sentence(summary(["step:a", "short-run"], ["ollama", "Python judge"])) == (
        "The one LLM judge ran under a single set of decoding settings across all its runs"
    )
    assert settings_sentence(summary(["step:a", "step:b"], ["ollama"] * 2)).startswith("Both LLM judges ran")
    assert settings_sentence(summary(["step:a", "step:a"], ["ollama"] * 2)).endswith("settings: step:a")
    assert settings_sentence(summary(["short-run"], ["Python judge"])) == "There are no decoding settings to compare"
