"""``prevalence``: a judge's flag rate on unlabelled traces turned into a fault rate (Rogan-Gladen, PPI)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from trajectory_judge.analysis.statistics.prevalence import (
    clipping_text,
    estimate_prevalence,
    rogan_gladen,
    summary_lines,
)
from trajectory_judge.cli import main
from trajectory_judge.models import FAILURE_TYPES


def _calibration(detected: int, faults: int, false_alarms: int, clean: int):
    truth = [True] * faults + [False] * clean
    flags = [i < detected for i in range(faults)] + [i < false_alarms for i in range(clean)]
    return truth, flags


def test_rogan_gladen_inverts_the_flag_rate_by_sensitivity_and_specificity():
    # closed form: se 0.8, sp 0.9, flag rate 0.38 -> (0.38 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.4
    truth, flags = _calibration(80, 100, 10, 100)
    p = estimate_prevalence(truth, flags, [True] * 38 + [False] * 62, resamples=500)
    assert math.isclose(p.sensitivity.estimate, 0.8) and math.isclose(p.specificity.estimate, 0.9)
    assert math.isclose(p.flag_rate.estimate, 0.38) and math.isclose(p.informedness.estimate, 0.7)
    rg = p.rogan_gladen
    assert rg.status == "estimated" and math.isclose(rg.estimate, 0.4) and not rg.clipped
    assert rg.low < 0.4 < rg.high and rg.undefined_replicates == 0 and p.warnings == ()


def test_proportions_carry_the_jeffreys_interval_also_at_zero_events():
    # Brown, Cai and DasGupta (2001): Beta(x + 1/2, n - x + 1/2) quantiles, upper bound 1 at x = n;
    # 12 of 12 clean runs unflagged is a specificity known to (0.81, 1), not exactly 1
    from scipy.stats import beta

    truth, flags = _calibration(30, 36, 0, 12)
    p = estimate_prevalence(truth, flags, [True] * 30 + [False] * 70, resamples=500)
    assert p.specificity.estimate == 1.0 and p.specificity.high == 1.0
    assert p.specificity.low == pytest.approx(beta.ppf(0.025, 12.5, 0.5)) and p.specificity.low < 0.85
    assert p.sensitivity.low == pytest.approx(beta.ppf(0.025, 30.5, 6.5))
    assert any("only 12 clean calibration runs" in w for w in p.warnings)
    assert any("only 36 faulty calibration runs" in w for w in p.warnings)
    # the false-alarm rate is drawn above 0, so the interval reaches below the point at sp = 1: 0.3 / (30/36)
    assert p.rogan_gladen.low < 0.3 / (30 / 36) - 0.05


def test_a_point_below_zero_within_sampling_error_is_clipped_and_says_point_and_bound():
    # (0.05 - 0.1) / 0.7 = -0.071, but the interval reaches into [0, 1]
    truth, flags = _calibration(80, 100, 10, 100)
    p = estimate_prevalence(truth, flags, [True] * 5 + [False] * 95, resamples=2000)
    rg = p.rogan_gladen
    assert rg.status == "estimated" and rg.raw == pytest.approx(-0.05 / 0.7) and rg.estimate == 0.0
    assert rg.clipped_parts == ("estimate", "low") and rg.low == 0.0 and rg.high == rg.raw_high > 0
    text = clipping_text(rg)
    assert text.startswith("clipped to [0, 1]: the point from \u22120.071 to 0.000 and the lower bound from \u2212")


def test_a_clipped_bound_alone_is_named_and_the_point_said_unclipped():
    truth, flags = _calibration(80, 100, 10, 100)
    p = estimate_prevalence(truth, flags, [True] * 13 + [False] * 87, resamples=2000)  # (0.13 - 0.1) / 0.7 = 0.043
    rg = p.rogan_gladen
    assert rg.clipped_parts == ("low",) and rg.estimate == pytest.approx(0.03 / 0.7)
    assert clipping_text(rg).endswith(f"(the point, {rg.estimate:.3f}, was not clipped)")
    assert "clipped to [0, 1]: the lower bound from" in "\n".join(summary_lines(p, "cal", "mine"))


def test_an_interval_wholly_outside_zero_to_one_says_the_transfer_fails_and_gives_none():
    # the book's organic case: 200 of 300 faults, no false alarm in 100, 57 of 60 flagged: 0.95 / (2/3) = 1.425
    truth, flags = _calibration(200, 300, 0, 100)
    p = estimate_prevalence(truth, flags, [True] * 57 + [False] * 3, resamples=2000)
    rg = p.rogan_gladen
    assert rg.status == "transfer fails" and rg.raw == pytest.approx(1.425) and rg.raw_low > 1
    assert rg.estimate is None and rg.low is None and rg.high is None
    text = "\n".join(summary_lines(p, "cal", "mine"))
    assert "transfer fails: the correction gives 1.425" in text and "lies above 1" in text
    assert "so no interval is given" in text and "clipped" not in text


def test_a_judge_with_sensitivity_plus_specificity_one_is_uninformative_not_a_point():
    truth, flags = _calibration(50, 100, 50, 100)  # se 0.5 + sp 0.5 = 1
    p = estimate_prevalence(truth, flags, [True, False], resamples=500)
    rg = p.rogan_gladen
    assert rg.status == "uninformative" and (rg.estimate, rg.low, rg.high, rg.raw) == (None, 0.0, 1.0, None)
    line = next(ln for ln in summary_lines(p, "cal", "mine") if "fault rate" in ln and "uninformative" in ln)
    assert "uninformative: [0, 1]" in line and "not above 0 at 95% confidence" in line


def test_a_coin_flip_judge_is_uninformative_in_every_one_of_20_seeded_draws():
    # se = sp = 0.5 exactly on 400 calibration runs (300 faulty, 100 clean), 300 traces at a true rate of 0.3
    truth, flags = _calibration(150, 300, 50, 100)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        is_fault = rng.random(300) < 0.3
        user = rng.random(300) < np.where(is_fault, 0.5, 1 - 0.5)  # caught at se, falsely flagged at 1 - sp
        rg = estimate_prevalence(truth, flags, user, resamples=500, seed=seed).rogan_gladen
        assert rg.status == "uninformative" and (rg.low, rg.high) == (0.0, 1.0), seed


def test_a_coin_flip_judge_drawn_afresh_gets_an_interval_in_at_most_its_share_alpha_over_2():
    # se = sp = 0.5 in truth, each calibration set drawn afresh: its observed informedness is positive by chance
    # about half the time, yet its lower bound is above 0 only in about alpha / 2 = 2.5% of draws (the point
    # rule printed an interval in 32 of 300); 300 draws: expect 7.5, standard deviation 2.7; accept up to 15
    rng = np.random.default_rng(2026)
    informative = 0
    for _ in range(300):
        truth = np.r_[np.ones(300, bool), np.zeros(100, bool)]
        cflags, user = rng.random(400) < 0.5, rng.random(300) < 0.5
        p = estimate_prevalence(truth, cflags, user, resamples=500, seed=int(rng.integers(1 << 31)))
        informative += p.rogan_gladen.status != "uninformative"
    assert informative <= 15, informative


def test_replicates_without_an_estimate_are_counted_at_both_ends_never_dropped():
    # informedness 0.3 on 40 faults and 40 clean runs (standard error about 0.1): a few replicates fall at or
    # below 0, fewer than 2.5%
    truth, flags = _calibration(28, 40, 16, 40)
    p = estimate_prevalence(truth, flags, [True] * 60 + [False] * 40, resamples=4000, seed=3)
    rg = p.rogan_gladen
    assert rg.status == "estimated" and 0 < rg.undefined_replicates < 100
    # reference: the same draws in the same order, the undefined ones as -inf / +inf (a slow loop)
    gen = np.random.default_rng(3)
    se, fa, q = gen.beta(28.5, 12.5, 4000), gen.beta(16.5, 24.5, 4000), gen.beta(60.5, 40.5, 4000)
    low = [-math.inf if s <= f else (x - f) / (s - f) for s, f, x in zip(se, fa, q)]
    high = [math.inf if s <= f else (x - f) / (s - f) for s, f, x in zip(se, fa, q)]
    assert rg.raw_low == np.quantile(low, 0.025, method="inverted_cdf")
    assert rg.raw_high == np.quantile(high, 0.975, method="inverted_cdf")
    kept = [v for v in low if math.isfinite(v)]
    assert rg.raw_low < np.quantile(kept, 0.025, method="inverted_cdf")  # dropping them would have narrowed it
    assert any(f"{rg.undefined_replicates} of 4000 replicates" in w and "none is left out" in w for w in p.warnings)


def test_ppi_plus_plus_sits_beside_the_labels_alone():
    # closed form at lam = 0 (the labels alone): 4 labelled, labels 1, 0, 1, 0 -> 0.5
    truth, cflags = _calibration(80, 100, 10, 100)
    flags = [True] * 6 + [False] * 4 + [False, True, False, False]
    labels = [None] * 10 + [True, False, True, False]
    p = estimate_prevalence(truth, cflags, flags, labels=labels, resamples=500)
    assert p.ppi is not None and p.classical is not None and p.labelled == 4 and p.ppi_lambda is not None
    assert p.classical.estimator == "classical" and math.isclose(p.classical.raw or 0, 0.5)
    # lam = 0 here (label and flag uncorrelated on the labelled four): PPI++ is then the labels alone
    assert p.ppi_lambda == 0.0 and p.ppi.raw == p.classical.raw and p.ppi.estimator == "ppi++"
    assert any("only 4 labelled traces" in w for w in p.warnings)
    assert {"flag rate", "informedness", "fault rate (ppi++)", "fault rate (labels alone)"} <= set(p.to_frame().index)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"labels": [True] * 3}, "every trace is labelled"),
        ({"labels": [True, None, None]}, "label at least two"),
        ({"labels": [True, None]}, "one entry"),
    ],
)
def test_bad_labels_are_refused_with_the_reason(kwargs, match):
    truth, flags = _calibration(8, 10, 1, 10)
    with pytest.raises(ValueError, match=match):
        estimate_prevalence(truth, flags, [True, False, True], resamples=50, **kwargs)


def test_a_calibration_set_without_clean_runs_is_refused():
    with pytest.raises(ValueError, match="both faulty and clean"):
        estimate_prevalence([True, True], [True, False], [True], resamples=50)


# --- coverage ---------------------------------------------------------------------------------------------------
def _grid_coverage(rate: float, se: float, sp: float, faults: int, clean: int, draws: int, seed: int) -> float:
    """Share of ``draws`` whose 95% interval holds ``rate``: each draw a fresh calibration set (``faults`` and
    ``clean`` runs, flagged with probability ``se`` and ``1 - sp``) and 300 traces at ``rate``; an uninformative
    result ([0, 1]) holds it, a failed transfer (no interval) does not."""
    rng = np.random.default_rng(seed)
    covered = 0
    for _ in range(draws):
        detected, false_alarms = rng.binomial(faults, se), rng.binomial(clean, 1 - sp)
        flagged = rng.binomial(300, rate * se + (1 - rate) * (1 - sp))
        rg, _ = rogan_gladen(
            detected, faults, false_alarms, clean, flagged, 300, resamples=500, rng=int(rng.integers(1 << 31))
        )
        covered += rg.low is not None and rg.high is not None and rg.low <= rate <= rg.high
    return covered / draws


GRID = [
    (rate, se, sp, faults, clean)
    for faults, clean in ((36, 12), (300, 100))
    for se, sp in ((0.9, 0.9), (0.67, 0.95))
    for rate in (0.05, 0.3, 0.7)
]


@pytest.mark.slow  # about half a minute
@pytest.mark.parametrize(("rate", "se", "sp", "faults", "clean"), GRID)
def test_interval_covers_at_least_93_percent_in_every_cell_of_the_grid(rate, se, sp, faults, clean):
    # 2000 draws per cell: the coverage estimate's standard error at 0.95 is 0.005, so 0.93 is 4 of them below;
    # measured 0.937-0.973 (the 48-run sets conservative, 0.948-0.973; the 400-run ones near nominal, 0.937-0.954)
    coverage = _grid_coverage(rate, se, sp, faults, clean, draws=2000, seed=int(1000 * rate) + faults)
    assert coverage >= 0.93, coverage


def _pool():
    """The testbed's trajectories (a larger draw than the judged set: 200 clean, 100 of each type), the rule
    engine's flags on them and their kind (clean or the failure type)."""
    from trajectory_judge.judges.programmatic import ProgrammaticJudge
    from trajectory_judge.testbed.dataset import generate

    trajs = generate(800, 11)
    judge = ProgrammaticJudge()
    return (
        np.asarray([t.label.faulty for t in trajs]),
        np.asarray([judge.judge(t).faulty for t in trajs]),
        np.asarray([t.label.failure_type or "clean" for t in trajs]),
    )


def _coverage(draws: int, resamples: int, rate: float = 0.3, noise: float = 0.1, seed: int = 2026) -> float:
    """Share of ``draws`` in which the 95% interval holds ``rate``. Each draw: a fresh calibration set from the
    testbed (50 clean, 25 of each type), 300 traces each faulty with probability ``rate``, and the rule engine as
    the judge with every flag flipped with probability ``noise`` (so neither sensitivity nor specificity is 1)."""
    truth, rules, kinds = _pool()
    rng = np.random.default_rng(seed)
    faulty_rows, clean_rows = np.flatnonzero(truth), np.flatnonzero(~truth)
    covered = 0
    for _ in range(draws):
        flags = rules ^ (rng.random(len(rules)) < noise)  # this draw's judge
        cal = np.concatenate(
            [
                rng.choice(np.flatnonzero(kinds == k), size=50 if k == "clean" else 25, replace=False)
                for k in ("clean", *FAILURE_TYPES)
            ]
        )
        is_fault = rng.random(300) < rate
        user = np.where(is_fault, rng.choice(faulty_rows, 300), rng.choice(clean_rows, 300))
        p = estimate_prevalence(
            truth[cal],
            flags[cal],
            flags[user],
            resamples=resamples,
            seed=int(rng.integers(1 << 31)),
        )
        rg = p.rogan_gladen
        covered += rg.low is not None and rg.high is not None and rg.low <= rate <= rg.high
    return covered / draws


def test_interval_covers_the_true_fault_rate_at_close_to_95_percent_over_repeated_testbed_draws():
    # 100 draws (the fast tier's share; the slow tier draws 1000): the coverage estimate's binomial standard
    # error at 0.95 is sqrt(0.95 * 0.05 / 100) = 0.022; accept 0.95 - 3 standard errors and above, [0.885, 1]
    coverage = _coverage(draws=100, resamples=400)
    assert coverage >= 0.885, coverage


@pytest.mark.slow  # about a minute
def test_interval_coverage_stays_nominal_over_1000_draws_at_full_resamples():
    # 1000 draws: standard error 0.0069; accept 0.95 +- 3 standard errors, [0.929, 0.971]
    coverage = _coverage(draws=1000, resamples=2000, seed=7)
    assert 0.929 <= coverage <= 0.971, coverage


# --- the command ----------------------------------------------------------------------------------------------
def _user_file(tmp_path, flags, judge="programmatic"):
    path = tmp_path / "mine.jsonl"
    lines = [
        json.dumps({"trajectory_id": f"u{i}", "judge_id": judge, "faulty": f, "confidence": 0.9})
        for i, f in enumerate(flags)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_prevalence_command_writes_estimate_low_high_and_its_inputs(tmp_path, capsys):
    from tests.conftest import ROOT

    user = _user_file(tmp_path, [True] * 20 + [False] * 20)
    out = tmp_path / "prev.json"
    code = main(
        [
            "prevalence",
            "--judge",
            "programmatic",
            "--calibration",
            str(ROOT / "data"),
            "--verdicts",
            str(user),
            "--json",
            str(out),
            "--resamples",
            "500",
        ]
    )
    assert code == 0
    record = json.loads(out.read_text())
    assert {"estimate", "low", "high", "clipped", "status", "sensitivity", "specificity", "informedness"} <= set(record)
    assert {"inputs", "assumes", "warnings"} <= set(record) and record["status"] == "estimated"
    # the rule engine on the planted set: 200 of 300 faults, no false alarm; 0.5 / (2/3) = 0.75
    assert math.isclose(record["estimate"], 0.75) and record["sensitivity"]["successes"] == 200
    text = capsys.readouterr().out
    assert "0.750" in text and "assumes" in text


def test_prevalence_with_labels_adds_the_prediction_powered_estimate(tmp_path, capsys):
    from tests.conftest import ROOT

    user = _user_file(tmp_path, [True] * 20 + [False] * 20)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"trajectory_id": f"u{i}", "faulty": True}) + "\n" for i in (0, 25)))
    out = tmp_path / "prev.json"
    main(
        [
            "prevalence",
            "--judge",
            "programmatic",
            "--calibration",
            str(ROOT / "data"),
            "--verdicts",
            str(user),
            "--labels",
            str(labels),
            "--json",
            str(out),
            "--resamples",
            "300",
        ]
    )
    record = json.loads(out.read_text())
    # both labels faulty, so they do not covary with the flags: lam = 0 and PPI++ is the labels' own 2 of 2,
    # with its exact interval (Clopper-Pearson at 2 of 2: 0.025 ** (1/2))
    assert record["labelled"] == 2 and record["ppi_lambda"] == 0 and record["ppi"]["raw"] == 1.0
    assert record["classical"]["method"] == "clopper-pearson" and math.isclose(record["classical"]["low"], 0.025**0.5)
    text = capsys.readouterr().out
    assert "fault rate (PPI++)" in text and "lambda 0.00" in text and "the 2 labels alone" in text


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (
            '{"trajectory_id": "u0", "judge_id": "programmatic", "faulty": "yes", "confidence": 0.9}\n',
            ":1: invalid Verdict: faulty",
        ),
        ('{"trajectory_id": "u0", "judge_id": "step:m", "faulty": true, "confidence": 0.9}\n', "no verdicts of judge"),
    ],
)
def test_prevalence_bad_verdicts_is_one_line_naming_file_line_and_field(tmp_path, capsys, content, needle):
    from tests.conftest import ROOT

    user = tmp_path / "mine.jsonl"
    user.write_text(content)
    code = main(["prevalence", "--judge", "programmatic", "--calibration", str(ROOT / "data"), "--verdicts", str(user)])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and str(user) in err and len(err.strip().splitlines()) == 1


def test_prevalence_labels_naming_an_unknown_trace_is_one_line_with_its_line(tmp_path, capsys):
    from tests.conftest import ROOT

    user = _user_file(tmp_path, [True, False])
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"trajectory_id": "u0", "faulty": true}\n{"trajectory_id": "nope", "faulty": true}\n')
    code = main(
        [
            "prevalence",
            "--judge",
            "programmatic",
            "--calibration",
            str(ROOT / "data"),
            "--verdicts",
            str(user),
            "--labels",
            str(labels),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and f"{labels}:2: trajectory_id" in err
