"""The claims of the paper's abstract (:func:`headline_claims`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import estimates as E, published as P
from trajectory_judge.analysis.paper.claims import Claim, Counted, Estimate, Stated, Variant
from trajectory_judge.analysis.paper.register.common import (
    axes_count,
    cost_ratio,
    record,
    signed_text,
    stated_pct,
    text_value,
)
from trajectory_judge.models import Trajectory, Verdict

headline_record = partial(record, "headline")
"""A claim of the abstract with a number (group ``headline``), stated in the abstract and elsewhere."""

abstract_headline_record = partial(headline_record, "abstract")
"""A claim of the abstract with a number, stated in the abstract alone."""


abstract_record = partial(record, "abstract_text", "abstract")
"""A statement of the abstract without a number of its own (group ``abstract_text``)."""


def headline_claims(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> list[Claim]:
    """The abstract: the outcome judge's recalls and false alarms, the step judge's, costs and the ensemble (group
    ``headline``), and its two statements without a number of their own, that no judge reads the final reply and that
    the pipeline rebuilds every number offline (group ``abstract_text``)."""
    O, S = P.OUTCOME, P.STEP
    claim_miss = E.metric(rep, S, "recall:unsupported_claim")
    miss = Estimate(
        1 - claim_miss.value,
        1 - claim_miss.high,
        1 - claim_miss.low,
        claim_miss.method,
        claim_miss.n,
        f"{round((1 - claim_miss.value) * (claim_miss.n or 0))} of {claim_miss.n} unsupported-claim faults missed",
        None if claim_miss.replicates is None else 1 - claim_miss.replicates,
        None if claim_miss.units is None else 1 - claim_miss.units,
    )
    better = axes_count(rep, S, P.SELFCONS, "better")
    reads = _reads_reply(rep, traj, verd)
    return [
        abstract_headline_record(
            "design_400",
            "the five judges are scored over 400 trajectories",
            Stated.number("400", text_value("design_trajectories")),
            "trajectories every published judge judged",
            Estimate.exact(min(jr.n for j, jr in rep.judges.items() if j in P.PUBLISHED_JUDGES), rep.n_trajectories),
        ),
        abstract_headline_record(
            "outcome_loud",
            f"the outcome-only judge catches {text_value('abstract_outcome_loud_pct'):g}% of loud faults",
            stated_pct("abstract_outcome_loud_pct"),
            "its loud recall",
            E.metric(rep, O, "loud_recall"),
        ),
        abstract_headline_record(
            "outcome_silent",
            f"the outcome-only judge catches only {text_value('abstract_outcome_silent_pct'):g}% of silent faults",
            stated_pct("abstract_outcome_silent_pct"),
            "its silent recall",
            E.metric(rep, O, "silent_recall"),
        ),
        abstract_headline_record(
            "outcome_false_alarms",
            f"the outcome-only judge flags {text_value('abstract_outcome_far_pct'):g}% of the correct trajectories",
            stated_pct("abstract_outcome_far_pct"),
            "its false-alarm rate",
            E.metric(rep, O, "false_alarm_rate"),
        ),
        abstract_headline_record(
            "step_silent",
            f"the step-rubric judge of the same model reaches {text_value('abstract_step_silent_pct'):g}% silent recall",
            stated_pct("abstract_step_silent_pct"),
            "its silent recall",
            E.metric(rep, S, "silent_recall"),
        ),
        headline_record(
            "abstract; §6",
            "step_zero_false_alarms",
            "the step-rubric judge raises no false alarm",
            Stated.number("zero", 0.0),
            "its false-alarm rate",
            E.metric(rep, S, "false_alarm_rate"),
        ),
        abstract_headline_record(
            "step_cost",
            f"the step-rubric judge costs {text_value('abstract_step_cost_ratio'):g} times as much as the outcome-only one",
            Stated.number(
                f"{text_value('abstract_step_cost_ratio'):g} times", text_value("abstract_step_cost_ratio"), 1.0
            ),
            "the ratio of their seconds per trajectory",
            cost_ratio(rep, S, O),
        ),
        headline_record(
            "abstract; §7.2",
            "rules_miss_claims",
            "the rule engine never catches an invented promise",
            Stated.number("0%", 0.0),
            "its recall on unsupported-claim faults",
            E.metric(rep, P.RULES, "recall:unsupported_claim"),
        ),
        abstract_headline_record(
            "claim_evades_step",
            f"an invented promise evades the step judge {text_value('abstract_claim_evades_step_pct'):g}% of the time",
            stated_pct("abstract_claim_evades_step_pct"),
            "one minus its recall on unsupported-claim faults",
            miss,
        ),
        abstract_record(
            "no_judge_reads_reply",
            "no judge reads the final reply",
            Stated.number("none", 0.0),
            "LLM judges that flag unsupported-claim faults (the invented sentence is in the reply alone) more often than "
            "their clean parents, with a paired interval above zero",
            reads[0],
            variants=[Variant("quantity", "judges whose raw recall on those faults excludes zero", reads[1])],
        ),
        headline_record(
            "abstract; §7.4",
            "selfcons_cost",
            f"a self-consistency ensemble of the step judge costs {text_value('abstract_selfcons_cost_ratio'):g} times as much",
            Stated.number(
                f"{text_value('abstract_selfcons_cost_ratio'):g} times", text_value("abstract_selfcons_cost_ratio"), 1.0
            ),
            "the ratio of its seconds per trajectory to the greedy step judge's",
            cost_ratio(rep, P.SELFCONS, S),
        ),
        headline_record(
            "abstract; §7.4",
            "selfcons_improves_nothing",
            "the ensemble improves nothing over one greedy pass",
            Stated.number("none", 0.0),
            "quality axes on which the ensemble is better with a paired interval that excludes zero",
            better,
        ),
        abstract_record(
            "rebuilds_every_number",
            "the released pipeline rebuilds every number offline",
            Stated.number("every number", 1.0),
            "share of the published numbers the audit recomputes from the released verdicts",
            _rebuilt_share(rep, traj, verd),
        ),
    ]


def _reads_reply(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> tuple[Estimate, Estimate]:
    """LLM judges whose paired discrimination on unsupported-claim faults lies above zero, and those whose raw
    recall on them excludes zero, each as a count naming the judges with their values."""
    short = {P.OUTCOME: "outcome", P.STEP: "step 14B", P.STEP8: "step 8B", P.SELFCONS: "ensemble"}
    words = lambda j, e: f"{short.get(j, j)} {signed_text(e.value, 2)}"  # the interval is in the row of its own
    judges = [j for j in P.PUBLISHED_JUDGES if j != P.RULES and j in rep.judges]
    paired = {
        j: E.paired_group(rep, traj, verd, j, lambda t, p: t.label.failure_type == "unsupported_claim")  # type: ignore[union-attr]
        for j in judges
    }
    raw = {j: E.metric(rep, j, "recall:unsupported_claim") for j in judges}
    detail = lambda got: lambda hits: "; ".join(words(j, got[j]) for j in hits)
    return (
        Estimate.count_of([Counted(j, paired[j], "above") for j in judges], detail(paired)),
        Estimate.count_of([Counted(j, raw[j], "above") for j in judges], detail(raw)),
    )


def _rebuilt_share(rep: Report, traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> Estimate:
    """The audit's published numbers it can recompute, as a share of all it checks."""
    from trajectory_judge.analysis.core.loading import Dataset
    from trajectory_judge.analysis.paper.audit import NOT_RECOMPUTABLE, check_published

    rows = check_published(rep, Dataset(list(traj), list(verd))).to_frame()
    missing = int((rows["verdict"] == NOT_RECOMPUTABLE).sum())
    return Estimate.exact(
        (len(rows) - missing) / len(rows),
        len(rows),
        f"{len(rows) - missing} of {len(rows)} published numbers; {missing} cannot be recomputed from the release",
    )
