"""The landing page's finding (trajectory_judge.book.chapters.landing): one sentence of computed numbers and a
verdict read from the claims, never decided here."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from trajectory_judge.book.chapters.landing import FINDING_KEYS, register_counts_sentence, verdict_sentence


@dataclass(frozen=True)
class _Claim:
    key: str
    says: str
    verdict: str

    @property
    def holds(self) -> bool:
        return self.verdict == "borne out"


def test_verdict_sentence_says_borne_out_only_when_every_finding_claim_is():
    claims = [_Claim(k, f"claim {k}", "borne out") for k in FINDING_KEYS]
    assert "bear this out" in verdict_sentence(claims) and "all eight" in verdict_sentence(claims)
    claims[1] = _Claim(FINDING_KEYS[1], "the judge catches 45% of silent faults", "not borne out")
    text = verdict_sentence(claims)
    assert "seven of" in text and "45% of silent faults (not borne out)" in text and "bear this out" not in text


def test_verdict_sentence_reads_only_the_finding_claims_and_names_a_not_checkable_one():
    claims = [_Claim(k, f"claim {k}", "borne out") for k in FINDING_KEYS[:3]]
    claims += [
        _Claim("unrelated", "elsewhere", "not borne out"),
        _Claim(FINDING_KEYS[3], "min recall", "not checkable"),
    ]
    text = verdict_sentence(claims)
    assert "three of the four" in text and "min recall (not checkable)" in text and "elsewhere" not in text


def test_verdict_sentence_without_any_finding_claim_is_an_error():
    with pytest.raises(ValueError, match="none of the finding's claims"):
        verdict_sentence([_Claim("unrelated", "x", "borne out")])


def test_register_counts_sentence_lists_every_verdict():
    assert register_counts_sentence({"borne out": 30, "not borne out": 6}) == (
        "of the 36 claims of the paper in its register, 30 borne out, 6 not borne out and 0 not checkable"
    )
