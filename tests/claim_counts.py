"""Reading the counts back out of a sentence that counts claims (tests/test_claim_summary.py, tests/test_book_html.py):
the numbers a reader takes from it, to set beside the register's tally for the same set."""

from __future__ import annotations

import re

_WORDS = {
    w: i for i, w in enumerate(("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))
}
_WORDS["none"] = 0
_N = r"(\d+|no|none|one|two|three|four|five|six|seven|eight|nine|ten)"

SENTENCE = re.compile(
    r"(?:Of the (?P<n>\d+|\w+) (?P<scope>claims of [^,]+), the paper's verdicts (?P<rest>[^.;]*))"
    r"|(?:The paper's verdicts (?P<verb>confirm|are consistent with|bear out) all (?P<all>\d+|\w+) "
    r"(?P<all_scope>claims of [^.;]+))"
)
"""A sentence of :func:`~trajectory_judge.book.render.claim_summary.summary_sentence`: its total and its scope."""

_VERBS = (("confirm", "confirmed"), ("are consistent with", "consistent with"), ("bear out", "borne out"))
"""How a sentence says each verdict that holds: the verb, and the verdict it counts."""


def number(word: str) -> int:
    """``11`` or ``eleven``-free small words (``two``) as an int."""
    return int(word) if word.isdigit() else _WORDS[word]


def read_counts(text: str) -> list[dict[str, object]]:
    """Every claims sentence in ``text``: its scope and the counts it states (claims, borne out, not borne out, not
    checkable, fragile, withdrawn), each only where the sentence states it."""
    out = []
    for m in SENTENCE.finditer(text):
        tail = text[m.end() : m.end() + 3000].split(". ", 2)  # the robustness clause is the next sentence
        nxt = tail[1] if len(tail) > 1 else ""
        if m.group("all"):
            n = number(m.group("all"))
            said: dict[str, object] = {"scope": m.group("all_scope").strip(), "claims": n}
            said.update({v: n if m.group("verb") == verb else 0 for verb, v in _VERBS})
            said.update({"not borne out": 0, "not checkable": 0})
        else:
            rest = m.group("rest")
            said = {"scope": m.group("scope").strip(), "claims": number(m.group("n"))}
            for verb, v in _VERBS:
                found = re.search(rf"{verb} {_N}", rest)
                said[v] = number(found.group(1)) if found else 0
            found = re.search(rf"contradict {_N}", rest)
            said["not borne out"] = number(found.group(1)) if found else 0
            found = re.search(rf"cannot check {_N}", rest)
            said["not checkable"] = number(found.group(1)) if found else 0
        if nxt.startswith("Each of these verdicts survives") or nxt.startswith("The verdict survives"):
            said.update({"fragile": 0, "withdrawn": 0})
        else:
            found = re.match(rf"{_N} of these verdicts (?:is|are) fragile", nxt, flags=re.I)
            if found:
                said["fragile"] = number(found.group(1).lower())
            found = re.search(rf"Holm's adjustment withdraws {_N}", nxt)
            if found:
                said["withdrawn"] = number(found.group(1))
        out.append(said)
    return out
