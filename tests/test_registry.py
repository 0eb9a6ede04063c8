"""The metric registry: every per-judge metric registered once, and the tuples of names are its views."""

from __future__ import annotations

import pytest

from trajectory_judge.analysis.core import metrics as M
from trajectory_judge.analysis.core.registry import REGISTRY, metric_names
from trajectory_judge.analysis.core.report import MAIN_COLUMNS
from trajectory_judge.analysis.paper.estimates import LOWER_IS_BETTER, QUALITY_AXES
from trajectory_judge.analysis.paper.published import MAIN_METRICS
from trajectory_judge.book.render.style import LABELS


def test_the_report_computes_exactly_the_registered_metrics_in_registry_order():
    assert tuple(REGISTRY) == M.METRICS
    one = M.judge_metrics([], M.TESTBED_FAILURE_TYPES)
    assert tuple(k for k in one if ":" not in k and k != "loud_minus_silent") == tuple(REGISTRY)


def test_the_tables_are_views_of_the_registry():
    # the paper's Table 3: F1, the two recalls, false alarms, localisation (with its n), typing, ECE, cost
    assert MAIN_COLUMNS == ("f1", "silent_recall", "loud_recall", "false_alarm_rate", "step_exact", "step_exact_n",
                            "type_macro_f1", "ece", "s_per_traj")  # fmt: skip
    assert tuple(m for m in MAIN_COLUMNS if m != "step_exact_n") == MAIN_METRICS
    assert (*MAIN_METRICS[:-1], "brier") == QUALITY_AXES and metric_names(cost=True) == M.COST_METRICS
    assert all(LABELS[m] == REGISTRY[m].label for m in REGISTRY)


@pytest.mark.parametrize("name", ["false_alarm_rate", "ece", "brier"])
def test_a_quality_axis_where_smaller_is_better_says_so(name):
    assert name in LOWER_IS_BETTER and name in QUALITY_AXES


def test_a_filter_on_an_unknown_trait_is_refused():
    with pytest.raises(AttributeError, match="colour"):
        metric_names(colour=True)


def test_the_judge_statistics_are_views_of_the_statistic_registry():
    from trajectory_judge.analysis.core.judge_statistics import DELTA_STATISTICS, SKLEARN_STATISTICS
    from trajectory_judge.analysis.core.registry import STATISTIC_REGISTRY, label_of

    referenced = {s.name for s in STATISTIC_REGISTRY.values() if s.reference}
    assert set(SKLEARN_STATISTICS) <= set(DELTA_STATISTICS) and referenced == set(SKLEARN_STATISTICS)
    assert all(label_of(s) == STATISTIC_REGISTRY[s].label for s in DELTA_STATISTICS)
    assert label_of("false_alarm_rate") == "False-alarm rate"  # a metric's label from the metric registry
    with pytest.raises(KeyError, match="no_such"):
        label_of("no_such")
