"""The landing page's finding (trajectory_judge.book.chapters.landing): one sentence of computed numbers and a
verdict read from the claims, never decided here."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajectory_judge.analysis.paper.claims import Claim, Estimate, Register, Stated
from trajectory_judge.book.chapters.landing import FINDING_KEYS, register_sentence, verdict_sentence
from trajectory_judge.book.render.book_map import book_map, chapter_title, toc_parts
from trajectory_judge.book.render.claim_text import Claims

ROOT = Path(__file__).resolve().parents[1]


def _claim(key: str, says: str, value: float | None) -> Claim:
    est = None if value is None else Estimate.exact(value)
    return Claim(key, "headline", "abstract", says, Stated.number("1", 1.0), "q", est, "no data")


def _claims(*claims: Claim) -> Claims:
    return Claims(Register(claims))


def test_verdict_sentence_says_confirmed_only_when_every_finding_claim_is():
    claims = [_claim(k, f"claim {k}", 1.0) for k in FINDING_KEYS]
    text = verdict_sentence(_claims(*claims))
    assert text.startswith("The paper's verdicts confirm all eight claims") and "survives" in text
    claims[1] = _claim(FINDING_KEYS[1], "the judge catches 45% of silent faults", 2.0)
    text = verdict_sentence(_claims(*claims))
    assert "confirm seven and contradict one" in text and "that the judge catches 45% of silent faults" in text


def _wide(key: str) -> Claim:
    """A claim of 84% whose interval meets its band but is too wide to lie within it."""
    est = Estimate(0.84, 0.70, 0.95, "bootstrap")
    return Claim(key, "headline", "abstract", "wide", Stated.number("84%", 0.84, 0.01), "q", est, "")


def _side(key: str, lo: float) -> Claim:
    est = Estimate(lo + 0.1, lo, lo + 0.2, "bootstrap")
    return Claim(key, "headline", "abstract", "above", Stated.side("above", "above"), "q", est, "")


def test_the_landings_tally_counts_confirmed_consistent_and_not_borne_out_separately_as_the_register_does():
    from claim_counts import read_counts

    from trajectory_judge.analysis.paper.claims import BORNE_OUT, CONFIRMED, CONSISTENT, NOT_BORNE_OUT, NOT_CHECKABLE

    claims = _claims(
        *[_claim(f"a{i}", "x", 1.0) for i in range(4)],
        *[_wide(f"w{i}") for i in range(3)],
        _side("s0", 0.1),
        *[_claim(f"b{i}", "y", 2.0) for i in range(2)],
        _claim("n0", "z", None),
    )
    text = register_sentence(claims)
    assert text.startswith(
        "Of the 11 claims of the paper in the register, the paper's verdicts confirm four, are consistent with three, "
        "bear out one stated direction, contradict two and cannot check one for want of data."
    )
    (said,) = read_counts(text)
    register = claims.counts()
    assert {v: said[v] for v in (CONFIRMED, CONSISTENT, BORNE_OUT, NOT_BORNE_OUT, NOT_CHECKABLE)} == register
    assert register == {CONFIRMED: 4, CONSISTENT: 3, BORNE_OUT: 1, NOT_BORNE_OUT: 2, NOT_CHECKABLE: 1}


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
        "Of the 36 claims of the paper in the register, the paper's verdicts confirm 30 and contradict six."
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
