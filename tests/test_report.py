import json

import pandas as pd
import pytest
from analysis_synth import design, random_verdicts, verdict

from trajectory_judge.analysis.core.judge_statistics import STATISTICS
from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.cli import main
from trajectory_judge.models import FAILURE_TYPES, DataError, dumps

OUTCOME, STEP, STEP8, SELFCONS, RULES = (
    "outcome:qwen2.5:14b",
    "step:qwen2.5:14b",
    "step:llama3.1:8b",
    "selfcons3:qwen2.5:14b",
    "programmatic",
)

# Reference: the Results table of the published README (release-readme.md), also Table 3 of
# the paper. Columns: F1, silent recall, loud recall, false alarms, step exact, type F1, ECE,
# s/traj. None = "n/a" (the outcome judge names no step).
PUBLISHED_MAIN = {
    RULES: (0.800, 0.429, 1.000, 0.000, 1.000, 0.667, 0.075, 0.0),
    OUTCOME: (0.712, 0.451, 0.840, 0.330, None, 0.300, 0.253, 3.5),
    STEP: (0.923, 0.766, 0.984, 0.000, 0.973, 0.606, 0.033, 10.4),
    STEP8: (0.852, 0.983, 1.000, 1.000, 0.807, 0.311, 0.148, 1.5),
    SELFCONS: (0.913, 0.760, 0.960, 0.010, 0.982, 0.583, 0.084, 30.2),
}
MAIN_KEYS = (
    "f1",
    "silent_recall",
    "loud_recall",
    "false_alarm_rate",
    "step_exact",
    "type_macro_f1",
    "ece",
    "s_per_traj",
)

# Reference: the per-type recall table of the published README (Table 4), two decimals,
# in FAILURE_TYPES order, then the false-alarm anchor row.
PUBLISHED_PER_TYPE = {
    RULES: (0.00, 1.00, 1.00, 1.00, 1.00, 0.00, 0.00),
    OUTCOME: (0.34, 0.34, 0.74, 0.76, 1.00, 0.50, 0.33),
    STEP: (1.00, 1.00, 1.00, 1.00, 0.96, 0.18, 0.00),
    STEP8: (1.00, 0.94, 1.00, 1.00, 1.00, 1.00, 1.00),
    SELFCONS: (1.00, 1.00, 1.00, 1.00, 0.90, 0.16, 0.01),
}


@pytest.fixture(scope="module")
def rep(release_report):
    return release_report


def test_report_reproduces_published_main_table(rep):
    table = rep.main_table()
    for judge, expected in PUBLISHED_MAIN.items():
        for key, want in zip(MAIN_KEYS, expected):
            got = table.loc[judge, key]
            if want is None:
                assert pd.isna(got), (judge, key)
            else:
                digits = 1 if key == "s_per_traj" else 3
                assert round(float(got), digits) == want, (judge, key, got)


def test_report_reproduces_published_strata_and_denominators(rep):
    # Reference: README "Strata each judge actually saw"; paper §6 "0.973 over its 223 scored
    # cases", "of the 257 trajectories it flagged, all 257 were genuinely faulty".
    for jr in rep.judges.values():
        assert jr.n == 400 and jr.strata == {"clean": 100, "silent": 175, "loud": 125}
    assert rep.design == {"clean": 100, "silent": 175, "loud": 125}
    assert rep.judges[STEP].metrics["step_exact_n"] == 223
    assert rep.judges[STEP].metrics["precision"] == 1.0
    assert round(rep.judges[STEP].metrics["recall"] * 300) == 257  # 257 flagged, all faulty
    assert rep.judges[OUTCOME].metrics["step_exact_n"] == 0
    # Paper §7.3: the 8B judge flags 397 of 400, precision 0.748.
    m8 = rep.judges[STEP8].metrics
    assert round(m8["recall"] * 300 + m8["false_alarm_rate"] * 100) == 397 and round(m8["precision"], 3) == 0.748


def test_report_reproduces_published_per_type_recall(rep):
    table = rep.per_type_table()
    for judge, expected in PUBLISHED_PER_TYPE.items():
        assert tuple(round(float(v), 2) for v in table[judge]) == expected, judge


def test_report_reproduces_published_confusion_cells_and_confidence_support(rep):
    # Reference: paper §7.5 (step judge: 35 of 50 hallucinated_argument called wrong_tool;
    # premature_stop 14 correct, 17 unsupported_claim, 11 skipped_precondition), Figure 4
    # (41 of 50 unsupported_claim missed), Appendix E (distinct confidences 2/7/11/4/2),
    # §7.4 (43 verdicts at 2/3 and 357 at 1.0), Figure 3 (276 outcome verdicts at 0.92).
    conf = rep.confusion(STEP)
    assert conf.loc["hallucinated_argument", "wrong_tool"] == 35
    assert conf.loc["premature_stop", "premature_stop"] == 14
    assert conf.loc["premature_stop", "unsupported_claim"] == 17
    assert conf.loc["premature_stop", "skipped_precondition"] == 11
    assert conf.loc["unsupported_claim", "missed"] == 41
    support = {j: len(jr.confidence_support) for j, jr in rep.judges.items()}
    assert support == {RULES: 2, OUTCOME: 7, STEP: 11, STEP8: 4, SELFCONS: 2}
    assert rep.judges[SELFCONS].confidence_support == {"0.666667": 43, "1.0": 357}
    assert rep.judges[OUTCOME].confidence_support["0.92"] == 276
    assert rep.confidence_support(STEP8)[0.9] / 400 == pytest.approx(0.89, abs=0.005)


def test_report_completion_tokens_of_the_8b_judge_is_a_finding(rep):
    # Finding, not tuned away: the measured mean is 56.885 completion tokens. The paper (§7.3)
    # says 57 (rounded); the README says 56 (truncated). Both describe the same number.
    assert rep.judges[STEP8].metrics["completion_tokens_mean"] == pytest.approx(56.885)
    assert round(rep.judges[STEP].metrics["completion_tokens_mean"]) == 391


def _close(got, want, tol=0.01):
    return abs(got - want) <= tol + 1e-12  # 0.43 - 0.42 is 0.010000000000000009 in binary: the tolerance is inclusive


def test_report_intervals_agree_with_paper(rep):
    # Reference: paper §6 and §7.2; tolerance ±0.01 because the paper's bootstrap seed is not ours.
    cases = [
        (OUTCOME, "loud_recall", 0.840, 0.78, 0.90, "bootstrap"),
        (OUTCOME, "silent_recall", 0.451, 0.38, 0.52, "bootstrap"),
        (OUTCOME, "false_alarm_rate", 0.330, 0.24, 0.43, "bootstrap"),
        (STEP, "silent_recall", 0.766, 0.74, 0.80, "bootstrap"),
        (STEP, "false_alarm_rate", 0.000, 0.000, 0.036, "clopper-pearson"),
    ]
    for judge, metric, value, low, high, method in cases:
        iv = rep.judges[judge].intervals[metric]
        assert round(rep.judges[judge].metrics[metric], 3) == value
        assert _close(iv.low, low) and _close(iv.high, high), (judge, metric, iv)
        assert iv.method == method
    uc = rep.judges[STEP].per_type_intervals["unsupported_claim"]
    assert rep.judges[STEP].per_type_recall["unsupported_claim"] == 0.18
    assert _close(uc.low, 0.08) and _close(uc.high, 0.30)


def test_report_paired_deltas_and_gap_agree_with_paper(rep):
    # Reference: paper §7.1 and §7.4 / Appendix F Table 9 (b - a, 95% percentile interval).
    # Measured: outcome->step silent +0.314 [+0.240, +0.383] (paper's upper +0.389, 0.006 away).
    cases = [
        (OUTCOME, STEP, "silent_recall", 0.314, 0.240, 0.389),
        (STEP, SELFCONS, "f1", -0.009, -0.020, 0.000),
        (STEP, SELFCONS, "silent_recall", -0.006, -0.017, 0.000),
        (STEP, SELFCONS, "type_macro_f1", -0.023, -0.079, 0.035),
        (STEP, SELFCONS, "step_exact", 0.009, -0.008, 0.027),
        (STEP, SELFCONS, "ece", 0.051, 0.039, 0.071),
    ]
    for a, b, metric, value, low, high in cases:
        d = rep.delta(a, b, metric)
        assert round(d.value, 3) == value, (a, b, metric, d)
        assert _close(d.low, low) and _close(d.high, high), (a, b, metric, d)
    gap = next(g for g in rep.gaps if g.judge == OUTCOME)
    assert round(gap.value, 3) == 0.389 and _close(gap.low, 0.296) and _close(gap.high, 0.482)


def test_rule_engine_has_structural_intervals(rep):
    # Paper §5: the rule engine is constant within every design cell, so its recalls carry no
    # interval; we report method "structural" with low = high = value.
    ivs = rep.judges[RULES].intervals
    for m in (
        "precision",
        "recall",
        "f1",
        "silent_recall",
        "loud_recall",
        "false_alarm_rate",
        "step_exact",
        "type_macro_f1",
        "ece",
        "brier",
    ):
        assert ivs[m].method == "structural" and ivs[m].low == ivs[m].high == rep.judges[RULES].metrics[m], m
    assert ivs["s_per_traj"].method == "bootstrap"  # latency varies within cells
    assert all(iv.method != "structural" for j, jr in rep.judges.items() if j != RULES for iv in jr.intervals.values())
    assert "step_exact" not in rep.judges[OUTCOME].intervals


def test_deltas_cover_every_pair_and_every_shared_metric(rep):
    pairs = {(d.a, d.b) for d in rep.deltas}
    assert len(pairs) == 10
    assert (OUTCOME, STEP) in pairs and (STEP, SELFCONS) in pairs  # b - a reads as in the paper
    assert not any(d.metric == "step_exact" and OUTCOME in (d.a, d.b) for d in rep.deltas)
    assert len([d for d in rep.deltas if (d.a, d.b) == (STEP, SELFCONS)]) == 14


def test_report_json_has_the_documented_shape(rep):
    doc = json.loads(rep.to_json())
    assert set(doc) == {
        "n_trajectories",
        "design",
        "judges",
        "baselines",
        "pairs",
        "reference",
        "resampling",
        "statistics_computed",
        "agreement",
        "deltas",
        "gaps",
        "statistic_deltas",
    }
    assert doc["baselines"]["flag everything"] == {
        "n": 400,
        "faults": 300,
        "metrics": {
            "precision": 0.75,
            "recall": 1.0,
            "f1": 0.857143,
            "silent_recall": 1.0,
            "loud_recall": 1.0,
            "false_alarm_rate": 1.0,
        },
    }
    assert list(doc["judges"]) == [RULES, OUTCOME, STEP, STEP8, SELFCONS]
    j = doc["judges"][OUTCOME]
    assert set(j) == {
        "n",
        "strata",
        "metrics",
        "intervals",
        "per_type_recall",
        "paired_discrimination",
        "confidence_support",
        "baselines",
        *STATISTICS,
    }
    assert j["baselines"]["flag everything"]["n"] == 400  # it judged the whole design: its anchor is the design's
    assert set(j["auroc"]) == {"value", "low", "high", "method"}
    assert j["metrics"]["step_exact"] is None and j["metrics"]["step_exact_n"] == 0
    assert set(j["paired_discrimination"]) == {
        "all",
        "loud",
        "silent",
        "reaches_input",
        "hidden_from_input",
        *FAILURE_TYPES,
    }
    assert j["paired_discrimination"]["loud"] == {"value": 0.392857, "n": 84}
    assert set(doc["deltas"][0]) == {"a", "b", "kind", "n", "metric", "value", "low", "high"}
    assert set(doc["gaps"][0]) == {"judge", "metric", "value", "low", "high"}


def test_report_json_is_byte_identical_on_rerun(release, tmp_path, capsys):
    outs = []
    for k in range(2):
        out = tmp_path / f"r{k}.json"
        assert main(["report", "--data", str(release), "--json", str(out), "--resamples", "300", "--seed", "3"]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert "step:qwen2.5:14b" in capsys.readouterr().out


def test_book_tables_are_dataframes(rep):
    assert rep.calibration_bins(OUTCOME)["n"].sum() == 400
    assert list(rep.per_type_table().index)[-1] == "false_alarms_on_clean"
    assert rep.claim_table(STEP)["flagged"].sum() == 9
    assert set(rep.deltas_frame().columns) == {"a", "b", "metric", "value", "low", "high", "kind", "n"}
    assert len(rep.paired_frame()) == 5 * 11
    assert rep.bootstrap.distribution.shape[0] == 10_000
    assert "| programmatic |" in rep.to_markdown()


# --- synthetic data: subsets, and bad input ---------------------------------------------------
def _write(tmp_path, trajs, verdicts):
    (tmp_path / "trajectories.jsonl").write_text("".join(dumps(t) + "\n" for t in trajs))
    (tmp_path / "verdicts.jsonl").write_text("".join(dumps(v) + "\n" for v in verdicts))
    return tmp_path


def test_judge_on_a_subset_is_scored_on_what_it_judged():
    trajs = design(6)
    full = random_verdicts(trajs, "step:m", 1)
    part = random_verdicts(trajs, "selfcons3:m", 2, coverage=0.5)
    rep = build_report(trajs, full + part, resamples=200, seed=1)
    assert rep.judges["selfcons3:m"].n == len(part) < len(trajs)
    assert sum(rep.judges["selfcons3:m"].strata.values()) == len(part)
    # The delta is computed on the trajectories both judged, not on the two full sets.
    judged = {v.trajectory_id for v in part}
    sub = build_report(trajs, [v for v in full if v.trajectory_id in judged] + part, resamples=10, seed=1)
    d = rep.delta("step:m", "selfcons3:m", "f1")
    assert d.value == pytest.approx(sub.judges["selfcons3:m"].metrics["f1"] - sub.judges["step:m"].metrics["f1"])


def test_unknown_trajectory_is_an_error_naming_file_and_line(tmp_path, capsys):
    trajs = design(1)
    vs = [verdict(t.trajectory_id, "j", True) for t in trajs] + [verdict("NOPE", "j", True)]
    d = _write(tmp_path, trajs, vs)
    with pytest.raises(DataError, match=r"verdicts\.jsonl:8: verdict for unknown trajectory 'NOPE'"):
        load_data(d)
    assert main(["report", "--data", str(d)]) == 2
    assert "verdicts.jsonl:8: verdict for unknown trajectory" in capsys.readouterr().err


def test_duplicate_trajectory_judge_key_is_an_error_naming_file_and_line(tmp_path):
    trajs = design(1)
    vs = [verdict(t.trajectory_id, "j", True) for t in trajs] + [verdict(trajs[2].trajectory_id, "j", False)]
    d = _write(tmp_path, trajs, vs)
    with pytest.raises(DataError, match=r"verdicts\.jsonl:8: duplicate verdict for trajectory .*judge 'j'"):
        load_data(d)


def test_missing_field_is_an_error_naming_file_and_line(tmp_path):
    trajs = design(1)
    d = _write(tmp_path, trajs, [verdict(t.trajectory_id, "j", True) for t in trajs])
    lines = (d / "verdicts.jsonl").read_text().splitlines()
    row = json.loads(lines[3])
    del row["confidence"]
    lines[3] = json.dumps(row)
    (d / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"verdicts\.jsonl:4: invalid Verdict: confidence: Field required"):
        load_data(d)


def test_unlabelled_trajectory_is_an_error_naming_file_and_line(tmp_path):
    trajs = design(1)
    trajs[5] = trajs[5].model_copy(update={"label": None})
    d = _write(tmp_path, trajs, [verdict(t.trajectory_id, "j", True) for t in trajs])
    with pytest.raises(DataError, match=r"trajectories\.jsonl:6: trajectory .* has no label"):
        load_data(d)


def test_missing_directory_is_an_error(tmp_path, capsys):
    assert main(["report", "--data", str(tmp_path / "nowhere")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_in_memory_api_validates_too():
    trajs = design(1)
    with pytest.raises(DataError, match="verdict 1: verdict for unknown trajectory 'X'"):
        build_report(trajs, [verdict("X", "j", True)], resamples=10)
    vs = [verdict(trajs[0].trajectory_id, "j", True)] * 2
    with pytest.raises(DataError, match="verdict 2: duplicate verdict"):
        build_report(trajs, vs, resamples=10)
    with pytest.raises(DataError, match="no verdicts"):
        build_report(trajs, [], resamples=10)


def test_cli_writes_json_and_markdown(tmp_path, capsys):
    trajs = design(3)
    d = _write(
        tmp_path, trajs, random_verdicts(trajs, "outcome:m", 1, steps=False) + random_verdicts(trajs, "step:m", 2)
    )
    assert (
        main(
            [
                "report",
                "--data",
                str(d),
                "--json",
                str(d / "out" / "r.json"),
                "--markdown",
                str(d / "out" / "r.md"),
                "--resamples",
                "50",
            ]
        )
        == 0
    )
    doc = json.loads((d / "out" / "r.json").read_text())
    assert doc["n_trajectories"] == len(trajs) and list(doc["judges"]) == ["outcome:m", "step:m"]
    assert (d / "out" / "r.md").read_text().startswith("# Report")
    assert "outcome:m" in capsys.readouterr().out
    assert main(["report", "--data", str(d), "--resamples", "0"]) == 2


def test_report_states_the_compute_its_runs_spent(tmp_path, capsys):
    trajs = design(3)
    d = _write(tmp_path, trajs, random_verdicts(trajs, "step:m", 1))
    md = d / "r.md"
    assert main(["report", "--data", str(d), "--markdown", str(md), "--resamples", "20"]) == 0
    assert "no run records, so the compute spent is not known" in capsys.readouterr().out
    assert "## Compute spent" in md.read_text()
    rec = {
        "judges": ["step:m"],
        "judge_model_name": "m",
        "per_judge": {"step:m": {"verdicts": 5}},
        "wall_s": 7200.0,
        "cpu_s": {"server": 12600.0, "client": 1800.0, "server_pid": 1},
    }
    (d / "runs.jsonl").write_text(json.dumps(rec) + "\n")
    if (d / "SHA256SUMS").exists():
        main(["manifest", "--data", str(d)])
    assert main(["report", "--data", str(d), "--markdown", str(md), "--resamples", "20"]) == 0
    assert (
        "The 1 run took 2.00 h of wall time; the 1 run that measured it used 4.00 CPU hours (server and client)."
        in capsys.readouterr().out
    )
    assert "| step · m | 1 | 5 | 2.000 | 4.000 | 1 |" in md.read_text()
