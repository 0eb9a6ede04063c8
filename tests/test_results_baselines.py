"""The results chapter's baseline rows and sentences (trajectory_judge.book.chapters.results)."""

from analysis_synth import design, random_verdicts, verdict

from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.book.chapters.results import above_baseline, baseline_design, main_table


def _rep(verdicts, trajs):
    return build_report(trajs, verdicts, resamples=20, seed=1)


def test_baseline_rows_appear_once_when_both_verdict_sets_share_the_design():
    trajs = design(2)
    a, b = _rep(random_verdicts(trajs, "step:m", 1), trajs), _rep(random_verdicts(trajs, "outcome:m", 2), trajs)
    frame = main_table({"release": a, "edition": b}, "localisation", baselines=True)
    rows = frame.loc["Baselines"]
    assert list(rows.index) == ["Flag everything", "Flag nothing"]
    f1 = rows.loc["Flag everything", "f1"]
    assert f1 == f"{2 * 12 / (2 * 12 + 2):.3f}*"  # 12 faults, 2 clean runs; * = structural, fixed by the design
    assert rows.loc["Flag nothing", "step_exact"] is None  # a baseline names no step: "–" in the book
    assert "Baselines" not in main_table({"edition": b}, "localisation").index.get_level_values(0)


def test_baseline_rows_are_given_per_source_when_the_designs_differ():
    small, big = design(1), design(3)
    frame = main_table(
        {
            "release": _rep(random_verdicts(small, "step:m", 1), small),
            "edition": _rep(random_verdicts(big, "step:m", 1), big),
        },
        "detection",
        baselines=True,
    )
    groups = set(frame.index.get_level_values(0))
    assert {"Baselines (Paper (release))", "Baselines (This edition)"} <= groups


def test_sentences_say_which_judges_beat_flagging_everything():
    trajs = design(2)
    perfect = [verdict(t.trajectory_id, "step:m", t.label.faulty) for t in trajs]
    blind = [verdict(t.trajectory_id, "outcome:m", False) for t in trajs]
    rep = _rep(perfect + blind, trajs)
    assert baseline_design(rep).startswith("On this design (12 faults and 2 clean runs) a judge that flags every")
    both = above_baseline(rep, "our")  # the judges in words, the one above named with its F1 at the table's precision
    f1 = rep.judges["step:m"].metrics["f1"]
    assert both.startswith("Of our two judges, one ") and f"(Step · m at {f1:.3f})" in both and "Outcome" not in both
    only_blind = _rep(blind, trajs)
    one = above_baseline(only_blind, "our")
    assert one.startswith("Our one judge, Outcome · m,") and "does not" in one
    assert f"F1 {only_blind.judges['outcome:m'].metrics['f1']:.3f}" in one
