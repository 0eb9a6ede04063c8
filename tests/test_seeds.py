"""Seed variance: ensemble members re-derive their ensemble, score as judges, and their agreement is measured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.core.confusion import confusion_statistics, flag_counts
from trajectory_judge.analysis.statistics.seeds import (
    check_ensembles,
    fleiss_kappa,
    load_members,
    parse_member_id,
    seed_variance,
)
from trajectory_judge.judges.selfcons import aggregate
from trajectory_judge.models import DataError, write_jsonl

MODEL = "m:1b"
IDS = [f"step@T0.7/seed{s}:{MODEL}" for s in (7, 8, 9)]


def members_and_ensembles(trajs):
    members = [v for i, mid in enumerate(IDS) for v in random_verdicts(trajs, mid, seed=i)]
    by = {(v.trajectory_id, v.judge_id): v for v in members}
    ens = [
        aggregate([by[(t.trajectory_id, m)] for m in IDS], trajectory_id=t.trajectory_id, judge_id=f"selfcons3:{MODEL}")
        for t in trajs
    ]
    return members, ens


def test_member_ids_name_view_temperature_seed_and_model():
    s = parse_member_id("step@T0.7/seed8:qwen2.5-coder:1.5b")
    assert (s.view, s.temperature, s.seed, s.model) == ("step", 0.7, 8, "qwen2.5-coder:1.5b")
    with pytest.raises(ValueError, match="is not a member id"):
        parse_member_id("step:qwen2.5-coder:1.5b")


def test_fleiss_kappa_matches_the_worked_example():
    # the worked example of Fleiss (1971) as reproduced on Wikipedia ("Fleiss' kappa"): 10 subjects,
    # 14 raters, 5 categories; kappa = 0.210
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    ratings = np.array([[c for c, n in enumerate(row) for _ in range(n)] for row in counts])
    assert fleiss_kappa(ratings) == pytest.approx(0.210, abs=5e-4)


def cohen_kappa(a, b) -> float:
    return float(confusion_statistics(*flag_counts(a, b))["kappa"])


def test_cohen_kappa_matches_the_worked_example():
    # Wikipedia "Cohen's kappa": 50 items, 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> p_o 0.7, p_e 0.5, kappa 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_identical_raters_agree_perfectly():
    r = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1]])
    assert fleiss_kappa(r) == pytest.approx(1.0) and cohen_kappa(r[:, 0], r[:, 1]) == pytest.approx(1.0)


def test_every_ensemble_verdict_is_rederived_from_its_members():
    trajs = design(4)
    members, ens = members_and_ensembles(trajs)
    (check,) = check_ensembles(ens, members)
    assert check.members == tuple(IDS) and check.complete == len(trajs) == check.same
    assert check.different == () and check.without_ensemble == ()


def test_samples_of_the_outcome_view_are_not_checked_as_the_step_ensemble_of_their_model():
    trajs = design(2)
    members, ens = members_and_ensembles(trajs)
    outcome = [v for s in (7, 8, 9) for v in random_verdicts(trajs, f"outcome@T0.7/seed{s}:{MODEL}", seed=s)]
    (check,) = check_ensembles(ens, members + outcome)  # selfcons3 is the step view's ensemble only
    assert check.members == tuple(IDS) and check.same == len(trajs)


def test_samples_of_a_prompt_of_ones_own_re_derive_their_own_ensemble_apart_from_the_built_in_one():
    trajs = design(3)
    members, ens = members_and_ensembles(trajs)
    own_ids = [f"step+rubric@T0.7/seed{s}:{MODEL}" for s in (7, 8, 9)]
    own = [v for i, m in enumerate(own_ids) for v in random_verdicts(trajs, m, seed=10 + i)]
    by = {(v.trajectory_id, v.judge_id): v for v in own}
    own_ens = [
        aggregate(
            [by[(t.trajectory_id, m)] for m in own_ids],
            trajectory_id=t.trajectory_id,
            judge_id=f"selfcons3+rubric:{MODEL}",
        )
        for t in trajs
    ]
    checks = {c.ensemble: c for c in check_ensembles(ens + own_ens, members + own)}
    assert set(checks) == {f"selfcons3:{MODEL}", f"selfcons3+rubric:{MODEL}"}
    assert checks[f"selfcons3:{MODEL}"].members == tuple(IDS)  # the built-in members only
    assert checks[f"selfcons3+rubric:{MODEL}"].members == tuple(own_ids)
    assert all(c.same == len(trajs) and not c.different for c in checks.values())
    # the seeds of the prompt's ensemble are scored beside the single pass of the same prompt
    greedy = [*random_verdicts(trajs, f"step:{MODEL}", seed=5), *random_verdicts(trajs, f"step+rubric:{MODEL}", seed=6)]
    sv = seed_variance(trajs, greedy, own, resamples=200, seed=1)
    assert sv.members == tuple(own_ids) and sv.greedy == f"step+rubric:{MODEL}"
    sv = seed_variance(trajs, greedy, members + own, resamples=200, seed=1)  # the built-in prompt's members first
    assert sv.members == tuple(IDS) and sv.greedy == f"step:{MODEL}"


def test_seed_variance_of_outcome_samples_sets_them_beside_the_greedy_outcome_judge():
    trajs = design(4)
    ids = [f"outcome@T0.7/seed{s}:{MODEL}" for s in (7, 8, 9)]
    members = [v for i, m in enumerate(ids) for v in random_verdicts(trajs, m, seed=i)]
    greedy = [*random_verdicts(trajs, f"outcome:{MODEL}", seed=5), *random_verdicts(trajs, f"step:{MODEL}", seed=6)]
    sv = seed_variance(trajs, greedy, members, resamples=200, seed=1)
    assert sv.members == tuple(ids) and sv.greedy == f"outcome:{MODEL}"


def test_an_ensemble_verdict_its_members_do_not_give_is_reported():
    trajs = design(2)
    members, ens = members_and_ensembles(trajs)
    ens[0] = ens[0].model_copy(update={"faulty": not ens[0].faulty, "failure_type": None, "failure_step": None})
    (check,) = check_ensembles(ens[:-1], members)
    assert check.different == (trajs[0].trajectory_id,) and check.without_ensemble == (trajs[-1].trajectory_id,)


def test_run_records_say_how_many_committed_ensembles_came_out_the_same_when_sampled_again():
    from trajectory_judge.book.chapters.seeds import determinism_sentence

    trajs = design(3)
    members, ens = members_and_ensembles(trajs)
    ensemble = ens[0].judge_id
    runs = [
        {"rechecked": {}},
        {"rechecked": {ensemble: {"same": 2, "different": 0}}},
        {"rechecked": {ensemble: {"same": 0, "different": 1}}},
    ]
    (check,) = check_ensembles(ens, members, runs)
    assert (check.rerun_same, check.rerun_different) == (2, 1)
    text = determinism_sentence(check)
    assert "3 trajectories" in text and "2 came out identical and 1 did not" in text
    (fresh,) = check_ensembles(ens, members)
    assert "does not test determinism" in determinism_sentence(fresh)
    assert check.to_frame().loc[ensemble, "rerun different"] == 1


def test_seed_variance_scores_each_seed_and_sets_its_spread_beside_one_seeds_interval():
    trajs = design(6)
    members, ens = members_and_ensembles(trajs)
    greedy = random_verdicts(trajs, f"step:{MODEL}", seed=42)
    sv = seed_variance(trajs, greedy + ens, members, resamples=500, seed=1)
    frame = sv.to_frame()
    assert sv.members == tuple(IDS) and sv.greedy == f"step:{MODEL}" and sv.n == len(trajs)
    assert list(frame.index)[:4] == ["f1", "silent_recall", "loud_recall", "false_alarm_rate"]
    seeds = frame[IDS]
    assert np.allclose(frame["range"], seeds.max(axis=1) - seeds.min(axis=1), equal_nan=True)
    assert (frame["interval_width"].dropna() > 0).all()
    assert 0 <= sv.agreement.all_agree <= sv.n and len(sv.agreement.cohen_kappa) == 3


def test_seed_variance_uses_only_trajectories_every_seed_judged():
    trajs = design(4)
    members, _ = members_and_ensembles(trajs)
    dropped = trajs[0].trajectory_id
    members = [v for v in members if not (v.trajectory_id == dropped and v.judge_id == IDS[1])]
    sv = seed_variance(trajs, [], members, resamples=200)
    assert sv.n == len(trajs) - 1 and sv.greedy is None


def test_data_without_members_has_no_seed_variance(tmp_path):
    assert load_members(tmp_path) == []
    assert seed_variance(design(1), [], []) is None


def test_a_member_file_with_a_non_member_id_is_an_error(tmp_path):
    write_jsonl(tmp_path / "members.jsonl", random_verdicts(design(1), "step:m", seed=0))
    with pytest.raises(DataError, match=r"members\.jsonl: 'step:m'"):  # the file and the id it holds
        load_members(tmp_path)


def test_report_shows_each_member_judge_and_the_rederivation(tmp_path, capsys):
    from trajectory_judge.cli import main

    trajs = design(2)
    members, ens = members_and_ensembles(trajs)
    write_jsonl(tmp_path / "trajectories.jsonl", trajs)
    write_jsonl(tmp_path / "verdicts.jsonl", ens)
    write_jsonl(tmp_path / "members.jsonl", members)
    assert main(["report", "--data", str(tmp_path), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert all(f"{m} {len(trajs)}" in " ".join(out.split()) for m in IDS)
    assert f"3 members on {len(trajs)} trajectories: {len(trajs)} same" in out and "0 different" in out


def test_seed_figure_draws_every_seed_inside_its_own_interval_and_the_greedy_judge_beside_them():
    import matplotlib

    matplotlib.use("Agg")
    from trajectory_judge.book.chapters.seeds import METRIC_LABELS, quality_metrics, seed_figure
    from trajectory_judge.book.render.figures import show

    trajs = design(6)
    members, ens = members_and_ensembles(trajs)
    greedy = random_verdicts(trajs, f"step:{MODEL}", seed=42)
    sv = seed_variance(trajs, greedy + ens, members, resamples=300, seed=1)
    for j in [*sv.members, sv.greedy]:
        ok = sv.values[j].isna() | ((sv.lows[j] <= sv.values[j] + 1e-12) & (sv.values[j] <= sv.highs[j] + 1e-12))
        assert ok.all(), j
    fig = seed_figure(sv)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [METRIC_LABELS[m] for m in quality_metrics(sv).index]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [  # one legend, above the data
        "Seed 7 (T = 0.7)",
        "Seed 8 (T = 0.7)",
        "Seed 9 (T = 0.7)",
        "Greedy step (T = 0)",
    ]
    a, b = show(fig, alt="seeds").svg, show(seed_figure(sv), alt="seeds").svg
    assert a == b and "<title>seeds</title>" in a


def test_landing_page_sentence_on_seeds_is_computed_and_says_so_without_members():
    from trajectory_judge.book.chapters.seeds import summary_sentence

    trajs = design(6)
    members, ens = members_and_ensembles(trajs)
    sv = seed_variance(trajs, ens, members, resamples=200, seed=1)
    text = summary_sentence(sv)
    assert f"same flag on {sv.agreement.all_agree} of {sv.n} trajectories" in text
    assert f"Fleiss' kappa {sv.agreement.fleiss_kappa:.2f}" in text
    assert "not measured" in summary_sentence(None)


@pytest.mark.slow  # executes a whole chapter
def test_a_users_own_selfcons_run_gets_the_seed_chapter_for_free(tmp_path):
    """Run the self-consistency judge of a made-up model on a prefix of the trajectories, through the
    real runner, then execute the chapter on that data: every seed is scored and glued."""
    import hashlib
    import shutil

    import nbformat
    from llm_fakes import ScriptedClient, response

    from trajectory_judge.book.building import execute_notebooks as execute
    from trajectory_judge.judges.selfcons import SelfConsistencyJudge
    from trajectory_judge.models import Trajectory, parse_jsonl
    from trajectory_judge.provenance.manifest import write_manifest
    from trajectory_judge.run.runner import run_judges

    class SeededClient(ScriptedClient):
        def complete(self, prompt, schema, *, temperature, seed):
            h = hashlib.sha256(f"{seed}|{prompt}".encode()).digest()[0]
            self.texts = [response(h % 3 == 0, 2 if h % 3 == 0 else None, "wrong_tool" if h % 3 == 0 else "none")]
            return super().complete(prompt, schema, temperature=temperature, seed=seed)

    repo = Path(__file__).resolve().parents[1]
    data = tmp_path / "data"
    data.mkdir()
    trajs = parse_jsonl(repo / "data" / "trajectories.jsonl", Trajectory)[:24]
    write_jsonl(data / "trajectories.jsonl", trajs)
    run_judges(trajs, [SelfConsistencyJudge(SeededClient(), "my-model:7b")], data / "verdicts.jsonl", progress=False)
    write_manifest(data)
    md = tmp_path / "seeds.md"
    shutil.copy(repo / "notebooks" / "seeds.md", md)
    assert execute.main(["execute", str(md), "--data", str(data)]) == 0
    nb = nbformat.read(tmp_path / "seeds.ipynb", as_version=4)
    glued = {
        o["metadata"]["scrapbook"]["name"]: o["data"]["application/papermill.record/text/plain"].strip("'\"")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("metadata", {}).get("scrapbook")
    }
    assert glued["n_seeds"] == "24" and glued["n_complete"] == "24"
    assert "no greedy step judge" in glued["scored_text"]
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", []))
    assert "Seed 7" in html and "Seed 9" in html and "No ensemble members" not in html


def test_votes_count_every_trajectory_once_in_its_stratum_by_how_many_seeds_flag_it():
    from trajectory_judge.book.chapters.seeds import votes_sentence, votes_table
    from trajectory_judge.models import stratum

    trajs = design(6)
    members, ens = members_and_ensembles(trajs)
    sv = seed_variance(trajs, ens, members, resamples=200, seed=1)
    votes = sv.agreement.votes
    flags = {(v.trajectory_id, v.judge_id): v.faulty for v in members}
    for t in trajs:
        k = sum(flags[(t.trajectory_id, m)] for m in IDS)
        assert votes.loc[stratum(t.label), k] >= 1
    assert int(votes.to_numpy().sum()) == len(trajs) == sv.n
    assert int(votes[0].sum() + votes[3].sum()) == sv.agreement.all_agree
    table = votes_table(sv)
    assert list(table.columns) == ["No seed", "1 seed", "2 seeds", "All 3 seeds", "Trajectories"]
    assert list(table.index) == ["Clean runs", "Silent faults", "Loud faults"]
    clean = int(votes.loc["clean"].sum())
    assert votes_sentence(sv).startswith(f"Of the {clean} clean run")


def test_greedy_sentence_counts_the_metrics_where_the_greedy_judge_leaves_the_seeds_range():
    from trajectory_judge.book.chapters.seeds import greedy_sentence, quality_metrics

    trajs = design(6)
    members, ens = members_and_ensembles(trajs)
    greedy = random_verdicts(trajs, f"step:{MODEL}", seed=42)
    sv = seed_variance(trajs, greedy + ens, members, resamples=200, seed=1)
    q = quality_metrics(sv)
    seeds = q[list(sv.members)]
    outside = int(((q[sv.greedy] < seeds.min(axis=1)) | (q[sv.greedy] > seeds.max(axis=1))).sum())
    assert f"range on {outside} of the {len(q)} quality metrics" in greedy_sentence(sv)
    no_greedy = seed_variance(trajs, ens, members, resamples=200, seed=1)
    assert no_greedy.greedy is None
    assert greedy_sentence(no_greedy).endswith(
        "cannot be computed: the folder holds no greedy step judge of the same model on these trajectories."
    )


def test_paired_seed_differences_come_from_the_shared_resamples_and_are_counted_when_they_exclude_zero():
    from trajectory_judge.book.chapters.seeds import delta_sentence, quality_metrics, seed_delta_table

    trajs = design(6)
    members, ens = members_and_ensembles(trajs)
    sv = seed_variance(trajs, ens, members, resamples=300, seed=1)
    d = sv.deltas
    assert set(zip(d["a"], d["b"])) == {(IDS[0], IDS[1]), (IDS[0], IDS[2]), (IDS[1], IDS[2])}
    for row in d.itertuples():
        assert row.value == pytest.approx(sv.values.loc[row.metric, row.b] - sv.values.loc[row.metric, row.a])
        assert row.low <= row.value + 1e-12 <= row.high + 2e-12
    table = seed_delta_table(sv)
    assert list(table.columns) == ["Seed 8 − Seed 7", "Seed 9 − Seed 7", "Seed 9 − Seed 8"]
    assert len(table) == len(quality_metrics(sv))
    n = len(d[d["metric"].isin(quality_metrics(sv).index)])
    away = len(sv.differing(quality_metrics(sv).index))
    text = delta_sentence(sv)
    assert (f"{away} of the {n} paired differences" in text) if away else text.startswith(f"None of the {n}")
