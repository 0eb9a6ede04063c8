"""The book on folders the testbed's construction does not hold for: answers that do not parse, a judge that
answers one input two ways, and another domain's runs with fault types of their own.

The folders are built by ``tests/book_folders.py`` (``garbled``, ``unsteady``, their merge ``noisy``, and ``coding``).
The fast tests call the chapters' helpers and the verbs on them; the slow ones execute the chapters on ``coding`` and
``noisy``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from book_folders import CODING_TYPES, FOLDERS, LazyFolders, coding_trajectories

from trajectory_judge.analysis.core.loading import absent_parts, load_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.cli import main
from trajectory_judge.models import (
    SCHEMA_VERSION,
    TESTBED_FAILURE_TYPES,
    DataError,
    Label,
    folder_types,
    load_fault_types,
    load_trajectories,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    return LazyFolders(tmp_path_factory.mktemp("foreign"))  # the stand-in folders only when a test asks


@pytest.fixture()
def in_book(monkeypatch):
    monkeypatch.chdir(ROOT / "notebooks")
    return monkeypatch


def _report(folder: Path):
    data = load_data(folder)
    return data, build_report(data.trajectories, data.verdicts, resamples=200, seed=7)


# --- the schema: fault types of one's own -----------------------------------------------------------
def test_a_failure_type_is_any_name_of_letters_digits_underscore_and_dash():
    lab = Label(faulty=True, failure_step=0, failure_type="claims_tests_pass_unrun", outcome_correct=True)
    assert lab.failure_type == "claims_tests_pass_unrun" and SCHEMA_VERSION == 2
    assert Label(faulty=True, failure_step=0, failure_type="Edit-2", outcome_correct=False).failure_type == "Edit-2"
    for bad in ("", "wrong tool", "type/1"):
        with pytest.raises(ValueError, match="failure_type"):
            Label(faulty=True, failure_step=0, failure_type=bad, outcome_correct=True)


def test_version_one_files_load_unchanged_under_version_two():
    trajs = load_trajectories(ROOT / "data" / "trajectories.jsonl")  # the testbed's own, written as version 1
    assert folder_types(trajs) == TESTBED_FAILURE_TYPES and len(trajs) == 400


def test_a_folder_is_grouped_by_its_own_types_not_the_testbeds():
    trajs = coding_trajectories()
    assert folder_types(trajs) == ("claims_tests_pass_unrun", "edits_unread_file", "skips_lint")
    parts = absent_parts(trajs)
    assert not any("wrong_tool" in p for p in parts)  # the testbed's types are no gap of someone else's folder
    assert any("labelled by outcome only" in p for p in parts)


def test_fault_types_json_is_read_and_a_bad_one_is_refused_naming_the_file(tmp_path, folders):
    assert load_fault_types(folders["coding"]) == CODING_TYPES
    assert load_fault_types(tmp_path) == {}
    (tmp_path / "fault_types.json").write_text(json.dumps({"bad name": "x"}), encoding="utf-8")
    with pytest.raises(DataError, match=r"fault_types.json: 'bad name'"):
        load_fault_types(tmp_path)
    (tmp_path / "fault_types.json").write_text(json.dumps({"ok": ""}), encoding="utf-8")
    with pytest.raises(DataError, match="must be one non-empty line"):
        load_fault_types(tmp_path)


# --- the verbs on another domain ----------------------------------------------------------------------
def test_check_lists_the_folders_types_and_warns_of_a_type_seen_once(folders, capsys):
    assert main(["check", str(folders["coding"])]) == 0
    out, err = capsys.readouterr()
    assert "failure types: claims_tests_pass_unrun (7), edits_unread_file (7), skips_lint (1), outcome only (4)" in out
    assert err.count("seen once") == 1 and "'skips_lint'" in err


def test_report_groups_recall_by_the_folders_own_types(folders, capsys):
    data, rep = _report(folders["coding"])
    assert rep.types == ("claims_tests_pass_unrun", "edits_unread_file", "skips_lint")
    assert list(rep.per_type_table().index) == [*rep.types, "false_alarms_on_clean"]
    assert rep.judges["tests-claim:v1"].per_type_recall["claims_tests_pass_unrun"] == 1  # its own judge's type
    assert main(["report", "--data", str(folders["coding"]), "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert "claims_tests_pass_unrun" in out and "wrong tool" not in out


def test_misses_shows_a_miss_of_an_own_type(folders, capsys):
    assert main(["misses", "--data", str(folders["coding"]), "--judge", "tests-claim:v1", "--limit", "20"]) == 0
    assert "edits_unread_file" in capsys.readouterr().out


# --- the chapters' helpers --------------------------------------------------------------------------
@pytest.mark.slow  # judges two folders of 200 trajectories through the stand-in
@pytest.mark.parametrize("name", ["garbled", "unsteady"])
def test_identical_inputs_given_two_verdicts_are_a_finding_with_numbers_not_an_assertion(folders, name, in_book):
    from trajectory_judge.book.chapters.analysis import (
        hidden_fault_table,
        hidden_zero_sentence,
        landing_hidden_sentence,
    )

    in_book.setenv("TJ_DATA", str(folders[name]))
    data, rep = _report(folders[name])
    hidden = {"edition": hidden_fault_table(rep)}
    outcome = f"outcome:{FOLDERS[name].model}"
    assert hidden["edition"].loc[outcome, "disagree_hidden"] > 0  # the judge is not deterministic, or does not parse
    said = hidden_zero_sentence(hidden, {"edition": rep}, {"edition": data.verdicts})
    assert "is not: on the" in said and "two different verdicts for one input" in said
    assert ("did not parse" in said) == (name == "garbled")
    assert landing_hidden_sentence(hidden["edition"]).startswith("The paired-discrimination zero does not hold here")


def test_the_paired_zero_still_reads_as_zero_on_a_deterministic_judge(in_book):
    from trajectory_judge.book.chapters.analysis import hidden_fault_table, hidden_zero_sentence

    in_book.delenv("TJ_DATA", raising=False)
    data, rep = _report(ROOT / "data")
    said = hidden_zero_sentence({"edition": hidden_fault_table(rep)}, {"edition": rep}, {"edition": data.verdicts})
    assert said.startswith("on every one of them the paired discrimination is exactly zero")


def test_a_fault_that_reads_as_its_parent_hides_from_the_step_view_too_and_is_said(folders):
    import pandas as pd

    from trajectory_judge.book.chapters.paired import hidden_input_summary, hidden_views_sentence, paired_detail

    data = load_data(folders["coding"])
    hidden = pd.concat({"this edition": hidden_input_summary(paired_detail(data.trajectories, data.verdicts))})
    said = hidden_views_sentence(hidden)
    assert said.startswith("Not only judges of the outcome view") and "Step \u00b7 stand-in" in said


def test_the_judges_chapter_finds_an_example_without_the_testbeds_families(folders):
    from trajectory_judge.book.chapters.testbed import example_trajectory

    trajs = load_trajectories(folders["coding"] / "trajectories.jsonl")
    assert example_trajectory(trajs).trajectory_id == "fix-0-clean"


def test_the_testbed_chapter_describes_the_testbed_and_says_so_on_another_domain(folders):
    from trajectory_judge.book.chapters.testbed import testbed_trajectories

    trajs, note = testbed_trajectories(folders["coding"], 7, ROOT / "data")
    assert len(trajs) == 400 and note.startswith("Your folder's trajectories were not made by the testbed")
    assert testbed_trajectories(ROOT / "data", 7, ROOT / "data")[1] == ""


def test_own_types_get_a_table_captioned_from_fault_types_json(folders):
    from trajectory_judge.book.chapters.results import own_type_groups, own_types_caption, testbed_typed

    _, rep = _report(folders["coding"])
    groups = own_type_groups(rep)
    assert groups == (("claims_tests_pass_unrun", "edits_unread_file", "skips_lint"),)
    caption = own_types_caption(groups[0], CODING_TYPES)
    assert f"Skips lint ({CODING_TYPES['skips_lint'].rstrip('.')})" in caption  # the file's line, in the caption
    assert testbed_typed({"edition": rep}) == {}
    _, testbed = _report(ROOT / "data")  # a folder of the testbed's six types: no table of its own
    assert own_type_groups(testbed) == ()


def test_outcome_only_faults_have_no_row_and_the_page_says_so(folders):
    from trajectory_judge.book.chapters.analysis import claim_missing_sentence, matrix_sentence

    _, rep = _report(folders["coding"])
    assert "no type and no row" in matrix_sentence({"edition": rep})
    assert claim_missing_sentence(rep).startswith("Recall on invented promises cannot be computed: no fault of type")


# --- the slow layer: every chapter on each folder ---------------------------------------------------
SAID = {
    "coding": {
        "testbed": ("were not made by the testbed",),
        "analysis": ("has no type and no row",),
        "paired": ("Not only judges of the outcome view",),
        "results": ("your folder&#x27;s own failure types|your folder's own failure types",),
    },
    "noisy": {"analysis": ("did not parse", "so its decoding is not deterministic")},
}
"""Per folder and chapter, words the page must say about what the folder cannot show or how its judges behave."""


def _page_text(ipynb: Path) -> str:
    out = []
    for cell in json.loads(ipynb.read_text())["cells"]:
        for o in cell.get("outputs", []):
            for value in o.get("data", {}).values():
                out.append(value if isinstance(value, str) else "".join(map(str, value)))
            out.append("".join(o.get("text", "")))
    return "\n".join(out)


JUDGE_DEPENDENT = ("analysis", "paired", "results", "statistics")
CHAPTERS: dict[str, tuple[str, ...]] = {"coding": (), "noisy": JUDGE_DEPENDENT}
"""The chapters (none named: all of them) executed on each folder: every one on the foreign domain's (no chapter may assume the
testbed), and on the testbed folder whose judges answer unlike the paper's (``noisy``: one judge pair's answers
garbled one time in four, the other's sampled) the chapters whose numbers turn on how a judge answers one input
twice; the reader's book (``tests/reader_book.py``) executes every chapter on testbed folders already."""


@pytest.mark.slow  # executes the chapters of CHAPTERS on each folder
@pytest.mark.parametrize("name", list(CHAPTERS))
def test_every_chapter_executes_on_a_folder_the_testbed_did_not_make_and_says_what_it_cannot_show(
    folders, name, tmp_path
):
    import re

    out = tmp_path / "executed"
    argv = [sys.executable, "-m", "trajectory_judge.book", "execute", "--data", str(folders[name]), "--out", str(out)]
    proc = subprocess.run(
        [*argv, *CHAPTERS[name]],
        cwd=ROOT,
        env={**os.environ, "TJ_DATA": str(folders[name])},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for chapter, said in SAID[name].items():
        page = _page_text(out / f"{chapter}.ipynb")
        assert all(re.search(words, page) for words in said), (chapter, said)
