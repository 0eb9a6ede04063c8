"""The claims of the paper's §7 with the captions of Figure 4 and Table 9 (:func:`analysis_claims`), and
the quoted miss of §7.2 (:func:`quoted_miss`), which the audit also recomputes."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import estimates as E, published as P
from trajectory_judge.analysis.paper.claims import Claim, Estimate, Stated, Variant
from trajectory_judge.analysis.paper.estimates import quoted_miss
from trajectory_judge.analysis.paper.register.common import (
    DP2,
    S8,
    SC,
    O,
    S,
    axes_count,
    count_value,
    published_main,
    record,
    signed_text,
    stated_decimals,
    stated_signed,
    text_value,
)
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Trajectory, Verdict

analysis_record = partial(record, "analysis")
"""A claim of §7 or of the captions of Figure 4 and Table 9 (group ``analysis``)."""


def _sections_71_72(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """§7.1 and §7.2."""
    d_sil = next(d for d in P.PUBLISHED_DELTAS if d.metric == "silent_recall" and d.a == O)
    g_pub = P.PUBLISHED_GAPS[0]
    hidden = E.hidden_types(traj, O)
    pt = P.PUBLISHED_PER_TYPE
    return [
        analysis_record(
            "§7.1",
            "view_silent_delta",
            f"showing the steps instead of the reply raises silent recall by {signed_text(d_sil.value)}, same model and prompt otherwise",
            stated_signed(d_sil.value),
            "paired silent-recall difference, step minus outcome view",
            E.delta(rep, O, S, "silent_recall"),
        ),
        analysis_record(
            "§7.1",
            "view_false_alarm_delta",
            f"the step view moves false alarms from {published_main(O, 'false_alarm_rate'):.3f} to zero",
            stated_signed(-published_main(O, "false_alarm_rate")),
            "paired false-alarm difference, step minus outcome view",
            E.delta(rep, O, S, "false_alarm_rate"),
        ),
        analysis_record(
            "§7.1",
            "outcome_gap",
            f"the outcome judge's loud-minus-silent gap is {signed_text(g_pub.value)}",
            stated_signed(g_pub.value),
            "its loud minus silent recall",
            E.gap(rep, O),
        ),
        analysis_record(
            "§7.1",
            "three_types_reply_unchanged",
            "for three of the six fault types the reply is word for word the clean run's",
            Stated.number("three", text_value("section71_reply_unchanged_types")),
            "fault types whose every fault shows the outcome view of its clean parent",
            Estimate.exact(len(hidden), len(TESTBED_FAILURE_TYPES), ", ".join(t.replace("_", " ") for t in hidden)),
        ),
        analysis_record(
            "§1; §7.1",
            "outcome_pooled",
            f"pooled over both strata the outcome judge's recall would read {count_value('pooled_recall_outcome'):.2f}",
            stated_decimals(count_value("pooled_recall_outcome"), DP2),
            "its recall over all faults",
            E.metric(rep, O, "recall"),
        ),
        analysis_record(
            "§7.1",
            "outcome_third_flagged",
            "the outcome judge flags a third of the correct trajectories",
            Stated.fraction("a third", 1 / 3),
            "its false-alarm rate",
            E.metric(rep, O, "false_alarm_rate"),
        ),
        analysis_record(
            "§7.2",
            "step_claim_recall",
            f"the step judge, shown the reply, catches only {pt[S]['unsupported_claim']:.2f} of the unsupported-claim faults",
            stated_decimals(pt[S]["unsupported_claim"], DP2),
            "its recall on unsupported-claim faults",
            E.metric(rep, S, "recall:unsupported_claim"),
        ),
        analysis_record(
            "§7.2; §7.4",
            "selfcons_claim_recall",
            f"the ensemble catches {pt[SC]['unsupported_claim']:.2f} of them",
            stated_decimals(pt[SC]["unsupported_claim"], DP2),
            "its recall on unsupported-claim faults",
            E.metric(rep, SC, "recall:unsupported_claim"),
        ),
        analysis_record(
            "§7.2",
            "outcome_claim_recall",
            f"the outcome judge's recall on them is {pt[O]['unsupported_claim']:.2f}",
            stated_decimals(pt[O]["unsupported_claim"], DP2),
            "its recall on unsupported-claim faults",
            E.metric(rep, O, "recall:unsupported_claim"),
        ),
        analysis_record(
            "§7.2",
            "outcome_claim_above_baseline",
            "the outcome judge's recall on them is barely above its false-alarm rate, but above it",
            Stated.side("above", "above"),
            "its paired discrimination on unsupported-claim faults",
            E.paired_group(rep, traj, verd, O, lambda t, p: t.label.failure_type == "unsupported_claim"),  # type: ignore[union-attr]
            variants=[
                Variant(
                    "baseline",
                    "its recall minus its false-alarm rate",
                    E.replicate_function(
                        rep,
                        [f"{O}|recall:unsupported_claim", f"{O}|false_alarm_rate"],
                        lambda a, b: a - b,
                        n=rep.judges[O].n,
                    ),
                )
            ],
        ),
        analysis_record(
            "§7.2",
            "section72_example_confidence",
            f"the step judge reports the quoted miss clean at confidence {text_value('section72_example_confidence'):.2f}",
            stated_decimals(text_value("section72_example_confidence"), DP2),
            "its confidence on the misses among the faults carrying the quoted promise (matched to the release by trajectory id)",
            quoted_miss(traj, verd),
            "no fault carrying the quoted promise is missed",
        ),
        analysis_record(
            "§7.2",
            "step_worse_on_claims",
            "shown the whole trajectory, the judge gets worse on the fault that lives in the reply",
            Stated.side("worse", "below"),
            "paired discrimination on unsupported-claim faults, step minus outcome view",
            E.paired_difference(rep, traj, verd, O, S, "unsupported_claim"),
            variants=[
                Variant(
                    "quantity",
                    "the raw recall difference",
                    E.type_recall_difference(rep, traj, verd, O, S, "unsupported_claim"),
                )
            ],
        ),
    ]


def _sections_73_75(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """§7.3 to §7.5 and the captions of Figure 4 and Table 9."""
    J = rep.judges
    d_ece = next(d for d in P.PUBLISHED_DELTAS if d.metric == "ece" and d.b == SC)
    others = axes_count(rep, S, SC, of=[a for a in E.QUALITY_AXES if a != "ece"], qualifier="other than ECE")
    conf = rep.confusion(S)
    pt = P.PUBLISHED_PER_TYPE
    base = (rep.design["silent"] + rep.design["loud"]) / rep.n_trajectories
    f1_all = float(next(b for b in rep.baselines if b.flags).metrics["f1"] or 0.0)
    tok = J[S8].metrics["completion_tokens_mean"] - J[S].metrics["completion_tokens_mean"]  # type: ignore[operator]
    return [
        analysis_record(
            "§7.3",
            "step8_floor",
            "the 8B step judge's false-alarm rate is 1.00",
            Stated.number("1.00", 1.0, DP2),
            "its false-alarm rate",
            E.metric(rep, S8, "false_alarm_rate"),
        ),
        analysis_record(
            "§7.3",
            "step8_recall",
            "the 8B step judge's recall is 1.00 nearly everywhere",
            Stated.number("1.00", 1.0, DP2),
            "its recall over all faults",
            E.metric(rep, S8, "recall"),
        ),
        analysis_record(
            "§7.3",
            "step8_f1_base_rate",
            f"the 8B step judge's F1 of {published_main(S8, 'f1'):.3f} is the base rate of faults in the set",
            stated_decimals(base),
            "its F1",
            E.metric(
                rep,
                S8,
                "f1",
                f"the base rate is {rep.design['silent'] + rep.design['loud']} faults in {rep.n_trajectories}",
            ),
            variants=[Variant("baseline", "the F1 of flagging everything", stated=stated_decimals(f1_all))],
        ),
        analysis_record(
            "§7.3",
            "step8_precision_base_rate",
            f"the 8B step judge's precision, {count_value('step8_precision'):.3f}, is about the base rate of 300 in 400",
            Stated.number(f"{base:.3f}", base, DP2),
            "its precision",
            E.metric(rep, S8, "precision"),
        ),
        analysis_record(
            "§7.3",
            "step8_short_rationales",
            f"the 8B step judge's rationales are far shorter than the 14B judge's ({count_value('step8_completion_tokens'):g} against {count_value('step_completion_tokens'):g} tokens)",
            Stated.side("shorter", "below"),
            "mean completion tokens, 8B minus 14B step judge (measured once)",
            Estimate.exact(
                tok,
                J[S8].n,
                f"{J[S8].metrics['completion_tokens_mean']:.0f} against {J[S].metrics['completion_tokens_mean']:.0f} tokens",
                method="measured once",
            ),
        ),
        analysis_record(
            "§7.4; Table 9 caption",
            "selfcons_ece",
            f"voting makes calibration worse: the ensemble's ECE is {signed_text(d_ece.value)} above one greedy pass",
            stated_signed(d_ece.value),
            "paired ECE difference, ensemble minus step judge",
            E.delta(rep, S, SC, "ece"),
        ),
        analysis_record(
            "§7.4",
            "selfcons_two_values",
            "with three samples the vote share can take only two values",
            Stated.number("two", 2.0),
            "distinct confidences the ensemble states",
            Estimate.exact(len(J[SC].confidence_support), J[SC].n),
        ),
        analysis_record(
            "§7.4",
            "selfcons_claim_drop",
            f"on unsupported-claim faults voting moves recall from {pt[S]['unsupported_claim']:.2f} to {pt[SC]['unsupported_claim']:.2f}",
            Stated.number(
                signed_text(pt[SC]["unsupported_claim"] - pt[S]["unsupported_claim"], 2),
                pt[SC]["unsupported_claim"] - pt[S]["unsupported_claim"],
                DP2,
            ),
            "paired recall difference on unsupported-claim faults, ensemble minus step judge",
            E.type_recall_difference(rep, traj, verd, S, SC, "unsupported_claim"),
        ),
        analysis_record(
            "Table 9 caption",
            "table9_only_calibration",
            "apart from calibration, every quality difference between the ensemble and one greedy pass straddles zero",
            Stated.number("none", 0.0),
            "quality axes other than ECE whose paired difference excludes zero",
            others,
        ),
        analysis_record(
            "§7.5",
            "step_hallucinated_all",
            "the step judge finds every hallucinated-argument fault",
            Stated.number("all 50", 1.0),
            "its recall on hallucinated-argument faults",
            E.metric(rep, S, "recall:hallucinated_argument"),
        ),
        analysis_record(
            "§7.5",
            "step_naming_lags_detection",
            "the step judge names faults worse than it detects them",
            Stated.side("lower", "below"),
            "its type macro-F1 minus its F1, on one shared resample",
            E.replicate_function(rep, [f"{S}|type_macro_f1", f"{S}|f1"], lambda a, b: a - b, n=J[S].n),
        ),
        analysis_record(
            "§7.5; Figure 4 caption",
            "step_misattributes_third",
            "the 14B step judge misattributes a third of the faults it detects",
            Stated.fraction("a third", 1 / 3),
            "share of its detections named with another type or none",
            E.misattributed_share(rep, traj, verd, S),
        ),
        analysis_record(
            "Figure 4 caption",
            "fig4_claims_missed",
            f"{count_value('confusion_claim_missed'):g} of the 50 unsupported-claim faults sit in the step judge's missed column",
            Stated.number(f"{count_value('confusion_claim_missed'):g}", count_value("confusion_claim_missed")),
            "unsupported-claim faults it judged clean",
            Estimate.exact(int(conf.loc["unsupported_claim", "missed"]), int(conf.loc["unsupported_claim"].sum())),
        ),
    ]


def analysis_claims(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """§7 and the captions of Figure 4 and Table 9."""
    return _sections_71_72(rep, traj, verd) + _sections_73_75(rep, traj, verd)
