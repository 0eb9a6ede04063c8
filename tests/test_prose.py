"""The chapters' computed prose: one reviewed snapshot per chapter, and sentences that read as written (no
blank, no bare ``None``, no template seam, numbers in the book's one format). The sentences are what the
committed notebooks glued and displayed (tests/chapter_prose.py); README's test command executes every chapter
under nbval against those outputs, so they are the chapter helpers' sentences on the committed data.

A helper's new wording reaches the committed notebook when the chapter is executed again
(``python -m trajectory_judge.book execute NAME``, or ``make execute``); nbval fails until then. To accept the
change, rewrite the snapshots and review them in the diff::

    python -m pytest -p no:nbval -o addopts="" tests/test_prose.py --snapshot-update

(or set ``TJ_SNAPSHOT_UPDATE=1``). ``git diff tests/snapshots/`` shows what a reader of each chapter will read
differently.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import prose_scan
import pytest
from chapter_prose import CHAPTERS, committed_sentences, glued_text

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "snapshots"


@pytest.fixture(scope="session")
def chapter_sentences() -> dict[str, dict[str, str]]:
    """Every chapter's sentences as its committed notebook holds them."""
    return {chapter: committed_sentences(chapter) for chapter in CHAPTERS}


def snapshot_text(chapter: str, sentences: dict[str, str]) -> str:
    """A chapter's snapshot: a header, then each sentence under its glue name in brackets."""
    lines = [
        f"# The sentences the {chapter} chapter glues and displays, as its committed notebook holds them.",
        "# Refresh: python -m pytest -p no:nbval -o addopts='' tests/test_prose.py --snapshot-update; review the diff.",
    ]
    for key, text in sentences.items():
        lines += ["", f"[{key}]", text.rstrip("\n")]
    return "\n".join(lines) + "\n"


def _updating(config: pytest.Config) -> bool:
    return bool(config.getoption("--snapshot-update", default=False)) or os.environ.get("TJ_SNAPSHOT_UPDATE") == "1"


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_chapter_prose_matches_its_reviewed_snapshot(chapter, chapter_sentences, request):
    path = SNAPSHOTS / f"{chapter}.txt"
    now = snapshot_text(chapter, chapter_sentences[chapter])
    if _updating(request.config):
        SNAPSHOTS.mkdir(exist_ok=True)
        tmp = path.with_suffix(".txt.tmp")
        tmp.write_text(now, encoding="utf-8")
        tmp.replace(path)
        return
    assert path.exists(), f"no snapshot {path.relative_to(ROOT)}: run this test with --snapshot-update, then review it"
    before = path.read_text(encoding="utf-8")
    if now != before:
        diff = difflib.unified_diff(
            before.splitlines(), now.splitlines(), f"{path.relative_to(ROOT)} (committed)", "computed now", lineterm=""
        )
        pytest.fail(
            f"the {chapter} chapter's prose changed; if that is meant, rerun with --snapshot-update and review "
            "the diff of tests/snapshots/:\n" + "\n".join(diff),
            pytrace=False,
        )


def test_every_chapter_notebook_has_a_snapshot():
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(CHAPTERS) == notebooks, "each chapter's .md needs its executed .ipynb"
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.txt")) == notebooks, "run with --snapshot-update and review"


# --- what a computed sentence must never show ------------------------------------------------------------
SEAMS = [
    (re.compile(r"\{|\}"), "a template brace"),
    (re.compile(r"(?<![\w.])(?:None|nan|NaN|<NA>|NaT|inf)(?![\w.])"), "a missing value printed by Python"),
    (re.compile(r"\S {2,}\S"), "a doubled space"),
    (re.compile(r"(?<![\w.,])1 (?!of\b)[a-z]+s\b"), "a plural after 1"),
    (re.compile(r"\b(\d[\d.,]*) (?:and|to) \1\b"), "a range with equal ends"),
    (re.compile(r"\b(\d+) of the \1\b"), "'n of the n' for all"),
    (re.compile(r"\d[eE][+-]?\d"), "e-notation"),
    (re.compile(r"\d\.\d{4,}"), "more decimals than the book prints"),
    (re.compile(r"(?<![\w.])-\d"), "a hyphen for a minus sign"),
    (re.compile(r"−0\.0+(?![\d])"), "a negative zero"),
    (re.compile(r" [,.;:](?!\d)"), "a space before punctuation"),
    (re.compile(r"\.\."), "a doubled full stop"),
]
"""What a sentence built from a record shows when a template or a number went wrong, with its name."""

_KNOWN_PLURALS = {"is", "has", "was", "does", "its"}  # "1 ... is" etc. are not plurals


_BOOK_INTERVAL = re.compile(r"[\u2212-]?\d+\.\d+ \([\u2212-]?\d+\.\d+(?:\u2013| to )[\u2212-]?\d+\.\d+\)")
"""An interval as format_interval writes it: a narrow one may carry more decimals than three."""


def seams_in(text: str) -> list[str]:
    """The names of every seam in ``text``."""
    found = []
    for pattern, name in SEAMS:
        for m in pattern.finditer(_BOOK_INTERVAL.sub("0.5 (0.4\u20130.6)", text) if "decimals" in name else text):
            if name == "a plural after 1" and m.group(0).split()[-1] in _KNOWN_PLURALS:
                continue
            found.append(f"{name} at {text[max(0, m.start() - 20) : m.end() + 20]!r}")
    return found


def test_seams_in_finds_each_template_fault():
    # each seam, written as a broken template would write it, is named; a well-formed sentence has none
    broken = {
        "a template brace": "flags {n} of the trajectories",
        "a missing value printed by Python": "its recall is None on these",
        "a doubled space": "on all  400 trajectories",
        "a plural after 1": "on 1 trajectories judged",
        "a range with equal ends": "between 400 and 400 trajectories",
        "'n of the n' for all": "5 of the 5 judges",
        "e-notation": "a rate of 1e-05",
        "more decimals than the book prints": "recall 0.61633 here",
        "a hyphen for a minus sign": "a delta of -0.180",
        "a negative zero": "a delta of −0.000 here",
    }
    for name, text in broken.items():
        assert any(s.startswith(name) for s in seams_in(text)), (name, text)
    fine = "Of the 400 trajectories, 1 of 2 judges flags 0.616 (0.59–0.64) and −0.180 (−0.28 to −0.08); 1 run is kept."
    assert seams_in(fine) == []


def test_no_chapter_sentence_is_blank_or_shows_a_template_seam(chapter_sentences):
    problems = [
        f"{chapter}/{key}: {seam}"
        for chapter, sentences in chapter_sentences.items()
        for key, text in sentences.items()
        for seam in (["blank"] if not text.strip() else seams_in(text))
    ]
    assert problems == []


_NUMBER = re.compile(r"(?<![\w.])[+−]?\d+(?:\.\d+)?(?![\w.])")


def test_every_interval_in_a_chapter_sentence_is_written_by_the_books_one_format(chapter_sentences):
    # as format_interval writes one: the value with three decimals, the bounds with two (more when they need them); true minus signs,
    # and "to" between the bounds exactly when the low one is negative (so no dash meets a minus)
    from trajectory_judge.analysis.core.formatting import format_interval

    assert format_interval(-0.18, -0.28, -0.08, "bootstrap") == "\u22120.180 (\u22120.28 to \u22120.08)"
    interval = re.compile(r"(?<![\w.])([+\u2212-]?\d+\.\d+) \(([\u2212-]?\d+\.\d+)(\u2013| to )([\u2212-]?\d+\.\d+)\)")
    seen = 0
    for chapter, sentences in chapter_sentences.items():
        for key, text in sentences.items():
            for m in interval.finditer(text):
                value, low, sep, high = m.groups()
                where = (chapter, key, m.group(0))
                places = len(low.partition(".")[2])
                decimals = len(value.partition(".")[2])
                assert len(high.partition(".")[2]) == places >= 2, where
                assert decimals == places + 1 or (low == high and decimals == places == 3), where
                assert "-" not in m.group(0), where
                assert (sep == " to ") == low.startswith("\u2212"), where
                seen += 1
    assert seen > 20  # the register's claims and the view deltas quote many


def test_a_claim_sentence_quotes_its_value_as_the_record_prints_it(chapter_sentences):
    # every claim's sentence carries the register's value text: one value, one interval, in both places
    results = chapter_sentences["results"]
    claims = [k for k in results if k.startswith("claim_") and not k.endswith("_value")]
    assert len(claims) > 30
    for key in claims:
        value = results[f"{key}_value"]
        if value != "–":
            assert value in results[key], (key, value)


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_text_a_committed_notebook_glued_is_blank_or_shows_a_template_seam(nb):
    # the phrases a notebook builds in its own cells too, not only the helpers' sentences
    glued = glued_text(nb)
    assert glued
    assert {k: seams_in(v) if v.strip() else ["blank"] for k, v in glued.items() if not v.strip() or seams_in(v)} == {}


def test_the_landing_finding_quotes_the_paper_reports_numbers_at_their_printed_precision(
    paper_report, chapter_sentences
):
    from trajectory_judge.analysis.paper import published as P

    finding = chapter_sentences["paired"]["landing_finding"]
    m = paper_report.judges[P.OUTCOME].metrics
    shown = [int(x) for x in re.findall(r"(\d+)%", finding)]
    assert shown[:3] == [round(100 * m[k]) for k in ("loud_recall", "silent_recall", "false_alarm_rate")]
    recall = paper_report.judges[P.OUTCOME].per_type_recall
    unchanged = ("wrong_tool", "hallucinated_argument", "skipped_precondition", "ignored_observation")
    assert shown[3:] == [round(100 * min(recall[t] for t in unchanged)), round(100 * max(recall[t] for t in unchanged))]


def test_the_landing_finding_reads_word_for_word(chapter_sentences):
    # the one sentence that is the point of the page, kept exact: rewording it is a decision, not a refactor
    assert chapter_sentences["paired"]["landing_finding"] == (
        "Shown only the request and the final reply, the paper's Qwen2.5 14B judge flags 84% of loud faults but 45% "
        "of silent ones, and 33% of correct runs; on the four fault types that leave the reply unchanged its recall "
        "of 34% to 76% is only its habit of flagging the clean runs they came from (paired discrimination 0.000), "
        "while the same model told to check each step flags every one of those faults and none of the 100 clean runs."
    )


# --- the scan that keeps literal sentences out of the tests ------------------------------------------------
def test_prose_scan_finds_long_literals_in_asserts_and_matches(tmp_path):
    sentence = "the outcome judge flags a third of the correct trajectories"
    test = tmp_path / "test_x.py"
    test.write_text(
        "import pytest\n"
        f"def test_a(page):\n    assert {sentence!r} in page\n"
        f"def test_b(x):\n    assert x == {sentence!r}\n"
        f"def test_c():\n    with pytest.raises(ValueError, match={sentence!r}):\n        pass\n"
        "def test_d(page):\n    assert 'short' in page\n"
        f"@pytest.mark.parametrize('x, text', [(1, {sentence!r})])\ndef test_e(x, text):\n    pass\n",
        encoding="utf-8",
    )
    hits = prose_scan.scan([test], tmp_path)
    assert [(h.line, h.how) for h in hits] == [(3, "in"), (5, "=="), (7, "match="), (11, "parametrize")]
    assert all(h.sentence for h in hits)
    assert not prose_scan.reads_as_sentence("https://mybinder.org/v2/gh/someone/fork/main?urlpath=lab/tree/x.ipynb")


SENTENCES_KEPT = {
    "tests/test_prose.py": "the landing page's finding, word for word",
    "tests/test_landing.py": "the landing page's sentences are the point of the page",
    "tests/test_claim_summary.py": "how a sentence counts claims in words is what the function under test decides",
    "tests/test_architecture.py": "the import-linter contracts' names, as pyproject spells them",
    "tests/test_cite.py": "the citation's title",
    "tests/test_browser.py": "the inputs of its seam detector, not sentences of the book",
}
"""Test files that may pin a literal English sentence, and why."""

SENTENCES_TO_CONVERT = {
    "tests/test_audit.py",
    "tests/test_book_any_folder.py",
    "tests/test_book_html.py",
    "tests/test_data_safety.py",
    "tests/test_execution_page.py",
    "tests/test_forget.py",
    "tests/test_published.py",
    "tests/test_release_projection.py",
    "tests/test_report.py",
    "tests/test_rerun.py",
    "tests/test_runner.py",
}
"""Test files that still pin sentences and are to be converted: those that read README or test the execution
page and the writers."""


def test_no_test_pins_a_literal_english_sentence_outside_the_files_that_may():
    # a new test pins a number, a property, a structure or an error's key part (see tests/prose_scan.py)
    hits = prose_scan.scan(sorted((ROOT / "tests").glob("*.py")), ROOT)
    may = set(SENTENCES_KEPT) | SENTENCES_TO_CONVERT
    stray = [f"{h.path}:{h.line}: {h.text[:80]!r}" for h in hits if h.sentence and h.path not in may]
    assert stray == []
