"""The claims of the camera-ready abstract (:func:`camera_ready_claims`): paired discrimination on the
reply-unchanged types and by outcome survival, read from the records the paired chapter prints
(:mod:`trajectory_judge.analysis.paper.paired_detail`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import estimates as E, published as P
from trajectory_judge.analysis.paper.claims import Claim, Estimate, Stated
from trajectory_judge.analysis.paper.paired_detail import camera_ready
from trajectory_judge.analysis.paper.register.common import DP2, DP3, PCT, REPLY_WHY, paired_value, record, signed_text
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Trajectory, Verdict, design_cell

camera_ready_record = partial(record, "camera_ready", "camera-ready abstract")
"""A claim of the camera-ready abstract (group ``camera_ready``)."""


def camera_ready_claims(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """The camera-ready abstract: the four reply-unchanged types, paired discrimination, the step judge's bound."""
    O, S = P.OUTCOME, P.STEP
    four = E.hidden_types(traj, O)
    hidden = lambda t, p: t.label.failure_type in four
    rec = {t: E.metric(rep, O, f"recall:{t}", t.replace("_", " ")) for t in four}
    lo_t, hi_t = min(four, key=lambda t: rec[t].value), max(four, key=lambda t: rec[t].value)
    by_step = {v.trajectory_id: v for v in verd if v.judge_id == S}
    n4 = [t for t in traj if t.label and t.label.failure_type in four and t.trajectory_id in by_step]
    k4 = sum(by_step[t.trajectory_id].faulty for t in n4)
    rows = np.asarray([[float(by_step[t.trajectory_id].faulty), 1.0] for t in n4])
    step4 = E.ratio_of_sums(rows, [design_cell(t.label) for t in n4], 0, 1, rep, f"{k4} of {len(n4)} faults flagged")
    claims = rep.claim_table(S)
    always = claims[claims["recall"] == 1.0]
    rest = claims.drop(always.index)
    far = E.metric(rep, S, "false_alarm_rate")
    paired = camera_ready(rep, traj, O, S, verd).paired  # the records the paired chapter prints
    return [
        camera_ready_record(
            "cr_four_types",
            "four of the six fault types leave the outcome judge's input unchanged",
            Stated.number("four", float(len(P.REPLY_UNCHANGED_TYPES))),
            "fault types whose every fault shows the outcome view of its clean parent",
            Estimate.exact(len(four), len(TESTBED_FAILURE_TYPES), ", ".join(t.replace("_", " ") for t in four)),
        ),
        camera_ready_record(
            "cr_outcome_hidden_min",
            f"on those four types the outcome judge's recall is as low as {paired_value('outcome_recall_reply_unchanged_min'):.0%}",
            Stated.number(
                f"{paired_value('outcome_recall_reply_unchanged_min'):.0%}",
                paired_value("outcome_recall_reply_unchanged_min"),
                PCT,
            ),
            "its lowest recall of the four",
            rec[lo_t],
        ),
        camera_ready_record(
            "cr_outcome_hidden_max",
            f"the outcome judge's recall on those four types is at most {paired_value('outcome_recall_reply_unchanged_max'):.0%}",
            Stated.number(
                f"{paired_value('outcome_recall_reply_unchanged_max'):.0%}",
                paired_value("outcome_recall_reply_unchanged_max"),
                PCT,
            ),
            "its highest recall of the four",
            rec[hi_t],
        ),
        camera_ready_record(
            "cr_outcome_hidden_paired",
            "on those four types the outcome judge's paired discrimination is zero",
            Stated.number("zero", 0.0),
            "its paired discrimination on the faults of the four types",
            E.paired_group(rep, traj, verd, O, hidden),
        ),
        camera_ready_record(
            "cr_outcome_loud_paired",
            f"the outcome judge's loud recall is a paired {signed_text(paired_value('outcome_paired_loud'))}",
            Stated.number(signed_text(paired_value("outcome_paired_loud")), paired_value("outcome_paired_loud"), DP3),
            "its paired discrimination on loud faults",
            paired["outcome_paired_loud"],
        ),
        camera_ready_record(
            "cr_outcome_silent_paired",
            f"the outcome judge's silent recall is a paired {signed_text(paired_value('outcome_paired_silent'))}",
            Stated.number(
                signed_text(paired_value("outcome_paired_silent")), paired_value("outcome_paired_silent"), DP3
            ),
            "its paired discrimination on silent faults",
            paired["outcome_paired_silent"],
        ),
        camera_ready_record(
            "cr_step_hidden_all",
            "told to check each step, the same model flags every fault of those four types",
            Stated.number("every fault", 1.0),
            "the step judge's recall on the four types",
            step4,
        ),
        camera_ready_record(
            "cr_step_clean_bound",
            f"the step judge flags none of the clean runs, with a 95% upper bound of {paired_value('step_clean_flagged_ci_high'):.1%}",
            Stated.number(
                f"{paired_value('step_clean_flagged_ci_high'):.1%}", paired_value("step_clean_flagged_ci_high"), 0.001
            ),
            "the upper bound of its false-alarm rate",
            Estimate.exact(
                far.high,
                far.n,
                f"{round(far.value * (far.n or 0))} of {far.n} clean runs flagged; the Clopper\u2013Pearson bound",
            ),
        ),
        camera_ready_record(
            "cr_claim_one_always",
            "of the four invented promises the step judge flags one every time",
            Stated.number("one", paired_value("claim_always_flagged_sentences")),
            "invented promises whose every fault it flags",
            Estimate.exact(len(always), len(claims), f"of {len(claims)} promises"),
        ),
        camera_ready_record(
            "cr_claim_others_once",
            f"the step judge flags the other three promises once in {paired_value('claim_other_n'):g} faults",
            Stated.number("once", paired_value("claim_other_flagged")),
            "faults flagged among those carrying the other promises",
            Estimate.exact(int(rest["flagged"].sum()), int(rest["n"].sum()), f"of {int(rest['n'].sum())} faults"),
        ),
        camera_ready_record(
            "cr_reply_paired",
            f"a judge shown every step but asked only about the reply reaches a paired {signed_text(paired_value('reply_paired_reply_unchanged'), 2)} on those types",
            Stated.number(
                signed_text(paired_value("reply_paired_reply_unchanged"), 2),
                paired_value("reply_paired_reply_unchanged"),
                DP2,
            ),
            "the reply-only judge's paired discrimination on the four types",
            None,
            REPLY_WHY,
        ),
        camera_ready_record(
            "cr_step_hidden_paired",
            f"told to check each step, the judge's paired discrimination on those types is {signed_text(paired_value('step_paired_reply_unchanged'), 2)}",
            Stated.number(
                signed_text(paired_value("step_paired_reply_unchanged"), 2),
                paired_value("step_paired_reply_unchanged"),
                DP2,
            ),
            "the step judge's paired discrimination on the four types",
            E.paired_group(rep, traj, verd, S, hidden),
        ),
    ]
