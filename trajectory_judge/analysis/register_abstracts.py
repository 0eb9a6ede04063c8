"""The claims of the paper's two abstracts (:func:`headline_claims`, :func:`camera_ready_claims`), and the
small helpers every part of the register uses.

Each claim is written in this book's words; its stated value or direction comes from
:mod:`trajectory_judge.analysis.published` where the number is quoted there, and its estimate from
:mod:`trajectory_judge.analysis.estimates`. No verdict is written here: each is derived by the
rule of :mod:`trajectory_judge.analysis.claims`.
"""

from __future__ import annotations

import numpy as np

from trajectory_judge.analysis import estimates as E, published as P
from trajectory_judge.analysis.claims import Claim, Estimate, Stated
from trajectory_judge.analysis.report import Report
from trajectory_judge.models import FAILURE_TYPES, design_cell

QUOTED_MISS_PROMISE = 1
"""Index in :data:`trajectory_judge.testbed.inject.INVENTED_PROMISES` of this edition's wording of the invented
promise §7.2 quotes (a linked plan cancelled): its faults are, trajectory id for trajectory id, the release's faults
carrying the quoted sentence (``tests/test_register.py`` checks the match against the release)."""

ORGANIC_WHY = "the release holds no organic episodes, only the verdicts on the 400 injected trajectories"
REPLY_WHY = "the release holds no reply-only judge's verdicts"

PCT, DP3, DP2 = 0.01, 0.001, 0.01


def record(key, group, where, says, stated, quantity, estimate, why_not="") -> Claim:
    """A claim record (positional, so the lists below read as tables)."""
    return Claim(key, group, where, says, stated, quantity, estimate, why_not)


def text_value(key: str) -> float:
    """A number printed in the text (:data:`~.published.PUBLISHED_TEXT`)."""
    return float(P.PUBLISHED_TEXT[key].value)


def count_value(key: str) -> float:
    """A count printed in the text (:data:`~.published.PUBLISHED_COUNTS`)."""
    return float(P.PUBLISHED_COUNTS[key].value)


def paired_value(key: str) -> float:
    """A number of the camera-ready abstract (:data:`~.published.PUBLISHED_PAIRED`)."""
    return float(P.PUBLISHED_PAIRED[key].value)


def pct_text(x: float) -> str:
    """``84%``."""
    return f"{x:g}%"


def signed_text(x: float, digits: int = 3) -> str:
    """``+0.314``, with a true minus sign."""
    return f"{x:+.{digits}f}".replace("-", "\u2212")


def cost_ratio(rep: Report, num: str, den: str) -> Estimate:
    """The ratio of two judges' seconds per trajectory, on every replicate of the report's bootstrap."""
    return E.replicate_function(
        rep,
        [f"{num}|s_per_traj", f"{den}|s_per_traj"],
        lambda a, b: a / b,
        f"{rep.judges[num].metrics['s_per_traj']:.1f} against {rep.judges[den].metrics['s_per_traj']:.1f} "
        "seconds per trajectory",
        rep.n_trajectories,
    )


def flagged_count(rep: Report, judge: str) -> int:
    """Trajectories a judge flagged."""
    jr = rep.judges[judge]
    return round(
        jr.metrics["recall"] * (jr.strata["silent"] + jr.strata["loud"])  # type: ignore[operator]
        + jr.metrics["false_alarm_rate"] * jr.strata["clean"]  # type: ignore[operator]
    )


def headline_claims(rep: Report, traj, verd) -> list[Claim]:
    O, S = P.OUTCOME, P.STEP
    claim_miss = E.metric(rep, S, "recall:unsupported_claim")
    miss = Estimate(
        1 - claim_miss.value,
        1 - claim_miss.high,
        1 - claim_miss.low,
        claim_miss.method,
        claim_miss.n,
        f"{round((1 - claim_miss.value) * claim_miss.n)} of {claim_miss.n} unsupported-claim faults missed",  # type: ignore[operator]
    )
    better = E.better_beyond_noise(rep, S, P.SELFCONS)
    return [
        record(
            "design_400",
            "headline",
            "abstract",
            "the five judges are scored over 400 trajectories",
            Stated.number("400", text_value("design_trajectories")),
            "trajectories every published judge judged",
            Estimate.exact(min(jr.n for j, jr in rep.judges.items() if j in P.PUBLISHED_JUDGES), rep.n_trajectories),
        ),
        record(
            "outcome_loud",
            "headline",
            "abstract",
            f"the outcome-only judge catches {text_value('abstract_outcome_loud_pct'):g}% of loud faults",
            Stated.number(
                pct_text(text_value("abstract_outcome_loud_pct")), text_value("abstract_outcome_loud_pct") / 100, PCT
            ),
            "its loud recall",
            E.metric(rep, O, "loud_recall"),
        ),
        record(
            "outcome_silent",
            "headline",
            "abstract",
            f"the outcome-only judge catches only {text_value('abstract_outcome_silent_pct'):g}% of silent faults",
            Stated.number(
                pct_text(text_value("abstract_outcome_silent_pct")),
                text_value("abstract_outcome_silent_pct") / 100,
                PCT,
            ),
            "its silent recall",
            E.metric(rep, O, "silent_recall"),
        ),
        record(
            "outcome_false_alarms",
            "headline",
            "abstract",
            f"the outcome-only judge flags {text_value('abstract_outcome_far_pct'):g}% of the correct trajectories",
            Stated.number(
                pct_text(text_value("abstract_outcome_far_pct")), text_value("abstract_outcome_far_pct") / 100, PCT
            ),
            "its false-alarm rate",
            E.metric(rep, O, "false_alarm_rate"),
        ),
        record(
            "step_silent",
            "headline",
            "abstract",
            f"the step-rubric judge of the same model reaches {text_value('abstract_step_silent_pct'):g}% silent recall",
            Stated.number(
                pct_text(text_value("abstract_step_silent_pct")), text_value("abstract_step_silent_pct") / 100, PCT
            ),
            "its silent recall",
            E.metric(rep, S, "silent_recall"),
        ),
        record(
            "step_zero_false_alarms",
            "headline",
            "abstract; §6",
            "the step-rubric judge raises no false alarm",
            Stated.number("zero", 0.0),
            "its false-alarm rate",
            E.metric(rep, S, "false_alarm_rate"),
        ),
        record(
            "step_cost",
            "headline",
            "abstract",
            f"the step-rubric judge costs {text_value('abstract_step_cost_ratio'):g} times as much as the outcome-only one",
            Stated.number(
                f"{text_value('abstract_step_cost_ratio'):g} times", text_value("abstract_step_cost_ratio"), 1.0
            ),
            "the ratio of their seconds per trajectory",
            cost_ratio(rep, S, O),
        ),
        record(
            "rules_miss_claims",
            "headline",
            "abstract; §7.2",
            "the rule engine never catches an invented promise",
            Stated.number("0%", 0.0),
            "its recall on unsupported-claim faults",
            E.metric(rep, P.RULES, "recall:unsupported_claim"),
        ),
        record(
            "claim_evades_step",
            "headline",
            "abstract",
            f"an invented promise evades the step judge {text_value('abstract_claim_evades_step_pct'):g}% of the time",
            Stated.number(
                pct_text(text_value("abstract_claim_evades_step_pct")),
                text_value("abstract_claim_evades_step_pct") / 100,
                PCT,
            ),
            "one minus its recall on unsupported-claim faults",
            miss,
        ),
        record(
            "selfcons_cost",
            "headline",
            "abstract; §7.4",
            f"a self-consistency ensemble of the step judge costs {text_value('abstract_selfcons_cost_ratio'):g} times as much",
            Stated.number(
                f"{text_value('abstract_selfcons_cost_ratio'):g} times", text_value("abstract_selfcons_cost_ratio"), 1.0
            ),
            "the ratio of its seconds per trajectory to the greedy step judge's",
            cost_ratio(rep, P.SELFCONS, S),
        ),
        record(
            "selfcons_improves_nothing",
            "headline",
            "abstract; §7.4",
            "the ensemble improves nothing over one greedy pass",
            Stated.number("none", 0.0),
            "quality axes on which the ensemble is better with a paired interval that excludes zero",
            Estimate.exact(len(better), len(E.QUALITY_AXES), E.axes_detail(better)),
        ),
    ]


def camera_ready_claims(rep: Report, traj, verd) -> list[Claim]:
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
    return [
        record(
            "cr_four_types",
            "camera_ready",
            "camera-ready abstract",
            "four of the six fault types leave the outcome judge's input unchanged",
            Stated.number("four", float(len(P.REPLY_UNCHANGED_TYPES))),
            "fault types whose every fault shows the outcome view of its clean parent",
            Estimate.exact(len(four), len(FAILURE_TYPES), ", ".join(t.replace("_", " ") for t in four)),
        ),
        record(
            "cr_outcome_hidden_min",
            "camera_ready",
            "camera-ready abstract",
            f"on those four types the outcome judge's recall is as low as {paired_value('outcome_recall_reply_unchanged_min'):.0%}",
            Stated.number(
                f"{paired_value('outcome_recall_reply_unchanged_min'):.0%}",
                paired_value("outcome_recall_reply_unchanged_min"),
                PCT,
            ),
            "its lowest recall of the four",
            rec[lo_t],
        ),
        record(
            "cr_outcome_hidden_max",
            "camera_ready",
            "camera-ready abstract",
            f"the outcome judge's recall on those four types is at most {paired_value('outcome_recall_reply_unchanged_max'):.0%}",
            Stated.number(
                f"{paired_value('outcome_recall_reply_unchanged_max'):.0%}",
                paired_value("outcome_recall_reply_unchanged_max"),
                PCT,
            ),
            "its highest recall of the four",
            rec[hi_t],
        ),
        record(
            "cr_outcome_hidden_paired",
            "camera_ready",
            "camera-ready abstract",
            "on those four types the outcome judge's paired discrimination is zero",
            Stated.number("zero", 0.0),
            "its paired discrimination on the faults of the four types",
            E.paired_group(rep, traj, verd, O, hidden),
        ),
        record(
            "cr_outcome_loud_paired",
            "camera_ready",
            "camera-ready abstract",
            f"the outcome judge's loud recall is a paired {signed_text(paired_value('outcome_paired_loud'))}",
            Stated.number(signed_text(paired_value("outcome_paired_loud")), paired_value("outcome_paired_loud"), DP3),
            "its paired discrimination on loud faults",
            E.paired_group(rep, traj, verd, O, lambda t, p: not t.label.outcome_correct),  # type: ignore[union-attr]
        ),
        record(
            "cr_outcome_silent_paired",
            "camera_ready",
            "camera-ready abstract",
            f"the outcome judge's silent recall is a paired {signed_text(paired_value('outcome_paired_silent'))}",
            Stated.number(
                signed_text(paired_value("outcome_paired_silent")), paired_value("outcome_paired_silent"), DP3
            ),
            "its paired discrimination on silent faults",
            E.paired_group(rep, traj, verd, O, lambda t, p: t.label.outcome_correct),  # type: ignore[union-attr]
        ),
        record(
            "cr_step_hidden_all",
            "camera_ready",
            "camera-ready abstract",
            "told to check each step, the same model flags every fault of those four types",
            Stated.number("every fault", 1.0),
            "the step judge's recall on the four types",
            step4,
        ),
        record(
            "cr_step_clean_bound",
            "camera_ready",
            "camera-ready abstract",
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
        record(
            "cr_claim_one_always",
            "camera_ready",
            "camera-ready abstract",
            "of the four invented promises the step judge flags one every time",
            Stated.number("one", paired_value("claim_always_flagged_sentences")),
            "invented promises whose every fault it flags",
            Estimate.exact(len(always), len(claims), f"of {len(claims)} promises"),
        ),
        record(
            "cr_claim_others_once",
            "camera_ready",
            "camera-ready abstract",
            f"the step judge flags the other three promises once in {paired_value('claim_other_n'):g} faults",
            Stated.number("once", paired_value("claim_other_flagged")),
            "faults flagged among those carrying the other promises",
            Estimate.exact(int(rest["flagged"].sum()), int(rest["n"].sum()), f"of {int(rest['n'].sum())} faults"),
        ),
        record(
            "cr_reply_paired",
            "camera_ready",
            "camera-ready abstract",
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
        record(
            "cr_step_hidden_paired",
            "camera_ready",
            "camera-ready abstract",
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
