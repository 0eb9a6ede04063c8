"""The statistics chapter speaks to a reader choosing a judge, not only to a statistician: every statistical
term it uses is linked to the glossary (MyST's ``{term}`` role) where the prose first uses it, and every
``{term}`` it writes names an entry the glossary holds.

Read from the sources (``notebooks/statistics.md``, ``book/glossary.md``), so it runs without a built book;
code cells, headings and the text of other roles (``{glue:text}``, ``{numref}``, ``{ref}``, ``{cite}``) are not
prose. A glued sentence cannot carry a link, so the prose names each term before the glued sentences use it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "statistics.md"
GLOSSARY = ROOT / "book" / "glossary.md"

STATISTICS_TERMS: dict[str, str] = {
    "F1": r"\bF1\b",
    "Recall": r"\brecall\b",
    "False-alarm rate": r"\bfalse-alarm rate\b",
    "Bootstrap interval": r"\bbootstrap\b",
    "AUROC": r"\bAUROC\b",
    "AUPRC": r"\bAUPRC\b",
    "Cohen's kappa": r"Cohen's|\bκ\b|\bkappa\b",
    "MCC": r"\bMCC\b|Matthews",
    "Balanced accuracy": r"\bbalanced accuracy\b",
    "Risk–coverage curve": r"\brisk\b|risk–coverage",
    "AURC": r"\bE?-?AURC\b",
    "Paired delta": r"\bpaired (?:difference|delta)",
    "Paired discrimination": r"\bpaired discrimination\b",
    "McNemar's test": r"\bMcNemar",
    "Holm's correction": r"\bHolm",
    "Benjamini–Hochberg procedure": r"\bBenjamini|\bBH\b|false[- ]discovery",
    "p-value": r"\bp-values?\b|\bbootstrap p\b",
    "Minimum detectable effect": r"\bminimum detectable effect\b|\bMDE\b",
    "TOST": r"\bTOST\b|equivalence test",
    "Quality–cost front": r"\bfront\b|\bPareto\b",
}
"""Glossary entry -> how the chapter's prose may name it (case-insensitive): the first match must be a link."""

_TERM = re.compile(r"\{term\}`([^`]*)`")
_OTHER_ROLE = re.compile(r"\{(?!term\})[\w:.-]+\}`[^`]*`")
_CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```[ \t]*$", re.S | re.M)
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_HEADING = re.compile(r"^#+ .*$", re.M)


def prose(text: str) -> str:
    """``text`` with its front matter, code cells, headings (a term is linked in the sentence that uses it, not in a
    section's title) and non-term roles blanked, each to spaces of its length so positions hold."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    for pattern in (_FRONT_MATTER, _CODE_CELL, _HEADING, _OTHER_ROLE):
        text = pattern.sub(blank, text)
    return text


def term_target(role_text: str) -> str:
    """The entry a ``{term}`` role points at: ``shown <Entry>`` or the text itself."""
    m = re.fullmatch(r"(?s)(.*?)\s*<([^<>]+)>", role_text.strip())
    return (m.group(2) if m else role_text).strip()


def glossary_entries(text: str) -> set[str]:
    """The terms of the glossary directive, lowercased (MyST's term references are case-insensitive)."""
    block = text[text.index("```{glossary}") :]
    block = block[: block.index("\n```", 3)]
    return {
        line.strip().lower()
        for line in block.splitlines()[1:]
        if line.strip() and not line[0].isspace() and not line.startswith(":")
    }


def first_uses(text: str) -> dict[str, tuple[int, str | None]]:
    """For each of :data:`STATISTICS_TERMS`, where its first mention in the prose is and the entry of the
    ``{term}`` role it sits in (None when it is not linked); a term never mentioned is left out."""
    text = prose(text)
    links = [(m.start(), m.end(), term_target(m.group(1))) for m in _TERM.finditer(text)]
    out: dict[str, tuple[int, str | None]] = {}
    for entry, pattern in STATISTICS_TERMS.items():
        m = re.search(pattern, text, re.I)
        if m is None:
            continue
        inside = [target for start, end, target in links if start <= m.start() < end]
        out[entry] = (m.start(), inside[0] if inside else None)
    return out


def test_every_statistical_term_is_linked_to_its_glossary_entry_at_its_first_use():
    uses = first_uses(CHAPTER.read_text(encoding="utf-8"))
    missing = sorted(set(STATISTICS_TERMS) - set(uses))
    assert not missing, f"terms the statistics chapter's prose never names: {missing}"
    wrong = {entry: target for entry, (_, target) in uses.items() if (target or "").lower() != entry.lower()}
    assert not wrong, f"first uses not linked to their own glossary entry (entry: linked to): {wrong}"


def test_every_term_the_statistics_chapter_links_is_in_the_glossary():
    entries = glossary_entries(GLOSSARY.read_text(encoding="utf-8"))
    targets = {term_target(t) for t in _TERM.findall(prose(CHAPTER.read_text(encoding="utf-8")))}
    assert targets, "the statistics chapter links no term"
    assert not {t for t in targets if t.lower() not in entries}, sorted(entries)
    assert {e.lower() for e in STATISTICS_TERMS} <= entries, sorted({e.lower() for e in STATISTICS_TERMS} - entries)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("It has AUROC 0.9.", {"AUROC": None}),
        ("Its {term}`AUROC` and later AUROC.", {"AUROC": "AUROC"}),
        ("Its {term}`ranking <AUPRC>` then AUROC {term}`AUROC`.", {"AUROC": None}),
        ("{numref}`fig-auroc` then {term}`AUROC`.", {"AUROC": "AUROC"}),
        ("## AUROC and more\n\nThe {term}`AUROC`.", {"AUROC": "AUROC"}),
        ("```{code-cell} ipython3\nauroc = 1\n```\nThe {term}`AUROC`.", {"AUROC": "AUROC"}),
        ("The {term}`risk at that coverage <Risk–coverage curve>`.", {"Risk–coverage curve": "Risk–coverage curve"}),
    ],
)
def test_first_use_is_found_outside_code_and_other_roles(text, expected):
    uses = first_uses(text)
    assert {k: uses[k][1] for k in expected} == expected


def test_glossary_entries_are_the_unindented_lines_of_its_directive():
    text = "# G\n\n```{glossary}\n:sorted:\nAUROC\n  Area under.\n\nCohen's kappa\n  Also κ.\n```\nafter\n"
    assert glossary_entries(text) == {"auroc", "cohen's kappa"}
