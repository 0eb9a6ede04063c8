"""The book builds on any folder ``report`` accepts.

Folders of 10, 40, 120 and 400 judged trajectories, one judged by a Python judge only, one by a
self-consistency ensemble only, one whose answers never parse (``tests/book_folders.py``). The fast
layer calls the book's helpers on them, without a build; the slow layer reads the whole book built
once with ``-W`` on a reader's folder that merges README's 40-trajectory run, a judge with a prompt of
its own and the other readers' flows (``tests/reader_book.py``), and, with ``TJ_BOOK_FOLDERS=1``,
executes every chapter on each folder above.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from book_folders import FOLDERS, MODEL, LazyFolders

from trajectory_judge.analysis.core.loading import judge_order, load_data
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.book.render.missing import Quantity, cannot_compute, no_parent_judged

ROOT = Path(__file__).resolve().parents[1]
OUTCOME, STEP = f"outcome:{MODEL}", f"step:{MODEL}"


@pytest.fixture(scope="session")
def folders(tmp_path_factory) -> dict[str, Path]:
    """Every folder of :data:`book_folders.FOLDERS`, built once per session when first used."""
    return LazyFolders(tmp_path_factory.mktemp("folders"))


@pytest.fixture()
def in_book(monkeypatch):
    """Run as a chapter does: from the book's notebooks folder."""
    monkeypatch.chdir(ROOT / "notebooks")
    return monkeypatch


def _report(folder: Path):
    data = load_data(folder)
    return data, build_report(data.trajectories, data.verdicts, resamples=200, seed=7)


# --- the record and its one sentence ------------------------------------------------------------
def test_quantity_holds_a_value_or_the_reason_it_is_missing():
    assert Quantity(0.5).available and not Quantity.missing("no judge").available
    with pytest.raises(ValueError, match="either a value or the reason"):
        Quantity(None)
    with pytest.raises(ValueError, match="either a value or the reason"):
        Quantity(0.5, why="no judge")


def test_cannot_compute_says_each_reason_once_and_nothing_when_all_is_there():
    why = no_parent_judged(["wrong_tool", "ignored_observation"])
    said = cannot_compute({"a": Quantity.missing(why), "b": Quantity.missing(why), "c": Quantity(1.0)})
    assert said == f"A and b cannot be computed: {why}." and said.count("cannot") == 1
    assert "wrong tool or ignored observation has its clean parent judged in this folder" in why
    assert cannot_compute({"c": Quantity(1.0)}) == ""


# --- the paired chapter's camera-ready numbers -------------------------------------------------------
@pytest.mark.parametrize("name", ["n10", "n40", "unparseable"])
def test_camera_ready_numbers_say_which_types_lack_a_judged_parent_on_a_small_folder(folders, name):
    from trajectory_judge.book.chapters.paired import (
        camera_ready_frame,
        camera_ready_gaps,
        camera_ready_quantities,
    )

    data, rep = _report(folders[name])
    qs = camera_ready_quantities(rep, data.trajectories, OUTCOME, STEP)  # today's TypeError on abs(None)
    missing = {k: q for k, q in qs.items() if not q.available}
    assert "outcome_paired_reply_unchanged" in missing
    assert "has its clean parent judged in this folder" in missing["outcome_paired_reply_unchanged"].why
    gaps = camera_ready_gaps({"Your folder": qs})
    assert gaps.startswith("In the column Your folder, ") and gaps.endswith(".") and "  " not in gaps
    frame = camera_ready_frame({"Your folder": qs})
    assert (frame["Your folder"] == "\u2013").sum() == len(missing) and not frame["Your folder"].eq("").any()


@pytest.mark.slow  # judges all 400 trajectories through the stand-in server
def test_camera_ready_numbers_are_complete_on_all_400(folders):
    from trajectory_judge.book.chapters.paired import camera_ready_gaps, camera_ready_quantities

    data, rep = _report(folders["n400"])
    qs = camera_ready_quantities(rep, data.trajectories, OUTCOME, STEP)
    assert all(q.available for q in qs.values()) and camera_ready_gaps({"x": qs}) == ""
    assert qs["outcome_paired_reply_unchanged"].value == 0  # identical prompts, identical stand-in answers


@pytest.mark.parametrize("name", ["n40", pytest.param("n400", marks=pytest.mark.slow)])  # n400: 1,200 stand-in calls
def test_paired_numbers_by_outcome_survival_carry_an_interval_around_the_value(folders, name):
    from trajectory_judge.book.chapters.paired import camera_ready_frame, camera_ready_quantities

    data, rep = _report(folders[name])
    qs = camera_ready_quantities(rep, data.trajectories, OUTCOME, STEP, data.verdicts)
    shown = camera_ready_frame({"x": qs})["x"]
    for key in ("outcome_paired_loud", "outcome_paired_silent"):
        q = qs[key]
        if q.available:
            assert q.low <= q.value <= q.high
            assert re.search(r"\(|\u2021", shown.iloc[list(qs).index(key)])  # an interval, or the zero-width mark


# --- the other chapters' guards ---------------------------------------------------------------------
def test_confusion_figure_shows_a_python_judge_when_the_folder_has_no_rule_engine(folders):
    from trajectory_judge.book.chapters.analysis import confusion_judges
    from trajectory_judge.book.render.style import llm_judges

    data, rep = _report(folders["python-only"])
    judges = judge_order(data.verdicts)
    shown = confusion_judges(llm_judges(judges), judges)
    assert shown == ["short-run:v1"] and not rep.confusion(shown[0]).empty


def test_calibration_edge_sentence_reads_when_no_verdict_sits_on_an_edge(folders):
    from trajectory_judge.book.chapters.metrics import edge_sentence, interior_edges

    data = load_data(folders["n40"])  # the stand-in states 0.55 ... 0.95: never an edge
    said = edge_sentence(interior_edges([v.confidence for v in data.verdicts]), len(data.verdicts))
    assert said.startswith("none of the 120 verdicts") and "()" not in said and "at )" not in said


def test_organic_sentences_read_on_a_folder_without_episodes():
    import pandas as pd

    from trajectory_judge.book.chapters.organic import (
        gap_sentence,
        outcome_gaps,
        repeat_sentence,
        repeated_calls,
    )

    assert repeat_sentence(repeated_calls([])) == "No episode repeats a call verbatim"
    assert gap_sentence(outcome_gaps([]), 0).startswith("With no episode in the data")
    said = gap_sentence(pd.Series({"refund": 2, "reply": 1}), 3)
    assert "(refund in 2, reply in 1 episodes;" in said


@pytest.mark.parametrize("name", ["n40", "python-only", "unparseable"])
def test_seed_chapter_says_why_without_members(folders, name):
    from trajectory_judge.book.chapters.seeds import glue_values, prose_values

    values = {**glue_values(None, [], 40), **prose_values(None, [])}
    for key in ("spread", "deltas", "votes_text"):
        assert "cannot be computed: the folder keeps no ensemble members" in values[key]


# --- the folder's own wording -------------------------------------------------------------------------
def test_chapters_name_a_readers_folder_and_its_judges(folders, in_book):
    from trajectory_judge.book.chapters.editions import folder_note, ours_wording
    from trajectory_judge.book.render.style import source_name

    in_book.setenv("TJ_DATA", str(folders["n40"]))
    assert source_name("edition") == "Your folder (n40)" and ours_wording().judges == "your judges"
    note = folder_note(load_data(folders["n40"]))
    assert note.startswith("This page is built on your folder `n40`: 40 of its 400 trajectories judged by ")
    assert "Outcome \u00b7 stand-in" in note and "the paper's verdicts stay beside them as the reference" in note


def test_landing_and_results_speak_of_your_judges_not_our_smaller_models(folders, in_book):
    from trajectory_judge.book.chapters.editions import ours_phrases

    in_book.setenv("TJ_DATA", str(folders["python-only"]))
    said = ours_phrases(load_data(folders["python-only"]))
    assert said["ours_origin"] == (
        "Your folder holds the verdicts of your judges (short-run:v1 (Python judge)) on 40 of its 400 trajectories"
    )
    assert said["ours_source"] == "Your folder (python-only)"
    assert not any("smaller models" in v or "this edition" in v.lower() for v in said.values())


def test_results_headline_on_a_readers_folder_names_the_folder_and_counts_once(folders, in_book):
    from trajectory_judge.book.chapters.analysis import naming_sentence
    from trajectory_judge.book.chapters.results import our_headline

    in_book.setenv("TJ_DATA", str(folders["n40"]))
    _, rep = _report(folders["n40"])
    text = our_headline(rep)
    assert text.startswith("Your folder's outcome-only judge") and "on 40 trajectories each" in text
    assert "this edition" not in text.lower() and "40 and 40" not in text
    import pandas as pd

    frame = pd.DataFrame({"type_macro_f1": [0.1], "recall": [0.5]}, index=["x"])
    assert naming_sentence({"edition": frame}).endswith("of your folder")


def test_chapters_keep_this_editions_wording_on_the_books_own_data(in_book):
    from trajectory_judge.book.chapters.editions import ours_phrases, ours_wording
    from trajectory_judge.book.render.style import source_name

    in_book.delenv("TJ_DATA", raising=False)
    assert source_name("edition") == "This edition" and not ours_wording().own
    assert "much smaller models" in ours_phrases(load_data(ROOT / "data"))["ours_origin"]


# --- the slow layer: every chapter on every folder, and one build with -W ----------------------------
BLANK = re.compile(r"^\s*$|\bnan\b|<NA>")
_NONE = re.compile(r"\bNone\b")


def is_blank(text: str) -> bool:
    """Whether a glued text shows a missing value: empty, ``nan``, ``<NA>``, or Python's ``None`` (alone,
    or inside a sentence; the word that opens a sentence, "None of your judges...", is English)."""
    if BLANK.search(text) or text.strip() == "None":
        return True
    return any(m.start() > 0 and text[: m.start()].rstrip()[-1:] not in ".!?:" for m in _NONE.finditer(text))


MAY_BE_EMPTY = {("seeds", "greedy"), ("audit", "audit_unexplained")}
"""Glued values that are empty by design: a sentence with nothing to add after the one before it."""


def test_a_glued_none_is_blank_but_a_sentence_opening_with_none_is_not():
    assert is_blank("None") and is_blank("the rate is None") and is_blank("") and is_blank("0.5 (nan–0.7)")
    assert not is_blank("None of your judges has judged a fault")
    assert not is_blank("Every member is identical. None was on disk before its members were sampled.")


def glued_texts(ipynb: Path | dict) -> dict[str, str]:
    """Every value a notebook (a file, or its content) glues as text, by name."""
    out = {}
    for cell in (json.loads(ipynb.read_text()) if isinstance(ipynb, Path) else ipynb)["cells"]:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            text = o.get("data", {}).get("application/papermill.record/text/plain")
            if name and text is not None:
                out[name] = "".join(text).strip("'\"")
    return out


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("TJ_BOOK_FOLDERS"),
    reason="executes every chapter on each folder (about a minute each); set TJ_BOOK_FOLDERS=1",
)
@pytest.mark.parametrize("name", list(FOLDERS))
def test_every_chapter_executes_on_the_folder_with_no_blank_number(folders, name, tmp_path):
    out = tmp_path / "executed"
    env = {**os.environ, "TJ_DATA": str(folders[name])}
    proc = subprocess.run(
        [sys.executable, "-m", "trajectory_judge.book", "execute", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    blanks = [
        (nb.stem, k, v)
        for nb in sorted(out.glob("*.ipynb"))
        for k, v in glued_texts(nb).items()
        if is_blank(v) and (nb.stem, k) not in MAY_BE_EMPTY
    ]
    assert not blanks


def _page_text(page: str) -> str:
    """A built page's text: its tags dropped, its entities read, its white space one space."""
    import html

    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


@pytest.mark.slow  # the whole book, built once on the merged folder of tests/reader_book.py
def test_book_builds_with_W_on_a_readers_folder_naming_it_and_its_judges_with_no_blank_between(reader_book):
    from reader_book import NAME

    landing = reader_book.page("book/intro")
    assert not re.search(r"between\s+and\s", landing)  # a blank between two values
    paired = reader_book.page("notebooks/paired")
    assert "has its clean parent judged in this folder" in paired and f"Your folder ({NAME})" in paired
    judges = reader_book.page("notebooks/judges")
    assert all(j in judges for j in (OUTCOME, STEP, f"reply:{MODEL}"))  # README's 40-trajectory run


@pytest.mark.slow  # the whole book, built once on the merged folder of tests/reader_book.py
def test_every_chapter_the_readers_book_shows_was_executed_on_the_folder_with_no_blank_number(reader_book):
    executed = reader_book.executed()
    assert sorted(executed) == sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))
    blanks = [
        (name, k, v)
        for name, nb in sorted(executed.items())
        for k, v in glued_texts(nb).items()
        if is_blank(v) and (name, k) not in MAY_BE_EMPTY
    ]
    assert not blanks


@pytest.mark.slow  # the whole book, built once on the merged folder of tests/reader_book.py
def test_a_judge_with_its_own_prompt_is_shown_with_its_prompt_and_filed_under_its_view_in_every_chapter(
    reader_book,
):
    import html

    from book_folders import OWN_PROMPT
    from reader_book import OWN_PROMPT_JUDGE, PROMPT_MODEL

    own, step = OWN_PROMPT_JUDGE, f"step:{PROMPT_MODEL}"
    judges = reader_book.page("notebooks/judges")
    assert own in judges and html.escape(OWN_PROMPT.split("{")[0].strip()) in judges
    assert "sha256" in judges and "Python judge" not in judges.split(own)[0][-200:]
    shown = {name: _page_text(page) for name, page in reader_book.pages().items()}
    # wherever the built-in step judge run beside it is shown, the step judge of one's own prompt is shown too
    builtin, mine = f"Step \u00b7 {PROMPT_MODEL}", f"Step (rubric prompt) \u00b7 {PROMPT_MODEL}"
    with_step = [name for name, text in shown.items() if builtin in text or step in text]
    missing = [
        name for name in with_step if shown[name].count(mine) + shown[name].count(own) < shown[name].count(builtin)
    ]
    assert len(with_step) >= 5 and not missing, (with_step, missing)
    assert "Python judge" not in shown["judges"].split("rubric")[0][-300:]
