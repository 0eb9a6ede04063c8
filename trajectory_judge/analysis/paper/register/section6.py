"""The claims of the paper's §6 with the captions of Table 3, Figure 2, Table 4 and Figure 3
(:func:`results_claims`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import estimates as E, published as P
from trajectory_judge.analysis.paper.claims import Claim, Estimate, Stated
from trajectory_judge.analysis.paper.register.common import (
    DP2,
    S8,
    SC,
    O,
    R,
    S,
    axes_count,
    count_value,
    flagged_count,
    published_main,
    record,
    stated_decimals,
    text_value,
)
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Trajectory, Verdict

results_record = partial(record, "results")
"""A claim of §6 (group ``results``)."""


def results_claims(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """§6 and the captions of Table 3, Figure 2, Table 4 and Figure 3."""
    J = rep.judges
    noisy = axes_count(rep, S, SC)
    cells8: dict[str, Estimate] = {
        t: E.metric(
            rep,
            S8,
            f"recall:{t}",
            f"{t.replace('_', ' ')}, {round(float(J[S8].per_type_recall[t] or 0) * 50)} of 50 faults flagged",
        )
        for t in TESTBED_FAILURE_TYPES
    }
    cells8["false_alarm_rate"] = E.metric(rep, S8, "false_alarm_rate", "false alarms on the clean runs")
    low8 = min(cells8.values(), key=lambda e: (e.value, -e.high))
    rule_zero = [t for t in TESTBED_FAILURE_TYPES if J[R].per_type_recall[t] == 0]
    gaps = E.replicate_function(
        rep,
        [f"{S}|loud_minus_silent", f"{O}|loud_minus_silent"],
        lambda s, o: 1 - s / o,
        f"the step judge's gap {next(g.value for g in rep.gaps if g.judge == S):+.3f} against the outcome judge's "
        f"{next(g.value for g in rep.gaps if g.judge == O):+.3f}",
        J[O].n,
    )
    best = max((j for j in P.PUBLISHED_JUDGES if j != R), key=lambda j: J[j].metrics["type_macro_f1"] or 0)
    n_flagged = flagged_count(rep, S)
    return [
        results_record(
            "Table 3 caption",
            "table3_same_set",
            "every judge is scored on the same 400 trajectories, 100 clean, 175 silent and 125 loud",
            Stated.number("400", text_value("design_trajectories")),
            "trajectories the judge with the fewest verdicts judged",
            Estimate.exact(
                min(J[j].n for j in P.PUBLISHED_JUDGES),
                rep.n_trajectories,
                f"{rep.design['clean']} clean, {rep.design['silent']} silent and {rep.design['loud']} loud",
            ),
        ),
        results_record(
            "Table 3 caption",
            "table3_rules_no_interval",
            "the rule engine's recalls have no sampling variance under the design-conditioned bootstrap",
            Stated.number("zero", 0.0),
            "the width of the rule engine's silent-recall interval",
            (lambda e: Estimate.exact(e.high - e.low, e.n, _interval_words(e.method)))(
                E.metric(rep, R, "silent_recall")
            ),
        ),
        results_record(
            "§6",
            "step_all_flagged_faulty",
            f"every one of the {count_value('step_flagged'):g} trajectories the step judge flagged is genuinely faulty",
            Stated.number("all", 1.0),
            "its precision",
            E.metric(rep, S, "precision", f"{n_flagged} trajectories flagged"),
        ),
        results_record(
            "§6",
            "step_localisation",
            f"the step judge localises nearly exactly, {published_main(S, 'step_exact'):.3f} over its {count_value('step_exact_n'):g} scored cases",
            stated_decimals(published_main(S, "step_exact")),
            "its exact-step localisation",
            E.metric(rep, S, "step_exact", f"over {int(J[S].metrics['step_exact_n'] or 0)} scored cases"),
        ),
        results_record(
            "§6; Figure 3 caption",
            "step_calibration",
            f"the step judge's stated confidence is more honest than the outcome judge's (ECE {published_main(S, 'ece'):.3f} against {published_main(O, 'ece'):.3f})",
            Stated.side("lower", "below"),
            "paired ECE difference, step minus outcome judge",
            E.delta(rep, O, S, "ece"),
        ),
        results_record(
            "§6",
            "rules_no_false_alarm",
            "the rule engine never raises a false alarm",
            Stated.number("never", 0.0),
            "its false-alarm rate",
            E.metric(rep, R, "false_alarm_rate"),
        ),
        results_record(
            "§6",
            "rules_exact_localisation",
            "the rule engine localises every fault it flags exactly",
            Stated.number("perfectly", 1.0),
            "its exact-step localisation",
            E.metric(rep, R, "step_exact"),
        ),
        results_record(
            "§6",
            "rules_free",
            "the rule engine costs nothing",
            Stated.number("0.0 s", 0.0, 0.1),
            "its seconds per trajectory",
            E.metric(rep, R, "s_per_traj"),
        ),
        results_record(
            "§6; §7.5",
            "rules_type_best",
            f"the rule engine types faults better than any model, at a macro-F1 of {published_main(R, 'type_macro_f1'):.3f}",
            Stated.side("better", "above"),
            "paired type macro-F1 difference, rule engine minus the best model",
            E.delta(rep, best, R, "type_macro_f1", f"the best model's is {J[best].metrics['type_macro_f1']:.3f}"),
        ),
        results_record(
            "§6",
            "rules_silent",
            "the rule engine still misses more than half of the silent faults",
            Stated.side("below one half", "below", 0.5),
            "its silent recall",
            E.metric(rep, R, "silent_recall"),
        ),
        results_record(
            "§6",
            "rules_two_types_blind",
            "two of the six fault types are beyond what rules can express",
            Stated.number("two", 2.0),
            "fault types the rule engine never flags",
            Estimate.exact(
                len(rule_zero), len(TESTBED_FAILURE_TYPES), ", ".join(t.replace("_", " ") for t in rule_zero)
            ),
        ),
        results_record(
            "§6; §7.3",
            "step8_flagged",
            f"the 8B step judge flags {count_value('step8_flagged'):g} of the {text_value('design_trajectories'):g} trajectories",
            Stated.number(f"{count_value('step8_flagged'):g}", count_value("step8_flagged")),
            "trajectories it flagged",
            Estimate.exact(flagged_count(rep, S8), J[S8].n),
        ),
        results_record(
            "§6; §7.4",
            "selfcons_within_noise",
            "the ensemble lands within noise of one greedy pass on every quality axis",
            Stated.number("none", 0.0),
            "quality axes whose paired difference, ensemble minus greedy step judge, excludes zero",
            noisy,
        ),
        results_record(
            "Figure 2 caption",
            "fig2_step_closes_gap",
            "the step judge closes most of the outcome judge's loud-minus-silent gap",
            Stated.side("more than half", "above", 0.5),
            "one minus the ratio of the step judge's gap to the outcome judge's",
            gaps,
        ),
        results_record(
            "Table 4 caption",
            "step8_uniform",
            "the 8B judge's column is uniformly 1.00, the false-alarm row included",
            Stated.number("1.00", 1.0, DP2),
            "its lowest cell",
            low8,
        ),
        results_record(
            "Figure 3 caption",
            "fig3_most_certain_least_right",
            "the outcome judge is most certain exactly where it is least right",
            Stated.side("less accurate", "below"),
            "accuracy at its most frequent confidence minus its accuracy at every other confidence",
            E.accuracy_at_top_confidence(rep, traj, verd, O),
        ),
        results_record(
            "Figure 3 caption",
            "fig3_rules_two_constants",
            "the rule engine's confidence takes two hand-set values",
            Stated.number("two", 2.0),
            "distinct confidences it states",
            Estimate.exact(len(J[R].confidence_support), J[R].n),
        ),
    ]


def _interval_words(method: str) -> str:
    """How an interval was obtained, in words, for the detail of a claim on its width."""
    words = {
        "structural": "the interval is structural: the design fixes the value",
        "bootstrap": "the interval is the stratified bootstrap's",
        "clopper-pearson": "the interval is exact (Clopper\u2013Pearson)",
    }
    return words.get(method, f"the interval is {method}")
