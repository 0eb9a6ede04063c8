import math

import numpy as np
import pytest
from analysis_synth import CLAIM, clean, design, fault, random_verdicts, verdict

from trajectory_judge.analysis.core import metrics as M
from trajectory_judge.analysis.core.paired import (
    claim_detection,
    invented_sentence,
    paired_discrimination,
)
from trajectory_judge.models import FAILURE_TYPES, Label


def _pairs(trajs, verdicts):
    by = {v.trajectory_id: v for v in verdicts}
    return [(t.label, by[t.trajectory_id]) for t in trajs if t.trajectory_id in by]


def test_detection_counts_precision_recall_and_false_alarms_per_stratum():
    trajs = design(2)  # 2 clean, 12 faults: 7 silent, 5 loud
    vs = [verdict(t.trajectory_id, "j", t.label.faulty and t.label.outcome_correct) for t in trajs]
    vs[0] = verdict(trajs[0].trajectory_id, "j", True)  # one false alarm
    d = M.detection(_pairs(trajs, vs))
    assert d["silent_recall"] == 1.0 and d["loud_recall"] == 0.0
    assert d["false_alarm_rate"] == 0.5
    assert d["precision"] == 7 / 8 and d["recall"] == 7 / 12
    assert d["f1"] == pytest.approx(2 * 7 / (2 * 7 + 1 + 5))


def test_macro_f1_counts_missed_as_a_column_not_a_class():
    # Closed form of the rule engine's 0.667: four types perfectly typed, two always missed.
    labels = [Label(faulty=True, failure_step=1, failure_type=t, outcome_correct=True) for t in FAILURE_TYPES]
    caught = {"hallucinated_argument", "skipped_precondition", "ignored_observation", "premature_stop"}
    pairs = [(lab, verdict("x", "j", lab.failure_type in caught, ftype=lab.failure_type)) for lab in labels]
    assert M.macro_f1(M.confusion(pairs)) == pytest.approx(4 / 6)


def test_flagged_without_a_type_lands_in_missed():
    lab = Label(faulty=True, failure_step=1, failure_type="wrong_tool", outcome_correct=True)
    conf = M.confusion([(lab, verdict("x", "j", True, ftype=None))])
    assert conf["wrong_tool"][M.MISSED] == 1 and conf["wrong_tool"]["wrong_tool"] == 0


def test_typing_ignores_clean_trajectories():
    lab = Label(faulty=False, outcome_correct=True)
    conf = M.confusion([(lab, verdict("x", "j", True, ftype="wrong_tool"))])
    assert sum(sum(r.values()) for r in conf.values()) == 0
    assert M.macro_f1(conf) is None


def test_localisation_is_null_for_a_judge_that_never_names_a_step():
    trajs = design(2)
    vs = [verdict(t.trajectory_id, "outcome:m", True) for t in trajs]
    loc = M.localisation(_pairs(trajs, vs))
    assert loc == {"step_exact": None, "step_exact_n": 0, "step_within_one": None}


def test_localisation_is_conditional_on_detection_and_both_steps():
    f = fault("I", "wrong_tool")  # label step 2
    c = clean("I")
    pairs = [
        (f.label, verdict(f.trajectory_id, "j", True, step_=2)),  # scored, exact
        (f.label, verdict(f.trajectory_id, "j", True, step_=3)),  # scored, within one
        (f.label, verdict(f.trajectory_id, "j", True, step_=None)),  # no step: not scored
        (f.label, verdict(f.trajectory_id, "j", False)),  # not flagged: not scored
        (c.label, verdict(c.trajectory_id, "j", True, step_=2)),  # clean: not scored
    ]
    assert M.localisation(pairs) == {"step_exact": 0.5, "step_exact_n": 2, "step_within_one": 1.0}


def test_ece_and_brier_match_closed_form():
    # Ten verdicts at 0.9, seven correct: ECE = |0.7 - 0.9| = 0.2; Brier = (7*0.01 + 3*0.81)/10.
    trajs = [fault(f"I{i}", "wrong_tool") for i in range(10)]
    vs = [verdict(t.trajectory_id, "j", i < 7, confidence=0.9) for i, t in enumerate(trajs)]
    cal = M.calibration(_pairs(trajs, vs))
    assert cal["ece"] == pytest.approx(0.2)
    assert cal["brier"] == pytest.approx((7 * 0.01 + 3 * 0.81) / 10)


# Bin m of M = 10 is ((m-1)/M, m/M], right-closed, with a confidence of exactly 0 in the first
# (Naeini et al. 2015, §3; Guo et al. 2017, §2). Indices here are 0-based: k = m - 1.
@pytest.mark.parametrize(
    "c,k",
    [
        (0.0, 0),
        (0.05, 0),
        (0.1, 0),
        (0.1000001, 1),
        (0.3, 2),
        (0.6, 5),
        (2 / 3, 6),
        (0.7, 6),
        (0.7000001, 7),
        (0.75, 7),
        (0.8, 7),
        (0.9, 8),
        (0.95, 9),
        (1.0, 9),
    ],
)
def test_confidence_bins_are_right_closed_with_zero_in_the_first(c, k):
    assert M.confidence_bin(c) == k


def test_ece_puts_an_edge_confidence_in_the_bin_it_closes():
    # Hand-computed: four verdicts at 0.7 (three right) fall in (0.6, 0.7], four at 0.75 (two right)
    # in (0.7, 0.8]: ECE = (4 * |0.75 - 0.7| + 4 * |0.5 - 0.75|) / 8 = (0.2 + 1.0) / 8 = 0.15.
    # Left-closed bins would pool all eight in [0.7, 0.8): |0.625 - 0.725| = 0.1.
    trajs = [fault(f"I{i}", "wrong_tool") for i in range(8)]
    right = [True, True, True, False, True, True, False, False]
    vs = [
        verdict(t.trajectory_id, "j", ok, confidence=0.7 if i < 4 else 0.75)
        for i, (t, ok) in enumerate(zip(trajs, right))
    ]
    pairs = _pairs(trajs, vs)
    assert M.calibration(pairs)["ece"] == pytest.approx(0.15)
    assert [b["n"] for b in M.calibration_bins(pairs)] == [0, 0, 0, 0, 0, 0, 4, 4, 0, 0]
    labels = [t.label for t in trajs]
    assert M.metrics_from_counts(M.count_columns(labels, vs).sum(axis=0))["ece"] == pytest.approx(0.15)


def test_count_form_equals_plain_form_on_random_verdicts():
    trajs = design(6)
    labels = [t.label for t in trajs]
    for seed, coverage, steps in [(1, 1.0, True), (2, 0.6, True), (3, 0.8, False)]:
        vs = random_verdicts(trajs, "j", seed, coverage=coverage, steps=steps)
        by = {v.trajectory_id: v for v in vs}
        aligned = [by.get(t.trajectory_id) for t in trajs]
        cols = M.count_columns(labels, aligned)
        w = np.random.default_rng(seed).integers(0, 3, size=len(trajs)).astype(float)
        vec = M.metrics_from_counts(w @ cols)
        resampled = [p for p, k in zip(zip(labels, aligned), w) for _ in range(int(k)) if p[1] is not None]
        plain = M.judge_metrics(resampled)
        assert set(vec) == set(plain)
        for name, value in plain.items():
            if value is None:
                assert math.isnan(vec[name]), name
            else:
                assert vec[name] == pytest.approx(value, abs=1e-12), name


def test_confidence_support_lists_distinct_values():
    trajs = design(1)
    vs = [
        verdict(t.trajectory_id, "j", True, confidence=c)
        for t, c in zip(trajs, [2 / 3, 1.0, 1.0, 2 / 3, 1.0, 1.0, 1.0])
    ]
    assert M.confidence_support(vs) == {"0.666667": 2, "1.0": 5}


def test_paired_discrimination_is_zero_where_the_view_hides_the_fault():
    # The outcome view of a reply-unchanged fault equals its parent's; a deterministic judge
    # then gives both the same verdict and paired discrimination is exactly 0 there.
    trajs = design(3)
    vs = {}
    for t in trajs:
        vs[t.trajectory_id] = verdict(
            t.trajectory_id, "outcome:m", t.final_answer != trajs[0].final_answer or t.instance_id == "INS-001"
        )
    res = paired_discrimination("outcome:m", trajs, vs)
    assert res["hidden_from_input"].value == 0.0
    assert res["hidden_from_input"].n == 3 * 4  # four reply-unchanged types x three instances
    assert res["reaches_input"].n == 3 * 2 and res["reaches_input"].value == pytest.approx(2 / 3)
    assert res["all"].n == 18
    step = paired_discrimination("step:m", trajs, vs)
    assert step["hidden_from_input"].n == 0 and step["hidden_from_input"].value is None


def test_paired_discrimination_needs_a_judged_parent():
    trajs = design(2)
    vs = {t.trajectory_id: verdict(t.trajectory_id, "j", True) for t in trajs if t.trajectory_id != "INS-000-clean"}
    assert paired_discrimination("j", trajs, vs)["all"].n == 6


def test_invented_sentence_is_the_suffix_over_the_parent_answer_or_the_last_sentence():
    parent, f = clean("I"), fault("I", "unsupported_claim")
    # the fixture's fault appends CLAIM to its parent's reply (tests/analysis_synth.py)
    assert invented_sentence(f, parent) == CLAIM and parent.final_answer not in invented_sentence(f, parent)
    assert invented_sentence(f, None) == CLAIM
    trajs = [parent, f]
    assert claim_detection(trajs, {f.trajectory_id: verdict(f.trajectory_id, "j", True)}) == {CLAIM: (1, 1)}


# --- on the published release ---------------------------------------------------------------
@pytest.fixture(scope="module")
def release_data(release):
    from trajectory_judge.analysis.core.loading import load_data

    return load_data(release)


def _judge_verdicts(data, judge):
    return {v.trajectory_id: v for v in data.verdicts if v.judge_id == judge}


def test_outcome_paired_discrimination_reproduces_camera_ready(release_data):
    # Reference: camera-ready abstract, "loud recall of 84% is a paired +0.393 and its silent
    # recall of 45% a paired +0.048", and zero on the four reply-unchanged fault types.
    res = paired_discrimination(
        "outcome:qwen2.5:14b", release_data.trajectories, _judge_verdicts(release_data, "outcome:qwen2.5:14b")
    )
    assert round(res["loud"].value, 3) == 0.393
    assert round(res["silent"].value, 3) == 0.048
    assert res["hidden_from_input"].value == 0.0 and res["hidden_from_input"].n == 151
    for t in ("wrong_tool", "hallucinated_argument", "skipped_precondition", "ignored_observation"):
        assert res[t].value == 0.0, t
    assert res["all"].n == 251


def test_step_judge_catches_one_invented_promise_every_time_and_the_others_once_in_42(release_data):
    # Reference: camera-ready abstract, "of four invented promises it flags one every time and
    # the other three once in 42 faults".
    det = claim_detection(release_data.trajectories, _judge_verdicts(release_data, "step:qwen2.5:14b"))
    assert len(det) == 4
    always = [s for s, (k, n) in det.items() if k == n]
    assert len(always) == 1 and "voucher" in always[0]
    rest = [det[s] for s in det if s not in always]
    assert sum(k for k, _ in rest) == 1 and sum(n for _, n in rest) == 42
