"""Judge statistics: ranking, chance-corrected agreement, selective prediction, McNemar, multiplicity, front."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from analysis_synth import design, random_verdicts, verdict
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    matthews_corrcoef,
    roc_auc_score,
)
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from trajectory_judge.analysis.core.judge_statistics import (
    COVERAGES,
    DELTA_STATISTICS,
    STATISTICS,
    aurc,
    coverage_cut,
    delta_tests,
    e_aurc,
    expected_risk_curve,
    faulty_probability,
    judge_statistics,
    make_statistics_plan,
    mcnemar_pairs,
    optimal_aurc,
    pareto_front,
    point_statistics,
    risk_coverage,
    score_ties,
    statistics_from_counts,
)
from trajectory_judge.analysis.core.loading import load_data, load_paper_data
from trajectory_judge.analysis.core.plan import make_plan
from trajectory_judge.analysis.core.report import STATISTICS_ON_REQUEST, build_report
from trajectory_judge.models import design_cell

ROOT = Path(__file__).resolve().parents[1]
OUTCOME, STEP = "outcome:qwen2.5:14b", "step:qwen2.5:14b"
SKLEARN = {
    "auroc": lambda y, s, f: roc_auc_score(y, s),
    "auprc": lambda y, s, f: average_precision_score(y, s),
    "kappa": lambda y, s, f: cohen_kappa_score(y, f),
    "mcc": lambda y, s, f: matthews_corrcoef(y, f),
    "balanced_accuracy": lambda y, s, f: balanced_accuracy_score(y, f),
}


@pytest.fixture(scope="module", params=["paper", "edition"])
def dataset(request):
    if request.param == "paper":
        return load_paper_data(ROOT / "data" / "release", ROOT / "data")
    return load_data(ROOT / "data")


def _sklearn_values(data, judge):
    labels = {t.trajectory_id: t.label for t in data.trajectories}
    vs = [v for v in data.verdicts if v.judge_id == judge]
    y = np.asarray([int(labels[v.trajectory_id].faulty) for v in vs])
    s = np.asarray([faulty_probability(v) for v in vs])
    f = np.asarray([int(v.faulty) for v in vs])
    return {m: float(fn(y, s, f)) for m, fn in SKLEARN.items()}


def test_count_form_equals_sklearn_to_1e9_per_judge_on_the_release_and_ours(dataset):
    plan = make_plan(dataset.trajectories, dataset.verdicts, [])
    sp = make_statistics_plan(plan.labels, plan.verdicts)
    sums = sp.counts(np.ones(len(plan.labels)))
    assert len(plan.judges) >= 5
    for j in plan.judges:
        counted = statistics_from_counts(sums, sp.blocks[(j,)])
        for m, want in _sklearn_values(dataset, j).items():
            assert abs(float(counted[m]) - want) <= 1e-9, (j, m)


def test_report_json_statistics_equal_sklearn_to_1e9_on_the_release(paper_report):
    data = load_paper_data(ROOT / "data" / "release", ROOT / "data")
    doc = json.loads(paper_report.to_json())
    for j in paper_report.judges:
        want = _sklearn_values(data, j)
        for m in ("auroc", "auprc", "kappa", "mcc", "balanced_accuracy"):
            assert abs(paper_report.judges[j].statistics[m] - want[m]) <= 1e-9, (j, m)
            entry = doc["judges"][j][m]
            assert set(entry) == {"value", "low", "high", "method"} and abs(entry["value"] - want[m]) <= 1e-6
        assert doc["judges"][j]["aurc"]["value"] is not None


def test_every_interval_contains_its_estimate(paper_report):
    seen = 0
    for jr in paper_report.judges.values():
        for m, iv in jr.statistic_intervals.items():
            v = jr.statistics[m]
            assert iv.low - 1e-12 <= v <= iv.high + 1e-12, (jr.judge_id, m, v, iv)
            seen += 1
    assert seen == len(paper_report.judges) * len(STATISTICS)


def test_paired_auroc_delta_equals_difference_of_per_judge_aurocs_at_unit_weights(paper_report):
    d = paper_report.statistic_delta(OUTCOME, STEP, "auroc")
    a, b = paper_report.judges[OUTCOME].statistics["auroc"], paper_report.judges[STEP].statistics["auroc"]
    assert math.isclose(d.value, b - a, abs_tol=1e-12)
    assert d.low < d.value < d.high and d.low > 0  # the step judge ranks faults better, beyond noise
    assert {x.metric for x in paper_report.statistic_deltas} == set(DELTA_STATISTICS)


def test_statistics_share_the_reports_resamples(paper_report):
    """The statistics' bootstrap draws the report's resamples: a quantity both compute has one distribution."""
    boot, sboot = paper_report.bootstrap, paper_report.statistics_bootstrap
    j = STEP
    plan = make_plan(*load_paper_data(ROOT / "data" / "release", ROOT / "data"), [])
    sp = make_statistics_plan(plan.labels, plan.verdicts)
    blk = sp.blocks[(j,)]
    # recall from the statistics' columns on the same weights equals the report's replicate recall
    tpr = (2 * sboot.distribution[:, sboot.index(f"{j}|balanced_accuracy")]) - (
        1 - boot.distribution[:, boot.index(f"{j}|false_alarm_rate")]
    )
    assert np.allclose(tpr, boot.distribution[:, boot.index(f"{j}|recall")], atol=1e-12)
    assert blk.columns.stop > blk.columns.start


def _design_pairs(judge_of):
    trajs = design(6)
    vs = [judge_of(t) for t in trajs]
    return trajs, vs


def test_a_flag_everything_judge_has_auroc_one_half_kappa_and_mcc_zero():
    trajs, vs = _design_pairs(lambda t: verdict(t.trajectory_id, "step:all", True, confidence=0.8))
    st = judge_statistics(
        [t.label for t in trajs], {"step:all": vs}, [design_cell(t.label) for t in trajs], resamples=200
    )
    v = st.values["step:all"]
    assert v["auroc"] == 0.5 and v["kappa"] == 0 and v["mcc"] == 0 and v["balanced_accuracy"] == 0.5
    assert v["auprc"] == pytest.approx(v["prevalence"])  # the reference value of AUPRC
    assert v["aurc"] == pytest.approx(1 - v["prevalence"])  # it keeps everything, wrong on every clean run


def test_a_perfect_ranker_has_auroc_and_auprc_one_and_aurc_zero():
    trajs, vs = _design_pairs(lambda t: verdict(t.trajectory_id, "step:oracle", t.label.faulty, confidence=0.9))
    st = judge_statistics(
        [t.label for t in trajs], {"step:oracle": vs}, [design_cell(t.label) for t in trajs], resamples=200
    )
    v = st.values["step:oracle"]
    assert v["auroc"] == 1 and v["auprc"] == 1 and v["kappa"] == 1 and v["aurc"] == 0


def test_aurc_without_ties_is_the_mean_risk_over_every_coverage():
    trajs = design(3)
    confs = np.linspace(0.51, 0.99, len(trajs))
    vs = [verdict(t.trajectory_id, "j", i % 3 != 0, confidence=float(c)) for i, (t, c) in enumerate(zip(trajs, confs))]
    pairs = sorted(zip([t.label for t in trajs], vs), key=lambda p: -p[1].confidence)
    wrong = np.cumsum([lab.faulty != v.faulty for lab, v in pairs])
    mean_risk = float(np.mean(wrong / np.arange(1, len(pairs) + 1)))
    assert aurc(pairs) == pytest.approx(mean_risk, abs=1e-12)
    assert len(risk_coverage(pairs)) == len(pairs)


SELECTIVE = tuple(m for m in STATISTICS if m not in ("auroc", "auprc", "kappa", "mcc", "balanced_accuracy"))
"""The statistics scikit-learn does not define: their reference is the plain definition, verdict by verdict."""


def _aligned(trajs, vs):
    by = {v.trajectory_id: v for v in vs}
    return [by.get(t.trajectory_id) for t in trajs]


def test_count_form_of_the_selective_and_tie_statistics_equals_the_plain_definition():
    trajs = design(8)
    vs = random_verdicts(trajs, "step:x", seed=3)
    labels = {t.trajectory_id: t.label for t in trajs}
    pairs = [(labels[v.trajectory_id], v) for v in vs]
    sp = make_statistics_plan([t.label for t in trajs], {"step:x": _aligned(trajs, vs)})
    got = statistics_from_counts(sp.counts(np.ones(len(trajs))), sp.blocks[("step:x",)])
    plain = point_statistics(pairs)
    for m in SELECTIVE:
        assert float(got[m]) == pytest.approx(plain[m], abs=1e-12), m
    assert float(got["aurc"]) == pytest.approx(aurc(pairs), abs=1e-12)
    for q in COVERAGES:
        assert float(got[f"recall_at_coverage:{q:g}"]) == pytest.approx(coverage_cut(pairs, q).recall, abs=1e-12)


def test_the_bootstraps_weighted_counts_give_the_plain_selective_statistics_of_the_resample():
    """A replicate's weights are multiplicities: the count form at those weights is the plain definition on the
    rows repeated that many times (so the replicates are the same exact statistics as the point value)."""
    trajs = design(8)
    vs = random_verdicts(trajs, "step:x", seed=5, coverage=0.8)
    aligned = _aligned(trajs, vs)
    sp = make_statistics_plan([t.label for t in trajs], {"step:x": aligned})
    rng = np.random.default_rng(4)
    for _ in range(5):
        w = rng.integers(0, 4, size=len(trajs))
        got = statistics_from_counts(sp.counts(w.astype(float)), sp.blocks[("step:x",)])
        resample = [(t.label, v) for t, v, k in zip(trajs, aligned, w) if v is not None for _ in range(k)]
        plain = point_statistics(resample)
        for m in SELECTIVE:
            assert float(got[m]) == pytest.approx(plain[m], abs=1e-12), m


def test_the_selective_statistics_refuse_weights_that_are_not_whole_numbers():
    trajs = design(2)
    vs = random_verdicts(trajs, "step:x", seed=5)
    sp = make_statistics_plan([t.label for t in trajs], {"step:x": _aligned(trajs, vs)})
    with pytest.raises(ValueError, match="whole-number"):
        statistics_from_counts(sp.counts(np.full(len(trajs), 0.5)), sp.blocks[("step:x",)])


def _tied_pairs(seed: int, n: int = 60):
    """Labelled verdicts with few distinct confidences, so large tie groups straddle every cut."""
    rng = np.random.default_rng(seed)
    trajs = design(10)[:n]
    return [
        (
            t.label,
            verdict(t.trajectory_id, "j", bool(rng.random() < 0.7), confidence=float(rng.choice([0.6, 0.8, 0.9]))),
        )
        for t in trajs
    ]


def _groups(pairs):
    confs = sorted({round(v.confidence, 9) for _, v in pairs}, reverse=True)
    return [[p for p in pairs if round(p[1].confidence, 9) == c] for c in confs]


def _random_orders(pairs, draws: int, seed: int):
    """``draws`` orders of ``pairs``, surest first, verdicts of equal confidence shuffled uniformly at random."""
    rng = np.random.default_rng(seed)
    conf = np.asarray([round(v.confidence, 9) for _, v in pairs])
    for _ in range(draws):
        yield np.lexsort((rng.random(len(pairs)), -conf))


@pytest.mark.parametrize("seed", [1, 2])
def test_exact_coverage_closed_form_is_the_average_over_random_tie_breakings(seed):
    pairs = _tied_pairs(seed)
    n, draws = len(pairs), 20_000
    wrong = np.asarray([lab.faulty != v.faulty for lab, v in pairs], dtype=float)
    faulty = np.asarray([lab.faulty for lab, _ in pairs], dtype=float)
    found = np.asarray([lab.faulty and v.faulty for lab, v in pairs], dtype=float)
    for q in COVERAGES:
        cut = coverage_cut(pairs, q)
        assert cut.kept == math.ceil(q * n) and q <= cut.coverage < q + 1 / n
        ends = np.cumsum([len(g) for g in _groups(pairs)])
        assert cut.kept not in ends  # the cut falls inside a tie group
        sims = np.asarray(
            [[x[o[: cut.kept]].sum() for x in (wrong, faulty, found)] for o in _random_orders(pairs, draws, seed)]
        )
        mean, se = sims.mean(axis=0), sims.std(axis=0) / math.sqrt(draws)
        for closed, m, s in zip((cut.wrong, cut.faults, cut.found), mean, se):
            assert abs(closed - m) <= 4 * s + 1e-12, (q, closed, m, s)
        assert cut.risk == pytest.approx(float(np.mean(sims[:, 0] / cut.kept)), abs=4 * se[0] / cut.kept + 1e-12)
        assert cut.recall == pytest.approx(mean[2] / mean[1], abs=0.01)


@pytest.mark.parametrize("seed", [1, 2])
def test_aurc_is_the_average_area_over_random_tie_breakings(seed):
    pairs = _tied_pairs(seed)
    n, draws = len(pairs), 20_000
    wrong = np.asarray([lab.faulty != v.faulty for lab, v in pairs], dtype=float)
    areas = np.asarray([np.mean(np.cumsum(wrong[o]) / np.arange(1, n + 1)) for o in _random_orders(pairs, draws, seed)])
    assert abs(aurc(pairs) - areas.mean()) <= 4 * areas.std() / math.sqrt(draws)
    assert aurc(pairs) == pytest.approx(float(np.mean([r for _, r in expected_risk_curve(pairs)])), abs=1e-15)
    old = sum(p["added"] * p["risk"] for p in risk_coverage(pairs))  # tie groups kept or dropped together
    assert abs(old - areas.mean()) > 8 * areas.std() / math.sqrt(draws)  # a different number, beyond noise


def test_optimal_aurc_is_the_smallest_area_over_every_ordering_and_e_aurc_its_excess():
    from itertools import permutations

    pairs = _tied_pairs(3, n=7)
    wrong = np.asarray([lab.faulty != v.faulty for lab, v in pairs], dtype=float)
    areas = [np.mean(np.cumsum(wrong[list(o)]) / np.arange(1, 8)) for o in permutations(range(7))]
    assert optimal_aurc(pairs) == pytest.approx(min(areas), abs=1e-15)
    assert e_aurc(pairs) == pytest.approx(aurc(pairs) - min(areas), abs=1e-15) and e_aurc(pairs) >= 0
    perfect = [(lab, verdict("t", "j", lab.faulty, confidence=0.9)) for lab, _ in pairs]
    assert e_aurc(perfect) == 0 and aurc(perfect) == 0


def test_auroc_tie_range_is_sklearns_auroc_with_every_tie_broken_against_and_in_favour(dataset):
    """AUROC with ties is scikit-learn's mid-rank value; nudging each faulty score down (up) by less than any gap
    breaks every tie against (for) the judge, and gives the ends of the range."""
    labels = {t.trajectory_id: t.label for t in dataset.trajectories}
    seen = 0
    for j in sorted({v.judge_id for v in dataset.verdicts}):
        pairs = [(labels[v.trajectory_id], v) for v in dataset.verdicts if v.judge_id == j]
        y = np.asarray([int(lab.faulty) for lab, _ in pairs])
        s = np.asarray([round(faulty_probability(v), 9) for _, v in pairs])
        gaps = np.diff(np.unique(s))
        nudge = (gaps.min() if len(gaps) else 1.0) / 4  # less than any gap between two distinct scores
        ties, st = score_ties(pairs), point_statistics(pairs)
        assert st["auroc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        assert ties.auroc == pytest.approx(st["auroc"], abs=1e-12)
        assert st["auroc_ties_against"] == pytest.approx(roc_auc_score(y, s - nudge * y), abs=1e-12)
        assert st["auroc_ties_for"] == pytest.approx(roc_auc_score(y, s + nudge * y), abs=1e-12)
        assert st["auroc_ties_for"] - st["auroc_ties_against"] == pytest.approx(st["auroc_tied_pairs"], abs=1e-12)
        seen += st["auroc_tied_pairs"] > 0
    assert seen >= 3  # the diagnostic has ties to measure


def test_achieved_coverage_is_the_nominal_to_one_verdict_for_every_judge(dataset):
    plan = make_plan(dataset.trajectories, dataset.verdicts, [])
    sp = make_statistics_plan(plan.labels, plan.verdicts)
    sums = sp.counts(np.ones(len(plan.labels)))
    for j in plan.judges:
        n = sum(v is not None for v in plan.verdicts[j])
        got = statistics_from_counts(sums, sp.blocks[(j,)])
        for q in COVERAGES:
            assert q <= float(got[f"achieved_coverage:{q:g}"]) < q + 1 / n, (j, q)


def test_weighted_counts_equal_sklearn_with_sample_weights():
    """The bootstrap's replicates are weighted counts: at any weights the count form is sklearn's weighted value."""
    trajs = design(8)
    vs = random_verdicts(trajs, "step:x", seed=5)
    by = {v.trajectory_id: v for v in vs}
    aligned = {"step:x": [by.get(t.trajectory_id) for t in trajs]}
    sp = make_statistics_plan([t.label for t in trajs], aligned)
    w = np.random.default_rng(1).integers(0, 4, size=len(trajs)).astype(float)
    got = statistics_from_counts(sp.counts(w), sp.blocks[("step:x",)])
    keep = [i for i, t in enumerate(trajs) if t.trajectory_id in by]
    y = [int(trajs[i].label.faulty) for i in keep]
    s = [faulty_probability(by[trajs[i].trajectory_id]) for i in keep]
    f = [int(by[trajs[i].trajectory_id].faulty) for i in keep]
    ww = w[keep]
    assert float(got["auroc"]) == pytest.approx(roc_auc_score(y, s, sample_weight=ww), abs=1e-9)
    assert float(got["auprc"]) == pytest.approx(average_precision_score(y, s, sample_weight=ww), abs=1e-9)
    assert float(got["mcc"]) == pytest.approx(matthews_corrcoef(y, f, sample_weight=ww), abs=1e-9)
    assert float(got["kappa"]) == pytest.approx(cohen_kappa_score(y, f, sample_weight=ww), abs=1e-9)


def test_mcnemar_p_equals_statsmodels_and_counts_match_paired_discrimination(paper_report):
    data = load_paper_data(ROOT / "data" / "release", ROOT / "data")
    res = mcnemar_pairs(data.trajectories, data.verdicts, OUTCOME)
    table = [[res.n - res.fault_only - res.parent_only - 0, res.parent_only], [res.fault_only, 0]]
    assert res.pvalue == mcnemar(table, exact=True).pvalue
    paired = paper_report.judges[OUTCOME].paired_discrimination["all"]
    assert res.n == paired.n and res.discrimination == pytest.approx(paired.value, abs=1e-12)


def test_holm_and_bh_adjustments_are_statsmodels_and_never_below_the_raw_p(paper_report):
    deltas = [d for d in paper_report.statistic_deltas if d.metric == "auroc"]
    tests = delta_tests(paper_report.statistics_bootstrap, deltas, margin=0.05)
    raw = [t.pvalue for t in tests]
    assert [t.holm for t in tests] == list(multipletests(raw, method="holm")[1])
    assert [t.bh for t in tests] == list(multipletests(raw, method="fdr_bh")[1])
    assert all(t.holm >= t.pvalue and t.bh >= t.pvalue for t in tests)
    step = next(t for t in tests if {t.delta.a, t.delta.b} == {OUTCOME, STEP})
    assert step.pvalue < 0.001 and not step.equivalent and step.mde > 0


def test_a_delta_without_variance_is_tested_for_nothing_and_called_equivalent_by_no_test():
    trajs = design(10)
    labels, cells = [t.label for t in trajs], [design_cell(t.label) for t in trajs]
    a = [verdict(t.trajectory_id, "step:a", t.label.faulty, confidence=0.9) for t in trajs]
    st = judge_statistics(labels, {"step:a": a, "step:b": list(a)}, cells, pairs=[("step:a", "step:b")], resamples=300)
    same = [d for d in st.deltas if d.metric == "auroc"]
    (t,) = delta_tests(st.bootstrap, same, margin=0.05)
    assert t.degenerate and not t.equivalent and math.isnan(t.pvalue) and math.isnan(t.mde) and math.isnan(t.holm)


def _varying_tests(margin):
    rng = np.random.default_rng(3)
    trajs = design(30)
    labels, cells = [t.label for t in trajs], [design_cell(t.label) for t in trajs]
    a = [verdict(t.trajectory_id, "step:a", bool(rng.random() < 0.7), confidence=0.9) for t in trajs]
    b = [
        verdict(t.trajectory_id, "step:b", v.faulty if rng.random() < 0.9 else not v.faulty, confidence=0.9)
        for t, v in zip(trajs, a)
    ]
    st = judge_statistics(labels, {"step:a": a, "step:b": b}, cells, pairs=[("step:a", "step:b")], resamples=999)
    return delta_tests(st.bootstrap, [d for d in st.deltas if d.metric in ("auroc", "kappa")], margin=margin)


def test_tost_uses_each_metrics_own_margin_and_declares_equivalence_only_inside_it():
    wide = _varying_tests({"auroc": 1.0, "kappa": 1.0})
    narrow = _varying_tests({"auroc": 1e-3, "kappa": 1.0})
    assert all(t.equivalent and not t.degenerate for t in wide)
    by = {t.delta.metric: t for t in narrow}
    assert not by["auroc"].equivalent and by["kappa"].equivalent and by["auroc"].margin == 1e-3


def test_a_bootstrap_p_is_never_below_one_over_the_replicates_plus_one():
    for t in _varying_tests(0.05):
        assert t.pvalue >= 2 / (999 + 1) - 1e-15 and t.pvalue <= 1.0


def test_pareto_front_keeps_only_judges_no_other_beats_on_quality_and_cost():
    quality = {"a": 0.9, "b": 0.8, "c": 0.95, "d": 0.7}
    cost = {"a": 10.0, "b": 12.0, "c": 30.0, "d": 0.0}
    assert pareto_front(quality, cost) == ["d", "a", "c"]


def test_report_statistics_shows_them_in_markdown_terminal_and_json(tmp_path, capsys):
    from trajectory_judge.cli import main

    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    args = ["report", "--data", str(ROOT / "data"), "--resamples", "200", "--json", str(out), "--markdown", str(md)]
    assert main([*args, "--statistics"]) == 0
    text = capsys.readouterr().out
    assert "AUROC" in text and "Cohen's κ" in text and "AURC" in text and "E-AURC" in text
    doc = json.loads(out.read_text())
    j = doc["judges"]["step:qwen2.5-coder:1.5b"]
    for m in ("auroc", "auprc", "kappa", "mcc", "balanced_accuracy", "aurc", "e_aurc"):
        assert j[m]["low"] <= j[m]["value"] <= j[m]["high"]
    for judge, jd in doc["judges"].items():  # the coverage each judge achieves, beside its recall and risk
        for q in COVERAGES:
            assert q <= jd[f"achieved_coverage:{q:g}"]["value"] < q + 1 / jd["n"], (judge, q)
            kept = round(jd[f"achieved_coverage:{q:g}"]["value"] * jd["n"])
            assert f"{judge}, {q:.0%}" in text and f"({kept} of {jd['n']})" in text
        assert jd["auroc_ties_against"]["value"] <= jd["auroc"]["value"] <= jd["auroc_ties_for"]["value"]
        assert 0 <= jd["auroc_tied_pairs"]["value"] <= 1
    assert doc["statistic_deltas"]
    body = md.read_text()
    assert body.count("## ") >= 10 and "| auroc |" in body and "| aurc |" in body


def test_report_without_statistics_says_how_to_ask_for_them_and_keeps_every_metric_as_it_is(tmp_path, capsys):
    from trajectory_judge.cli import main

    paths = {k: tmp_path / f"{k}.json" for k in ("with", "without")}
    base = ["report", "--data", str(ROOT / "data"), "--resamples", "200"]
    assert main([*base, "--json", str(paths["with"]), "--statistics"]) == 0
    capsys.readouterr()
    assert main([*base, "--json", str(paths["without"]), "--markdown", str(tmp_path / "r.md")]) == 0
    text = capsys.readouterr().out
    assert STATISTICS_ON_REQUEST in text and "Cohen's κ" not in text and "AURC (lower" not in text
    assert "--statistics" in (tmp_path / "r.md").read_text()
    with_, without = (json.loads(p.read_text()) for p in paths.values())
    assert with_["statistics_computed"] and not without["statistics_computed"] and not without["statistic_deltas"]
    for j, jw in with_["judges"].items():
        jo = without["judges"][j]
        assert "auroc" not in jo
        assert {k: v for k, v in jw.items() if k in jo} == jo  # every metric and interval the same, bit for bit
    assert with_["deltas"] == without["deltas"] and with_["gaps"] == without["gaps"]


def test_report_and_judge_records_to_frame_carry_the_statistics():
    data = load_data(ROOT / "data")
    rep = build_report(data.trajectories, data.verdicts, resamples=200, seed=7)
    frame = rep.to_frame()
    assert {"auroc", "kappa", "aurc", "f1"} <= set(frame.columns) and len(frame) == len(rep.judges)
    jf = rep.judges["programmatic"].to_frame()
    assert jf.loc["auroc", "method"] == "structural" and jf.loc["f1", "kind"] == "metric"


def test_checked_statistics_agree_with_sklearn_and_a_disagreement_stops(dataset, monkeypatch):
    plan = make_plan(dataset.trajectories, dataset.verdicts, [])
    st = judge_statistics(plan.labels, plan.verdicts, plan.cells, resamples=50, check=True)
    assert set(st.values) == set(plan.judges)
    import trajectory_judge.analysis.core.judge_statistics as JS

    real = JS.point_statistics
    monkeypatch.setattr(JS, "point_statistics", lambda pairs: {**real(pairs), "auroc": 0.123})
    with pytest.raises(RuntimeError, match="auroc"):
        judge_statistics(plan.labels, plan.verdicts, plan.cells, resamples=50, check=True)


def test_a_delta_between_judges_of_different_trajectories_is_taken_on_those_both_judged():
    from trajectory_judge.analysis.core.judge_statistics import point_statistics

    trajs = design(10)
    va = {v.trajectory_id: v for v in random_verdicts(trajs, "step:a", 1, coverage=0.7)}
    vb = {v.trajectory_id: v for v in random_verdicts(trajs, "step:b", 2, coverage=0.7)}
    labels, cells = [t.label for t in trajs], [design_cell(t.label) for t in trajs]
    aligned = {"step:a": [va.get(t.trajectory_id) for t in trajs], "step:b": [vb.get(t.trajectory_id) for t in trajs]}
    st = judge_statistics(labels, aligned, cells, pairs=[("step:a", "step:b")], resamples=100)
    both = [t for t in trajs if t.trajectory_id in va and t.trajectory_id in vb]
    assert 0 < len(both) < len(va)
    on = {j: point_statistics([(t.label, by[t.trajectory_id]) for t in both]) for j, by in (("a", va), ("b", vb))}
    d = next(x for x in st.deltas if x.metric == "auroc")
    assert d.n == len(both) and d.value == pytest.approx(on["b"]["auroc"] - on["a"]["auroc"], abs=1e-9)
    assert st.values["step:a"]["auroc"] != pytest.approx(on["a"]["auroc"], abs=1e-9)  # its own value uses all it judged


def test_agreement_between_every_pair_of_judges_is_cohens_kappa_and_error_overlap_with_intervals():
    from sklearn.metrics import cohen_kappa_score

    data = load_data(ROOT / "data")
    rep = build_report(data.trajectories, data.verdicts, resamples=300, seed=7)
    judges = list(rep.judges)
    assert [(p.a, p.b) for p in rep.agreement] == [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]
    label = {t.trajectory_id: t.label.faulty for t in data.trajectories}
    flags = {j: {v.trajectory_id: v.faulty for v in data.verdicts if v.judge_id == j} for j in judges}
    for p in rep.agreement:
        both = sorted(set(flags[p.a]) & set(flags[p.b]))
        fa, fb = [flags[p.a][t] for t in both], [flags[p.b][t] for t in both]
        assert p.n == len(both)
        if p.kappa is not None:  # scikit-learn's kappa, the reference
            assert p.kappa == pytest.approx(cohen_kappa_score(fa, fb), abs=1e-12)
            assert p.kappa_low <= p.kappa <= p.kappa_high
        wrong_a = {t for t in both if flags[p.a][t] != label[t]}
        wrong_b = {t for t in both if flags[p.b][t] != label[t]}
        if wrong_a | wrong_b:
            assert p.error_overlap == pytest.approx(len(wrong_a & wrong_b) / len(wrong_a | wrong_b), abs=1e-12)
    doc = json.loads(rep.to_json())
    assert len(doc["agreement"]) == len(rep.agreement) and set(doc["agreement"][0]) == {
        "a",
        "b",
        "n",
        "kappa",
        "error_overlap",
    }


def test_a_judge_agrees_perfectly_with_its_copy_and_their_errors_coincide():
    data = load_data(ROOT / "data")
    one = [v for v in data.verdicts if v.judge_id == "step:qwen2.5-coder:1.5b"]
    twin = [v.model_copy(update={"judge_id": "step:twin-model"}) for v in one]
    rep = build_report(data.trajectories, one + twin, resamples=200, seed=7)
    (pair,) = rep.agreement
    assert pair.kappa == pytest.approx(1.0) and pair.kappa_low == pytest.approx(1.0)
    assert pair.error_overlap == pytest.approx(1.0)
