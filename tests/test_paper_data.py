"""The paper's data set: the release's verdicts on our trajectories, put in the release's order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajectory_judge.analysis.core.loading import load_paper_data
from trajectory_judge.book.paths import PAPER_DATA_ENV, paper_data_dir
from trajectory_judge.models import DataError, load_trajectories
from trajectory_judge.provenance.manifest import write_manifest

ROOT = Path(__file__).resolve().parents[1]

PAPER, OURS = ROOT / "data" / "release", ROOT / "data"


def test_paper_report_equals_the_report_of_the_full_release(paper_report, release_report):
    """Same metrics, intervals, deltas and gaps, bit for bit: the projection stands in for the release."""
    assert paper_report.to_json() == release_report.to_json()


def test_paper_trajectories_follow_the_release_order(release):
    paper = load_paper_data(PAPER, OURS)
    theirs = load_trajectories(release / "trajectories.jsonl")
    assert [t.trajectory_id for t in paper.trajectories] == [t.trajectory_id for t in theirs]


def test_paper_data_holds_five_judges_on_all_400():
    paper = load_paper_data(PAPER, OURS)
    assert len(paper.trajectories) == 400 and len(paper.verdicts) == 2000
    assert {v.judge_id for v in paper.verdicts} == {
        "programmatic",
        "outcome:qwen2.5:14b",
        "step:qwen2.5:14b",
        "step:llama3.1:8b",
        "selfcons3:qwen2.5:14b",
    }


def test_an_order_naming_an_unknown_trajectory_is_refused(tmp_path):
    d = tmp_path / "release"
    shutil.copytree(PAPER, d)
    lines = (d / "order.txt").read_text(encoding="utf-8").splitlines()
    (d / "order.txt").write_text("\n".join(["INS-99999-clean", *lines[1:]]) + "\n", encoding="utf-8")
    write_manifest(d)
    with pytest.raises(DataError, match="order.txt: lists other trajectories"):
        load_paper_data(d, OURS)


def test_a_changed_order_fails_its_checksum(tmp_path):
    d = tmp_path / "release"
    shutil.copytree(PAPER, d)
    lines = (d / "order.txt").read_text(encoding="utf-8").splitlines()
    (d / "order.txt").write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="checksum mismatch"):
        load_paper_data(d, OURS)


def test_paper_data_dir_defaults_to_data_release_and_follows_its_variable(monkeypatch, tmp_path):
    monkeypatch.delenv(PAPER_DATA_ENV, raising=False)
    assert paper_data_dir(ROOT) == PAPER.resolve()
    monkeypatch.setenv(PAPER_DATA_ENV, str(tmp_path))
    assert paper_data_dir(ROOT) == tmp_path.resolve()
    monkeypatch.setenv(PAPER_DATA_ENV, str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match=PAPER_DATA_ENV):
        paper_data_dir(ROOT)
