"""Every number the paper and its camera-ready abstract report about their own judges.

These are quotations, not results: each value is typed exactly as printed, with where it was
printed. Nothing in the package computes from them; the book sets them beside our measurements
(labelled "published (qwen2.5:14b)") and the audit chapter recomputes each one from the release.

Sources: ``paper`` is the arXiv version (arXiv:2609.00038); ``README`` is the released
repository's README at the pinned release commit, whose Results table is the paper's Table 3;
``abstract`` is the camera-ready abstract (NeurIPS 2026 workshop).

Access::

    PUBLISHED_MAIN["step:qwen2.5:14b"]["silent_recall"]   # 0.766
    PUBLISHED_INTERVALS, PUBLISHED_DELTAS, PUBLISHED_GAPS, PUBLISHED_PER_TYPE, PUBLISHED_COUNTS,
    PUBLISHED_PAIRED
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from trajectory_judge.analysis.core.registry import metric_names
from trajectory_judge.models import TESTBED_FAILURE_TYPES

RULES = "programmatic"


OUTCOME = "outcome:qwen2.5:14b"


STEP = "step:qwen2.5:14b"


STEP8 = "step:llama3.1:8b"


SELFCONS = "selfcons3:qwen2.5:14b"


PUBLISHED_JUDGES: tuple[str, ...] = (RULES, OUTCOME, STEP, STEP8, SELFCONS)
"""The five published judges, in the paper's order."""


PUBLISHED_MODEL = "qwen2.5:14b"
"""The model behind the published outcome, step and self-consistency judges."""


MAIN_METRICS: tuple[str, ...] = metric_names(main=True, count=False)
"""Columns of the published main table (the release README's Results table; the paper's Table 3 has the same layout,
but the text copy of the paper this edition reads does not carry its cells, so they are attributed to the README)."""


MAIN_SOURCE = "README Results table"


_MAIN_ROWS: dict[str, tuple[float | None, ...]] = {
    # F1, silent recall, loud recall, false alarms, step exact, type F1, ECE, s/traj
    # None = "n/a": the outcome judge names no step.
    RULES: (0.800, 0.429, 1.000, 0.000, 1.000, 0.667, 0.075, 0.0),
    OUTCOME: (0.712, 0.451, 0.840, 0.330, None, 0.300, 0.253, 3.5),
    STEP: (0.923, 0.766, 0.984, 0.000, 0.973, 0.606, 0.033, 10.4),
    STEP8: (0.852, 0.983, 1.000, 1.000, 0.807, 0.311, 0.148, 1.5),
    SELFCONS: (0.913, 0.760, 0.960, 0.010, 0.982, 0.583, 0.084, 30.2),
}


PUBLISHED_MAIN: Mapping[str, Mapping[str, float | None]] = MappingProxyType(
    {j: MappingProxyType(dict(zip(MAIN_METRICS, row))) for j, row in _MAIN_ROWS.items()}
)
"""judge -> metric -> published value (README Results table)."""


PER_TYPE_SOURCE = "README per-type table"


FALSE_ALARM_ROW = "false_alarms_on_clean"


_PER_TYPE_ROWS: dict[str, tuple[float, ...]] = {
    # TESTBED_FAILURE_TYPES order (wrong_tool, hallucinated_argument, skipped_precondition,
    # ignored_observation, premature_stop, unsupported_claim), then false alarms on clean.
    RULES: (0.00, 1.00, 1.00, 1.00, 1.00, 0.00, 0.00),
    OUTCOME: (0.34, 0.34, 0.74, 0.76, 1.00, 0.50, 0.33),
    STEP: (1.00, 1.00, 1.00, 1.00, 0.96, 0.18, 0.00),
    STEP8: (1.00, 0.94, 1.00, 1.00, 1.00, 1.00, 1.00),
    SELFCONS: (1.00, 1.00, 1.00, 1.00, 0.90, 0.16, 0.01),
}


PUBLISHED_PER_TYPE: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        j: MappingProxyType(dict(zip((*TESTBED_FAILURE_TYPES, FALSE_ALARM_ROW), row)))
        for j, row in _PER_TYPE_ROWS.items()
    }
)
"""judge -> failure type (or ``false_alarms_on_clean``) -> recall, two decimals (paper Table 4)."""


@dataclass(frozen=True)
class PublishedInterval:
    """A point estimate with its 95% interval, as quoted in the text."""

    judge: str
    """Judge id."""
    metric: str
    """Metric name (report vocabulary), or ``recall:<type>`` for a per-type recall."""
    value: float
    """Point estimate as printed."""
    low: float
    """Lower bound as printed."""
    high: float
    """Upper bound as printed."""
    source: str
    """Where it is printed."""


@dataclass(frozen=True)
class PublishedDelta:
    """A paired difference ``b - a`` with its 95% interval, as quoted in the text."""

    a: str
    """Reference judge."""
    b: str
    """Compared judge."""
    metric: str
    """Metric name."""
    value: float
    """Point estimate as printed."""
    low: float
    """Lower bound as printed."""
    high: float
    """Upper bound as printed."""
    source: str
    """Where it is printed."""


@dataclass(frozen=True)
class PublishedGap:
    """A judge's loud-minus-silent recall gap with its interval."""

    judge: str
    """Judge id."""
    value: float
    """Point estimate as printed."""
    low: float
    """Lower bound as printed."""
    high: float
    """Upper bound as printed."""
    source: str
    """Where it is printed."""


@dataclass(frozen=True)
class PublishedCount:
    """One count, rate or other single number quoted in the text."""

    value: float
    """The number as printed."""
    source: str
    """Where it is printed."""
    what: str
    """What it counts, in a few words."""


PUBLISHED_INTERVALS: tuple[PublishedInterval, ...] = (
    PublishedInterval(OUTCOME, "loud_recall", 0.840, 0.78, 0.90, "paper §6"),
    PublishedInterval(OUTCOME, "silent_recall", 0.451, 0.38, 0.52, "paper §6"),
    PublishedInterval(OUTCOME, "false_alarm_rate", 0.330, 0.24, 0.43, "paper §6"),
    PublishedInterval(STEP, "silent_recall", 0.766, 0.74, 0.80, "paper §6"),
    # "zero false alarms ... (dagger 95% upper bound 0.036)": exact Clopper-Pearson.
    PublishedInterval(STEP, "false_alarm_rate", 0.000, 0.000, 0.036, "paper §6"),
    PublishedInterval(STEP, "recall:unsupported_claim", 0.18, 0.08, 0.30, "paper §7.2"),
)
"""Intervals quoted in the text (paper §6, §7.2)."""


PUBLISHED_DELTAS: tuple[PublishedDelta, ...] = (
    PublishedDelta(OUTCOME, STEP, "silent_recall", 0.314, 0.240, 0.389, "paper §7.1"),
    PublishedDelta(STEP, SELFCONS, "f1", -0.009, -0.020, 0.000, "paper §7.4; Table 9"),
    PublishedDelta(STEP, SELFCONS, "silent_recall", -0.006, -0.017, 0.000, "paper §7.4; Table 9"),
    PublishedDelta(STEP, SELFCONS, "type_macro_f1", -0.023, -0.079, 0.035, "paper §7.4; Table 9"),
    PublishedDelta(STEP, SELFCONS, "step_exact", 0.009, -0.008, 0.027, "paper §7.4; Table 9"),
    PublishedDelta(STEP, SELFCONS, "ece", 0.051, 0.039, 0.071, "paper §7.4; Table 9"),
)
"""Paired deltas ``b - a`` quoted in the text (paper §7.1, §7.4, Appendix F)."""


PUBLISHED_GAPS: tuple[PublishedGap, ...] = (PublishedGap(OUTCOME, 0.389, 0.296, 0.482, "paper §7.1"),)
"""Loud-minus-silent gaps quoted in the text."""


PUBLISHED_COUNTS: Mapping[str, PublishedCount] = MappingProxyType(
    {
        # paper §6
        "step_flagged": PublishedCount(257, "paper §6", "trajectories the 14B step judge flagged"),
        "step_flagged_faulty": PublishedCount(257, "paper §6", "of those, genuinely faulty"),
        "step_exact_n": PublishedCount(223, "paper §6; Table 3", "localisation cases scored for the 14B step judge"),
        "step_exact": PublishedCount(0.973, "paper §6", "exact localisation of the 14B step judge"),
        "pooled_recall_outcome": PublishedCount(0.61, "paper §1, §7.1", "pooled recall of the outcome judge"),
        # paper §7.3
        "step8_flagged": PublishedCount(397, "paper §6, §7.3", "trajectories the 8B step judge flagged, of 400"),
        "step8_precision": PublishedCount(0.748, "paper §7.3", "precision of the 8B step judge"),
        "step8_completion_tokens": PublishedCount(57, "paper §7.3", "mean completion tokens, 8B step judge"),
        "step_completion_tokens": PublishedCount(391, "paper §7.3", "mean completion tokens, 14B step judge"),
        # paper §7.4, Figure 3
        "selfcons_at_two_thirds": PublishedCount(43, "paper §7.4", "ensemble verdicts at confidence 2/3"),
        "selfcons_at_one": PublishedCount(357, "paper §7.4", "ensemble verdicts at confidence 1.0"),
        "outcome_at_0.92": PublishedCount(276, "paper Figure 3", "outcome verdicts at confidence 0.92"),
        # paper §7.5, Figure 4 (confusion of the 14B step judge)
        "confusion_hallucinated_as_wrong_tool": PublishedCount(
            35, "paper §7.5", "hallucinated_argument called wrong_tool"
        ),
        "confusion_premature_correct": PublishedCount(14, "paper §7.5", "premature_stop named correctly"),
        "confusion_premature_as_claim": PublishedCount(17, "paper §7.5", "premature_stop called unsupported_claim"),
        "confusion_premature_as_skipped": PublishedCount(
            11, "paper §7.5", "premature_stop called skipped_precondition"
        ),
        "confusion_claim_missed": PublishedCount(41, "paper Figure 4", "unsupported_claim cases missed, of 50"),
        # Appendix E: distinct confidence values
        f"confidence_support:{RULES}": PublishedCount(2, "paper Appendix E", "distinct confidences, rules"),
        f"confidence_support:{OUTCOME}": PublishedCount(7, "paper Appendix E", "distinct confidences, outcome"),
        f"confidence_support:{STEP}": PublishedCount(11, "paper Appendix E", "distinct confidences, step 14B"),
        f"confidence_support:{STEP8}": PublishedCount(4, "paper Appendix E", "distinct confidences, step 8B"),
        f"confidence_support:{SELFCONS}": PublishedCount(2, "paper Appendix E", "distinct confidences, selfcons"),
        "step8_mass_at_0.90": PublishedCount(0.89, "paper Appendix E", "share of 8B verdicts at confidence 0.90"),
        # Appendix E, Table 8
        "judge_hours": PublishedCount(5.05, "paper Appendix E, Table 8", "hours of judge time, full run (approx.)"),
        # §8 and Appendix G: organic episodes (qwen2.5:14b driving the agent)
        "organic_episodes": PublishedCount(60, "paper §8", "organic episodes"),
        "organic_flagged": PublishedCount(13, "paper §8", "flagged or wrong outcome"),
        "organic_loud": PublishedCount(10, "paper §8", "wrong customer-visible outcome"),
        "organic_silent": PublishedCount(3, "paper §8", "faulty but outcome correct"),
        "organic_premature_stop": PublishedCount(
            13, "README; paper Appendix G", "rule-visible faults that are premature_stop"
        ),
        "organic_already_refunded_failed": PublishedCount(10, "paper §8", "already_refunded episodes that fail, of 10"),
        "organic_already_refunded_n": PublishedCount(10, "paper §8", "already_refunded episodes"),
        "organic_wrong_customer_failed": PublishedCount(3, "paper §8", "wrong_customer episodes that fail, of 10"),
        "organic_wrong_customer_n": PublishedCount(10, "paper §8", "wrong_customer episodes"),
        "organic_escalate_calls": PublishedCount(91, "paper §8", "escalate calls across the episodes"),
        "organic_with_check_eligibility": PublishedCount(30, "paper §8", "episodes that call check_eligibility"),
        "organic_failed_tool_calls": PublishedCount(0, "paper Appendix G", "tool calls that failed"),
        "organic_empty_final_answer": PublishedCount(3, "paper Appendix G", "episodes with an empty final answer"),
    }
)
"""name -> a count or single rate quoted in the text."""


PUBLISHED_ORGANIC_SETTINGS: Mapping[str, PublishedCount] = MappingProxyType(
    {
        "temperature": PublishedCount(0, "paper Appendix G", "the organic agent's sampling temperature"),
        "seed": PublishedCount(7, "paper Appendix G", "the organic agent's sampling seed"),
        "step_limit": PublishedCount(10, "paper Appendix G", "the most steps an organic episode may take"),
    }
)
"""The organic agent's decoding settings as Appendix G states them (not counts of anything: they set up
the episodes, so the audit does not recompute them)."""


REPLY_UNCHANGED_TYPES: tuple[str, ...] = (
    "wrong_tool",
    "hallucinated_argument",
    "skipped_precondition",
    "ignored_observation",
)
"""The four types the abstract calls reply-unchanged (as printed; the book recomputes which types reach each view)."""


PUBLISHED_PAIRED: Mapping[str, PublishedCount] = MappingProxyType(
    {
        "outcome_recall_reply_unchanged_min": PublishedCount(
            0.34, "abstract", "outcome recall, lowest of four reply-unchanged types"
        ),
        "outcome_recall_reply_unchanged_max": PublishedCount(
            0.76, "abstract", "outcome recall, highest of four reply-unchanged types"
        ),
        "outcome_paired_reply_unchanged": PublishedCount(
            0.0, "abstract", "outcome paired discrimination, reply-unchanged faults"
        ),
        "outcome_paired_loud": PublishedCount(0.393, "abstract", "outcome paired discrimination, loud faults"),
        "outcome_paired_silent": PublishedCount(0.048, "abstract", "outcome paired discrimination, silent faults"),
        "outcome_loud_recall": PublishedCount(0.84, "abstract", "outcome loud recall"),
        "outcome_silent_recall": PublishedCount(0.45, "abstract", "outcome silent recall"),
        "step_recall_reply_unchanged": PublishedCount(1.0, "abstract", "step recall on the four reply-unchanged types"),
        "step_clean_flagged": PublishedCount(0, "abstract", "clean runs the step judge flags, of 100"),
        "step_clean_flagged_ci_high": PublishedCount(0.036, "abstract", "upper 95% bound of that rate"),
        "claim_sentences": PublishedCount(4, "abstract", "invented promises"),
        "claim_always_flagged_sentences": PublishedCount(1, "abstract", "promises the step judge flags every time"),
        "claim_other_flagged": PublishedCount(1, "abstract", "faults flagged among the other three promises"),
        "claim_other_n": PublishedCount(42, "abstract", "faults carrying the other three promises"),
        "reply_paired_reply_unchanged": PublishedCount(
            0.69, "abstract", "reply-only judge paired discrimination, reply-unchanged faults"
        ),
        "step_paired_reply_unchanged": PublishedCount(
            1.00, "abstract", "step judge paired discrimination, reply-unchanged faults"
        ),
    }
)
"""The camera-ready abstract's numbers (paired discrimination against clean parents)."""


PUBLISHED_TEXT: Mapping[str, PublishedCount] = MappingProxyType(
    {
        # abstract of the arXiv version, as printed (percentages)
        "abstract_outcome_loud_pct": PublishedCount(84, "paper abstract", "outcome judge, loud recall (%)"),
        "abstract_outcome_silent_pct": PublishedCount(45, "paper abstract", "outcome judge, silent recall (%)"),
        "abstract_outcome_far_pct": PublishedCount(33, "paper abstract", "outcome judge, clean runs flagged (%)"),
        "abstract_step_silent_pct": PublishedCount(77, "paper abstract", "step judge, silent recall (%)"),
        "abstract_step_cost_ratio": PublishedCount(3, "paper abstract", "step over outcome s/traj (times)"),
        "abstract_claim_evades_step_pct": PublishedCount(
            82, "paper abstract", "unsupported_claim faults the step judge misses (%)"
        ),
        "abstract_selfcons_cost_ratio": PublishedCount(3, "paper abstract; §7.4", "ensemble over step s/traj (times)"),
        # design of the judged set (§3, Appendix F), and what every judge saw (README strata table)
        "design_trajectories": PublishedCount(400, "paper §3", "trajectories judged"),
        "design_clean": PublishedCount(100, "paper §3; Appendix F", "clean trajectories"),
        "design_silent": PublishedCount(175, "paper §3; Appendix F", "silent faults"),
        "design_loud": PublishedCount(125, "paper §3; Appendix F", "loud faults"),
        "design_per_type": PublishedCount(50, "paper §3; Table 4", "faults per type (each of six)"),
        "design_skipped_silent": PublishedCount(25, "paper Appendix A, F", "silent skipped_precondition faults"),
        "verdicts_total": PublishedCount(2000, "paper Appendix D", "raw verdicts"),
        "verdicts_unparseable": PublishedCount(
            0, "paper §4; Appendix D", "verdicts whose response could not be parsed"
        ),
        "rules_confidence_fired": PublishedCount(0.95, "README", "rule engine's confidence when a rule fires"),
        "rules_confidence_quiet": PublishedCount(0.60, "README", "rule engine's confidence when none fires"),
        # §6, §7 text beyond the tables
        "rules_silent_missed_pct": PublishedCount(57, "README", "silent faults the rule engine misses (%)"),
        "step8_base_rate": PublishedCount(0.75, "paper §7.3 (300/400)", "share of faults in the set"),
        "section71_reply_unchanged_types": PublishedCount(
            3, "paper §7.1", "fault types whose reply equals the clean run's"
        ),
        "abstract_reply_unchanged_types": PublishedCount(
            4, "camera-ready abstract", "fault types that leave the reply unchanged"
        ),
        "readme_pooled_recall_outcome": PublishedCount(
            0.68, "README design notes", "pooled recall of the outcome judge"
        ),
        "readme_step8_completion_tokens": PublishedCount(56, "README", "mean output tokens, 8B step judge"),
        "section72_example_confidence": PublishedCount(
            0.92, "paper §7.2", "confidence of one quoted miss (identified by its rationale)"
        ),
    }
)
"""Further numbers printed in the text (abstract, §3, §6-§7, appendices, README)."""


PUBLISHED_STRATA: Mapping[str, Mapping[str, int]] = MappingProxyType(
    {j: MappingProxyType({"clean": 100, "silent": 175, "loud": 125}) for j in PUBLISHED_JUDGES}
)
"""README "Strata each judge actually saw": judge -> stratum -> trajectories (the same for all five)."""


def published_main(judge: str, metric: str) -> float | None:
    """The published main-table value, or raise ``KeyError`` naming what is published."""
    if judge not in PUBLISHED_MAIN:
        raise KeyError(f"no published row for judge {judge!r}; published judges: {', '.join(PUBLISHED_JUDGES)}")
    row = PUBLISHED_MAIN[judge]
    if metric not in row:
        raise KeyError(f"no published column {metric!r}; published columns: {', '.join(MAIN_METRICS)}")
    return row[metric]


__all__ = [
    "FALSE_ALARM_ROW",
    "MAIN_METRICS",
    "OUTCOME",
    "PUBLISHED_COUNTS",
    "PUBLISHED_DELTAS",
    "PUBLISHED_GAPS",
    "PUBLISHED_INTERVALS",
    "PUBLISHED_JUDGES",
    "PUBLISHED_MAIN",
    "PUBLISHED_MODEL",
    "PUBLISHED_ORGANIC_SETTINGS",
    "PUBLISHED_PAIRED",
    "PUBLISHED_PER_TYPE",
    "PUBLISHED_STRATA",
    "PUBLISHED_TEXT",
    "REPLY_UNCHANGED_TYPES",
    "RULES",
    "SELFCONS",
    "STEP",
    "STEP8",
    "PublishedCount",
    "PublishedDelta",
    "PublishedGap",
    "PublishedInterval",
    "published_main",
]
