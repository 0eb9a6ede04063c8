"""Precision, F1, kappa and MCC at another share of faulty runs (``analysis/statistics/deployment.py``, ``report --prevalence``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.analysis.statistics.deployment import at_prevalence, expected_statistics
from trajectory_judge.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def report():
    data = load_data(ROOT / "data")
    return build_report(data.trajectories, data.verdicts, resamples=1000, seed=7)


def test_the_statistics_of_the_expected_confusion_matrix_are_scikit_learns_on_runs_in_those_shares():
    # 20 faulty runs of which 14 flagged, 80 clean of which 8 flagged: recall 0.7, false-alarm rate 0.1, prevalence 0.2
    y = np.r_[np.ones(20), np.zeros(80)]
    flag = np.r_[np.ones(14), np.zeros(6), np.ones(8), np.zeros(72)]
    got = {k: float(v) for k, v in expected_statistics(np.array(0.7), np.array(0.1), 0.2).items()}
    want = {
        "precision": precision_score(y, flag),
        "recall": recall_score(y, flag),
        "balanced_accuracy": balanced_accuracy_score(y, flag),
        "f1": f1_score(y, flag),
        "kappa": cohen_kappa_score(y, flag),
        "mcc": matthews_corrcoef(y, flag),
    }
    assert got == pytest.approx(want, abs=1e-12)


def test_at_the_folders_own_share_precision_and_f1_are_the_reports(report):
    own = at_prevalence(report, 0.75)
    assert own.design_prevalence == pytest.approx(0.75)
    for j in own.judges:
        m = report.judges[j.judge].metrics
        assert j.values["precision"] == pytest.approx(m["precision"], abs=1e-9)
        assert j.values["f1"] == pytest.approx(m["f1"], abs=1e-9)


def test_rarer_faults_lower_the_precision_of_a_judge_that_raises_false_alarms_and_every_value_has_an_interval(report):
    rare, own = at_prevalence(report, 0.05), at_prevalence(report, 0.75)
    for a, b in zip(rare.judges, own.judges, strict=True):
        assert a.low["f1"] <= a.values["f1"] <= a.high["f1"]
        if report.judges[a.judge].metrics["false_alarm_rate"] > 0:
            assert a.values["precision"] < b.values["precision"]
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        at_prevalence(report, 1.0)


def test_report_prevalence_adds_the_section_and_the_json_and_refuses_a_share_outside_zero_to_one(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["report", "--data", str(ROOT / "data"), "--resamples", "300", "--prevalence", "0.1", "--json", str(out)]
    assert main(argv) == 0
    assert "At a prevalence of 0.1" in capsys.readouterr().out
    doc = json.loads(out.read_text())["at_prevalence"]
    assert doc["prevalence"] == 0.1 and doc["folder_prevalence"] == 0.75
    assert all(set(v) == {"precision", "f1", "kappa", "mcc", "auprc"} for v in doc["judges"].values())
    assert doc["chance_auprc"] == 0.1
    assert main(["report", "--data", str(ROOT / "data"), "--prevalence", "0"]) == 2
    err = capsys.readouterr().err
    assert "--prevalence" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_auprc_at_a_share_is_scikit_learns_average_precision_with_the_faulty_and_clean_runs_reweighed():
    from sklearn.metrics import average_precision_score

    from trajectory_judge.analysis.core.judge_statistics import auprc_at_prevalence_family, faulty_score
    from trajectory_judge.analysis.core.plan import make_plan

    data = load_data(ROOT / "data")
    plan = make_plan(data.trajectories, data.verdicts, [])
    ones = np.ones((1, len(plan.labels)))
    for share in (0.02, 0.3, 0.75):
        family = auprc_at_prevalence_family(plan.labels, plan.verdicts, share)
        got = family.statistic(np.concatenate([c.counts(ones) for c in family.cells], axis=-1))[0]
        for j, value in zip(plan.judges, got, strict=True):
            kept = [(lab, v) for lab, v in zip(plan.labels, plan.verdicts[j]) if v is not None]
            y = np.array([lab.faulty for lab, _ in kept])
            score = np.array([faulty_score(v) for _, v in kept])  # the probability of "faulty", tie groups as counted
            weight = np.where(y, share / y.sum(), (1 - share) / (~y).sum())
            assert value == pytest.approx(average_precision_score(y, score, sample_weight=weight), abs=1e-9), j


def test_auprc_at_the_folders_own_share_is_the_reports_replicate_by_replicate_and_rare_faults_lower_it():
    data = load_data(ROOT / "data")
    rep = build_report(data.trajectories, data.verdicts, resamples=300, seed=7, statistics=True)
    own = at_prevalence(rep, 0.75, trajectories=data.trajectories, verdicts=data.verdicts)
    rare = at_prevalence(rep, 0.05, trajectories=data.trajectories, verdicts=data.verdicts)
    stats = rep.statistics_bootstrap
    for a, b in zip(own.judges, rare.judges, strict=True):
        assert a.values["auprc"] == pytest.approx(rep.judges[a.judge].statistics["auprc"], abs=1e-9)
        col = stats.distribution[:, stats.index(f"{a.judge}|auprc")]
        lo, hi = np.percentile(col, [2.5, 97.5])
        assert (a.low["auprc"], a.high["auprc"]) == pytest.approx((lo, hi), abs=1e-9)  # the report's resamples
        assert b.low["auprc"] <= b.values["auprc"] <= b.high["auprc"] and b.values["auprc"] < a.values["auprc"]
    assert (
        rare.chance_auprc == 0.05 and "auprc" in rare.statistics and "auprc" not in at_prevalence(rep, 0.05).statistics
    )
    with pytest.raises(ValueError, match="not the ones the report was built from"):
        one_judge_fewer = [v for v in data.verdicts if v.judge_id != data.verdicts[0].judge_id]
        at_prevalence(rep, 0.1, trajectories=data.trajectories, verdicts=one_judge_fewer)
