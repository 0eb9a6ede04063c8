"""Every number computed once in analysis/: the records the chapters print and the register checks are one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.core.loading import load_paper_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.analysis.paper import published as P
from trajectory_judge.analysis.paper.audit import (
    VERDICTS,
    Audit,
    BoundSpread,
    check_published,
    delta_distribution,
    seed_deltas,
    seed_reports,
    seed_spread,
)
from trajectory_judge.analysis.paper.paired_detail import (
    CAMERA_READY_KEYS,
    camera_ready,
    paired_detail,
    paired_estimate,
)
from trajectory_judge.analysis.paper.procedure import exact_interval
from trajectory_judge.analysis.paper.register import paper_register
from trajectory_judge.analysis.statistics.organic import EpisodeCounts, organic_counts, published_counts

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rel():
    return load_paper_data(ROOT / "data" / "release", ROOT / "data")


@pytest.fixture(scope="module")
def rep(paper_report):
    return paper_report


def _cell(nb: str, needle: str) -> str:
    """The text output of the committed notebook's first code cell whose source contains ``needle``."""
    cells = json.loads((ROOT / "notebooks" / f"{nb}.ipynb").read_text())["cells"]
    for c in cells:
        if c["cell_type"] == "code" and needle in "".join(c["source"]):
            return "".join(
                "".join(o.get("data", {}).get("text/html", o.get("data", {}).get("text/plain", o.get("text", ""))))
                for o in c.get("outputs", [])
            )
    raise AssertionError(f"no cell of {nb} contains {needle!r}")


# --- one value, one interval ----------------------------------------------------------------------
def test_the_outcome_judges_paired_silent_value_carries_one_interval_in_the_paired_chapter_and_the_register(rel, rep):
    from trajectory_judge.book.chapters.paired import camera_ready_quantities

    chapter = camera_ready_quantities(rep, rel.trajectories, P.OUTCOME, P.STEP, rel.verdicts)
    register = paper_register(rep, rel.trajectories, rel.verdicts)
    for key in ("outcome_paired_silent", "outcome_paired_loud"):
        claim = register[
            {"outcome_paired_silent": "cr_outcome_silent_paired", "outcome_paired_loud": "cr_outcome_loud_paired"}[key]
        ].estimate
        q = chapter[key]
        assert claim is not None and (q.value, q.low, q.high, q.n) == (claim.value, claim.low, claim.high, claim.n)
    silent = register["cr_outcome_silent_paired"].estimate
    assert round(silent.value, 3) == 0.048 and silent.low < silent.value < silent.high
    assert (
        camera_ready(rep, rel.trajectories, P.OUTCOME, P.STEP, rel.verdicts).paired["outcome_paired_silent"] == silent
    )


def test_the_paired_record_is_the_reports_paired_value_with_the_reports_procedure(rel, rep):
    for group in ("all", "loud", "silent", "wrong_tool"):
        e = paired_estimate(rep, rel.trajectories, rel.verdicts, P.OUTCOME, group)
        v = rep.judges[P.OUTCOME].paired_discrimination[group]
        assert e is not None and e.value == pytest.approx(v.value, abs=1e-12) and e.n == v.n
        assert e.low <= e.value <= e.high
    with pytest.raises(ValueError, match="unknown paired group 'quiet'"):
        paired_estimate(rep, rel.trajectories, rel.verdicts, P.OUTCOME, "quiet")


def test_the_committed_paired_chapter_prints_the_registers_interval_for_the_paired_silent_value(rel, rep):
    from trajectory_judge.book.render.style import format_interval

    e = paper_register(rep, rel.trajectories, rel.verdicts)["cr_outcome_silent_paired"].estimate
    text = format_interval(e.value, e.low, e.high, e.method)
    shown = re.sub(r"<[^>]+>", "", _cell("paired", "camera_ready_frame(numbers)"))  # the table's text, tags dropped
    assert text.replace("\u2212", "-") in shown.replace("\u2212", "-")


# --- records and their frames ----------------------------------------------------------------------
def test_paired_detail_frame_has_one_row_per_record_and_the_paired_value_is_the_difference_of_rates():
    trajs = design(4)
    vs = [*random_verdicts(trajs, "outcome:m1", 1), *random_verdicts(trajs, "step:m1", 2)]
    d = paired_detail(trajs, vs)
    f = d.to_frame()
    assert len(f) == len(d.rows) > 0
    assert list(f.columns) == ["judge", "group", "n", "fault_rate", "parent_rate", "paired", "disagree"]
    assert ((f["paired"] - (f["fault_rate"] - f["parent_rate"])).abs() < 1e-12).all()


def test_camera_ready_frame_lists_every_key_and_intervals_only_for_the_paired_values(rel, rep):
    cr = camera_ready(rep, rel.trajectories, P.OUTCOME, P.STEP, rel.verdicts)
    f = cr.to_frame()
    assert list(f.index) == list(CAMERA_READY_KEYS)
    wide = f[f["low"] < f["high"]].index.tolist()
    assert set(wide) <= {"outcome_paired_loud", "outcome_paired_silent"} and "outcome_paired_silent" in wide
    assert camera_ready(rep, rel.trajectories, P.OUTCOME, P.STEP).paired == {}  # without verdicts: no interval


def test_audit_record_frame_and_summary_agree(rel, rep):
    a = check_published(rep, rel)
    assert isinstance(a, Audit)
    f = a.to_frame()
    assert len(f) == len(a.rows) and list(f.columns)[:3] == ["quantity", "source", "published"]
    s = a.summary()
    assert s["total"] == len(f) and sum(s[v] for v in VERDICTS) == s["total"]


def test_seed_records_frames_hold_each_seed_and_the_spread_classifies_like_its_frame(rel, rep):
    reports = seed_reports(rel.trajectories, rel.verdicts, seeds=range(3), resamples=2000)
    deltas = seed_deltas(reports, P.OUTCOME, P.STEP, "silent_recall")
    f = deltas.to_frame()
    assert list(f.index) == [0, 1, 2] and (f["low"] <= f["value"]).all() and (f["value"] <= f["high"]).all()
    assert deltas.upper_bound_counts()["Seeds"].sum() == 3
    assert deltas.seeds_printing_high(round(f["high"].iloc[0], 3)) >= 1
    spread = seed_spread(reports)
    assert isinstance(spread, BoundSpread) and (spread.to_frame()["seeds"] == 3).all()
    by_record = check_published(rep, rel, spread).to_frame()
    by_frame = check_published(rep, rel, spread.to_frame()).to_frame()
    pd.testing.assert_frame_equal(by_record, by_frame)
    with pytest.raises(ValueError, match="at least one report"):
        seed_spread({})


def test_delta_distribution_is_a_cdf_on_a_grid_of_one_over_the_silent_faults(rel):
    dist = delta_distribution(rel.trajectories, rel.verdicts, P.OUTCOME, P.STEP, resamples=5000)
    s = dist.to_series()
    assert s.is_monotonic_increasing and s.iloc[-1] == pytest.approx(1.0)
    assert all(abs(x * dist.n - round(x * dist.n)) < 1e-9 for x in s.index)
    assert list(dist.to_frame().columns) == ["cdf"]


def test_organic_counts_frame_puts_ours_beside_the_published_counts():
    counts = organic_counts(None)
    f = counts.to_frame()
    assert list(f.columns) == [f"published ({P.PUBLISHED_MODEL})"]
    pub = published_counts()
    assert isinstance(pub, EpisodeCounts) and f.loc["episodes"].iloc[0] == pub.episodes
    assert pub.flagged == pub.loud + pub.silent  # every flagged episode of the paper is loud or silent
    assert EpisodeCounts(*range(9)).to_frame()["count"].tolist() == list(range(9))


def test_exact_interval_is_the_reports_clopper_pearson_bound(rep):
    jr = rep.judges[P.STEP]
    e = exact_interval(0, jr.strata["clean"])
    assert (e.value, e.low, e.method) == (0.0, 0.0, "clopper-pearson")
    assert e.high == pytest.approx(jr.intervals["false_alarm_rate"].high, abs=1e-15)


@pytest.mark.slow  # the audit chapter's own computation again: nbval checks the chapter against it in the fast tier
def test_moved_audit_gives_the_committed_audit_chapters_counts(rel, rep):
    reports = seed_reports(rel.trajectories, rel.verdicts, seeds=range(10), resamples=10_000)
    s = check_published(rep, rel, seed_spread(reports)).summary()
    committed = _cell("audit", "verdict_counts(checks)")
    for v in VERDICTS:
        if s[v]:
            assert f">{s[v]}</td>" in committed, (v, s[v])


@pytest.fixture(scope="module")
def small_report():
    trajs = design(4)
    vs = [*random_verdicts(trajs, "outcome:m1", 1), *random_verdicts(trajs, "step:m1", 2)]
    return trajs, vs, build_report(trajs, vs, resamples=200, seed=3)


def test_paired_estimate_is_none_for_a_judge_without_verdicts(small_report):
    trajs, vs, rep = small_report
    assert paired_estimate(rep, trajs, vs, "step:nobody", "silent") is None


def test_organic_tables_are_records_whose_frames_index_by_their_naming_field():
    from trajectory_judge.analysis.statistics.organic import Count, Table, organic_endings, organic_tools, repeat_share
    from trajectory_judge.testbed.env import TOOLS

    t = Table((Count("a", 3), Count("b", 1)), "what", {"what": "tool", "count": "repeated steps"})
    assert t.to_frame().to_dict() == {"repeated steps": {"a": 3, "b": 1}} and t.to_frame().index.name == "tool"
    s = t.to_series()
    assert s.name == "repeated steps" and s.index.name == "tool" and s.dtype == "int64"
    assert repeat_share(s) == repeat_share(r.count for r in t.rows) == 0.75 and repeat_share([]) is None
    assert list(organic_tools([]).to_frame().index) == list(TOOLS)
    endings = organic_endings([]).to_frame()
    assert list(endings.index) == ["replied", "max_steps", "unparseable_action"] and (endings["episodes"] == 0).all()


def test_the_camera_ready_reply_figure_stands_beside_our_own_reply_judge(monkeypatch):
    from trajectory_judge.analysis.core.loading import load_data
    from trajectory_judge.analysis.paper.paired_detail import reply_unchanged_paired, reply_unchanged_types
    from trajectory_judge.book.chapters.paired import reply_beside_camera_ready

    monkeypatch.chdir(Path(__file__).resolve().parents[1] / "notebooks")
    ours = load_data(Path("../data"))
    rep = build_report(ours.trajectories, ours.verdicts, resamples=200, seed=7)
    reply = [j for j in rep.judges if j.startswith("reply:")]
    assert reply, "this edition's data holds a reply judge"
    e = reply_unchanged_paired(rep, ours.trajectories, ours.verdicts, reply[0])
    four = set(reply_unchanged_types(ours.trajectories))
    pairs = sum(p.n for t, p in rep.judges[reply[0]].paired_discrimination.items() if t in four)
    assert e is not None and e.n == pairs and e.low <= e.value <= e.high
    text = reply_beside_camera_ready(rep, ours.trajectories, ours.verdicts)
    assert "+0.69" in text and f"({e.n} fault–parent pairs)" in text
    # a judge the report does not hold has no such value
    assert reply_unchanged_paired(rep, ours.trajectories, ours.verdicts, "no-such-judge") is None
