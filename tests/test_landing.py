"""The landing page's finding (trajectory_judge.book.chapters.landing): one sentence of computed numbers and a
verdict read from the claims, never decided here."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajectory_judge.analysis.claims import Claim, Estimate, Register, Stated
from trajectory_judge.book.chapters.landing import FINDING_KEYS, register_sentence, verdict_sentence
from trajectory_judge.book.render.book_map import book_map, chapter_title, toc_parts
from trajectory_judge.book.render.claim_text import Claims

ROOT = Path(__file__).resolve().parents[1]


def _claim(key: str, says: str, value: float | None) -> Claim:
    est = None if value is None else Estimate.exact(value)
    return Claim(key, "headline", "abstract", says, Stated.number("1", 1.0), "q", est, "no data")


def _claims(*claims: Claim) -> Claims:
    return Claims(Register(claims))


def test_verdict_sentence_says_borne_out_only_when_every_finding_claim_is():
    claims = [_claim(k, f"claim {k}", 1.0) for k in FINDING_KEYS]
    text = verdict_sentence(_claims(*claims))
    assert text.startswith("The paper's verdicts bear out all eight claims") and "survives" in text
    claims[1] = _claim(FINDING_KEYS[1], "the judge catches 45% of silent faults", 2.0)
    text = verdict_sentence(_claims(*claims))
    assert "bear out seven and contradict one" in text and "that the judge catches 45% of silent faults" in text


def test_verdict_sentence_reads_only_the_finding_claims_and_counts_a_not_checkable_one():
    claims = [_claim(k, f"claim {k}", 1.0) for k in FINDING_KEYS[:3]]
    claims += [_claim("unrelated", "elsewhere", 2.0), _claim(FINDING_KEYS[3], "min recall", None)]
    text = verdict_sentence(_claims(*claims))
    assert "Of the four claims" in text and "cannot check one for want of data" in text and "elsewhere" not in text


def test_verdict_sentence_without_any_finding_claim_is_an_error():
    with pytest.raises(ValueError, match="none of the claims of"):
        verdict_sentence(_claims(_claim("unrelated", "x", 1.0)))


def test_register_sentence_counts_every_verdict_of_the_whole_register():
    claims = _claims(*[_claim(f"a{i}", "x", 1.0) for i in range(30)], *[_claim(f"b{i}", "y", 2.0) for i in range(6)])
    assert register_sentence(claims).startswith(
        "Of the 36 claims of the paper in the register, the paper's verdicts bear out 30 and contradict six."
    )


def test_the_landings_map_names_every_part_and_chapter_of_the_table_of_contents():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    text = book_map(ROOT)
    files = [c["file"] for p in toc["parts"] for c in p["chapters"]]
    assert text.startswith(
        f"The book is in {(['one', 'two', 'three', 'four', 'five', 'six'])[len(toc['parts']) - 1]} parts"
    )
    assert all(f"*{p['caption']}*" in text for p in toc["parts"])
    assert all(f"</{f}>`" in text for f in files) and text.count("{doc}") == len(files)
    assert "{doc}`Results </notebooks/results>`" in text  # a notebook's title, past its set-up cell
    assert [len(p.chapters) for p in toc_parts(ROOT)] == [len(p["chapters"]) for p in toc["parts"]]


def test_a_page_without_a_title_is_an_error(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```python\n# not a title\n```\ntext\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no title"):
        chapter_title(page)
