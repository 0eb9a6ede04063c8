"""The claims register: one rule, every section of the paper, every chapter reading its verdicts from it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from trajectory_judge.analysis.paper.claims import (
    BORNE_OUT,
    CONFIRMED,
    CONSISTENT,
    NOT_BORNE_OUT,
    NOT_CHECKABLE,
    Claim,
    Estimate,
    Register,
    Stated,
    verdict,
)

ROOT = Path(__file__).resolve().parents[1]


# --- the rule's three outcomes, on constructed records ------------------------------------------------
def test_stated_value_whose_interval_meets_its_tolerance_band_but_is_wider_is_consistent_not_confirmed():
    # 84% on a proportion's scale, sampled: its band is 0.79 to 0.89
    assert verdict(Stated.number("84%", 0.84, 0.01), Estimate(0.80, 0.74, 0.86, "bootstrap"))[0] == CONSISTENT
    assert verdict(Stated.number("84%", 0.84, 0.01), Estimate(0.84, 0.80, 0.88, "bootstrap"))[0] == CONFIRMED


def test_a_value_on_a_proportions_scale_with_sampling_variance_keeps_the_margin_others_their_printed_digits():
    from trajectory_judge.analysis.paper.claims import MARGIN, tolerance

    assert tolerance(Stated.number("0.30", 0.30, 0.01), Estimate(0.3, 0.2, 0.4, "bootstrap")) == MARGIN
    assert tolerance(Stated.number("0.30", 0.30, 0.01), Estimate.exact(0.3)) == 0.005  # its own interval
    assert tolerance(Stated.number("3 times", 3.0, 1.0), Estimate(3, 2.9, 3.1, "bootstrap")) == 0.5  # a ratio
    # 0.30 sampled: band 0.25 to 0.35; an interval ending at 0.251 meets it, one ending at 0.249 misses it
    assert verdict(Stated.number("0.30", 0.30, 0.01), Estimate(0.2, 0.15, 0.251, "bootstrap"))[0] == CONSISTENT
    assert verdict(Stated.number("0.30", 0.30, 0.01), Estimate(0.2, 0.15, 0.249, "bootstrap"))[0] == NOT_BORNE_OUT


def test_a_third_in_words_is_read_to_one_significant_figure():
    s = Stated.fraction("a third", 1 / 3)
    assert s.precision == pytest.approx(0.1)
    assert verdict(s, Estimate(0.288, 0.249, 0.328, "bootstrap"))[0] == CONSISTENT  # 0.3 ± 0.05 starts at 0.25
    assert verdict(s, Estimate(0.288, 0.26, 0.32, "bootstrap"))[0] == CONFIRMED
    assert verdict(s, Estimate(0.20, 0.15, 0.24, "bootstrap"))[0] == NOT_BORNE_OUT


@pytest.mark.parametrize(
    "lo, hi, expected",
    [
        (0.80, 0.88, CONFIRMED),  # within 0.79 to 0.89
        (0.70, 0.95, CONSISTENT),  # meets it, too wide to lie within it
        (0.60, 0.78, NOT_BORNE_OUT),  # misses it
        (0.85, 0.85, CONFIRMED),
    ],
)
def test_each_verdict_of_a_stated_value_is_reached_by_a_constructed_claim(lo, hi, expected):
    c = Claim("k", "g", "§1", "x", Stated.number("84%", 0.84, 0.01), "q", Estimate((lo + hi) / 2, lo, hi, "bootstrap"))
    assert c.verdict == expected and (c.holds == (expected != NOT_BORNE_OUT))


def test_a_wider_interval_never_turns_not_borne_out_into_confirmed():
    import numpy as np

    from trajectory_judge.analysis.paper.claims import VERDICTS

    rng = np.random.default_rng(0)
    stated = [Stated.number("84%", 0.84, 0.01), Stated.number("0.750", 0.75, 0.001), Stated.fraction("a third", 1 / 3)]
    seen = set()
    for _ in range(4000):
        s = stated[rng.integers(len(stated))]
        lo, hi = sorted(rng.uniform(0.1, 1.0, 2))
        wlo, whi = lo - rng.uniform(0, 0.3), hi + rng.uniform(0, 0.3)  # a wider interval around the same one
        narrow = verdict(s, Estimate((lo + hi) / 2, lo, hi, "bootstrap"))[0]
        wide = verdict(s, Estimate((lo + hi) / 2, wlo, whi, "bootstrap"))[0]
        seen.add(narrow)
        assert not (narrow == NOT_BORNE_OUT and wide == CONFIRMED), (s.text, lo, hi, wlo, whi)
        assert not (narrow != CONFIRMED and wide == CONFIRMED), (s.text, lo, hi, wlo, whi)  # widening never confirms
    assert seen == {CONFIRMED, CONSISTENT, NOT_BORNE_OUT} and set(VERDICTS) >= seen


def test_interval_excluding_the_stated_value_is_not_borne_out():
    v, why = verdict(Stated.number("0.750", 0.75, 0.001), Estimate(0.852, 0.846, 0.857, "bootstrap"))
    assert v == NOT_BORNE_OUT and "excludes" in why


def test_exact_value_is_its_own_interval():
    assert verdict(Stated.number("three", 3.0), Estimate.exact(4))[0] == NOT_BORNE_OUT
    assert verdict(Stated.number("four", 4.0), Estimate.exact(4))[0] == CONFIRMED


def test_direction_holds_only_when_the_whole_interval_lies_on_its_side():
    worse = Stated.side("worse", "below")
    assert verdict(worse, Estimate(-0.2, -0.3, -0.1, "bootstrap"))[0] == BORNE_OUT
    assert verdict(worse, Estimate(0.2, 0.1, 0.3, "bootstrap"))[0] == NOT_BORNE_OUT
    v, why = verdict(worse, Estimate(0.02, -0.1, 0.16, "bootstrap"))
    assert v == NOT_CHECKABLE and "straddles" in why


def test_a_boundary_value_counts_against_a_strict_direction():
    assert verdict(Stated.side("above", "above"), Estimate(0.0, 0.0, 0.0, "bootstrap"))[0] == NOT_BORNE_OUT
    assert verdict(Stated.side("at least", "at_least"), Estimate(0.0, 0.0, 0.0, "bootstrap"))[0] == BORNE_OUT


def test_no_estimate_is_not_checkable_with_its_reason():
    c = Claim("k", "organic", "§8", "x", Stated.number("13", 13.0), "q", None, "no episodes released")
    assert c.verdict == NOT_CHECKABLE and c.reason == "no episodes released"


def test_a_stated_claim_is_a_value_or_a_direction():
    with pytest.raises(ValueError, match="a value or a direction"):
        Stated("x")


def test_register_keys_are_unique():
    c = Claim("k", "g", "§1", "x", Stated.number("1", 1.0), "q", Estimate.exact(1))
    with pytest.raises(ValueError, match="unique: k"):
        Register((c, c))


# --- the register on the paper's verdicts ---------------------------------------------------------
@pytest.fixture(scope="module")
def paper():
    from trajectory_judge.analysis.core.loading import load_paper_data
    from trajectory_judge.analysis.core.report import build_report
    from trajectory_judge.analysis.paper.register import paper_register

    d = load_paper_data(ROOT / "data" / "release", ROOT / "data")
    rep = build_report(d.trajectories, d.verdicts, resamples=1000, seed=7)
    return d, rep, paper_register(rep, d.trajectories, d.verdicts)


def test_register_covers_both_abstracts_every_section_and_the_captions(paper):
    reg = paper[2]
    places = " ".join(c.where for c in reg)
    for where in (
        "abstract",
        "camera-ready abstract",
        "§6",
        "§7.1",
        "§7.2",
        "§7.3",
        "§7.4",
        "§7.5",
        "§8",
        "Table 3 caption",
        "Figure 2 caption",
        "Table 4 caption",
        "Figure 3 caption",
        "Figure 4 caption",
        "Table 9 caption",
    ):
        assert where in places, where
    assert len(reg) >= 50 and set(reg.counts()) == {CONFIRMED, CONSISTENT, BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE}


def test_every_claim_has_an_estimate_or_a_reason(paper):
    for c in paper[2]:
        assert c.estimate is not None or c.why_not, c.key
        assert c.reason, c.key


def test_figure_3_most_certain_where_least_right_is_not_borne_out_accuracy_rises_with_confidence(paper):
    c = paper[2]["fig3_most_certain_least_right"]
    assert c.verdict == NOT_BORNE_OUT and c.low > 0 and "276 verdicts at confidence 0.92" in c.estimate.detail


def test_step_judge_gets_worse_on_invented_promises_is_not_shown_paired(paper):
    c = paper[2]["step_worse_on_claims"]
    assert c.verdict != BORNE_OUT and c.value >= 0  # paired against clean parents it is not worse than the outcome view


def test_hallucinated_argument_recall_of_the_8b_judge_reads_the_reports_one_interval(paper):
    _, rep, reg = paper
    iv = rep.judges["step:llama3.1:8b"].per_type_intervals["hallucinated_argument"]
    c = reg["step8_uniform"]
    assert (c.low, c.high, c.estimate.method) == (iv.low, iv.high, iv.method)


def test_dagger_is_only_on_estimates_of_zero_or_one(paper):
    for c in paper[2]:
        if c.estimate is not None and c.estimate.method == "clopper-pearson":
            assert c.value in (0.0, 1.0), c.key


def test_section_7_2_quoted_miss_is_at_0_92_on_every_miss_of_its_promise(paper):
    c = paper[2]["section72_example_confidence"]
    assert c.holds and c.low == c.high == 0.92 and c.estimate.n == 9


RELEASE = Path(os.environ.get("TJ_RELEASE_DIR", ROOT.parent / "shared" / "upstream-release"))


@pytest.mark.skipif(
    not (RELEASE / "trajectories.jsonl").exists(), reason="the published release is not present (TJ_RELEASE_DIR)"
)
def test_invented_promise_groups_match_the_release_one_to_one_by_trajectory_id(paper):
    from trajectory_judge.analysis.paper.estimates import promise_groups
    from trajectory_judge.analysis.paper.register import QUOTED_MISS_PROMISE
    from trajectory_judge.testbed.inject import INVENTED_PROMISES

    rows = [json.loads(x) for x in (RELEASE / "trajectories.jsonl").read_text().splitlines() if x.strip()]
    parent = {r["instance_id"]: r["final_answer"].strip() for r in rows if not r["label"]["faulty"]}
    theirs: dict[str, set[str]] = {}
    for r in rows:
        if r["label"].get("failure_type") == "unsupported_claim":
            tail = r["final_answer"].strip()[len(parent[r["instance_id"]]) :].strip()
            theirs.setdefault(tail, set()).add(r["trajectory_id"])
    ours = {s: set(ids) for s, ids in promise_groups(paper[0].trajectories).items()}
    assert sorted(map(sorted, ours.values())) == sorted(map(sorted, theirs.values()))
    quoted = next(ids for s, ids in theirs.items() if "subscription" in s)  # §7.2 quotes a cancelled subscription
    assert ours[INVENTED_PROMISES[QUOTED_MISS_PROMISE]] == quoted


# --- chapters render the register; none decides a verdict -------------------------------------------
def test_no_verdict_is_written_outside_the_register():
    files = [*ROOT.glob("notebooks/*.md"), *ROOT.glob("book/*.md"), *(ROOT / "trajectory_judge" / "book").glob("*.py")]
    pattern = re.compile(r"\bholds\s*=|\bverdict\s*=\s*[\"'](borne|not)|Claim\(")
    bad = [str(f.relative_to(ROOT)) for f in files if pattern.search(f.read_text(encoding="utf-8"))]
    assert bad == []


# --- how robust each verdict is, its p-value and its adjusted verdict ----------------------------------
@pytest.fixture(scope="module")
def robust(paper):
    from trajectory_judge.analysis.paper.robustness import robustness

    return robustness(paper[2])


def _flip(rob, key: str, name: str) -> str:
    return next(a.verdict for a in rob[key].flips if name in a.name)


def test_table_4_uniformly_one_is_only_consistent_47_of_50_is_too_few_to_confirm_one(paper, robust):
    from trajectory_judge.analysis.paper.robustness import ROBUST, exact

    c = paper[2]["step8_uniform"]
    lo, hi = exact(c.estimate, 0.95)
    assert (round(lo, 3), round(hi, 3)) == (0.835, 0.987) and c.verdict == CONSISTENT
    assert robust["step8_uniform"].status == ROBUST  # the exact interval meets 0.95 to 1.05 too


def test_misattributes_a_third_sits_on_the_edge_of_its_band_and_read_literally_is_only_consistent(paper, robust):
    c = paper[2]["step_misattributes_third"]
    assert c.verdict in (CONFIRMED, CONSISTENT) and c.high < 1 / 3 and "read as 0.25 to 0.35" in c.reason
    assert abs(c.low - 0.25) < 0.01  # the interval's low end sits on the band's edge: its verdict moves with it
    literal = next(a for a in robust["step_misattributes_third"].alternatives if "read literally" in a.name)
    assert literal.verdict == CONSISTENT  # 1/3 ± 0.05 starts above the interval's low end
    assert robust["outcome_third_flagged"].status == "robust"  # 0.33 (0.24-0.42) is consistent with a third either way


def test_gets_worse_on_invented_promises_is_inconclusive_paired_and_borne_out_in_raw_recall(paper, robust):
    from trajectory_judge.analysis.paper.claims import INCONCLUSIVE

    c = paper[2]["step_worse_on_claims"]
    assert c.verdict == NOT_CHECKABLE and c.kind == INCONCLUSIVE
    assert _flip(robust, "step_worse_on_claims", "raw recall") == BORNE_OUT


def test_f1_at_the_base_rate_flips_against_the_f1_of_flagging_everything(paper, robust):
    assert paper[2]["step8_f1_base_rate"].verdict == NOT_BORNE_OUT
    assert _flip(robust, "step8_f1_base_rate", "flagging everything") == CONFIRMED


def test_not_checkable_splits_into_seven_rows_without_data_and_two_inconclusive(paper):
    from trajectory_judge.analysis.paper.claims import INCONCLUSIVE, NO_DATA

    kinds = [c.kind for c in paper[2] if c.verdict == NOT_CHECKABLE]
    assert (kinds.count(NO_DATA), kinds.count(INCONCLUSIVE), len(kinds)) == (7, 2, 9)


def test_a_rows_p_value_is_below_005_exactly_when_the_rule_rejects(paper, robust):
    for c in paper[2]:
        p = robust[c.key].p_value
        if p is None:
            assert c.estimate is None, c.key
            continue
        rejects = c.verdict in (CONFIRMED, NOT_BORNE_OUT) if c.stated.value is not None else c.verdict != NOT_CHECKABLE
        assert (p < 0.05) == rejects, (c.key, p, c.verdict)


def test_holm_withdraws_confirmations_as_well_as_rejections_and_its_p_values_are_statsmodels(paper, robust):
    from statsmodels.stats.multitest import multipletests

    rows = [r for r in robust.values() if r.p_value is not None]
    expected = multipletests([r.p_value for r in rows], method="holm")[1]
    assert [r.adjusted_p for r in rows] == pytest.approx(list(expected))
    changed = [r for r in rows if r.adjusted != r.verdict]
    assert changed and all(r.adjusted_p >= 0.05 > r.p_value for r in changed)
    assert all(r.adjusted in (CONSISTENT, NOT_CHECKABLE) for r in changed)  # a withdrawn rejection
    assert any(r.verdict == CONFIRMED for r in changed)  # a confirmation is a rejection too: of lying outside the band


def test_the_jackknife_acceleration_of_a_mean_equals_the_brute_force_jackknife():
    import numpy as np

    from trajectory_judge.analysis.paper.robustness import acceleration

    u = np.array([1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1], dtype=float)
    loo = np.array([np.delete(u, i).mean() for i in range(len(u))])
    d = loo.mean() - loo
    assert acceleration(u) == pytest.approx((d**3).sum() / (6 * ((d**2).sum()) ** 1.5))


_NUM = r"([\u2212\d.e+]+(?: \u00d7 10[\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)?)"
_READ = rf"\((?:exactly {_NUM}|read as {_NUM} to {_NUM}|at its printed precision)\)"
_IV = rf"(?:the (?:whole )?interval {_NUM} to {_NUM}|the value {_NUM})"


_POWER = str.maketrans("\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079", "-0123456789")


def _f(x: str | None) -> float | None:
    """A printed number back to a float: a true minus sign, and a power of ten set as ``8.94 \u00d7 10\u207b\u2076``."""
    if x is None:
        return None
    mantissa, times, power = x.partition(" \u00d7 10")
    return float(mantissa.replace("\u2212", "-") + (f"e{power.translate(_POWER)}" if times else ""))


def _rounds(printed: float, true: float) -> bool:
    return any(round(true, d) == printed or float(f"{true:.{d + 1}g}") == printed for d in range(17))


def _band(c, x, a, b):
    from trajectory_judge.analysis.paper.claims import tolerance_band

    if x is not None:
        return x, x
    return (a, b) if a is not None else tolerance_band(c.stated, c.estimate)  # "at its printed precision"


def test_every_reason_states_a_comparison_its_own_printed_numbers_bear_out(paper):
    for c in paper[2]:
        e, why = c.estimate, c.reason
        if e is None:
            continue
        if m := re.fullmatch(rf"{_IV} lies within .+ {_READ}", why):
            lo, hi, v, x, a, b = map(_f, m.groups())
            a, b = _band(c, x, a, b)
            lo, hi = (v, v) if v is not None else (lo, hi)
            assert a <= lo and hi <= b, (c.key, why)
        elif m := re.fullmatch(rf"{_IV} meets .+ {_READ} but is too wide to lie within it", why):
            lo, hi, v, x, a, b = map(_f, m.groups())
            a, b = _band(c, x, a, b)
            lo, hi = (v, v) if v is not None else (lo, hi)
            assert a <= hi and lo <= b and (lo < a or hi > b), (c.key, why)
        elif m := re.fullmatch(rf"{_IV} excludes .+ {_READ}", why):
            lo, hi, v, x, a, b = map(_f, m.groups())
            a, b = _band(c, x, a, b)
            lo, hi = (v, v) if v is not None else (lo, hi)
            assert hi < a or lo > b, (c.key, why)
        elif m := re.fullmatch(rf"{_IV} lies (above|at or above|below|at or below|on the other side of) {_NUM}", why):
            lo, hi, v, side, t = m.groups()
            lo, hi, t = (_f(v), _f(v), _f(t)) if v else (_f(lo), _f(hi), _f(t))
            ok = {"above": lo > t, "at or above": lo >= t, "below": hi < t, "at or below": hi <= t}
            assert ok.get(side, hi <= t or lo >= t), (c.key, why)
        elif m := re.fullmatch(rf"the interval {_NUM} to {_NUM} straddles {_NUM}, .+", why):
            lo, hi, t = map(_f, m.groups())
            assert lo <= t <= hi, (c.key, why)
        elif m := re.fullmatch(rf"the value is {_NUM}, (as stated|not) .+", why):
            v = _f(m.group(1))
            assert (abs(e.value - c.stated.value) <= 1e-9) == (m.group(2) == "as stated"), (c.key, why)
            lo = hi = v
        else:
            raise AssertionError(f"{c.key}: a reason of no known form: {why}")
        assert _rounds(lo, e.low) and _rounds(hi, e.high), (c.key, why)  # the numbers are the estimate's


def test_no_judge_reads_the_final_reply_is_contradicted_by_three_judges_above_zero_paired(paper):
    c = paper[2]["no_judge_reads_reply"]
    assert c.verdict == NOT_BORNE_OUT and c.value == 3 and "step 14B +0.18" in c.estimate.detail


def test_rebuilds_every_number_offline_is_contradicted_by_the_audits_count_of_numbers_it_cannot_recompute(paper):
    from trajectory_judge.analysis.paper.audit import NOT_RECOMPUTABLE, check_published

    d, rep, reg = paper
    rows = check_published(rep, d).to_frame()
    missing = int((rows["verdict"] == NOT_RECOMPUTABLE).sum())
    c = reg["rebuilds_every_number"]
    assert (
        c.verdict == NOT_BORNE_OUT
        and f"{missing} cannot be recomputed" in c.estimate.detail
        and 0 < missing < len(rows)
    )
    assert c.value == pytest.approx((len(rows) - missing) / len(rows))


@pytest.mark.skipif(
    not (RELEASE / "trajectories.jsonl").exists(), reason="the published release is not present (TJ_RELEASE_DIR)"
)
def test_the_raw_release_gives_every_verdict_robustness_and_adjusted_verdict_of_the_committed_data(paper):
    from trajectory_judge.analysis.core.loading import load_data
    from trajectory_judge.analysis.core.report import build_report
    from trajectory_judge.analysis.paper.register import paper_register
    from trajectory_judge.analysis.paper.robustness import robustness

    raw = load_data(RELEASE)  # the published files themselves, not this edition's projection of them
    reg = paper_register(
        build_report(raw.trajectories, raw.verdicts, resamples=1000, seed=7), raw.trajectories, raw.verdicts
    )
    # §7.2's quoted miss is found by this edition's wording of the promise, which the raw release does not carry
    # (it is matched to the release by trajectory id in test_invented_promise_groups_match_the_release_one_to_one...)
    skip = "section72_example_confidence"
    ours = {k: r for k, r in robustness(c for c in paper[2] if c.key != skip).items()}
    theirs = {k: r for k, r in robustness(c for c in reg if c.key != skip).items()}
    assert [(c.key, c.verdict, c.kind) for c in reg if c.key != skip] == [
        (c.key, c.verdict, c.kind) for c in paper[2] if c.key != skip
    ]
    assert {k: (r.status, r.flipped_by(), r.adjusted) for k, r in theirs.items()} == {
        k: (r.status, r.flipped_by(), r.adjusted) for k, r in ours.items()
    }
    assert len(ours) == len(paper[2]) - 1


def test_the_register_table_has_a_robustness_and_an_adjusted_verdict_column(paper):
    # the adjusted column is "After Holm"
    from trajectory_judge.book.render.claim_text import Claims, register_table, verdict_table

    claims = Claims(paper[2])
    t = register_table(claims).set_index("Claim")
    row = t.loc[[s for s in t.index if s.startswith("§7.3: the 8B step judge's F1")][0]]
    assert row["Robustness"] == "fragile: the F1 of flagging everything: confirmed"
    assert row["Verdict"] == NOT_BORNE_OUT
    assert (t["Verdict"] == "not checkable: no data").sum() == 7 and (
        t["Verdict"] == "not checkable: inconclusive"
    ).sum() == 2
    counts = verdict_table(claims)
    assert counts["All"].sum() == counts["After Holm"].sum() == len(claims)


# --- counts of intervals, the bias-corrected interval's name, seeds, and the rule's changes ------------------------
def _sampled(mean: float, sd: float, units=None) -> Estimate:
    import numpy as np

    r = np.random.default_rng(1).normal(mean, sd, 10_000)
    lo, hi = np.percentile(r, [2.5, 97.5])
    return Estimate(mean, float(lo), float(hi), "bootstrap", 100, "", r, units)


def test_a_count_of_intervals_is_counted_again_under_each_alternative_not_copied():
    from trajectory_judge.analysis.paper.claims import Counted
    from trajectory_judge.analysis.paper.robustness import FRAGILE, robustness

    axis = _sampled(0.1, 0.045)  # excludes zero at 95%, not at 99%
    assert axis.low > 0
    count = Estimate.count_of([Counted("ece", axis, "excludes"), Counted("f1", _sampled(0.0, 0.05), "excludes")], str)
    c = Claim("k", "g", "§1", "none differs", Stated.number("none", 0.0), "axes excluding zero", count)
    assert c.verdict == NOT_BORNE_OUT and count.value == 1
    r = robustness([c])["k"]
    at99 = next(a for a in r.alternatives if a.name == "99%")
    assert at99.estimate.value == 0 and at99.verdict == CONFIRMED and r.status == FRAGILE
    assert next(a for a in r.alternatives if a.name == "90%").estimate.value == 1


def test_a_bias_corrected_interval_without_acceleration_is_called_bc_and_with_one_bca():
    import numpy as np

    from trajectory_judge.analysis.paper.robustness import interval_alternatives

    names = lambda e: [n for c, n, _ in interval_alternatives(e) if c == "interval"]
    assert "BC" in names(_sampled(0.1, 0.05)) and "BCa" not in names(_sampled(0.1, 0.05))
    units = np.array([1.0] * 30 + [0.0] * 70)  # a proportion: its jackknife acceleration is not zero
    assert "BCa" in names(_sampled(0.3, 0.046, units))


def test_the_seed_alternative_judges_sampled_rows_and_counts_again_on_the_register_at_two_other_seeds(paper):
    from trajectory_judge.analysis.paper.register import seed_register
    from trajectory_judge.analysis.paper.robustness import SEEDS, robustness, seed_registers

    d, rep, reg = paper
    others = seed_registers(lambda s: seed_register(rep, d.trajectories, d.verdicts, s), rep.seed)
    assert list(others) == [f"seed {s}" for s in SEEDS if s != rep.seed] and len(others) == 2
    rob = robustness(reg, others)
    seeds_of = lambda k: [a for a in rob[k].alternatives if a.choice == "seed"]
    assert len(seeds_of("outcome_loud")) == 2 and seeds_of("design_400") == []  # a count of trajectories has none
    (s8, _) = seeds_of("selfcons_within_noise")  # a count of intervals, counted again at the other seed
    assert s8.estimate is others["seed 8"]["selfcons_within_noise"].estimate and s8.estimate.parts
    assert s8.estimate.parts[0].estimate.low != reg["selfcons_within_noise"].estimate.parts[0].estimate.low


def test_the_disclosure_lists_the_reading_of_a_third_with_its_verdicts_under_both_readings(paper):
    from trajectory_judge.analysis.paper.claims import CURRENT
    from trajectory_judge.analysis.paper.rule_changes import THIRD_AFTER, THIRD_BEFORE, disclosure_frame, rule_changes

    reg = paper[2]
    frame = disclosure_frame(reg)
    third = frame[frame["Change"].str.contains("a third")].iloc[0]
    thirds = [c for c in reg if c.stated.in_words]
    assert third["Claims"] == len(thirds) == 2
    for c in thirds:  # each claim named with its verdict under each reading, as the rule of the day gives it
        assert f"{c.where.split(';')[0]}: {c.verdict_under(THIRD_BEFORE)}" in third["Before"]
        assert f"{c.where.split(';')[0]}: {c.verdict_under(THIRD_AFTER)}" in third["After"]
    assert (
        third["Moved"] == "no verdict moved"
        and "0.3 \u00b1 0.05" in third["Change"]
        and "1/3 \u00b1 0.05" in third["Change"]
    )
    equivalence = next(cv for cv in rule_changes(reg) if cv.change.after == CURRENT)
    assert equivalence.after == tuple(
        c.verdict if c.verdict != NOT_CHECKABLE else f"{c.verdict}: {c.kind}" for c in reg
    )
    assert all(b == BORNE_OUT and a in (CONFIRMED, CONSISTENT) for (b, a) in equivalence.moved)


def test_under_the_earlier_rule_a_value_is_borne_out_whenever_its_printed_band_meets_the_interval():
    from trajectory_judge.analysis.paper.rule_changes import THIRD_AFTER, THIRD_BEFORE

    s = Stated.number("84%", 0.84, 0.01)
    assert verdict(s, Estimate(0.8, 0.5, 0.9, "bootstrap"), THIRD_AFTER)[0] == BORNE_OUT
    assert verdict(s, Estimate(0.8, 0.5, 0.9, "bootstrap"))[0] == CONSISTENT
    third = Stated.fraction("a third", 1 / 3)
    e = Estimate(0.26, 0.255, 0.27, "bootstrap")  # meets 0.3 ± 0.05, misses 1/3 ± 0.05
    assert verdict(third, e, THIRD_AFTER)[0] == BORNE_OUT and verdict(third, e, THIRD_BEFORE)[0] == NOT_BORNE_OUT
