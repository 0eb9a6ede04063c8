"""The landing page's finding: the paper's result in one sentence of computed numbers, and whether
the paper's own verdicts bear it out (``book/intro.md``, glued from the paired chapter).

:func:`finding_sentence` writes the finding from the report of the paper's verdicts and the
camera-ready quantities (:func:`trajectory_judge.book.chapters.paired.camera_ready_numbers`);
:func:`verdict_sentence` reads the verdicts of the claims it rests on (:data:`FINDING_KEYS`) from the
claims register. Nothing here decides a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from trajectory_judge.analysis import published as P
from trajectory_judge.analysis.report import Report
from trajectory_judge.book.render.claim_text import number_word
from trajectory_judge.book.render.style import format_number, model_name, parse_judge_id

FINDING_KEYS: tuple[str, ...] = (
    "outcome_loud",
    "outcome_silent",
    "outcome_false_alarms",  # the paper's abstract
    "cr_outcome_hidden_min",
    "cr_outcome_hidden_max",
    "cr_outcome_hidden_paired",  # the camera-ready abstract
    "cr_step_hidden_all",
    "step_zero_false_alarms",
)
"""The register's claims that the landing's finding sentence states, in the order it states them."""

BORNE_OUT = "borne out"
"""The register's verdict for a claim its verdicts bear out."""


def _pct(x: float | None) -> str:
    if x is None:
        raise ValueError("the finding states a rate the report does not have")
    return f"{100 * float(x):.0f}%"


def finding_sentence(rep: Report, cr: Mapping[str, float]) -> str:
    """The paper's finding in one sentence, every number computed: the outcome judge's loud, silent and
    clean-run flag rates; its recall and paired discrimination on the reply-unchanged types; the step
    judge of the same model on those types and on the clean runs."""
    out = rep.judges[P.OUTCOME].metrics
    model = model_name(parse_judge_id(P.OUTCOME).model or "")
    k = int(cr["n_reply_unchanged_types"])
    paired = format_number(float(cr["outcome_paired_reply_unchanged"]), 3)
    every = (
        "every one of those faults"
        if float(cr["step_recall_reply_unchanged"]) == 1
        else f"{_pct(cr['step_recall_reply_unchanged'])} or more of those faults"
    )
    clean = int(cr["step_clean_flagged"])
    clean_text = (
        f"none of the {int(cr['step_clean_n'])} clean runs"
        if clean == 0
        else f"{clean} of the {int(cr['step_clean_n'])} clean runs"
    )
    return (
        f"Shown only the request and the final reply, the paper's {model} judge flags {_pct(out['loud_recall'])} of "
        f"loud faults but {_pct(out['silent_recall'])} of silent ones, and {_pct(out['false_alarm_rate'])} of correct "
        f"runs; on the {number_word(k)} fault types that leave the reply unchanged its recall of "
        f"{_pct(cr['outcome_recall_reply_unchanged_min'])} to {_pct(cr['outcome_recall_reply_unchanged_max'])} is "
        f"only its habit of flagging the clean runs they came from (paired discrimination {paired}), while the same "
        f"model told to check each step flags {every} and {clean_text}."
    )


def _verdict(claim: Any) -> str:
    """A claim's verdict in the register's words (a claim that only says whether it holds: borne out or not)."""
    v = getattr(claim, "verdict", None)
    if v in (BORNE_OUT, "not borne out", "not checkable"):
        return str(v)
    return BORNE_OUT if claim.holds else "not borne out"


def verdict_sentence(claims: Iterable[Any], keys: Iterable[str] = FINDING_KEYS) -> str:
    """Whether the paper's verdicts bear out the claims (of ``keys``, those present) the finding states:
    ``The paper's released verdicts bear this out: all eight claims ... are borne out``,
    or which are not borne out or not checkable."""
    by_key = {c.key: c for c in claims}
    chosen = [by_key[k] for k in keys if k in by_key]
    if not chosen:
        raise ValueError("none of the finding's claims is in the register")
    verdicts = [_verdict(c) for c in chosen]
    n, ok = len(chosen), verdicts.count(BORNE_OUT)
    scope = f"{number_word(n)} claims of the paper's abstracts that this sentence restates"
    if ok == n:
        return (
            f"The paper's released verdicts bear this out: by the claims register's one rule, all {scope} are borne out"
        )
    others = [f"{c.says} ({v})" for c, v in zip(chosen, verdicts) if v != BORNE_OUT]
    return f"The paper's released verdicts bear out {number_word(ok)} of the {scope}; not so: {'; '.join(others)}"


def register_counts_sentence(counts: Mapping[str, int]) -> str:
    """The whole register in one clause: ``of the 40 claims of the paper in its register, 30 borne out, 6 not borne out and 4 not checkable``."""
    total = sum(counts.values())
    parts = [f"{counts.get(v, 0)} {v}" for v in (BORNE_OUT, "not borne out", "not checkable")]
    return f"of the {total} claims of the paper in its register, {parts[0]}, {parts[1]} and {parts[2]}"
