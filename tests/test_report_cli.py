"""`trajectory-judge report`, `misses`, `--version` and `--help`: what a user sees on the terminal."""

import json
import re
import subprocess
import sys

import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.core.baselines import baseline, baseline_sentence, baselines
from trajectory_judge.analysis.core.bootstrap import clopper_pearson
from trajectory_judge.analysis.core.comparisons import compared_pairs
from trajectory_judge.analysis.core.misses import find_mistakes
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.cli import main
from trajectory_judge.models import dumps


def _write(d, trajs, verdicts, runs=None):
    (d / "trajectories.jsonl").write_text("".join(dumps(t) + "\n" for t in trajs))
    (d / "verdicts.jsonl").write_text("".join(dumps(v) + "\n" for v in verdicts))
    if runs is not None:
        (d / "runs.jsonl").write_text(runs)
    return d


@pytest.fixture
def two_models(tmp_path):
    trajs = design(4)
    vs = [
        *random_verdicts(trajs, "outcome:m1", 1),
        *random_verdicts(trajs, "step:m1", 2),
        *random_verdicts(trajs, "outcome:m2", 3),
        *random_verdicts(trajs, "step:m2", 4),
    ]
    return _write(tmp_path, trajs, vs), trajs, vs


# --- baselines ---------------------------------------------------------------------------------
def test_flag_everything_scores_f1_0857_on_the_papers_design(dataset):
    # closed form 2F / (2F + C) with F = 300 faults, C = 100 clean runs (the 0.857)
    every = baseline(dataset, "flag everything")
    assert (every.n, every.faults) == (400, 300)
    assert every.metrics["f1"] == pytest.approx(600 / 700) and round(every.metrics["f1"], 3) == 0.857
    assert every.metrics["recall"] == every.metrics["silent_recall"] == every.metrics["false_alarm_rate"] == 1.0
    nothing = baseline(dataset, "flag nothing")
    assert nothing.metrics["f1"] == nothing.metrics["recall"] == nothing.metrics["false_alarm_rate"] == 0.0
    assert nothing.metrics["precision"] is None  # nothing flagged: undefined, not zero


def test_baseline_sentence_says_no_judge_beats_flagging_everything_when_none_does(dataset):
    text = baseline_sentence(baselines(dataset), {"programmatic": 0.8, "step:m": 0.75})
    assert "(300 faults, 100 clean runs)" in text and "F1 0.857" in text
    assert text.endswith("The F1 of both judges here is at or below that of flagging everything.")
    one = baseline_sentence(baselines(dataset), {"programmatic": 0.8, "step:m": 0.9, "reply:m": None})
    assert one.endswith("Of the 2 judges here, only step:m has an F1 above it.")


def test_report_prints_baselines_and_writes_them_to_json_and_markdown(two_models, capsys):
    d, trajs, _ = two_models
    assert (
        main(
            [
                "report",
                "--data",
                str(d),
                "--resamples",
                "50",
                "--json",
                str(d / "o" / "r.json"),
                "--markdown",
                str(d / "o" / "r.md"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "baseline: flag everything" in out and "baseline: flag nothing" in out
    doc = json.loads((d / "o" / "r.json").read_text())
    f = len([t for t in trajs if t.label.faulty])
    assert doc["baselines"]["flag everything"]["metrics"]["f1"] == round(2 * f / (2 * f + len(trajs) - f), 6)
    md = (d / "o" / "r.md").read_text()
    assert "## Baselines" in md and "| flag nothing |" in md and "a judge that flags every trajectory" in md


# --- the terminal: intervals and n ---------------------------------------------------------------
def test_terminal_shows_every_headline_metric_with_its_interval_and_n(two_models, capsys):
    d, trajs, _ = two_models
    assert main(["report", "--data", str(d), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("step:m1") and "(" in line)
    assert row.split()[1] == str(len(trajs))  # n
    assert (
        len(re.findall(r"\d\.\d{3}( \([−\d.]+(–| to )[−\d.]+\)|[‡†*])", row)) == 4
    )  # F1, silent, loud recall, false alarms
    intervals = next(line for line in out.splitlines() if line.startswith("Intervals:"))
    assert "95%" in intervals and "B = 50" in intervals and "seed 7" in intervals  # the level, --resamples, the seed


def test_terminal_writes_every_interval_as_the_book_does(two_models, capsys):
    from trajectory_judge.book.render.style import format_interval
    from trajectory_judge.cli.report import metric_cell

    d, trajs, verdicts = two_models
    rep = build_report(trajs, verdicts, resamples=50, seed=7)
    for j, jr in rep.judges.items():
        for m in ("f1", "silent_recall", "ece"):
            iv = jr.intervals.get(m)
            book = format_interval(
                jr.metrics[m], iv.low if iv else None, iv.high if iv else None, iv.method if iv else None
            )
            assert metric_cell(rep, j, m) == book  # one function writes both
    assert main(["report", "--data", str(d), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "[" not in out.split("Baselines")[0]  # no bracketed interval of the old terminal format


# --- paired deltas: only the compared pairs ------------------------------------------------------
def test_compared_pairs_are_views_of_one_model_and_one_view_across_models():
    judges = ["programmatic", "outcome:a", "step:a", "outcome:b", "step:b"]
    got = {(c.a, c.b, c.kind) for c in compared_pairs(judges)}
    assert got == {
        ("outcome:a", "step:a", "same model"),
        ("outcome:b", "step:b", "same model"),
        ("outcome:a", "outcome:b", "same view"),
        ("step:a", "step:b", "same view"),
    }
    ref = {(c.a, c.b) for c in compared_pairs(judges, "programmatic") if c.kind == "reference"}
    assert ref == {("programmatic", j) for j in judges[1:]}


def test_compared_pairs_grow_linearly_not_quadratically():
    judges = [f"{v}:model{k}" for k in range(5) for v in ("outcome", "step", "reply")]
    assert len(compared_pairs(judges)) == 5 * 3 + 3 * 10  # 45, not 105
    assert len(compared_pairs(judges, judges[0])) == 45 + 14 - 2 - 4  # outcome:model0 already pairs with 6


def test_report_cli_computes_deltas_only_for_compared_pairs(two_models, capsys):
    d, _, _ = two_models
    out = d / "r.json"
    assert main(["report", "--data", str(d), "--resamples", "30", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["pairs"] == "compared"
    assert {(x["a"], x["b"]) for x in doc["deltas"]} == {
        ("outcome:m1", "step:m1"),
        ("outcome:m2", "step:m2"),
        ("outcome:m1", "outcome:m2"),
        ("step:m1", "step:m2"),
    }
    assert main(["report", "--data", str(d), "--resamples", "30", "--json", str(out), "--reference", "step:m2"]) == 0
    doc = json.loads(out.read_text())
    assert ("step:m2", "outcome:m1") in {(x["a"], x["b"]) for x in doc["deltas"] if x["kind"] == "reference"}
    assert "step:m2" in capsys.readouterr().out


def test_compared_deltas_equal_the_all_pairs_deltas(two_models):
    _, trajs, vs = two_models
    vs = [v for v in vs if v.judge_id != "step:m2"] + random_verdicts(trajs, "step:m2", 4, coverage=0.7)  # a subset
    every = build_report(trajs, vs, resamples=200, seed=3)
    some = build_report(trajs, vs, resamples=200, seed=3, pairs="compared", batch=64)
    assert 0 < len(some.deltas) < len(every.deltas)
    assert all(0 < d.n < len(trajs) for d in some.deltas if "step:m2" in (d.a, d.b))  # scored on what both judged
    for d in some.deltas:
        assert every.delta(d.a, d.b, d.metric).value == pytest.approx(d.value)
        assert (every.delta(d.a, d.b, d.metric).low, every.delta(d.a, d.b, d.metric).high) == pytest.approx(
            (d.low, d.high)
        )


def test_unknown_reference_judge_is_one_line_listing_the_judges(two_models, capsys):
    d, _, _ = two_models
    assert main(["report", "--data", str(d), "--resamples", "10", "--reference", "step:nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    # the option and its value, and the judges to choose from
    assert "--reference 'step:nope'" in err and "outcome:m1, outcome:m2, step:m1, step:m2" in err


def test_clopper_pearson_equals_scipy_stats_beta_quantiles():
    # reference: the textbook definition through scipy.stats.beta.ppf (the previous implementation), bit for bit
    from scipy import stats

    alpha = 1 - 0.95
    for k, n in ((0, 100), (1, 50), (7, 61), (61, 61), (200, 228)):
        low, high = clopper_pearson(k, n)
        assert low == (0.0 if k == 0 else stats.beta.ppf(alpha / 2, k, n - k + 1))
        assert high == (1.0 if k == n else stats.beta.ppf(1 - alpha / 2, k + 1, n - k))


# --- runs.jsonl: torn tail and wrong shape -------------------------------------------------------
def test_report_reads_a_runs_file_with_a_torn_last_line(two_models, capsys):
    d, _, _ = two_models
    good = json.dumps({"judges": ["step:m1"], "judge_model_name": "m1", "wall_s": 3600.0})
    (d / "runs.jsonl").write_text(good + "\n" + good[:40])
    assert main(["report", "--data", str(d), "--resamples", "10"]) == 0
    cap = capsys.readouterr()
    assert f"{d / 'runs.jsonl'}:2: last line is incomplete" in cap.err and "ignored" in cap.err
    assert re.search(r"\b1 run\b[^\n]*\b1\.00 h\b", cap.out)  # the one whole record: one run, its 3600 s


def test_report_rejects_a_run_record_of_the_wrong_shape_naming_file_line_and_field(two_models, capsys):
    d, _, _ = two_models
    good = json.dumps({"judges": ["step:m1"], "wall_s": 1.0})
    (d / "runs.jsonl").write_text(good + "\n" + json.dumps({"judges": 5, "wall_s": 1.0}) + "\n")
    assert main(["report", "--data", str(d), "--resamples", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"trajectory-judge report: error: {d / 'runs.jsonl'}:2: ")
    assert "field 'judges'" in err and err.endswith("got 5\n")  # file, line, field and the value found
    (d / "runs.jsonl").write_text(json.dumps({"per_judge": {"step:m1": {"verdicts": "many"}}}) + "\n")
    assert main(["report", "--data", str(d), "--resamples", "10"]) == 2
    err = capsys.readouterr().err
    assert "runs.jsonl:1: " in err and "field 'per_judge.step:m1'" in err


def test_a_complete_bad_last_line_is_an_error_not_a_torn_line(two_models, capsys):
    d, _, _ = two_models
    (d / "runs.jsonl").write_text('{"wall_s": 1}\n{"wall_s": \n')  # ends with a newline: written whole, yet broken
    assert main(["report", "--data", str(d), "--resamples", "10"]) == 2
    assert "runs.jsonl:2: not valid JSON" in capsys.readouterr().err


# --- misses --------------------------------------------------------------------------------------
def test_misses_lists_faults_judged_clean_and_clean_runs_judged_faulty(two_models):
    _, trajs, vs = two_models
    found = find_mistakes(trajs, vs, "outcome:m1")
    mine = {v.trajectory_id: v for v in vs if v.judge_id == "outcome:m1"}
    labels = {t.trajectory_id: t.label for t in trajs}
    assert {m.trajectory.trajectory_id for m in found.misses} == {
        i for i, v in mine.items() if labels[i].faulty and not v.faulty
    }
    assert {m.trajectory.trajectory_id for m in found.false_alarms} == {
        i for i, v in mine.items() if not labels[i].faulty and v.faulty
    }
    assert all(m.seen.startswith("GOAL:") and "STEPS:" not in m.seen for m in found.misses)  # the outcome view
    assert len(found.to_frame()) == len(found.misses) + len(found.false_alarms)


def test_misses_shows_the_step_judge_its_steps(two_models, capsys):
    d, _, _ = two_models
    assert main(["misses", "--data", str(d), "--judge", "step:m1", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("step:m1 (step view) judged ")
    assert "what the judge saw:" in out and "  | STEPS:" in out and "verdict: " in out


def test_misses_json_has_every_mistake_with_label_verdict_and_view(two_models, capsys):
    d, _, vs = two_models
    assert main(["misses", "--data", str(d), "--judge", "step:m2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"judge_id", "view", "judged", "faults", "clean", "misses", "false_alarms"}
    assert doc["judged"] == len([v for v in vs if v.judge_id == "step:m2"])
    for m in doc["misses"]:
        assert m["label"]["faulty"] and not m["verdict"]["faulty"] and "STEPS:" in m["seen"]


def test_misses_of_an_unknown_judge_is_one_line_listing_the_judges_present(two_models, capsys):
    d, _, _ = two_models
    assert main(["misses", "--data", str(d), "--judge", "step:m3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"trajectory-judge misses: error: {d / 'verdicts.jsonl'}: ")
    assert "'step:m3'" in err and err.endswith("outcome:m1, step:m1, outcome:m2, step:m2\n")  # the judges present


def test_misses_says_none_when_a_judge_made_no_mistake(tmp_path, capsys):
    trajs = design(1)
    from analysis_synth import verdict

    vs = [verdict(t.trajectory_id, "step:m", t.label.faulty) for t in trajs]
    _write(tmp_path, trajs, vs)
    assert main(["misses", "--data", str(tmp_path), "--judge", "step:m"]) == 0
    out = capsys.readouterr().out
    faults = sum(t.label.faulty for t in trajs)
    assert f"none of its {faults} faults" in out and "no false alarm on its 1 clean run." in out  # one run, singular


# --- --version and --help ------------------------------------------------------------------------
def test_version_prints_the_package_version(capsys):
    from trajectory_judge import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == f"trajectory-judge {__version__}\n"


def test_help_imports_no_scipy_pandas_numpy_or_http_client():
    code = (
        "import sys; from trajectory_judge.cli import main\n"
        "try: main(['--help'])\nexcept SystemExit: pass\n"
        "print(sorted(m for m in ('scipy', 'pandas', 'numpy', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_misses_piped_into_a_reader_that_stops_early_exits_quietly(tmp_path):
    trajs = design(40)
    d = _write(tmp_path, trajs, random_verdicts(trajs, "step:m1", 1))  # about 200 kB of JSON: more than a pipe holds
    proc = subprocess.Popen(
        [sys.executable, "-m", "trajectory_judge.cli", "misses", "--data", str(d), "--judge", "step:m1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    assert proc.wait(timeout=60) == 0 and proc.stderr.read() == b""


def test_report_of_a_single_judge_says_there_is_no_pair_to_compare(tmp_path, capsys):
    trajs = design(2)
    d = _write(tmp_path, trajs, random_verdicts(trajs, "step:m", 1))
    assert main(["report", "--data", str(d), "--resamples", "10"]) == 0
    deltas = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Paired deltas:"))
    assert deltas.startswith("Paired deltas: none (") and "no such pair" in deltas  # none, and why


def test_build_report_refuses_a_pair_mode_or_pair_it_does_not_know():
    from trajectory_judge.analysis.core.plan import make_plan

    trajs = design(1)
    vs = random_verdicts(trajs, "step:m", 1) + random_verdicts(trajs, "outcome:m", 2)
    with pytest.raises(ValueError, match="got 'some'"):
        build_report(trajs, vs, resamples=5, pairs="some")
    with pytest.raises(ValueError, match="pairs='compared'"):
        build_report(trajs, vs, resamples=5, reference="step:m")
    with pytest.raises(ValueError, match="'step:m' with 'reply:m'"):
        make_plan(trajs, vs, [("step:m", "reply:m")])


def test_baselines_on_a_design_without_clean_runs_say_what_is_undefined():
    faults = [t for t in design(1) if t.label.faulty]
    every = baseline(faults, "flag everything")
    assert every.metrics["false_alarm_rate"] is None and every.metrics["f1"] == 1.0
    text = baseline_sentence(baselines(faults), {"step:m": 0.5})
    assert "(6 faults, 0 clean runs)" in text and "at a false-alarm rate of n/a" in text


def test_python_judges_sharing_a_name_are_not_compared_as_one_model_or_one_view():
    from trajectory_judge.analysis.core.comparisons import compared_pairs

    pairs = {(c.a, c.b) for c in compared_pairs(["step:m", "length:m", "length:v2", "outcome:m"])}
    assert pairs == {("step:m", "outcome:m")}, pairs  # 'length:m' is a Python judge, not the model m


def _flagger(trajs, judge):
    from trajectory_judge.models import Verdict

    return [
        Verdict(
            trajectory_id=t.trajectory_id,
            judge_id=judge,
            faulty=True,
            confidence=1.0,
            latency_s=0.0,
            prompt_tokens=0,
            completion_tokens=0,
        )
        for t in trajs
    ]


def test_a_flag_everything_judge_on_part_of_the_design_is_read_at_its_own_anchor(tmp_path, capsys):
    trajs = design(10)
    faults = [t for t in trajs if t.label.faulty][:30]
    clean = [t for t in trajs if not t.label.faulty][:2]
    verdicts = [*_flagger(faults + clean, "py:flagger"), *random_verdicts(trajs, "step:m", 5)]
    d = _write(tmp_path, trajs, verdicts)
    rep = build_report(trajs, verdicts, resamples=50)
    reading = rep.anchor_reading()
    assert round(reading.f1["py:flagger"], 3) == round(reading.anchor["py:flagger"], 3) == 0.968
    assert "py:flagger" not in reading.above and set(reading.own) == {"py:flagger"}
    # the design's anchor is lower: the old comparison called this judge better than flagging everything
    assert round(flag_everything_f1(rep.baselines), 3) == round(120 / 130, 3) < 0.968
    assert rep.anchors_frame().loc["py:flagger", "above"] == False  # noqa: E712 (a numpy bool)
    assert main(["report", "--data", str(d), "--resamples", "50", "--json", str(tmp_path / "o" / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "flag everything on py:flagger's" in out and "only py:flagger" not in out
    doc = json.loads((tmp_path / "o" / "r.json").read_text())
    own = doc["judges"]["py:flagger"]["baselines"]["flag everything"]
    assert (own["n"], own["faults"], round(own["metrics"]["f1"], 3)) == (32, 30, 0.968)
    assert doc["judges"]["step:m"]["baselines"]["flag everything"]["n"] == len(trajs)


def flag_everything_f1(rows):
    return next(b for b in rows if b.flags).metrics["f1"]
