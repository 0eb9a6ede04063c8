"""Bad verdicts never lock a folder: checked before they are written, costing one trajectory, and removable (run/forget.py)."""

from __future__ import annotations

import json

import pytest
from lock_holder import held_by_another_process

from trajectory_judge.cli import main
from trajectory_judge.models import Verdict, dumps, parse_jsonl, write_jsonl
from trajectory_judge.run.forget import FORGOTTEN, forget_verdicts
from trajectory_judge.run.runner import run_judges


class StepNinetyNine:
    """A Python judge that names a step no trajectory has."""

    judge_id = "ninety-nine"

    def judge(self, t):
        return Verdict(
            trajectory_id=t.trajectory_id,
            judge_id=self.judge_id,
            faulty=True,
            failure_step=99,
            failure_type="wrong_tool",
            confidence=0.9,
        )


class Flaky:
    """A Python judge that raises on every other trajectory until it is fixed."""

    judge_id = "flaky"

    def __init__(self, broken=True):
        self.broken, self.calls = broken, 0

    def judge(self, t):
        self.calls += 1
        if self.broken and self.calls % 2 == 0:
            raise KeyError("no such field")
        return Verdict(trajectory_id=t.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.7)


@pytest.fixture()
def folder(tmp_path, dataset):
    write_jsonl(tmp_path / "trajectories.jsonl", dataset[:8])
    return tmp_path


def test_a_verdict_naming_a_step_the_trajectory_lacks_is_stored_as_unparseable_and_report_still_runs(
    folder, dataset, capsys
):
    r = run_judges(dataset[:8], [StepNinetyNine()], folder / "verdicts.jsonl", progress=False, record=False)
    stored = parse_jsonl(folder / "verdicts.jsonl", Verdict)
    assert (r.written, r.failed, r.status) == (8, 8, "ok")
    assert all(
        v.unparseable and not v.faulty and v.failure_step is None and "failure_step: 99" in v.error for v in stored
    )
    assert main(["report", "--data", str(folder), "--resamples", "200"]) == 0
    assert "ninety-nine" in capsys.readouterr().out


def test_a_judge_that_raises_costs_that_trajectory_and_retry_judges_it_again(folder, dataset, capsys):
    path = folder / "verdicts.jsonl"
    r = run_judges(dataset[:8], [Flaky()], path, progress=False, record=False)
    assert (r.written, r.failed, r.status) == (8, 4, "ok")
    err = capsys.readouterr().err
    assert err.count("judge 'flaky' failed") == 1 and "KeyError" in err and "retry_unparseable=True" in err
    r2 = run_judges(dataset[:8], [Flaky(broken=False)], path, progress=False, record=False, retry_unparseable=True)
    assert (r2.retried, r2.written, r2.failed) == (4, 4, 0)
    assert not any(v.error for v in parse_jsonl(path, Verdict))
    assert len(parse_jsonl(folder / "retried.jsonl", Verdict)) == 4


def _plant(folder, dataset, verdict_lines):
    (folder / "verdicts.jsonl").write_text("".join(line + "\n" for line in verdict_lines))


def _v(t, judge_id, **kw):
    return dumps(Verdict(trajectory_id=t.trajectory_id, judge_id=judge_id, faulty=False, confidence=0.6, **kw))


def test_report_on_a_folder_holding_an_invalid_verdict_names_the_line_and_the_command_that_removes_it(
    folder, dataset, capsys
):
    bad = json.loads(_v(dataset[1], "mine"))
    bad.update(faulty=True, failure_step=99)
    _plant(folder, dataset, [_v(dataset[0], "mine"), json.dumps(bad)])
    assert main(["report", "--data", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "verdicts.jsonl:2" in err[0] and "failure_step: 99" in err[0]
    assert f"trajectory-judge forget --data {folder} --judge mine --trajectories {dataset[1].trajectory_id}" in err[0]
    # the command it names works, and then report does
    assert main(["forget", "--data", str(folder), "--judge", "mine", "--trajectories", dataset[1].trajectory_id]) == 0
    assert main(["report", "--data", str(folder), "--resamples", "200"]) == 0


def test_report_names_the_forget_command_for_a_line_that_fails_validation_too(folder, dataset, capsys):
    bad = json.loads(_v(dataset[1], "mine"))
    bad.update(confidence=7)
    _plant(folder, dataset, [_v(dataset[0], "mine"), json.dumps(bad)])
    assert main(["report", "--data", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "verdicts.jsonl:2" in err and "--judge mine --trajectories" in err and "Traceback" not in err


def test_forget_removes_one_judges_verdicts_keeping_a_backup_and_every_other_line(folder, dataset):
    lines = [_v(t, j) for t in dataset[:4] for j in ("mine", "theirs")]
    _plant(folder, dataset, lines)
    r = forget_verdicts(folder, "mine", [dataset[0].trajectory_id, dataset[2].trajectory_id])
    assert (r.verdicts, r.members) == (2, 0)
    kept = (folder / "verdicts.jsonl").read_text().splitlines()
    assert kept == [
        ln for ln in lines if not ('"mine"' in ln and any(t.trajectory_id in ln for t in (dataset[0], dataset[2])))
    ]
    assert sorted((folder / FORGOTTEN).read_text().splitlines() + kept) == sorted(lines)  # nothing lost
    r = forget_verdicts(folder, "mine")
    assert r.verdicts == 2 and all('"theirs"' in ln for ln in (folder / "verdicts.jsonl").read_text().splitlines())


def test_forgetting_an_ensemble_forgets_its_members(folder, dataset):
    _plant(folder, dataset, [_v(dataset[0], "selfcons3:m"), _v(dataset[0], "step:m")])
    members = [_v(dataset[0], f"step@T0.7/seed{s}:m") for s in (7, 8, 9)]
    others = [_v(dataset[0], "step@T0.7/seed7:other"), _v(dataset[0], "outcome@T0.7/seed7:m")]  # another model, view
    (folder / "members.jsonl").write_text("".join(m + "\n" for m in members + others))
    r = forget_verdicts(folder, "selfcons3:m")
    assert (r.verdicts, r.members) == (1, 3)
    assert (folder / "members.jsonl").read_text().splitlines() == others


def test_forget_of_a_judge_with_no_verdict_is_one_line_listing_the_judges(folder, dataset, capsys):
    _plant(folder, dataset, [_v(dataset[0], "mine")])
    assert main(["forget", "--data", str(folder), "--judge", "typo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no verdict of judge 'typo'" in err[0] and "judges there: mine" in err[0]


def test_forget_refuses_while_a_run_writes_the_folder(folder, dataset, capsys):
    _plant(folder, dataset, [_v(dataset[0], "mine")])
    before = (folder / "verdicts.jsonl").read_text()
    with held_by_another_process(folder):
        assert main(["forget", "--data", str(folder), "--judge", "mine"]) == 2
    assert "is being written by" in capsys.readouterr().err
    assert (folder / "verdicts.jsonl").read_text() == before


def test_forget_in_a_pinned_folder_is_refused_without_force_and_says_once_how_to_repin_with_it(folder, dataset, capsys):
    _plant(folder, dataset, [_v(t, "mine") for t in dataset[:2]])
    assert main(["forget", "--data", str(folder), "--judge", "mine"]) == 0
    assert "SHA256SUMS" not in capsys.readouterr().err  # no manifest, no note
    (folder / "SHA256SUMS").write_text("")
    _plant(folder, dataset, [_v(t, "mine") for t in dataset[:2]])
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert main(["forget", "--data", str(folder), "--judge", "mine"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pinned by" in err and "--force" in err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written
    assert main(["forget", "--data", str(folder), "--judge", "mine", "--force"]) == 0
    err = capsys.readouterr().err
    assert err.count("no longer pins") == 1 and "verdicts.jsonl" in err
    assert f"`trajectory-judge manifest --data {folder}`" in err


class Always:
    """A Python judge that judges every trajectory clean."""

    def __init__(self, judge_id):
        self.judge_id = judge_id

    def judge(self, t):
        return Verdict(trajectory_id=t.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.6)


def test_a_forgotten_judge_leaves_the_compute_table_and_the_runs_chapter_its_records_kept_in_forgotten(folder, dataset):
    from trajectory_judge.analysis.core.cost import compute_spent, read_run_records
    from trajectory_judge.book.chapters.runs import run_settings

    path = folder / "verdicts.jsonl"
    run_judges(dataset[:4], [Always("mine"), Always("theirs")], path, progress=False)
    run_judges(dataset[:4], [Always("mine")], path, progress=False)
    before = (folder / "runs.jsonl").read_text().splitlines()
    assert forget_verdicts(folder, "mine", [dataset[0].trajectory_id]).runs == 0  # it still has verdicts
    r = forget_verdicts(folder, "mine")
    assert (r.verdicts, r.runs) == (3, 2)
    records = read_run_records(folder)
    assert len(records) == 1 and records[0]["judges"] == ["theirs"] and records[0]["forgotten"] == ["mine"]
    assert records[0]["written"] == 4 and list(records[0]["per_judge"]) == ["theirs"]
    assert [row.task for row in compute_spent(folder).rows] == ["theirs · Python judge"]
    assert compute_spent(folder).rows[0].written == 4
    assert set(run_settings(folder)["judge"]) == {"theirs"}
    kept = (folder / FORGOTTEN).read_text().splitlines()
    assert set(before) <= set(kept)  # both records as they were, beside the verdicts


def test_forgetting_an_ensemble_drops_it_and_its_members_from_a_shared_run_record(folder, dataset):
    rec = {
        "judges": ["step:m", "selfcons3:m"],
        "members": {"selfcons3:m": [f"step@T0.7/seed{s}:m" for s in (7, 8, 9)]},
        "per_judge": {
            "step:m": {"verdicts": 1},
            "selfcons3:m": {"verdicts": 1},
            **{f"step@T0.7/seed{s}:m": {"verdicts": 1} for s in (7, 8, 9)},
        },
        "written": 5,
        "wall_s": 3.0,
    }
    (folder / "runs.jsonl").write_text(json.dumps(rec) + "\n")
    _plant(folder, dataset, [_v(dataset[0], "selfcons3:m"), _v(dataset[0], "step:m")])
    (folder / "members.jsonl").write_text("".join(_v(dataset[0], f"step@T0.7/seed{s}:m") + "\n" for s in (7, 8, 9)))
    assert forget_verdicts(folder, "selfcons3:m").runs == 1
    (left,) = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    assert (left["judges"], list(left["per_judge"]), left["written"], left["members"]) == (
        ["step:m"],
        ["step:m"],
        1,
        None,
    )
    assert left["wall_s"] == 3.0  # the time was spent


def test_a_python_judge_that_raises_keeps_the_traceback_in_its_error_and_the_run_counts_the_raises_once(
    folder, dataset, capsys
):
    path = folder / "verdicts.jsonl"
    r = run_judges(dataset[:8], [Flaky()], path, progress=False, record=False)
    assert (r.written, r.failed, r.raised) == (8, 4, 4)
    raised = [v for v in parse_jsonl(path, Verdict) if v.error]
    assert len(raised) == 4 and all(v.unparseable for v in raised)
    for v in raised:
        assert "KeyError: 'no such field'" in v.error and "Traceback (most recent call last)" in v.error
        assert "in judge" in v.error and "test_forget.py" in v.error  # the frame that raised
    err = capsys.readouterr().err
    assert err.count("4 verdicts raised; first: KeyError") == 1 and "Traceback" not in err


def test_a_python_judges_hint_is_run_judges_retry_never_the_run_command(folder, dataset, capsys):
    run_judges(dataset[:8], [Flaky()], folder / "verdicts.jsonl", progress=False)
    err = capsys.readouterr().err
    assert "retry_unparseable=True" in err and "--retry-unparseable" not in err
    assert main(["report", "--data", str(folder), "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "flaky 4 of 8" in out and "retry_unparseable=True" in out and "--retry-unparseable" not in out


def test_each_kind_of_judge_gets_the_retry_hint_that_works_for_it(dataset):
    from trajectory_judge.analysis.core.loading import unparseable_sentence

    bad = {"error": "unparseable verdict: no JSON"}
    vs = [Verdict.model_validate_json(_v(dataset[0], j, **bad)) for j in ("step:m", "outcome:inspect-m", "mine")]
    records = [{"backend": "openai", "judges": ["step:m"]}, {"backend": "inspect_ai", "judges": ["outcome:inspect-m"]}]
    text = unparseable_sentence(vs, records)
    for judge, hint in (
        ("step:m", "--retry-unparseable"),
        ("outcome:inspect-m", "inspect eval"),
        ("mine", "run_judges"),
    ):
        part = next(p for p in text.split("; ") if judge in p)
        assert hint in part, (judge, part)
    assert "--retry-unparseable" not in unparseable_sentence(vs[1:2], records)
