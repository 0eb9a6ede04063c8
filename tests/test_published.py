"""The published numbers (trajectory_judge.analysis.paper.published) against a fresh report on the release.

tests/test_report.py pins main-table reproduction; here the quotations themselves are checked:
every value in published.py that the release can reproduce does, to 3 decimals for point
estimates and within 0.01 for interval bounds and deltas. The ones that differ are listed
with the measured value in ``KNOWN_DIFFERENCES``.
"""

from __future__ import annotations

import pandas as pd
import pytest

from trajectory_judge.analysis.paper.published import (
    MAIN_METRICS,
    OUTCOME,
    PUBLISHED_COUNTS,
    PUBLISHED_DELTAS,
    PUBLISHED_GAPS,
    PUBLISHED_INTERVALS,
    PUBLISHED_JUDGES,
    PUBLISHED_MAIN,
    PUBLISHED_PAIRED,
    PUBLISHED_PER_TYPE,
    REPLY_UNCHANGED_TYPES,
    SELFCONS,
    STEP,
    STEP8,
    published_main,
)
from trajectory_judge.models import FAILURE_TYPES

TOLERANCE = 0.01 + 1e-9
"""Within 0.01 for interval bounds and deltas, inclusive (0.43 − 0.42 is a hair over 0.01 in binary)."""

# Measured on the release with resamples=10_000, seed=7 (our bootstrap seed; the paper's is not published):
KNOWN_DIFFERENCES = {
    # paper §7.1 prints [+0.240, +0.389]; we get +0.383. Within the ±0.01 tolerance, but not to 3 decimals.
    (OUTCOME, STEP, "silent_recall", "high"): 0.383,
}


def test_published_main_table_has_every_judge_and_column():
    assert list(PUBLISHED_MAIN) == list(PUBLISHED_JUDGES)
    assert all(list(row) == list(MAIN_METRICS) for row in PUBLISHED_MAIN.values())
    assert PUBLISHED_MAIN[OUTCOME]["step_exact"] is None  # "n/a" in the README: the outcome judge names no step
    assert PUBLISHED_MAIN[STEP]["silent_recall"] == 0.766


def test_published_per_type_table_ends_with_the_false_alarm_anchor():
    for j in PUBLISHED_JUDGES:
        assert list(PUBLISHED_PER_TYPE[j]) == [*FAILURE_TYPES, "false_alarms_on_clean"]
        # The anchor row equals the main table's false-alarm column at two decimals.
        assert PUBLISHED_PER_TYPE[j]["false_alarms_on_clean"] == round(PUBLISHED_MAIN[j]["false_alarm_rate"], 2)


def test_published_accessor_names_what_is_published():
    assert published_main(STEP8, "f1") == 0.852
    with pytest.raises(KeyError, match="no published row for judge 'step:qwen2.5-coder:0.5b'"):
        published_main("step:qwen2.5-coder:0.5b", "f1")
    with pytest.raises(KeyError, match="no published column 'brier'"):
        published_main(STEP, "brier")


def test_published_values_are_frozen():
    with pytest.raises(TypeError):
        PUBLISHED_MAIN[STEP]["f1"] = 1.0


def test_abstract_reply_unchanged_range_is_the_outcome_per_type_range():
    # Internal consistency of the quotations: abstract 34%-76% = Table 4 over the four types.
    vals = [PUBLISHED_PER_TYPE[OUTCOME][t] for t in REPLY_UNCHANGED_TYPES]
    assert (min(vals), max(vals)) == (
        PUBLISHED_PAIRED["outcome_recall_reply_unchanged_min"].value,
        PUBLISHED_PAIRED["outcome_recall_reply_unchanged_max"].value,
    )


# --- against the release --------------------------------------------------------------------
@pytest.fixture(scope="module")
def rep(release_report):
    return release_report


def test_release_reproduces_per_type_and_main_quotations(rep):
    table = rep.per_type_table()
    for j, row in PUBLISHED_PER_TYPE.items():
        for t, want in row.items():
            assert round(float(table.loc[t, j]), 2) == want, (j, t)
    got = rep.main_table()
    for j, row in PUBLISHED_MAIN.items():
        for m, want in row.items():
            if want is not None:
                assert round(float(got.loc[j, m]), 1 if m == "s_per_traj" else 3) == want, (j, m)


def test_release_reproduces_quoted_intervals_within_001(rep):
    for q in PUBLISHED_INTERVALS:
        jr = rep.judges[q.judge]
        if q.metric.startswith("recall:"):
            t = q.metric.split(":", 1)[1]
            value, iv = jr.per_type_recall[t], jr.per_type_intervals[t]
        else:
            value, iv = jr.metrics[q.metric], jr.intervals[q.metric]
        assert round(value, 3) == q.value, q
        assert abs(iv.low - q.low) <= TOLERANCE and abs(iv.high - q.high) <= TOLERANCE, (q, iv)


def test_release_reproduces_quoted_deltas_and_gap_within_001(rep):
    for q in PUBLISHED_DELTAS:
        d = rep.delta(q.a, q.b, q.metric)
        assert round(d.value, 3) == q.value, q
        assert abs(d.low - q.low) <= TOLERANCE and abs(d.high - q.high) <= TOLERANCE, (q, d)
        for side in ("low", "high"):
            known = KNOWN_DIFFERENCES.get((q.a, q.b, q.metric, side))
            if known is not None:  # the documented difference is what we measure
                assert round(getattr(d, side), 3) == known
    for g in PUBLISHED_GAPS:
        gap = next(x for x in rep.gaps if x.judge == g.judge)
        assert (
            round(gap.value, 3) == g.value and abs(gap.low - g.low) <= TOLERANCE and abs(gap.high - g.high) <= TOLERANCE
        )


def test_release_reproduces_quoted_counts(rep):
    c = {k: v.value for k, v in PUBLISHED_COUNTS.items()}
    step, step8, out = rep.judges[STEP].metrics, rep.judges[STEP8].metrics, rep.judges[OUTCOME].metrics
    assert round(step["recall"] * 300 + step["false_alarm_rate"] * 100) == c["step_flagged"]
    assert round(step["recall"] * 300) == c["step_flagged_faulty"]
    assert step["step_exact_n"] == c["step_exact_n"] and round(step["step_exact"], 3) == c["step_exact"]
    assert round(out["recall"], 2) == c["pooled_recall_outcome"]
    assert round(step8["recall"] * 300 + step8["false_alarm_rate"] * 100) == c["step8_flagged"]
    assert round(step8["precision"], 3) == c["step8_precision"]
    assert round(step8["completion_tokens_mean"]) == c["step8_completion_tokens"]  # 56.885; README says 56
    assert round(step["completion_tokens_mean"]) == c["step_completion_tokens"]
    assert rep.judges[SELFCONS].confidence_support == {
        "0.666667": c["selfcons_at_two_thirds"],
        "1.0": c["selfcons_at_one"],
    }
    assert rep.judges[OUTCOME].confidence_support["0.92"] == c["outcome_at_0.92"]
    for j in PUBLISHED_JUDGES:
        assert len(rep.judges[j].confidence_support) == c[f"confidence_support:{j}"]
    hours = sum(jr.metrics["s_per_traj"] * jr.n for jr in rep.judges.values()) / 3600
    assert round(hours, 2) == c["judge_hours"]


def test_release_reproduces_the_camera_ready_paired_numbers(rep):
    p = {k: v.value for k, v in PUBLISHED_PAIRED.items()}
    pd_out = rep.judges[OUTCOME].paired_discrimination
    assert round(pd_out["loud"].value, 3) == p["outcome_paired_loud"]
    assert round(pd_out["silent"].value, 3) == p["outcome_paired_silent"]
    assert all(pd_out[t].value == p["outcome_paired_reply_unchanged"] for t in REPLY_UNCHANGED_TYPES)
    assert all(rep.judges[STEP].per_type_recall[t] == p["step_recall_reply_unchanged"] for t in REPLY_UNCHANGED_TYPES)
    assert all(rep.judges[STEP].paired_discrimination[t].value == 1.0 for t in REPLY_UNCHANGED_TYPES)
    claims = rep.claim_table(STEP)
    always = claims[claims["recall"] == 1.0]
    assert len(claims) == p["claim_sentences"] and len(always) == p["claim_always_flagged_sentences"]
    rest = claims.drop(always.index)
    assert (rest["flagged"].sum(), rest["n"].sum()) == (p["claim_other_flagged"], p["claim_other_n"])
    # The reply-only judge (+0.69) is not in the release: it has exactly the five published judges.
    assert set(rep.judges) == set(PUBLISHED_JUDGES)
    assert isinstance(rep.paired_frame(), pd.DataFrame)
