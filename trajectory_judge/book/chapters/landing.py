"""The landing page's finding: the paper's result in one sentence of computed numbers, and whether
the paper's own verdicts bear it out (``book/intro.md``, glued from the paired chapter).

:func:`finding_sentence` writes the finding from the report of the paper's verdicts and the
camera-ready quantities (:func:`trajectory_judge.book.chapters.paired.camera_ready_quantities`);
:func:`verdict_sentence` reads the verdicts of the claims it rests on (:data:`FINDING_KEYS`) from the
claims register and :func:`register_sentence` the whole register's, both through the book's one sentence on claims
(:func:`~trajectory_judge.book.render.claim_summary.summary_sentence`). Nothing here decides a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import published as P
from trajectory_judge.book.render.claim_summary import summary_sentence, tally, tally_of
from trajectory_judge.book.render.claim_text import Claims, number_word
from trajectory_judge.book.render.style import format_number, model_name
from trajectory_judge.models import JudgeSpec

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


def _pct(x: float | None) -> str:
    if x is None:
        raise ValueError("the finding states a rate the report does not have")
    return f"{100 * float(x):.0f}%"


def finding_sentence(rep: Report, cr: Mapping[str, float]) -> str:
    """The paper's finding in one sentence, every number computed: the outcome judge's loud, silent and
    clean-run flag rates; its recall and paired discrimination on the reply-unchanged types; the step
    judge of the same model on those types and on the clean runs."""
    out = rep.judges[P.OUTCOME].metrics
    model = model_name(JudgeSpec.parse(P.OUTCOME).model or "")
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


FINDING_SCOPE = "claims of its abstracts that this sentence restates"
"""The claims of :data:`FINDING_KEYS` in words, as the verdict sentence counts them."""


def verdict_sentence(claims: Claims, keys: Iterable[str] = FINDING_KEYS) -> str:
    """Whether the paper's verdicts bear out the claims (of ``keys``, those the register holds) the finding states,
    and how robust those verdicts are, counted (the first screen's sentence: the register names them;
    :func:`~trajectory_judge.book.render.claim_summary.summary_sentence`)."""
    return summary_sentence(tally_of(claims, keys, FINDING_SCOPE), robustness="count")


def register_sentence(claims: Claims) -> str:
    """The whole register in one sentence: how its verdicts fall, and how many are fragile or withdrawn after Holm."""
    return summary_sentence(tally(claims, "register"), name=False, robustness="count")
