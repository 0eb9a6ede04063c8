"""What the bootstrap resamples: the design's cells for a planted design, the trajectories of a sample, or whole
instances; a folder declares itself a design with ``design.json``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from trajectory_judge.analysis.core.bootstrap import Family, block_weights, bootstrap_families
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.analysis.core.resampling import folder_resampling
from trajectory_judge.cli import main
from trajectory_judge.models import DESIGN_FILE, Label, Observation, Step, ToolCall, Trajectory, Verdict, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def _traj(tid: str, instance: str, faulty: bool, loud: bool) -> Trajectory:
    steps = [
        Step(
            index=i,
            thought="t",
            call=ToolCall(tool="lookup_order", args={"i": i}),
            observation=Observation(ok=True, data={"i": i}),
        )
        for i in range(3)
    ]
    label = (
        Label(faulty=True, failure_step=1, failure_type="edits_unread_file", outcome_correct=not loud)
        if faulty
        else Label(faulty=False, outcome_correct=True)
    )
    return Trajectory(
        trajectory_id=tid, instance_id=instance, goal=f"g {tid}", steps=steps, final_answer="ok", label=label
    )


def sample_folder(tmp_path: Path, *, copies: int = 1, n: int = 26, seed: int = 3) -> Path:
    """``n`` runs of someone's agent labelled by hand (about two thirds faulty), each instance holding ``copies``
    trajectories alike in label and verdict, and a deterministic judge that is right four times in five."""
    rng = random.Random(seed)
    trajs, verdicts = [], []
    for i in range(n):
        faulty, loud = rng.random() < 0.65, rng.random() < 0.5
        right = rng.random() < 0.8
        for c in range(copies):
            t = _traj(f"run-{i:03d}-{c}", f"run-{i:03d}", faulty, loud)
            trajs.append(t)
            flag = faulty if right else not faulty
            verdicts.append(
                Verdict(trajectory_id=t.trajectory_id, judge_id="short-run:v1", faulty=flag, confidence=0.7)
            )
    tmp_path.mkdir(parents=True, exist_ok=True)
    write_jsonl(tmp_path / "trajectories.jsonl", trajs)
    write_jsonl(tmp_path / "verdicts.jsonl", verdicts)
    return tmp_path


def _report_json(folder: Path, *extra: str) -> dict:
    out = folder / "report.json"
    assert main(["report", "--data", str(folder), "--resamples", "2000", "--json", str(out), *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_folder_without_design_json_is_a_sample_and_every_f1_and_recall_gets_an_interval(tmp_path, capsys):
    folder = sample_folder(tmp_path)
    doc = _report_json(folder)
    assert doc["resampling"] == "trajectories" and "over trajectories" in capsys.readouterr().out
    judge = doc["judges"]["short-run:v1"]
    for m in ("f1", "silent_recall", "loud_recall", "false_alarm_rate"):
        iv = judge["intervals"][m]
        assert iv["method"] != "structural" and iv["low"] < iv["high"], (m, iv)


def test_the_design_s_intervals_are_given_only_when_asked_or_declared(tmp_path):
    folder = sample_folder(tmp_path)
    assert _report_json(folder, "--resample", "design")["resampling"] == "design"
    (folder / DESIGN_FILE).write_text(json.dumps({"design": "planted"}), encoding="utf-8")
    assert folder_resampling(folder) == "design" and _report_json(folder)["resampling"] == "design"
    assert folder_resampling(ROOT / "data") == "design"  # the testbed's own folder says what it is


def test_build_dataset_declares_its_folder_a_planted_design(tmp_path):
    assert main(["build-dataset", "--n", "16", "--seed", "7", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / DESIGN_FILE).read_text())["design"] == "planted"
    assert folder_resampling(tmp_path) == "design"


def test_a_design_json_that_is_not_a_declaration_is_one_line_naming_the_file(tmp_path, capsys):
    folder = sample_folder(tmp_path)
    (folder / DESIGN_FILE).write_text('{"design": "maybe"}', encoding="utf-8")
    assert main(["report", "--data", str(folder)]) == 2
    err = capsys.readouterr().err
    assert DESIGN_FILE in err and "design" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_instances_resampled_whole_widen_the_interval_of_runs_counted_several_times(tmp_path):
    folder = sample_folder(tmp_path, copies=4, n=40)
    widths = {}
    for how in ("trajectories", "instances"):
        iv = _report_json(folder, "--resample", how)["judges"]["short-run:v1"]["intervals"]["f1"]
        widths[how] = iv["high"] - iv["low"]
    assert widths["instances"] > 1.5 * widths["trajectories"]  # four copies are one run, not four: about twice


def test_a_cluster_draws_every_row_of_its_cluster_as_often_as_the_cluster():
    strata, clusters = ["all"] * 6, ["a", "a", "b", "c", "c", "c"]
    ((_, _, w),) = block_weights(strata, resamples=50, rng=np.random.default_rng(1), clusters=clusters)
    assert (w[:, 0] == w[:, 1]).all() and (w[:, 3] == w[:, 4]).all() and (w[:, 4] == w[:, 5]).all()
    assert (w[:, [0, 2, 3]].sum(axis=1) == 3).all()  # three clusters drawn per replicate


def test_a_cluster_bootstrap_gives_the_same_bits_at_any_block_size():
    rng = np.random.default_rng(0)
    data = np.column_stack([rng.integers(0, 2, 300), np.ones(300)])
    clusters = np.repeat(np.arange(100), 3)
    fam = Family(data, lambda s: s[..., :1] / s[..., 1:2])
    runs = [
        bootstrap_families([fam], strata=["all"] * 300, resamples=500, rng=5, batch=b, clusters=clusters)[0]
        for b in (1, 7, None)
    ]
    assert all(np.array_equal(r.distribution, runs[0].distribution) for r in runs)


def test_a_cluster_spanning_two_strata_is_refused():
    with pytest.raises(ValueError, match="one stratum"):
        list(block_weights(["x", "y"], resamples=3, rng=np.random.default_rng(0), clusters=["a", "a"]))


def test_the_library_default_stays_the_design_and_its_numbers(tmp_path):
    folder = sample_folder(tmp_path)
    from trajectory_judge.analysis.core.loading import load_data

    data = load_data(folder)
    default = build_report(data.trajectories, data.verdicts, resamples=300)
    design = build_report(data.trajectories, data.verdicts, resamples=300, resampling="design")
    assert default.resampling == "design" and default.to_json() == design.to_json()


# --- a design whose runs share a base: whole instances among their like ---------------------------------
def test_instances_of_a_design_are_drawn_among_their_like_so_every_replicate_keeps_the_clean_and_faulty_counts():
    from trajectory_judge.analysis.core.plan import make_plan
    from trajectory_judge.analysis.core.resampling import instance_makeup

    trajs = [
        _traj("a0", "a", False, False),
        _traj("a1", "a", True, True),
        _traj("a2", "a", True, False),
        _traj("b0", "b", False, False),
        _traj("b1", "b", True, True),
        _traj("b2", "b", True, False),
        _traj("c0", "c", False, False),
        _traj("d1", "d", True, False),
        _traj("e1", "e", True, True),
    ]
    verdicts = [Verdict(trajectory_id=t.trajectory_id, judge_id="x:v1", faulty=True, confidence=0.7) for t in trajs]
    plan = make_plan(trajs, verdicts)
    strata = plan.strata("design-instances")
    assert strata == instance_makeup([not t.label.faulty for t in trajs], [t.instance_id for t in trajs])
    assert strata[0] == "1 clean, 2 faulty" and strata[6] == "1 clean, 0 faulty" and strata[7] == "0 clean, 1 faulty"
    ((_, _, w),) = block_weights(strata, resamples=200, rng=np.random.default_rng(2), clusters=plan.instances)
    faulty = np.array([t.label.faulty for t in trajs])
    assert (w[:, faulty].sum(axis=1) == faulty.sum()).all() and (w[:, ~faulty].sum(axis=1) == (~faulty).sum()).all()
    assert (w[:, 0] == w[:, 1]).all() and (w[:, 3] == w[:, 5]).all()  # an instance is drawn whole
    assert len({tuple(r) for r in w[:, :6]}) > 1  # and the two alike instances are drawn in turn


def test_resample_instances_draws_whole_runs_of_a_sample_and_design_instances_within_their_make_up(tmp_path, capsys):
    folder = sample_folder(tmp_path, copies=3, n=30)
    assert _report_json(folder, "--resample", "instances")["resampling"] == "instances"
    design = _report_json(folder, "--resample", "design-instances")
    assert design["resampling"] == "design-instances"
    from trajectory_judge.analysis.core.resampling import METHOD

    assert METHOD["design-instances"] in capsys.readouterr().out  # the heading says so


def test_cluster_is_refused_in_one_line_that_names_the_resample_options_that_replace_it(tmp_path, capsys):
    folder = sample_folder(tmp_path, copies=3, n=30)
    assert main(["report", "--data", str(folder), "--cluster", "instance", "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("trajectory-judge report: error: --cluster instance is now ")
    assert "--resample instances" in err and "--resample design-instances" in err
    assert not (tmp_path / "r.json").exists()


def test_the_release_under_design_instances_gives_the_headline_auroc_delta_an_interval_of_its_own(release, tmp_path):
    out = {}
    for how in (("--resample", "design"), ("--resample", "design-instances")):
        path = tmp_path / f"{how[1]}.json"
        argv = ["report", "--data", str(release), "--statistics", "--resamples", "2000", "--json", str(path), *how]
        assert main(argv) == 0
        doc = json.loads(path.read_text(encoding="utf-8"))
        (d,) = [
            d
            for d in doc["statistic_deltas"]
            if d["metric"] == "auroc" and d["a"] == "outcome:qwen2.5:14b" and d["b"] == "step:qwen2.5:14b"
        ]
        out[doc["resampling"]] = d
    design, whole = out["design"], out["design-instances"]
    assert design["value"] == whole["value"] and (design["low"], design["high"]) != (whole["low"], whole["high"])
    assert whole["low"] > 0  # the paper's headline holds when whole base runs are drawn


# --- McNemar with the pairs of one run counted together ---------------------------------------------------
def test_clustered_mcnemar_with_one_pair_per_run_is_mcnemars_chi_squared_without_correction():
    from statsmodels.stats.contingency_tables import mcnemar

    from trajectory_judge.analysis.core.judge_statistics import clustered_mcnemar_p

    b, c = 14, 5
    fault_only, parent_only = [1] * b + [0] * c + [0] * 30, [0] * b + [1] * c + [0] * 30
    want = mcnemar([[10, c], [b, 20]], exact=False, correction=False).pvalue
    assert clustered_mcnemar_p(fault_only, parent_only) == pytest.approx(want, rel=1e-12)
    assert clustered_mcnemar_p([0, 0], [0, 0]) == 1.0


def test_discordant_pairs_bunched_in_few_runs_count_as_less_evidence():
    from trajectory_judge.analysis.core.judge_statistics import clustered_mcnemar_p

    spread = clustered_mcnemar_p([1] * 12 + [0] * 4, [0] * 12 + [1] * 4)  # 16 runs, one pair each
    bunched = clustered_mcnemar_p([6, 6, 0, 0], [0, 0, 2, 2])  # the same 12 and 4, in four runs
    assert spread < 0.05 < bunched


def test_mcnemar_pairs_count_the_runs_their_pairs_come_from_on_the_committed_data():
    from trajectory_judge.analysis.core.judge_statistics import mcnemar_pairs
    from trajectory_judge.analysis.core.loading import load_data

    data = load_data(ROOT / "data")
    m = mcnemar_pairs(data.trajectories, data.verdicts, "reply:qwen2.5-coder:1.5b")
    parents = {t.instance_id for t in data.trajectories if t.label.faulty}
    assert 0 < m.instances <= len(parents) and m.n > m.instances  # several faults share a parent
    assert m.pvalue_clustered > m.pvalue  # pairs of one run are not independent evidence


def test_the_clustered_mcnemar_is_not_given_when_too_few_runs_hold_a_discordant_pair(tmp_path):
    from trajectory_judge.analysis.core.judge_statistics import MIN_DISCORDANT_INSTANCES, mcnemar_pairs

    trajs, verdicts = [], []
    for i in range(MIN_DISCORDANT_INSTANCES + 2):
        parent, fault = _traj(f"c{i}", f"i{i}", False, False), _traj(f"f{i}", f"i{i}", True, True)
        trajs += [parent, fault]
        verdicts += [
            Verdict(trajectory_id=parent.trajectory_id, judge_id="x:v1", faulty=False, confidence=0.7),
            Verdict(trajectory_id=fault.trajectory_id, judge_id="x:v1", faulty=True, confidence=0.7),
        ]
    many = mcnemar_pairs(trajs, verdicts, "x:v1")
    few = mcnemar_pairs(trajs[: 2 * (MIN_DISCORDANT_INSTANCES - 1)], verdicts, "x:v1")
    assert many.pvalue_clustered < 0.05 and np.isnan(few.pvalue_clustered) and few.pvalue < 0.05
