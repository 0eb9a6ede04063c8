"""A confidence threshold with a guarantee on the error rate of the verdicts it keeps (``analysis/statistics/abstention.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from trajectory_judge.analysis.core.loading import load_data
from trajectory_judge.analysis.core.plan import make_plan
from trajectory_judge.analysis.statistics.abstention import abstention, certify, fewest_testable
from trajectory_judge.cli import main
from trajectory_judge.models import Label, Verdict

ROOT = Path(__file__).resolve().parents[1]
GROUPS = np.array([0.97, 0.9, 0.8, 0.7])
"""A calibrated judge: a verdict stated at confidence c is right with chance c, each confidence as common."""


def _pairs(rng: np.random.Generator, n: int) -> list[tuple[Label, Verdict]]:
    conf = rng.choice(GROUPS, size=n)
    right = rng.random(n) < conf
    faulty = rng.random(n) < 0.5
    out = []
    for i, (c, r, f) in enumerate(zip(conf, right, faulty, strict=True)):
        lab = Label(
            faulty=bool(f),
            failure_step=0 if f else None,
            failure_type="wrong_tool" if f else None,
            outcome_correct=True,
        )
        out.append((lab, Verdict(trajectory_id=f"t{i}", judge_id="step:m", faulty=bool(f == r), confidence=float(c))))
    return out


def _true_risk(threshold: float | None) -> float:
    kept = GROUPS[threshold <= GROUPS] if threshold is not None else GROUPS[:0]
    return float(np.mean(1 - kept)) if len(kept) else 0.0


@pytest.mark.slow  # a simulation of the guarantee over 400 draws
def test_the_certified_threshold_misses_its_error_rate_no_more_often_than_delta_where_reading_the_sample_does_not():
    # the thresholds 0.97 and 0.9 keep a true error rate of 0.03 and 0.065; 0.8 keeps 0.11, over alpha = 0.1
    rng = np.random.default_rng(11)
    missed = naive_missed = certified = 0
    draws = 400
    for _ in range(draws):
        pairs = _pairs(rng, 300)
        t = certify("j", pairs, alpha=0.1, delta=0.05)
        missed += _true_risk(t.threshold) > 0.1
        certified += t.threshold is not None
        # the tempting rule: the lowest threshold whose kept verdicts are wrong at most 10% of the time here
        naive = min(
            (c for c in GROUPS if np.mean([lab.faulty != v.faulty for lab, v in pairs if v.confidence >= c]) <= 0.1),
            default=None,
        )
        naive_missed += _true_risk(naive) > 0.1
    assert missed / draws <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws)
    assert naive_missed / draws > 0.2  # the guarantee is what the fixed sequence adds
    assert certified / draws > 0.5  # and it certifies a threshold in most draws


def test_a_handful_of_surest_verdicts_too_few_to_pass_does_not_stop_the_sequence():
    rng = np.random.default_rng(5)
    pairs = _pairs(rng, 400)
    top = pairs[0][1].model_copy(update={"confidence": 0.999})
    t = certify("j", [(pairs[0][0], top), *pairs[1:]])
    assert fewest_testable(0.1, 0.05) == 29 and 0.9**29 <= 0.05 < 0.9**28
    assert t.threshold is not None and t.threshold < 0.999  # one verdict alone could never pass: it is not tried


def test_no_threshold_is_certified_when_even_the_surest_verdicts_are_too_often_wrong():
    rng = np.random.default_rng(3)
    pairs = [(lab, v.model_copy(update={"faulty": not v.faulty})) for lab, v in _pairs(rng, 100)]  # 3 in 4 wrong
    t = certify("j", pairs)
    assert t.threshold is None and t.kept == 0 and t.p_value > 0.05 and np.isnan(t.risk)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        certify("j", pairs, alpha=0.0)


def test_every_judges_threshold_keeps_an_error_rate_under_alpha_on_the_labelled_runs():
    data = load_data(ROOT / "data")
    plan = make_plan(data.trajectories, data.verdicts, [])
    res = abstention(plan.labels, plan.verdicts, alpha=0.2)
    assert list(res.to_frame().index) == list(plan.judges)
    assert any(t.threshold is not None for t in res.judges) and any(t.threshold is None for t in res.judges)
    for t in res.judges:
        if t.threshold is not None:
            assert t.risk <= 0.2 and t.p_value <= 0.05 and 0 < t.coverage <= 1


def test_report_abstain_prints_each_judges_threshold_and_writes_it_in_the_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["report", "--data", str(ROOT / "data"), "--resamples", "200", "--abstain", "0.2", "--json", str(out)]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert "wrong at most 0.2 of the time" in said
    doc = json.loads(out.read_text())["abstention"]
    assert doc["alpha"] == 0.2 and doc["delta"] == 0.05
    assert all({"threshold", "kept", "n", "coverage", "risk", "p_value"} <= set(v) for v in doc["judges"].values())
    assert main(["report", "--data", str(ROOT / "data"), "--abstain", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "--abstain" in err and len(err.strip().splitlines()) == 1
