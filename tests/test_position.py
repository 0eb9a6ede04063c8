"""Recall by where the fault sits: on the judged set (by step and by length) and on the counterfactual set."""

from __future__ import annotations

import math

import pytest

from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.statistics.position import counterfactual_recall, recall_by, types_by
from trajectory_judge.models import Verdict
from trajectory_judge.testbed.inject import ANCHORS


@pytest.fixture(scope="module")
def edition():
    from tests.conftest import ROOT

    return load_data(ROOT / "data")


@pytest.fixture(scope="module")
def counterfactual():
    from tests.conftest import ROOT

    return load_data(ROOT / "data" / "counterfactual")


def test_on_the_judged_set_a_split_by_position_is_a_split_by_failure_type(edition):
    groups = types_by(edition.trajectories, "position")
    assert {t: s for s, ts in groups.items() for t in ts} == ANCHORS
    assert types_by(edition.trajectories, "length")[4] == ("premature_stop",)


def test_rule_engine_recall_by_position_follows_what_its_rules_can_see(edition):
    rules = {
        r.group: r.recall
        for r in recall_by(edition.trajectories, edition.verdicts, "position", resamples=200)
        if r.judge == "programmatic"
    }
    # step 2 holds wrong_tool (no rule sees it) and hallucinated_argument (R1 does): half; step 5 is unsupported_claim
    assert math.isclose(rules[2].value, 0.5) and rules[2].method == "structural"
    assert rules[5].value == 0.0 and rules[5].method == "structural"  # its flag is constant within every cell
    assert rules[3].value == 1.0 and rules[3].n == 100


def test_rule_engine_is_position_invariant_on_the_counterfactual_set(counterfactual):
    rules = next(
        c
        for c in counterfactual_recall(counterfactual.trajectories, counterfactual.verdicts, resamples=200)
        if c.judge == "programmatic"
    )
    assert rules.instances == 60 and rules.positions == (0, 1, 2, 3, 4, 5)
    assert all(e.value == 1.0 for e in rules.recall + rules.exact_step)
    assert rules.spread == 0.0 and rules.spread_p == 1.0 and rules.false_alarm.value == 0.0


def test_counterfactual_differences_are_paired_over_the_same_instances(counterfactual):
    # a judge that flags only faults at step 3 or later: recall 0 at steps 0-2, 1 at 3-5; every replicate agrees
    late = [
        Verdict(trajectory_id=t.trajectory_id, judge_id="late", faulty=True, confidence=0.9)
        if t.label.faulty and t.label.failure_step >= 3
        else Verdict(trajectory_id=t.trajectory_id, judge_id="late", faulty=False, confidence=0.9)
        for t in counterfactual.trajectories
    ]
    (cf,) = counterfactual_recall(counterfactual.trajectories, late, resamples=200)
    assert [e.value for e in cf.recall] == [0, 0, 0, 1, 1, 1]
    assert (cf.last_minus_first.value, cf.last_minus_first.low, cf.last_minus_first.high) == (1.0, 1.0, 1.0)
    assert cf.spread == 1.0 and all(e.value == 0 for e in cf.exact_step)


def test_counterfactual_counts_only_instances_a_judge_judged_completely(counterfactual):
    first = [t for t in counterfactual.trajectories if t.instance_id == counterfactual.trajectories[0].instance_id]
    partial = [Verdict(trajectory_id=t.trajectory_id, judge_id="some", faulty=True, confidence=0.9) for t in first[:-1]]
    assert counterfactual_recall(counterfactual.trajectories, partial, resamples=50) == []


def test_cochran_q_matches_its_closed_form_and_statsmodels_when_installed():
    import numpy as np

    from trajectory_judge.analysis.statistics.position import cochran_q

    # Cochran (1950) form by hand: 4 units x 3 conditions, column totals 3, 1, 0; row totals 2, 1, 1, 0
    x = np.array([[1, 1, 0], [1, 0, 0], [1, 0, 0], [0, 0, 0]])
    q, p = cochran_q(x)
    assert math.isclose(q, 2 * (3 * (9 + 1) - 16) / (3 * 4 - (4 + 1 + 1)))
    statsmodels = pytest.importorskip("statsmodels.stats.contingency_tables")
    ref = statsmodels.cochrans_q(x)
    assert math.isclose(q, ref.statistic) and math.isclose(p, ref.pvalue)


def test_a_coin_judge_shows_no_position_effect_by_cochran_q(counterfactual):
    (coin,) = [
        c
        for c in counterfactual_recall(counterfactual.trajectories, counterfactual.verdicts, resamples=200)
        if c.judge.startswith("mock-")
    ]
    assert coin.cochran_p > 0.05 and coin.spread > 0  # the range of six recalls is above 0 even by chance
