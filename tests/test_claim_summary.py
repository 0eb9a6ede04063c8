"""Every sentence that counts the paper's claims comes from one function on the register's tally
(trajectory_judge.book.render.claim_summary), and a chapter citing a verdict links to its register row with its
robustness (trajectory_judge.book.render.claim_text)."""

from __future__ import annotations

import pytest
from claim_counts import read_counts

from trajectory_judge.analysis.paper.claims import Claim, Estimate, Register, Stated, Variant
from trajectory_judge.book.render import claim_summary as S
from trajectory_judge.book.render.claim_text import Claims, claim_anchor, claims_markdown, register_anchors


def _claim(key: str, value: float | None, *, variant: float | None = None) -> Claim:
    """A claim stating 1 whose estimate is ``value`` (None: no data); ``variant`` an alternative quantity's value."""
    est = None if value is None else Estimate.exact(value)
    alt = () if variant is None else (Variant("quantity", "another reading", Estimate.exact(variant)),)
    return Claim(key, "g", "§1", f"claim {key} holds", Stated.number("1", 1.0), "q", est, "no data", alt)


def _claims(k: int, bad: int, gone: int, fragile: int = 0) -> Claims:
    ok = [_claim(f"a{i}", 1.0, variant=2.0 if i < fragile else None) for i in range(k)]
    no = [_claim(f"b{i}", 2.0) for i in range(bad)]
    nd = [_claim(f"c{i}", None) for i in range(gone)]
    return Claims(Register(tuple(ok + no + nd)))


def _sentence(cl: Claims) -> str:
    return S.summary_sentence(S.tally_of(cl, [c.key for c in cl.items], "claims of §1"))


@pytest.mark.parametrize(
    "k, bad, gone, fragile, words",
    [  # every count in words, the contradicted claims named, the robustness said
        (3, 0, 0, 0, ["confirm all three claims", "Each of these verdicts survives"]),
        (1, 0, 0, 0, ["confirm the one claim", "The verdict survives"]),
        (1, 2, 0, 0, ["Of the three claims", "confirm one and contradict two", "claim b0 holds", "claim b1 holds"]),
        (
            2,
            1,
            1,
            1,
            ["Of the four", "contradict one and cannot check one for want of data", "One of these verdicts is fragile"],
        ),
        (0, 0, 3, 0, ["can check none of the three"]),
    ],
)
def test_summary_sentence_counts_each_verdict_in_words_and_names_the_contradicted(k, bad, gone, fragile, words):
    text = _sentence(_claims(k, bad, gone, fragile))
    assert all(w.lower() in text.lower() for w in words), text
    counted = text.split(";")[0].split(". ")[0].replace("§1", "")  # the counts, before the claims named
    assert not any(ch.isdigit() for ch in counted)


@pytest.mark.parametrize(
    "k, bad, gone, fragile", [(3, 0, 0, 0), (1, 2, 0, 0), (2, 1, 1, 1), (5, 3, 2, 2), (11, 2, 0, 0)]
)
def test_a_summary_sentence_reads_back_to_its_tally(k, bad, gone, fragile):
    cl = _claims(k, bad, gone, fragile)
    t = S.tally_of(cl, [c.key for c in cl.items], "claims of §1")
    (said,) = read_counts(S.summary_sentence(t))
    counts = t.counts()
    assert {key: counts[key] for key in said if key != "scope"} == {k: v for k, v in said.items() if k != "scope"}


def test_an_unknown_set_of_claims_is_an_error():
    with pytest.raises(ValueError, match="no set of claims named 'preface'"):
        S.tally(_claims(1, 0, 0), "preface")
    with pytest.raises(ValueError, match="none of the claims of 'x' is in the register"):
        S.tally_of(_claims(1, 0, 0), ["nope"], "x")


# --- on the paper's verdicts: every count the chapters say is the register's tally --------------------------------
@pytest.fixture()
def claims(paper_claims):
    return paper_claims


def _scopes(claims: Claims) -> dict[str, S.Tally]:
    from trajectory_judge.book.chapters.landing import FINDING_KEYS, FINDING_SCOPE

    out = {S.SCOPES[name][1]: S.tally(claims, name) for name in S.SCOPES}
    out[FINDING_SCOPE] = S.tally_of(claims, FINDING_KEYS, FINDING_SCOPE)
    return out


def test_every_count_of_claims_the_chapters_say_is_the_registers_tally(claims):
    from chapter_prose import committed_sentences

    tallies = _scopes(claims)
    seen = set()
    for chapter in ("results", "paired", "analysis", "audit"):
        for key, text in committed_sentences(chapter).items():
            for said in read_counts(text):
                t = tallies[str(said["scope"])]
                counts = t.counts()
                assert {k: counts[k] for k in said if k != "scope"} == {
                    k: v for k, v in said.items() if k != "scope"
                }, (
                    chapter,
                    key,
                )
                assert all(c.says in text for c in t.not_borne_out) or "not borne out:" not in text
                seen.add(said["scope"])
    assert {S.SCOPES[s][1] for s in ("abstract", "results", "analysis", "register")} <= seen


def test_the_abstracts_verdict_names_each_of_its_claims_not_borne_out(claims):
    from chapter_prose import committed_sentences

    text = committed_sentences("results")["abstract_verdict"]
    bad = S.tally(claims, "abstract").not_borne_out
    assert {c.key for c in bad} == {"no_judge_reads_reply", "rebuilds_every_number"}
    assert all(f"that {c.says}" in text for c in bad) and "192 of 206" in text


def test_results_marks_a_fragile_verdict_with_what_flips_it_and_a_link_to_its_register_row(claims):
    line = next(ln for ln in claims_markdown(claims.group("results")).splitlines() if "types faults better" in ln)
    assert "*fragile*: under 99%" in line
    assert f'href="audit.html#{claim_anchor("rules_type_best")}"' in line
    uniform = next(ln for ln in claims_markdown(claims.group("results")).splitlines() if "uniformly 1.00" in ln)
    assert "consistent with it" in uniform and "too wide" in uniform  # 47 of 50 cannot confirm 1.00
    robust = next(ln for ln in claims_markdown(claims.group("headline")).splitlines() if "45% of silent" in ln)
    assert "fragile" not in robust and "withdrawn" not in robust and 'href="audit.html#claim-outcome-silent"' in robust
    withdrawn = next(ln for ln in claims_markdown(claims.group("results")).splitlines() if "types faults better" in ln)
    assert "*withdrawn after Holm*" in withdrawn


def test_register_rows_carry_a_stable_anchor_each_that_the_links_name(claims):
    from trajectory_judge.book.render.claim_text import register_table
    from trajectory_judge.book.render.tables import dropdown_table

    ids = register_anchors(claims)
    assert len(set(ids)) == len(claims) and ids[0] == claim_anchor(claims.items[0].key) == "claim-design-400"
    html = dropdown_table(register_table(claims), name="t", caption="c", summary="s", index=False, row_ids=ids).html
    assert all(f'<tr id="{i}">' in html for i in ids)
    with pytest.raises(ValueError, match="row ids: 1 ids for a table of"):
        dropdown_table(register_table(claims), name="t", caption="c", summary="s", index=False, row_ids=ids[:1])


def test_the_register_is_checked_afresh_on_each_call_and_reads_the_same_verdicts(paper_report, paper_data, claims):
    from dataclasses import replace

    from trajectory_judge.book.render.claim_text import paper_claims

    again = paper_claims(replace(paper_report), paper_data, seeds=False)
    assert again is not claims and again.register is not claims.register  # no check is kept between calls
    assert again.counts() == claims.counts()
