"""What the counterfactual set can detect, and the permutation test of the spread: the design's power before any
verdict, the test's level and power, and the chapter's two branches (no LLM judge yet, an LLM judge's verdicts)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.statistics.position import (
    _null_spreads,
    counterfactual_recall,
    detectable_difference,
    linear_recalls,
    position_power,
    spread_permutation,
)
from trajectory_judge.models import Verdict, dumps


@pytest.fixture(scope="module")
def counterfactual():
    from tests.conftest import ROOT

    return load_data(ROOT / "data" / "counterfactual")


def _mcnemar_power(n: int, d: float, u: np.ndarray, alpha: float = 0.05) -> float:
    """Simulated power of the two-sided McNemar test (normal approximation, no continuity correction) of recalls
    0.5 - d/2 and 0.5 + d/2 on n instances, flags independent; ``u`` the uniforms, (simulations, n, 2)."""
    x = u < np.array([0.5 - d / 2, 0.5 + d / 2])
    b = (x[..., 1] & ~x[..., 0]).sum(axis=1)
    c = (x[..., 0] & ~x[..., 1]).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(b + c > 0, (b - c) / np.sqrt(b + c), 0.0)
    return float((np.abs(z) > 1.959963984540054).mean())


@pytest.mark.parametrize("n", [30, 60, 120])
def test_the_closed_form_detectable_difference_agrees_with_simulation_within_0_03(n):
    u = np.random.default_rng(11).random((20_000, n, 2))
    lo, hi = 0.0, 1.0
    for _ in range(12):  # the difference the simulated test detects with power 0.8, by bisection
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _mcnemar_power(n, mid, u) >= 0.8 else (mid, hi)
    assert abs(detectable_difference(n) - hi) < 0.03, (n, detectable_difference(n), hi)


def test_the_detectable_difference_at_60_instances_is_about_a_quarter_and_shrinks_with_n():
    # the statistician's figure for the set: about 0.26 between two steps at 60 instances, level 0.05, power 0.8
    assert round(detectable_difference(60), 2) == 0.26
    ds = [detectable_difference(n) for n in (10, 30, 60, 120, 240)]
    assert ds == sorted(ds, reverse=True)
    assert detectable_difference(60, alpha=0.05 / 15) > detectable_difference(60)  # every pair: a stricter level
    assert math.isnan(detectable_difference(3))  # too few instances to detect anything with power 0.8
    assert detectable_difference(60, base=0.8) < detectable_difference(60)  # 0.5 is the worst case


def test_the_shuffle_null_drawn_by_placings_is_the_null_of_shuffling_each_instance():
    rng = np.random.default_rng(5)
    flags = rng.random((40, 6)) < rng.random((40, 1))  # instances with every number of flags
    fast = _null_spreads(flags.sum(axis=1), 6, 20_000, np.random.default_rng(1))
    keys = np.random.default_rng(2).random((20_000, 40, 6))
    shuffled = np.take_along_axis(np.broadcast_to(flags, keys.shape), keys.argsort(axis=-1), axis=-1).sum(axis=1)
    slow = (shuffled.max(axis=-1) - shuffled.min(axis=-1)) / 40
    from scipy.stats import ks_2samp

    assert ks_2samp(fast, slow).pvalue > 0.01
    assert abs(fast.mean() - slow.mean()) < 0.005 and np.quantile(fast, 0.95) == np.quantile(slow, 0.95)


@pytest.mark.parametrize("n", [10, 37, 60])
def test_the_exact_chance_spread_of_a_blind_judge_is_the_simulated_one(n):
    from trajectory_judge.analysis.statistics.position import _spread_of, blind_spread_quantile

    sim = _spread_of(np.random.default_rng(n).binomial(n, 0.5, size=(200_000, 6)), n)
    exact = blind_spread_quantile(n, 6, 0.95)
    assert (sim <= exact + 1e-12).mean() >= 0.945 and (sim < exact - 1e-12).mean() < 0.95


def test_the_permutation_p_is_counted_as_k_plus_1_over_b_plus_1():
    # a judge that flags exactly steps 3 to 5 of every instance: no shuffle of 60 instances reaches its spread of 1
    flags = np.tile([0, 0, 0, 1, 1, 1], (60, 1))
    spread, p, null95 = spread_permutation(flags, permutations=999)
    assert spread == 1.0 and p == 1 / 1000 and null95 < 0.5
    # a judge that flags every mutant: every shuffle is the same, the spread 0, so p is 1
    assert spread_permutation(np.ones((60, 6)), permutations=999) == (0.0, 1.0, 0.0)


@pytest.mark.slow  # 10,000 shuffles; nbval checks the chapter's own reading of the control
def test_the_coin_controls_permutation_p_is_not_small(counterfactual):
    (coin,) = [
        c
        for c in counterfactual_recall(counterfactual.trajectories, counterfactual.verdicts, resamples=200)
        if c.judge.startswith("mock-")
    ]
    assert coin.spread > 0 and coin.permutations == 10_000
    assert coin.spread_p > 0.2 and coin.spread < coin.spread_null95  # a spread above 0 is what chance gives
    assert coin.instances == 60 and coin.power == position_power(60, 6)


@pytest.mark.slow  # a simulation of the tests' operating characteristics
def test_with_no_position_effect_both_tests_reject_about_one_set_in_twenty():
    level = position_power(60, 6, rise=0.0, simulations=2_000)
    assert 0.025 <= level.permutation_power <= 0.075
    assert 0.025 <= level.cochran_power <= 0.075


def test_a_judge_whose_recall_rises_with_position_by_0_4_at_n_60_is_detected(counterfactual):
    rng = np.random.default_rng(2024)
    recall = dict(enumerate(linear_recalls(6, 0.4)))  # 0.3 at step 0 to 0.7 at step 5
    rising = [
        Verdict(
            trajectory_id=t.trajectory_id,
            judge_id="rising",
            faulty=bool(rng.random() < (recall[t.label.failure_step] if t.label.faulty else 0.1)),
            confidence=0.9,
        )
        for t in counterfactual.trajectories
    ]
    (cf,) = counterfactual_recall(counterfactual.trajectories, rising, resamples=200)
    assert cf.instances == 60 and cf.spread_p < 0.05 and cf.cochran_p < 0.05
    design = position_power(60, 6, rise=0.4)  # and not by luck: the design detects such a rise nearly always
    assert design.cochran_power > 0.9 and design.permutation_power > 0.8


@pytest.mark.slow  # a simulation of the tests' operating characteristics
def test_the_design_detects_a_rise_of_0_2_at_60_instances_about_half_the_time():
    pw = position_power(60, 6)
    assert pw.rise == 0.2 and 0.3 < pw.permutation_power < 0.7 and 0.3 < pw.cochran_power < 0.7
    assert 0.2 < pw.rise_detectable < 0.35 and position_power(60, 6, rise=pw.rise_detectable).cochran_power >= 0.79
    assert position_power(30, 6).rise_detectable > pw.rise_detectable  # fewer instances, a larger rise needed
    assert 0.2 < pw.blind_spread95 < 0.3


def _without_llm(tmp_path):
    """A copy of the counterfactual set holding only the verdicts of judges that are not LLM judges (the rules and
    the control), as the set was before any LLM judge read it."""
    from tests.conftest import ROOT
    from trajectory_judge.models import JudgeSpec
    from trajectory_judge.provenance.manifest import write_manifest

    folder = tmp_path / "counterfactual"
    shutil.copytree(ROOT / "data" / "counterfactual", folder)
    lines = (folder / "verdicts.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [ln for ln in lines if not JudgeSpec.parse(json.loads(ln)["judge_id"]).is_llm]
    (folder / "verdicts.jsonl").write_text("".join(kept), encoding="utf-8")
    write_manifest(folder)
    return folder


def _with_fake_llm(tmp_path, complete: int):
    """A copy of the counterfactual set with a fake LLM judge's seeded verdicts on its first ``complete``
    instances and on part of the next (an instance it did not finish, which does not count)."""
    from trajectory_judge.provenance.manifest import write_manifest

    folder = _without_llm(tmp_path)
    ts = load_data(folder).trajectories
    order = list(dict.fromkeys(t.instance_id for t in ts))
    rng = np.random.default_rng(99)
    recall = dict(enumerate(linear_recalls(6, 0.5)))
    keep = [t for t in ts if t.instance_id in order[:complete]]
    keep += [t for t in ts if t.instance_id == order[complete]][:3]
    with open(folder / "verdicts.jsonl", "a", encoding="utf-8") as fh:
        for t in keep:
            p = recall[t.label.failure_step] if t.label.faulty else 0.1
            v = Verdict(
                trajectory_id=t.trajectory_id, judge_id="step:fake-model", faulty=bool(rng.random() < p), confidence=0.8
            )
            fh.write(dumps(v) + "\n")
    write_manifest(folder)
    return folder


def _chapter(cf_folder):
    from tests.conftest import ROOT
    from trajectory_judge.analysis.statistics.organic import load_episodes
    from trajectory_judge.analysis.statistics.position import position_study
    from trajectory_judge.book.chapters.position import position_values

    ours = load_data(ROOT / "data")
    study = position_study(
        ours, ours, load_data(cf_folder), load_episodes(ROOT / "data"), resamples=200, seed=7, labelled=20
    )
    return study, position_values(study)


def test_without_an_llm_judge_the_chapter_frames_the_set_as_a_method(tmp_path):
    ch, v = _chapter(_without_llm(tmp_path))
    assert v["cf_llm"].startswith("No LLM judge's verdicts on the set are committed")
    assert v["headline"].startswith("No LLM judge has read the counterfactual set yet")
    design = position_power(60, 6)
    assert f"detects a difference of {design.pair_detectable:.3f}" in v["cf_design"]  # stated before any result
    assert f"Cochran's Q has power {design.cochran_power:.3f}" in v["cf_design"]
    coin = next(c for c in ch.counterfactual if c.judge.startswith("mock-"))
    assert v["cf_control"].startswith(f"The control's spread of {coin.spread:.3f} is what chance gives")
    assert f"p = {coin.spread_p:.3f}" in v["cf_control"] and "Two judges have read the set" in v["cf_readers"]


@pytest.mark.slow  # the whole chapter's values on a folder with a fake LLM judge
def test_an_llm_judges_verdicts_become_the_chapters_finding_with_its_power_at_its_instances(tmp_path):
    from trajectory_judge.book.chapters.position import counterfactual_figure, counterfactual_table

    ch, v = _chapter(_with_fake_llm(tmp_path, complete=40))
    llm = next(c for c in ch.counterfactual if c.judge == "step:fake-model")
    assert llm.instances == 40 and llm.power == position_power(40, 6)  # the unfinished 41st instance does not count
    assert v["cf_llm"].startswith("Step · fake-model has read the set: on the 40 of 60 instances it judged completely")
    assert "40" in v["cf_llm"] and f"{llm.power.pair_detectable:.3f}" in v["cf_llm"]  # its n and what that detects
    assert f"permutation p {'<' if llm.spread_p < 0.001 else '='}" in v["cf_llm"]
    assert v["headline"].startswith("On the counterfactual set, Step · fake-model ranges from")
    assert "Three judges have read the set" in v["cf_readers"] and "40 of 60" in v["cf_readers"]
    assert "No LLM judge" not in v["headline"] + v["cf_llm"]
    table = counterfactual_table(ch.counterfactual)
    assert table.loc["Instances judged completely", "Step · fake-model"] == "40"
    counterfactual_figure(ch.counterfactual)
