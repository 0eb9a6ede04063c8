"""Judge ids: the grammar (the guide's "Judge ids" page) checked where ids enter, and what the book makes of them."""

from __future__ import annotations

import json

import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.core.loading import load_data, unparseable_counts, unparseable_sentence
from trajectory_judge.book.render.style import PYTHON, judge_name, llm_judges
from trajectory_judge.cli import main
from trajectory_judge.models import DataError, JudgeSpec, check_judge_id, dumps


@pytest.mark.parametrize(
    "judge_id, kind",
    [
        ("programmatic", "rules"),
        ("step:qwen2.5:14b", "llm"),
        ("outcome:gpt-4o-mini", "llm"),
        ("selfcons3:qwen2.5:14b", "ensemble"),
        ("selfcons3+rubric:qwen2.5:14b", "ensemble"),
        ("step@T0.7/seed7:qwen2.5-coder:1.5b", "member"),
        ("step+rubric@T0.7/seed7:qwen2.5-coder:1.5b", "member"),
        ("length:heuristic", "python"),
        ("short-run", "python"),
        ("my_judge2:v1.0", "python"),
    ],
)
def test_every_documented_judge_id_form_is_accepted_with_its_kind(judge_id, kind):
    assert JudgeSpec.parse(judge_id).kind == kind


@pytest.mark.parametrize(
    "judge_id, why",
    [
        ("steps>4:heuristic", "'steps>4' is not a judge name"),
        ("", "must not be empty"),
        ("a|b:c", "must not contain '|'"),
        ("reply", "names no model"),
        ("selfcons1:m", "names its size"),
        ("programmatic:m", "the rule engine takes no model"),
        ("step+Rubric:m", "prompt name 'Rubric' must be lower-case"),
        ("step+:m", "prompt name '' must be"),
        ("step+rubric", "names no model"),
        ("selfcons1+rubric:m", "names its size"),
        ("selfcons3+Rubric:m", "prompt name 'Rubric' must be lower-case"),
        ("selfcons3+:m", "prompt name '' must be"),
        ("selfcons3+rubric", "names no model"),
        ("step+rubric@T0.7/seed7", "names no model"),
        ("step+Rubric@T0.7/seed7:m", "prompt name 'Rubric' must be lower-case"),
        ("step+rubric@T0.7:m", "prompt name 'rubric@T0.7' must be"),
    ],
)
def test_a_judge_id_outside_the_grammar_says_what_is_wrong(judge_id, why):
    with pytest.raises(ValueError, match=why) as raised:
        JudgeSpec.parse(judge_id)
    assert not judge_id or repr(judge_id) in str(raised.value)  # the message names the id


def test_a_python_judge_is_a_family_of_its_own_not_an_llm_view():
    spec = JudgeSpec.parse("length:heuristic")
    assert (spec.family, spec.view, spec.model, spec.is_llm) == (PYTHON, PYTHON, None, False)
    assert llm_judges(["programmatic", "length:heuristic", "step:m"]) == ["step:m"]
    assert judge_name("length:heuristic") == "length:heuristic (Python judge)"


# --- one record, read by every consumer ---------------------------------------------------------
# Every shape of README's grammar ("Judge ids"), with what the id says: kind, family, the view it is
# shown (the rules, the ensemble and a Python judge read the full trajectory, rendered as the step view),
# model, ensemble size, and (temperature, seed) for a member.
SHAPES = [
    ("programmatic", "rules", "programmatic", "step", None, 1, None),
    ("outcome:gpt-4o-mini", "llm", "outcome", "outcome", "gpt-4o-mini", 1, None),
    ("step:qwen2.5:14b", "llm", "step", "step", "qwen2.5:14b", 1, None),
    ("reply:qwen2.5-coder:1.5b", "llm", "reply", "reply", "qwen2.5-coder:1.5b", 1, None),
    ("step+rubric:qwen2.5:14b", "llm", "step", "step", "qwen2.5:14b", 1, None),
    ("outcome+my_rubric-2:openai/gpt-4o-mini", "llm", "outcome", "outcome", "openai/gpt-4o-mini", 1, None),
    ("selfcons3:qwen2.5:14b", "ensemble", "selfcons", "step", "qwen2.5:14b", 3, None),
    ("selfcons11:m", "ensemble", "selfcons", "step", "m", 11, None),
    ("selfcons3+rubric:qwen2.5:14b", "ensemble", "selfcons", "step", "qwen2.5:14b", 3, None),
    ("selfcons5+my_rubric-2:openai/gpt-4o-mini", "ensemble", "selfcons", "step", "openai/gpt-4o-mini", 5, None),
    ("step@T0.7/seed7:qwen2.5-coder:1.5b", "member", "step", "step", "qwen2.5-coder:1.5b", 1, (0.7, 7)),
    ("outcome@T0.7/seed7:M", "member", "outcome", "outcome", "M", 1, (0.7, 7)),
    ("reply@T1/seed0:openai/gpt-4o-mini", "member", "reply", "reply", "openai/gpt-4o-mini", 1, (1.0, 0)),
    ("step+rubric@T0.7/seed7:qwen2.5:14b", "member", "step", "step", "qwen2.5:14b", 1, (0.7, 7)),
    ("outcome+my_rubric-2@T1.5/seed0:M", "member", "outcome", "outcome", "M", 1, (1.5, 0)),
    ("length:heuristic", "python", "python", "step", None, 1, None),
    ("short-run", "python", "python", "step", None, 1, None),
    ("my_judge2:v1.0", "python", "python", "step", None, 1, None),
    ("mock-step:seed7", "python", "python", "step", None, 1, None),
]
IDS = [shape[0] for shape in SHAPES]


def _rebuilt(spec: JudgeSpec) -> JudgeSpec | None:
    """The record built back from its fields by the constructors (None for a Python judge: it has none)."""
    if spec.kind == "rules":
        return JudgeSpec.rules()
    if spec.kind == "llm":
        return JudgeSpec.llm(spec.view, str(spec.model), spec.prompt)
    if spec.kind == "ensemble":
        return JudgeSpec.self_consistency(spec.ensemble, str(spec.model), spec.prompt)
    if spec.kind == "member":
        return JudgeSpec.member(
            spec.view, float(spec.temperature or 0), int(spec.seed or 0), str(spec.model), spec.prompt
        )
    return None


@pytest.mark.parametrize("judge_id, kind, family, shown, model, k, sampled", SHAPES, ids=IDS)
def test_every_consumer_reads_the_same_kind_family_view_model_and_memberness_from_an_id(
    judge_id, kind, family, shown, model, k, sampled
):
    from trajectory_judge.analysis.core.comparisons import split_judge_id
    from trajectory_judge.analysis.statistics.seeds import parse_member_id
    from trajectory_judge.book.chapters.judges import sample_settings
    from trajectory_judge.book.render.figures import FAMILY_COLOURS, OKABE_ITO, judge_style
    from trajectory_judge.book.render.style import judges_frame
    from trajectory_judge.run.record import base_record

    spec = JudgeSpec.parse(judge_id)
    # the record, and the id back exactly: from the record, and from its fields
    assert (spec.kind, spec.family, spec.rendered_view, spec.model, spec.ensemble) == (kind, family, shown, model, k)
    assert str(spec) == judge_id and JudgeSpec.parse(str(spec)) == spec
    assert _rebuilt(spec) in (spec, None) and (_rebuilt(spec) is None) == (kind == "python")
    assert spec.is_member == (sampled is not None) and (spec.temperature, spec.seed) == (sampled or (None, None))
    # the data model and the runner
    assert check_judge_id(judge_id) == judge_id
    assert base_record([judge_id], {}, concurrency=1)["judge_kinds"] == {judge_id: kind}
    # comparisons: the model (None for the rules and a Python judge, whose DETAIL names no model)
    assert split_judge_id(judge_id)[1] == model
    # the book's styles: family, view and model in the judges table, the colour of the family, the name
    row = judges_frame([judge_id]).loc[judge_id]
    assert (row["family"], row["view"]) == (family, spec.view)
    assert row["model"] == (model or ("(none: rules)" if kind == "rules" else "(none: Python)"))
    assert llm_judges([judge_id]) == ([judge_id] if kind not in ("rules", "python") else [])
    assert judge_style(judge_id)["color"] == FAMILY_COLOURS.get(family, OKABE_ITO["vermillion"])
    assert judge_name(judge_id)
    # seeds: a member's temperature and seed, and nothing for any other judge
    assert sample_settings(judge_id) == sampled
    if sampled is None:
        with pytest.raises(ValueError, match="is not a member id"):
            parse_member_id(judge_id)
    else:
        member = parse_member_id(judge_id)
        assert (member.view, member.model, member.temperature, member.seed) == (shown, model, *sampled)
        assert f"seed {sampled[1]}" in judge_name(judge_id)


@pytest.mark.parametrize("judge_id", [j for j, kind, *_ in SHAPES if kind in ("llm", "ensemble", "member")])
def test_inspect_import_names_a_judge_by_the_id_the_record_gives(judge_id):
    from types import SimpleNamespace

    from trajectory_judge.inspect_tasks.logs import TASK_KEY, _judge_ids

    spec = JudgeSpec.parse(judge_id)
    model = str(spec.model)
    if spec.is_member:  # an epoch of the ensemble's task, or a sample of another view
        got = JudgeSpec.member(spec.view, float(spec.temperature or 0), int(spec.seed or 0), model, spec.prompt)
        assert got.judge_id == judge_id
        return
    task = "selfcons" if spec.kind == "ensemble" else spec.view
    meta = {"view": task, "temperature": 0.7, "seeds": list(range(7, 7 + spec.ensemble))}
    log = SimpleNamespace(eval=SimpleNamespace(metadata={TASK_KEY: meta}))
    template = None
    if spec.prompt:  # a task run with -T prompt=FILE: the template named by the file's stem
        from trajectory_judge.judges.custom import PromptTemplate

        template = PromptTemplate(name=spec.prompt, text="{view}", file=f"{spec.prompt}.txt")
    got, sampling = _judge_ids(log, task, model, template)
    assert got == judge_id and len(sampling) == (spec.ensemble if spec.kind == "ensemble" else 0)
    assert all(JudgeSpec.member("step", t, s, model).model == model for t, s in sampling)


def test_an_outcome_member_is_shown_the_outcome_view_so_a_silent_fault_is_hidden_from_it():
    from analysis_synth import clean, fault

    from trajectory_judge.analysis.core.paired import paired_discrimination, reaches_input

    parent, silent = clean("i1"), fault("i1", "wrong_tool", loud=False)
    assert reaches_input("outcome:M", silent, parent) is reaches_input("outcome@T0.7/seed7:M", silent, parent) is False
    assert reaches_input("step@T0.7/seed7:M", silent, parent) is True
    for member, group in (("outcome@T0.7/seed7:M", "hidden_from_input"), ("step@T0.7/seed7:M", "reaches_input")):
        verdicts = {t.trajectory_id: verdict_of(t, member) for t in (parent, silent)}
        assert paired_discrimination(member, [parent, silent], verdicts)[group].n == 1


def verdict_of(traj, judge_id):
    from analysis_synth import verdict

    return verdict(traj.trajectory_id, judge_id, traj.label.faulty)


def test_the_runner_stores_and_records_every_id_shape_under_its_kind(tmp_path):
    from analysis_synth import design

    from trajectory_judge.analysis.core.cost import read_run_records
    from trajectory_judge.models import Verdict, load_verdicts
    from trajectory_judge.run.runner import run_judges

    class Fixed:
        def __init__(self, judge_id):
            self.judge_id = judge_id

        def judge(self, traj):
            return Verdict(trajectory_id=traj.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.5)

    out = tmp_path / "verdicts.jsonl"
    run_judges(design(1)[:2], [Fixed(j) for j in IDS], out, progress=False)
    assert sorted({v.judge_id for v in load_verdicts(out)}) == sorted(IDS)
    (record,) = read_run_records(tmp_path)
    assert record["judge_kinds"] == {j: kind for j, kind, *_ in SHAPES}


def test_report_order_reads_the_family_with_members_and_python_judges_last():
    from analysis_synth import verdict

    from trajectory_judge.analysis.core.loading import judge_order

    shuffled = ["short-run", "step@T0.7/seed7:m", "selfcons3:m", "reply:m", "step2:x", "step:m", "outcome:m"]
    order = judge_order([verdict("t", j, False) for j in [*shuffled, "programmatic"]])
    # step2:x is a Python judge (NAME step2), not the step view: it sorts with the Python judges
    last = ["short-run", "step@T0.7/seed7:m", "step2:x"]  # in first appearance
    assert order == ["programmatic", "outcome:m", "step:m", "reply:m", "selfcons3:m", *last]


def test_an_ensemble_over_a_prompt_of_ones_own_is_told_apart_from_the_built_in_one_by_every_consumer():
    from analysis_synth import verdict

    from trajectory_judge.analysis.core.cost import run_task
    from trajectory_judge.analysis.core.loading import judge_order
    from trajectory_judge.book.render.style import family_pairs

    own, built_in = JudgeSpec.parse("selfcons3+rubric:m"), JudgeSpec.parse("selfcons3:m")
    assert (own.prompt, own.head, own.family, own.view) == ("rubric", "selfcons3+rubric", "selfcons", "step")
    assert JudgeSpec.self_consistency(3, "m", "rubric") == own and JudgeSpec.self_consistency(3, "m") == built_in
    member = JudgeSpec.member("step", 0.7, 7, "m", "rubric")
    assert str(member) == "step+rubric@T0.7/seed7:m" and member.prompt == "rubric" and member.is_member
    # names: the prompt is in every name a reader sees
    assert judge_name("selfcons3+rubric:m") == "Self-consistency \u00d73 (rubric prompt) \u00b7 m"
    assert "rubric prompt" in judge_name(str(member)) and "seed 7" in judge_name(str(member))
    # an ensemble is compared with the single pass of its own prompt, not another's
    ids = ["step:m", "step+rubric:m", "selfcons3:m", "selfcons3+rubric:m"]
    assert family_pairs(ids, [("step", "selfcons")]) == [
        ("step:m", "selfcons3:m"),
        ("step+rubric:m", "selfcons3+rubric:m"),
    ]
    # report order: with the ensembles, members last
    order = judge_order([verdict("t", j, False) for j in ["step+rubric@T0.7/seed7:m", "selfcons3+rubric:m", "step:m"]])
    assert order == ["step:m", "selfcons3+rubric:m", "step+rubric@T0.7/seed7:m"]
    # the compute table's label keeps the heads apart when one holds a '+'
    assert run_task({"judges": ["step:m", "selfcons3+rubric:m"], "model": "m"}) == "step, selfcons3+rubric · m"
    assert run_task({"judges": ["outcome:m", "step:m"], "model": "m"}) == "outcome+step · m"


@pytest.mark.parametrize(
    "build, why",
    [
        (lambda: JudgeSpec.llm("selfcons3", "m"), r"selfcons3:m.*ensemble.*an LLM judge"),
        (lambda: JudgeSpec.self_consistency(1, "m"), "names its size, 2 or more"),
        (lambda: JudgeSpec.member("step", 1e-5, 7, "m"), "is not a judge name"),
        (lambda: JudgeSpec.llm("step", "a b"), "must not contain spaces"),
        (lambda: JudgeSpec.self_consistency(3, "m", "Rubric"), "prompt name 'Rubric' must be lower-case"),
        (lambda: JudgeSpec.member("step", 0.7, 7, "m", "a@b"), "prompt name 'a@b' must be lower-case"),
    ],
)
def test_a_constructor_refuses_an_id_its_kind_cannot_have_and_names_it(build, why):
    with pytest.raises(ValueError, match=why):
        build()


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
    from trajectory_judge.book.chapters.runs import (
        NOT_REPORTED,
        builds_sentence,
        run_settings,
        run_summary,
        runs_sentence,
    )

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

    from trajectory_judge.book.chapters.runs import RUN_COLUMNS, greedy_sentence

    row = dict.fromkeys(RUN_COLUMNS, None)
    settings = pd.DataFrame(
        [
            {**row, "judge": "step:a", "ensemble": 1, "temperature": 0.0},
            {**row, "judge": "step:b", "ensemble": 1, "temperature": 0.7},
        ]
    )
    assert greedy_sentence(settings, ["step:a", "step:b"]).endswith("a rerun may give other verdicts: Step · b")
    assert greedy_sentence(settings, ["step:a"]).startswith("Single-pass judges decode greedily")
    assert greedy_sentence(settings, []).startswith("No single-pass LLM judge")


def test_the_judges_chapter_says_what_kinds_of_judge_the_data_holds_in_words():
    from trajectory_judge.book.chapters.judges import holdings_sentence
    from trajectory_judge.book.render.style import judges_frame

    ids = ["programmatic", "step:a", "reply:a", "length:v1"]
    four = holdings_sentence(judges_frame(ids), ids[1:3], 400)  # each kind counted: 2 LLM, 1 rule engine, 1 Python
    assert "4 judges" in four and "400 trajectories" in four and "2 LLM judges over one model" in four
    assert four.endswith("the rule engine and one Python judge")
    one = holdings_sentence(judges_frame(["step:a"]), ["step:a"], 16)
    assert "one judge " in one and "16 trajectories" in one and one.endswith("one LLM judge over one model")


def test_settings_sentence_counts_only_judges_that_decode():
    import pandas as pd

    from trajectory_judge.book.chapters.runs import settings_sentence

    def summary(judges, servers):
        return pd.DataFrame({"judge": judges, "server": servers})

    one = settings_sentence(summary(["step:a", "short-run"], ["ollama", "Python judge"]))
    assert one.startswith("The one LLM judge ")  # the Python judge does not decode
    assert settings_sentence(summary(["step:a", "step:b"], ["ollama"] * 2)).startswith("Both LLM judges ")
    assert settings_sentence(summary(["step:a", "step:a"], ["ollama"] * 2)).endswith("settings: step:a")
    assert "no decoding settings" in settings_sentence(summary(["short-run"], ["Python judge"]))
