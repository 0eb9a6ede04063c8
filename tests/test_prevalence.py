"""``prevalence``: a judge's flag rate on unlabelled traces turned into a fault rate (Rogan-Gladen, PPI)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from trajectory_judge.analysis.prevalence import estimate_prevalence
from trajectory_judge.cli import main
from trajectory_judge.models import FAILURE_TYPES, design_cell


def _calibration(detected: int, faults: int, false_alarms: int, clean: int):
    truth = [True] * faults + [False] * clean
    flags = [i < detected for i in range(faults)] + [i < false_alarms for i in range(clean)]
    strata = ["fault"] * faults + ["clean"] * clean
    return truth, flags, strata


def test_rogan_gladen_inverts_the_flag_rate_by_sensitivity_and_specificity():
    # closed form: se 0.8, sp 0.9, flag rate 0.38 -> (0.38 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.4
    truth, flags, strata = _calibration(80, 100, 10, 100)
    p = estimate_prevalence(truth, flags, strata, [True] * 38 + [False] * 62, resamples=500)
    assert math.isclose(p.sensitivity.estimate, 0.8) and math.isclose(p.specificity.estimate, 0.9)
    assert math.isclose(p.flag_rate.estimate, 0.38)
    assert math.isclose(p.rogan_gladen.estimate, 0.4) and not p.rogan_gladen.clipped
    assert p.rogan_gladen.low < 0.4 < p.rogan_gladen.high


def test_estimate_below_the_false_alarm_rate_is_clipped_to_zero_and_says_so():
    truth, flags, strata = _calibration(80, 100, 10, 100)
    p = estimate_prevalence(truth, flags, strata, [True] * 5 + [False] * 95, resamples=500)
    assert p.rogan_gladen.raw < 0 and p.rogan_gladen.estimate == 0.0 and p.rogan_gladen.clipped
    assert p.rogan_gladen.low == 0.0


def test_refuses_a_judge_whose_sensitivity_plus_specificity_is_at_most_one():
    truth, flags, strata = _calibration(50, 100, 50, 100)  # se 0.5 + sp 0.5 = 1
    with pytest.raises(ValueError, match=r"sensitivity 0\.500 and specificity 0\.500"):
        estimate_prevalence(truth, flags, strata, [True, False], resamples=100)


def test_ppi_corrects_the_unlabelled_flag_rate_by_the_labelled_residual():
    # closed form: unlabelled flag rate 6/10 = 0.6; on 4 labelled, mean(label - flag) = (1 - 0 + 0 - 1 + 1 - 0 + 0 - 0) / 4 = 0.25
    truth, cflags, strata = _calibration(80, 100, 10, 100)
    flags = [True] * 6 + [False] * 4 + [False, True, False, False]
    labels = [None] * 10 + [True, False, True, False]
    p = estimate_prevalence(truth, cflags, strata, flags, labels=labels, resamples=500)
    assert p.ppi is not None and p.labelled == 4
    assert math.isclose(p.ppi.raw, 0.85)


def _pool():
    """The testbed's trajectories (a larger draw than the judged set: 200 clean, 100 of each type), their design
    cells, their kind (clean or the failure type) and the rule engine's flags on them."""
    from trajectory_judge.judges.programmatic import ProgrammaticJudge
    from trajectory_judge.testbed.dataset import generate

    trajs = generate(800, 11)
    judge = ProgrammaticJudge()
    return (
        np.asarray([t.label.faulty for t in trajs]),
        np.asarray([judge.judge(t).faulty for t in trajs]),
        [design_cell(t.label) for t in trajs],
        np.asarray([t.label.failure_type or "clean" for t in trajs]),
    )


def _coverage(draws: int, resamples: int, rate: float = 0.3, noise: float = 0.1, seed: int = 2026) -> float:
    """Share of ``draws`` in which the 95% interval holds ``rate``. Each draw: a fresh calibration set from the
    testbed (50 clean, 25 of each type), 300 traces each faulty with probability ``rate``, and the rule engine as
    the judge with every flag flipped with probability ``noise`` (so neither sensitivity nor specificity is 1)."""
    truth, rules, cells, kinds = _pool()
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
            [cells[j] for j in cal],
            flags[user],
            resamples=resamples,
            seed=int(rng.integers(1 << 31)),
        )
        covered += p.rogan_gladen.low <= rate <= p.rogan_gladen.high
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
    assert {"estimate", "low", "high", "clipped", "sensitivity", "specificity", "inputs", "assumes"} <= set(record)
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
    # unlabelled flag rate 19/38 = 0.5; labelled residuals (1 - 1) and (1 - 0): mean 0.5; PPI 1.0
    assert record["labelled"] == 2 and math.isclose(record["ppi"]["raw"], 19 / 38 + 0.5)
    assert "PPI" in capsys.readouterr().out


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
