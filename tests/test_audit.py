"""Book helpers of the paired, organic, appendix and audit chapters (trajectory_judge.book.chapters.audit)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.core.loading import load_paper_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.analysis.paper import published as P
from trajectory_judge.book.chapters import appendix, audit, organic, paired
from trajectory_judge.models import FAILURE_TYPES
from trajectory_judge.testbed.checker import RULES
from trajectory_judge.testbed.env import STRATA, TOOLS


def test_judges_of_a_family_are_picked_by_their_ids_family():
    assert paired.judges_of(["programmatic", "step:a", "outcome:b", "step:c"], "step") == ["step:a", "step:c"]


def test_appendix_tables_cover_every_tool_rule_stratum_and_type():
    assert list(appendix.tools_table().index) == list(TOOLS)
    assert len(appendix.rules_table()) == len(RULES) and set(appendix.rules_table()["failure type"]) <= set(
        FAILURE_TYPES
    )
    strata = appendix.env_strata_table(60, 7)
    assert list(strata.index) == list(STRATA) and strata.iloc[:, 1].sum() == 60
    inj = appendix.injector_table()
    assert list(inj.index) == list(FAILURE_TYPES)
    assert inj.loc["wrong_tool", "edit"] == "step 2: get_policy replaced by lookup_order"
    assert inj.loc["ignored_observation", "host instance strata"] == "restocking"


def test_organic_helpers_say_when_there_are_no_episodes(tmp_path):
    assert organic.load_episodes(tmp_path) is None
    assert organic.organic_status(None, 60).startswith("No organic episodes are in the data yet")
    counts = organic.organic_counts(None)
    assert list(counts.columns) == ["published (qwen2.5:14b)"]
    assert counts.loc["escalate calls"].iloc[0] == P.PUBLISHED_COUNTS["organic_escalate_calls"].value


def test_setup_frame_reads_our_runs_and_the_release_run_json():
    ours = audit.setup_frame(
        [
            {
                "judges": ["step:m"],
                "model": "m",
                "host": "vm",
                "decoding": {"num_ctx": 8192, "seed": 7, "temperature": 0.0},
                "server": {"server": "llama-server", "model_path": "/x/m.gguf"},
            }
        ],
        "ours",
    )
    assert ours.loc[0, "context"] == "8192" and ours.loc[0, "temperature"] == "0" and ours.loc[0, "judges"] == "Step"
    assert "host" not in ours.columns  # a machine's name is no setting a reader can use
    rel = audit.setup_frame([{"judges": "step", "model": "qwen2.5:14b", "seed": 7}], "release")
    assert rel.loc[0, "server"] == "Ollama (per README)" and rel.loc[0, "seed"] == "7"
    assert rel.loc[0, "temperature"] == "\u2013" and rel.loc[0, "model"] == "Qwen2.5 14B"


def test_the_organic_agents_temperature_and_seed_are_the_appendixs_one_record():
    from trajectory_judge.book.chapters.appendix import organic_settings_table

    rec = {
        "kind": "organic",
        "written": 3,
        "model": "m",
        "agent_model": "m",
        "episodes": 3,
        "decoding": {"temperature": 0.0, "seed": 7, "num_ctx": 8192},
        "server": {"server": "llama-server"},
    }
    row = audit.setup_frame([rec], "ours").iloc[0]
    column = organic_settings_table([rec], "qwen2.5:14b", 60).iloc[:, 1]
    assert (row["temperature"], row["seed"]) == (column["temperature"], column["seed"]) == ("0", "7")


def test_setup_frame_gives_the_ensemble_its_sampling_temperature_and_seeds():
    # the ensemble's run record keeps the greedy defaults at the top (0.0, seed 7) and its own in "selfcons"
    rec = {
        "judges": ["selfcons3:m"],
        "model": "m",
        "decoding": {"temperature": 0.0, "seed": 7, "selfcons": {"temperature": 0.7, "seeds": [7, 8, 9]}},
    }
    row = audit.setup_frame([rec], "ours").iloc[0]
    assert (row["temperature"], row["seed"]) == ("0.7", "7, 8, 9")


# --- synthetic data: paired detail equals the report's paired discrimination ----------------------
def test_paired_detail_agrees_with_the_report_on_synthetic_verdicts():
    trajs = design()
    verdicts = [
        v for k, j in enumerate(("programmatic", "outcome:m", "step:m")) for v in random_verdicts(trajs, j, seed=k)
    ]
    rep = build_report(trajs, verdicts, resamples=50, seed=1)
    detail = paired.paired_detail(trajs, verdicts)
    for row in detail[~detail["group"].str.startswith("reply_")].itertuples():
        pv = rep.judges[row.judge].paired_discrimination[row.group]
        assert pv.n == row.n and row.paired == pytest.approx(pv.value)
    wide = paired.paired_wide(detail)
    assert list(wide.index) == list(dict.fromkeys(detail["judge"]))


# --- the paper's verdicts (committed projection; offline) -----------------------------------------
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rel():
    return load_paper_data(ROOT / "data" / "release", ROOT / "data")


@pytest.fixture(scope="module")
def rep(paper_report):
    return paper_report


@pytest.fixture(scope="module")
def reports(rel):
    return audit.seed_reports(rel.trajectories, rel.verdicts, seeds=range(6))


def test_outcome_view_recall_on_hidden_faults_is_its_flag_rate_on_parents(rel):
    # Camera-ready abstract: on faults that leave the outcome view unchanged, paired discrimination is 0.
    hid = paired.hidden_input_summary(paired.paired_detail(rel.trajectories, rel.verdicts))
    assert list(hid.index) == [P.OUTCOME]
    row = hid.loc[P.OUTCOME]
    assert row["paired"] == 0 and row["disagree"] == 0 and row["fault_rate"] == row["parent_rate"]


def test_the_audit_explains_every_difference_but_a_bound_beyond_every_seeds_reach(rep, rel, reports):
    spread = audit.seed_spread(reports, rel)
    au = audit.audit_frame(rep, rel, spread)
    s = audit.audit_summary(au)
    assert sum(s[v] for v in audit.VERDICTS) == s["total"] >= 200
    unexplained = au[au["verdict"] == audit.DIFFERS]
    assert unexplained["quantity"].str.endswith((" low", " high")).all()  # only interval bounds go unexplained
    for _, r in unexplained.iterrows():  # each outside the range every seed gives, and the row says how far they reach
        assert (
            not spread.loc[r["quantity"], "within range"] and " seeds print the published value; they give " in r["why"]
        )
    # Not recomputable: the 13 organic counts and the reply-only judge's +0.69 (§7.2's 0.92 is, by trajectory id).
    missing = au[au["verdict"] == audit.NOT_RECOMPUTABLE]["quantity"]
    assert len(missing) == 14 and missing.str.startswith(("organic_", "reply_")).all()
    assert au[au["quantity"].str.startswith("section72_example_confidence")]["verdict"].tolist() == [audit.REPRODUCES]
    # Paper §7.1's +0.389 upper bound: our seed prints +0.383, other seeds the published value.
    row = au[au["quantity"] == "silent_recall: step:qwen2.5:14b − outcome:qwen2.5:14b high"].iloc[0]
    assert row["verdict"] == audit.NOISE and round(row["recomputed"], 3) == 0.383


def test_a_bound_reproduces_only_when_at_least_half_the_seeds_print_it(rep, rel, reports):
    spread = audit.seed_spread(reports, rel)
    spread = spread[~spread.index.duplicated()]
    au = audit.audit_frame(rep, rel, spread)
    rows = au[au["quantity"].isin(spread.index)]
    share = [spread.loc[q, "seeds printing it"] / spread.loc[q, "seeds"] for q in rows["quantity"]]
    verdicts = list(rows["verdict"])
    assert any(v == audit.REPRODUCES for v in verdicts)
    assert all(x >= 0.5 for x, v in zip(share, verdicts) if v == audit.REPRODUCES)
    within = [bool(spread.loc[q, "within range"]) for q in rows["quantity"]]
    assert all(v == audit.NOISE for x, v, w in zip(share, verdicts, within) if x < 0.5 and w)
    assert all(v == audit.DIFFERS for x, v, w in zip(share, verdicts, within) if not w)


def test_audit_settles_the_papers_inconsistencies(rep, rel):
    au = audit.audit_frame(rep, rel).set_index("quantity")
    three = au.filter(like="section71_reply_unchanged_types", axis=0).iloc[0]
    assert (three["published"], three["recomputed"], three["verdict"]) == (3, 4, audit.EXPLAINED)
    readme = au.filter(like="readme_pooled_recall_outcome", axis=0).iloc[0]
    paper = au.loc[["pooled_recall_outcome (pooled recall of the outcome judge)"]]
    assert readme["verdict"] == audit.EXPLAINED and round(readme["recomputed"], 2) == 0.61
    assert (paper["verdict"] == audit.REPRODUCES).all()


def test_without_a_seed_spread_an_off_bound_is_reported_as_a_difference(rep, rel, reports):
    bare = audit.audit_frame(rep, rel).set_index("quantity")["verdict"]
    measured = audit.audit_frame(rep, rel, audit.seed_spread(reports, rel)).set_index("quantity")["verdict"]
    off = bare[bare == audit.DIFFERS].index
    assert len(off) >= 1 and set(measured[off]) <= {audit.NOISE, audit.DIFFERS}  # the seeds measure them, nothing else
    assert (measured[bare != audit.DIFFERS] == bare[bare != audit.DIFFERS]).all()


def test_published_delta_bound_is_within_monte_carlo_noise_of_the_stated_procedure(rel, reports):
    # Measured: the delta lives on a 1/175 grid and P(delta <= 67/175) is 0.9750 to three decimals,
    # so the 97.5th percentile of B=10,000 replicates flips between 67/175 (.383) and 68/175 (.389).
    cdf = audit.silent_delta_cdf(rel.trajectories, rel.verdicts, P.OUTCOME, P.STEP, resamples=200_000, seed=0)
    assert cdf.loc[67 / 175] == pytest.approx(0.975, abs=0.001)
    spread = audit.seed_deltas(reports, P.OUTCOME, P.STEP, "silent_recall").to_frame()
    assert set(spread["high"].round(3)) == {0.383, 0.389}


def test_the_audit_counts_add_up_to_its_rows_and_name_the_two_contradictions(rep, rel):
    checks = audit.audit_frame(rep, rel)
    counts = audit.audit_counts(checks)
    by_verdict = sum(counts[f"audit_{n}"] for n in ("reproduces", "noise", "explained", "missing"))
    assert counts["audit_total"] == len(checks) == by_verdict + int((checks["verdict"] == audit.DIFFERS).sum())
    assert 0 < counts["n_missing_organic"] <= counts["audit_missing"] and audit.abstract_reproduces(checks)
    said = audit.contradiction_numbers(checks, rep)
    assert said["reply_types_71"] != said["reply_types_data"] and said["readme_pooled"] != said["paper_pooled"]
    assert round(said["data_pooled"], 2) == said["paper_pooled"]  # the verdicts side with the paper, at its digits


def test_the_rule_engine_is_the_same_on_the_same_verdicts_and_not_compared_without_it(rep):
    assert audit.rules_comparison(rep, rep) == "the same"
    without = SimpleNamespace(judges={j: r for j, r in rep.judges.items() if j != "programmatic"})
    assert audit.rules_comparison(without, rep).startswith("not compared")


def test_organic_endings_count_verbatim_repeats_of_a_call():
    from trajectory_judge import models
    from trajectory_judge.testbed.env import generate_instances
    from trajectory_judge.testbed.oracle import solve

    inst = generate_instances(1)[0]
    clean = solve(inst)
    steps = [*clean.steps[:-1], *[clean.steps[-2]] * 3]  # the same call three more times, at steps of their own
    looped = clean.model_copy(update={"steps": [s.model_copy(update={"index": i}) for i, s in enumerate(steps)]})
    assert organic.longest_repeat(clean.steps) == 1 and organic.longest_repeat(looped.steps) == 4
    assert organic.longest_repeat([]) == 0

    def ep(traj, stop):
        return models.Episode(
            episode_id="e",
            stratum=inst.stratum,
            agent_model="m",
            trajectory=traj,
            violations=[],
            outcome={},
            expected={},
            stop=stop,
            latency_s=0.0,
            prompt_tokens=0,
            completion_tokens=0,
        )

    df = organic.organic_endings([ep(clean, "replied"), ep(looped, "max_steps"), ep(looped, "max_steps")])
    assert df.loc["replied"].tolist()[:4] == [1, 0, 1, int(clean.label.outcome_correct)]
    assert df.loc["max_steps", "episodes"] == 2 and df.loc["max_steps", "repeating a call"] == 2
    assert df.loc["max_steps", "longest repeat"] == 4 and df.loc["unparseable_action", "episodes"] == 0
    rep = organic.repeated_calls([ep(clean, "replied"), ep(looped, "max_steps")])
    assert rep.to_dict() == {clean.steps[-2].call.tool: 3}


def test_outcome_gaps_count_each_wrong_field():
    from types import SimpleNamespace as NS

    eps = [
        NS(outcome={"refunded_eur": 5.0, "replied": False}, expected={"refunded_eur": 5.0, "replied": True}),
        NS(outcome={"refunded_eur": 9.0, "replied": True}, expected={"refunded_eur": 5.0, "replied": True}),
    ]
    assert organic.outcome_gaps(eps).to_dict() == {"refunded_eur": 1, "replied": 1}


def test_setup_frame_takes_what_the_release_does_not_keep_from_the_papers_text_and_says_so():
    from trajectory_judge.book.chapters.judges import PAPER_DECODING

    rows = audit.setup_frame(
        [
            {"judges": "selfcons", "k": 3, "model": "qwen2.5:14b", "seed": 7},
            {"judges": "programmatic,outcome", "k": 3, "model": "qwen2.5:14b", "seed": 7},
        ],
        "release",
        PAPER_DECODING,
    )
    assert rows.loc[0, "judges"] == "Self-consistency ×3" and rows.loc[0, "seed"] == "7, 8, 9 \u00a7"
    assert rows.loc[0, "temperature"] == "0.7 \u00a7" and rows.loc[1, "temperature"] == "0 \u00a7"
    assert rows.loc[1, "judges"] == "Rules, Outcome" and rows.loc[1, "seed"] == "7"


def test_setup_frame_refuses_a_release_ensemble_whose_record_contradicts_the_papers_text():
    from trajectory_judge.book.chapters.judges import PAPER_DECODING

    with pytest.raises(ValueError, match="release run settings: seed 5, k 3 differ from the paper's text"):
        audit.setup_frame([{"judges": "selfcons", "k": 3, "model": "m", "seed": 5}], "release", PAPER_DECODING)


def test_the_seed_spread_table_prints_the_published_bound_at_its_printed_digits_beside_every_seed_count():

    from trajectory_judge.book.chapters.audit import spread_display

    spread = pd.DataFrame(
        {
            "published": [0.38, 0.9],
            "min": [0.3829, 0.9],
            "max": [0.3829, 0.9],
            "seeds printing it": [10, 10],
            "seeds": [10, 10],
            "within range": [True, True],
        },
        index=pd.Index(["outcome:qwen2.5:14b silent_recall low", "outcome:qwen2.5:14b loud_recall high"]),
    )
    out = spread_display(spread)
    assert list(out["Published"]) == ["0.38", "0.90"] and list(out["Lowest"]) == ["0.383", "0.900"]
    assert list(out["Seeds printing it"]) == [10, 10] and list(out["Within range at its printed digits"]) == [
        "yes",
        "yes",
    ]
