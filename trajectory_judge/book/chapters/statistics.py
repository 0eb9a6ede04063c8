"""Helpers of the chapter "What a judge's verdicts are worth" (``notebooks/statistics.md``).

Every table and sentence reads the two reports of :func:`~trajectory_judge.book.chapters.editions.load_editions`
(their statistics are computed by :mod:`trajectory_judge.analysis.core.judge_statistics` on the report's resamples)
and checks the point values against scikit-learn on every build (:func:`checked`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.judge_statistics import (
    COVERAGES,
    DELTA_STATISTICS,
    DeltaTest,
    delta_tests,
    expected_risk_curve,
    judge_statistics,
    mcnemar_pairs,
    pareto_front,
    point_statistics,
    risk_coverage,
)
from trajectory_judge.analysis.core.loading import Dataset
from trajectory_judge.analysis.core.registry import label_of
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper.register import QUALITY_AXES, axes_phrase, axes_words
from trajectory_judge.analysis.statistics.abstention import Abstention, Threshold, abstention_of
from trajectory_judge.analysis.statistics.dependence import Dependence, dependence
from trajectory_judge.analysis.statistics.deployment import Deployment, at_prevalence
from trajectory_judge.analysis.statistics.simultaneous import PerTypeFamily, per_type_family
from trajectory_judge.book.chapters.editions import Editions, ours_wording
from trajectory_judge.book.render.style import (
    by_source,
    family_pairs,
    format_interval,
    format_number,
    judge_name,
    label,
    list_text,
    llm_judges,
    plural,
    source_name,
)
from trajectory_judge.models import Label, Trajectory, Verdict, design_cell
from trajectory_judge.provenance.computed import computes

MARGINS: dict[str, float] = {
    "f1": 0.05,
    "silent_recall": 0.05,
    "loud_recall": 0.05,
    "false_alarm_rate": 0.05,
    "type_macro_f1": 0.05,
    "ece": 0.02,
}
"""The TOST's equivalence margin per metric: a paired difference within it is called practically zero. Five
points on a rate (one fault in twenty); two points of calibration error, whose values run an order of
magnitude smaller. Chosen with the first data in view, so :data:`SENSITIVITY_SCALES` shows the counts at half
and twice each margin."""

MARGIN = MARGINS["f1"]
"""The rates' margin, as sentences name it."""

SENSITIVITY_SCALES: tuple[float, ...] = (0.5, 1.0, 2.0)
"""The multiples of every margin at which :func:`margin_sensitivity_table` counts the equivalent differences."""

ALPHA = 0.05
"""Level of every test here (two-sided; the TOST's two one-sided tests each at this level)."""

POWER = 0.8
"""Power behind the minimum detectable effect."""

QUALITY_DELTAS: tuple[str, ...] = tuple(a for a in QUALITY_AXES if a not in ("step_exact", "brier"))
"""The report's paired deltas tested for multiplicity, power and equivalence: the quality axes of the register
(:data:`~trajectory_judge.analysis.paper.estimates.QUALITY_AXES`) but exact-step localisation, which is conditional on
detection and so computed on other faults for each judge, and the Brier score."""


def _editions(ed: Editions) -> dict[str, tuple[Dataset, Report]]:
    return {"release": (ed.paper, ed.paper_rep), "edition": (ed.ours, ed.rep)}


def _label(t: Trajectory) -> Label:
    """The label of a loaded trajectory (loading refuses a trajectory without one)."""
    if t.label is None:
        raise ValueError(f"trajectory {t.trajectory_id!r} has no label")
    return t.label


def checked(ed: Editions) -> int:
    """Recompute both editions' statistics with the scikit-learn check on (raises if any value differs by
    more than 1e-9); the number of judges checked."""
    n = 0
    for data, rep in _editions(ed).values():
        by = {t.trajectory_id: i for i, t in enumerate(data.trajectories)}
        aligned: dict[str, list[Verdict | None]] = {j: [None] * len(data.trajectories) for j in rep.judges}
        for v in data.verdicts:
            aligned[v.judge_id][by[v.trajectory_id]] = v
        labels = [_label(t) for t in data.trajectories]
        judge_statistics(labels, aligned, [design_cell(lab) for lab in labels], resamples=20, check=True)
        n += len(rep.judges)
    return n


def flag_everything(data: Dataset) -> dict[str, float | None]:
    """The statistics of a judge that flags every trajectory at one confidence (scikit-learn's values)."""
    flag = Verdict(trajectory_id="", judge_id="programmatic", faulty=True, confidence=1.0, rationale="")
    return point_statistics(
        [(_label(t), flag.model_copy(update={"trajectory_id": t.trajectory_id})) for t in data.trajectories]
    )


def _cell(rep: Report, j: str, m: str) -> str:
    jr = rep.judges[j]
    iv = jr.statistic_intervals.get(m)
    return format_interval(
        jr.statistics.get(m), iv.low if iv else None, iv.high if iv else None, iv.method if iv else None
    )


FLAG_ALL = "Flag everything (reference)"
"""Row label of the reference judge."""

TIED = "Tied pairs"
"""Column of the share of (faulty, clean) pairs whose probabilities of "faulty" are equal."""

OVER_TIES = "AUROC, ties against–for"
"""Column of AUROC with every tied pair broken against the judge, and in its favour."""


def _tie_range(values: Mapping[str, float | None]) -> str:
    """``low–high``: AUROC with every tie broken against the judge, and in its favour."""
    low, high = values.get("auroc_ties_against"), values.get("auroc_ties_for")
    if low is None or high is None:
        return format_number(None)
    return f"{format_number(low, 3)}–{format_number(high, 3)}"


def _judge_rows(rows: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> pd.DataFrame:
    """Per source (the paper's first), row label -> column -> cell: one frame each, stacked under a Source level."""
    return by_source({s: pd.DataFrame.from_dict(r, orient="index").rename_axis("judge") for s, r in rows.items()})


def _with_reference(
    ed: Editions, columns: Mapping[str, str], extra: Mapping[str, Callable[[Any], str]] | None = None
) -> pd.DataFrame:
    """Per judge of both editions, each statistic of ``columns`` (header -> statistic; the share of faults without an
    interval) and the ``extra`` columns (header -> cell of the judge's report), then a flag-everything row of the
    reference values."""

    def cell(rep: Report, j: str, s: str) -> str:
        return format_number(rep.judges[j].statistics[s], 3) if s == "prevalence" else _cell(rep, j, s)

    def rows(data: Dataset, rep: Report) -> dict[str, dict[str, Any]]:
        out = {
            judge_name(j): {c: cell(rep, j, s) for c, s in columns.items()}
            | {c: f(jr) for c, f in (extra or {}).items()}
            for j, jr in rep.judges.items()
        }
        ref = flag_everything(data)
        return out | {FLAG_ALL: {c: format_number(ref[s], 3) for c, s in columns.items()}}

    return _judge_rows({s: rows(data, rep) for s, (data, rep) in _editions(ed).items()})


@computes
def ranking_table(ed: Editions) -> pd.DataFrame:
    """Per judge of both editions: AUROC, AUPRC and its reference, Cohen's kappa, MCC, balanced accuracy and the flag
    rate beside the share of faults; a flag-everything row per edition gives the reference values (the ties behind
    AUROC are :func:`ties_table`'s)."""
    columns = {"AUROC": "auroc", "AUPRC": "auprc", "AUPRC at random (share faulty)": "prevalence"}
    columns |= {"Cohen's κ": "kappa", "MCC": "mcc", "Balanced accuracy": "balanced_accuracy"}
    return _with_reference(ed, columns, {"Flag rate": _flag_rate}).fillna({"Flag rate": format_number(1.0, 3)})


def _flag_rate(jr: Any) -> str:
    """The share of its trajectories a judge flagged, from its recall and false-alarm rate."""
    faults, clean = jr.strata["silent"] + jr.strata["loud"], jr.strata["clean"]
    return format_number(
        ((jr.metrics["recall"] or 0) * faults + (jr.metrics["false_alarm_rate"] or 0) * clean) / jr.n, 3
    )


@computes
def ties_table(ed: Editions) -> pd.DataFrame:
    """Per judge of both editions: its AUROC, the share of (faulty, clean) pairs tied on its probability of "faulty",
    and the AUROC with every tie broken against it and in its favour."""
    return _judge_rows(
        {
            source: {
                judge_name(j): {
                    "AUROC": _cell(rep, j, "auroc"),
                    TIED: format_number(jr.statistics["auroc_tied_pairs"], 3),
                    OVER_TIES: _tie_range(jr.statistics),
                }
                for j, jr in rep.judges.items()
            }
            for source, (_, rep) in _editions(ed).items()
        }
    )


def selective_caption() -> str:
    """The caption of :func:`selective_table`, its coverages from :data:`COVERAGES`."""
    shares = list_text([f"{q:.0%}" for q in COVERAGES], "")
    return (
        "Selective prediction, verdicts of equal confidence in random order (expected values): the area under the "
        "risk–coverage curve and its excess over the best ordering's, and, when the judge keeps "
        f"{shares} of its verdicts, surest first (to within one verdict), the recall on the faults among them and "
        "the share of them that is wrong."
    )


@computes
def selective_table(ed: Editions) -> pd.DataFrame:
    """Per judge: AURC and E-AURC, and at each coverage of :data:`COVERAGES` the recall on the kept faults and the
    risk, with intervals (verdicts of equal confidence in random order: expected values; the share kept is the
    coverage to within one verdict, as the chapter's sentence on the selective statistics says)."""
    columns = {"AURC (lower is better)": "aurc", "E-AURC (lower is better)": "e_aurc"}
    for q in COVERAGES:
        columns |= {
            f"Recall, keeping {q:.0%}": f"recall_at_coverage:{q:g}",
            f"Risk, keeping {q:.0%}": f"risk_at_coverage:{q:g}",
        }
    return _with_reference(ed, columns)


def whole_groups_coverage(data: Dataset, judge: str, q: float) -> float:
    """The share of its verdicts a judge keeps at coverage ``q`` if tie groups are kept or dropped whole:
    the smallest set of whole tie groups, surest first, that holds at least ``q``."""
    labels = {t.trajectory_id: _label(t) for t in data.trajectories}
    curve = risk_coverage([(labels[v.trajectory_id], v) for v in data.verdicts if v.judge_id == judge])
    return next(p["coverage"] for p in curve if p["coverage"] >= q - 1e-12)


def abstentions(ed: Editions) -> dict[str, Abstention]:
    """Each set of verdicts' certified confidence thresholds (:mod:`~trajectory_judge.analysis.statistics.abstention`) at its
    defaults, the largest error rate ``ALPHA`` among the kept verdicts with confidence ``1 - DELTA``."""
    return {source: abstention_of(data.trajectories, data.verdicts) for source, (data, _) in _editions(ed).items()}


def abstention_caption(res: Mapping[str, Abstention]) -> str:
    """The caption of :func:`abstention_table`, its error rate and confidence from the thresholds'."""
    first = next(iter(res.values()))
    return (
        f"The lowest stated confidence at or above which each judge's verdicts are wrong at most "
        f"{format_number(first.alpha, 2)} of the time with {1 - first.delta:.0%} confidence (fixed-sequence "
        "testing over its distinct confidences, exact binomial p-values), the share of its verdicts it keeps, and "
        "how often the kept ones are wrong here."
    )


@computes
def abstention_table(res: Mapping[str, Abstention]) -> pd.DataFrame:
    """Per judge: its certified threshold, the share of verdicts it keeps and the error rate among them, or that none
    is certified."""
    none = {"Trust at confidence": "none certified", "Share kept": format_number(0.0, 3), "Wrong among kept": "–"}
    return _judge_rows(
        {
            source: {
                judge_name(t.judge): none
                if t.threshold is None
                else {
                    "Trust at confidence": f"≥ {format_number(t.threshold, 2)}",
                    "Share kept": format_number(t.coverage, 3),
                    "Wrong among kept": format_number(t.risk, 3),
                }
                for t in a.judges
            }
            for source, a in res.items()
        }
    )


def abstention_sentence(ed: Editions, res: Mapping[str, Abstention]) -> str:
    """Which of the paper's judges have a certified threshold and what it keeps, and which have none, in a sentence."""
    paper = next(iter(res.values()))
    trusted = [t for t in paper.judges if t.threshold is not None]
    none = [t for t in paper.judges if t.threshold is None]

    def kept(t: Threshold) -> str:
        return (
            f"{judge_name(t.judge)} at confidence {format_number(t.threshold, 2)} and above, keeping "
            f"{format_number(t.coverage, 3)} of its verdicts"
        )

    design = ed.paper_rep.design
    faulty = (design["silent"] + design["loud"]) / max(1, sum(design.values()))
    parts = []
    if trusted:
        parts.append(f"a threshold is certified for {list_text([kept(t) for t in trusted], '')}")
    if none:
        parts.append(
            f"none is for {list_text([judge_name(t.judge) for t in none], '')}: even among the verdicts each states "
            f"most surely, an error rate above "
            f"{format_number(paper.alpha, 2)} cannot be ruled out, so its stated confidence cannot say which verdicts "
            f"to trust"
        )
    return (
        "On the paper's verdicts "
        + "; ".join(parts)
        + f". The guarantee holds for runs drawn as the labelled ones were, here the design's {faulty:.0%} faulty "
        "runs; at another share the same threshold keeps another error rate"
    )


def outcome_step_pairs(rep: Report) -> list[tuple[str, str]]:
    """The (outcome, step) judge pairs of one model."""
    return family_pairs(list(rep.judges), (("outcome", "step"),))


STATISTIC_NAMES: dict[str, str] = {s: label_of(s) for s in DELTA_STATISTICS}
"""Row labels of the paired table."""


@computes
def paired_table(ed: Editions) -> pd.DataFrame:
    """Step minus outcome judge of one model, one column per edition's pair: the paired delta of each
    statistic (rows), with its interval."""
    cols = {}
    for source, (_, rep) in _editions(ed).items():
        for a, b in outcome_step_pairs(rep):
            cols[f"{source_name(source)}: {judge_name(b)} − outcome"] = {
                name: _boot(rep.statistic_delta(a, b, m)) for m, name in STATISTIC_NAMES.items()
            }
    return pd.DataFrame(cols).rename_axis("statistic")


@computes
def mcnemar_table(ed: Editions) -> pd.DataFrame:
    """Per LLM judge: fault/clean-parent pairs, the discordant counts, paired discrimination and McNemar's exact p."""

    def row(m: Any) -> dict[str, Any]:
        return {
            "Pairs": m.n,
            "Flags the fault only": m.fault_only,
            "Flags the parent only": m.parent_only,
            "Paired discrimination": m.discrimination,
            "McNemar exact p": _p(m.pvalue),
            "Base runs": m.instances,
            "p, pairs of one run together": _p(m.pvalue_clustered),
        }

    return _judge_rows(
        {
            source: {judge_name(j): row(mcnemar_pairs(data.trajectories, data.verdicts, j)) for j in rep.judges}
            for source, (data, rep) in _editions(ed).items()
        }
    )


def paper_dependence(ed: Editions) -> Dependence:
    """The paper's headline deltas (step minus outcome judge of one model: recall, F1, AUROC) under the design's
    bootstrap and when whole base runs are drawn (:func:`~trajectory_judge.analysis.statistics.dependence.dependence`)."""
    return dependence(ed.paper.trajectories, ed.paper.verdicts, ed.paper_rep, outcome_step_pairs(ed.paper_rep))


DEPENDENCE_METRICS = {m: label_of(m) for m in ("recall", "f1", "auroc")}
"""The headline deltas' metrics as the dependence table names them."""


@computes
def dependence_table(dep: Dependence) -> pd.DataFrame:
    """Per headline delta: its value, its interval under the design's bootstrap and under whole base runs, and
    how much wider the second is."""
    rows = {}
    for d in dep.deltas:
        key = f"{judge_name(d.b)} − {judge_name(d.a)}: {DEPENDENCE_METRICS.get(d.metric, d.metric)}"
        rows[key] = {
            "Trajectories resampled in their cells": _boot(d),
            "Whole base runs resampled": format_interval(d.value, d.clustered_low, d.clustered_high, "bootstrap"),
            "Width, whole runs over cells": format_number(d.width_ratio, 2),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("paired difference")


def dependence_values(ed: Editions, dep: Dependence) -> dict[str, str]:
    """The sentences of the chapter's section on base runs, and the limitations page's count of them."""
    prep = ed.paper_rep
    (pa, pb), *_ = outcome_step_pairs(prep)
    mc = {j: mcnemar_pairs(ed.paper.trajectories, ed.paper.verdicts, j) for j in (pa, pb)}
    ours = {j: mcnemar_pairs(ed.ours.trajectories, ed.ours.verdicts, j) for j in llm_judges(list(ed.rep.judges))}
    moved = [
        f"{judge_name(j)}'s from {_p(m.pvalue)} to {_p(m.pvalue_clustered)}"
        for j, m in ours.items()
        if m.n and not math.isnan(m.pvalue_clustered) and _p(m.pvalue) != _p(m.pvalue_clustered)
    ]
    auroc = next(d for d in dep.deltas if d.metric == "auroc")
    ratios = [d.width_ratio for d in dep.deltas if not math.isnan(d.width_ratio)]
    excluded = [d for d in dep.deltas if d.clustered_low > 0 or d.clustered_high < 0]
    same = sum((d.low > 0 or d.high < 0) == (d.clustered_low > 0 or d.clustered_high < 0) for d in dep.deltas)
    return {
        "dependence_verdict": (
            "Drawing whole base runs, "
            + (
                f"each of the {len(dep.deltas)} headline differences keeps an interval that excludes 0"
                if len(excluded) == len(dep.deltas)
                else f"{len(excluded)} of the {len(dep.deltas)} headline differences keep an interval that excludes 0"
            )
            + ("" if same == len(dep.deltas) else f", where {same} did so with trajectories resampled one by one")
        ),
        "base_runs": (
            f"The paper's {dep.trajectories} trajectories come from {dep.instances} base runs, and the "
            f"{dep.paired_faults} faults whose clean parent is among them were planted in {dep.parents} of those runs"
        ),
        "dependence": (
            f"Drawing whole base runs moves the step − outcome AUROC difference's interval from "
            f"{_boot(auroc)} to "
            f"{format_interval(auroc.value, auroc.clustered_low, auroc.clustered_high, 'bootstrap')}; across the "
            f"{len(ratios)} headline differences the interval is {format_number(min(ratios), 2)} to "
            f"{format_number(max(ratios), 2)} times as wide. In its clustered form McNemar's test gives the paper's "
            f"outcome judge p {_p(mc[pa].pvalue_clustered)} and its "
            f"step judge p {_p(mc[pb].pvalue_clustered)}"
            + (f"; among {ours_wording().judges} it moves {list_text(moved, '')}." if moved else ".")
        ),
    }


DEPLOYMENT_PREVALENCE = 0.1
"""The share of faulty runs the chapter reads the prevalence-dependent statistics at: one run in ten, a rate an
agent in use is more likely to show than the design's three in four (``report --prevalence`` takes any)."""

DEPLOYMENT_NAMES = {s: label_of(s) for s in ("precision", "f1", "kappa", "mcc", "auprc")}
"""The columns of :func:`deployment_table`."""


def paper_deployment(ed: Editions) -> Deployment:
    """The paper's judges' precision, F1, kappa, MCC and AUPRC at :data:`DEPLOYMENT_PREVALENCE`."""
    return at_prevalence(
        ed.paper_rep, DEPLOYMENT_PREVALENCE, trajectories=ed.paper.trajectories, verdicts=ed.paper.verdicts
    )


@computes
def deployment_table(dep: Deployment) -> pd.DataFrame:
    """One row per judge: the statistics that move with the share of faulty runs, at the deployment's share, with
    intervals."""
    rows = {
        judge_name(j.judge): {
            DEPLOYMENT_NAMES[s]: format_interval(j.values[s], j.low[s], j.high[s], "bootstrap")
            for s in DEPLOYMENT_NAMES
            if s in dep.statistics
        }
        for j in dep.judges
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("judge")


def deployment_sentence(ed: Editions, dep: Deployment) -> str:
    """What the deployment's share does to the paper's outcome and step judges, in a sentence."""
    (pa, pb), *_ = outcome_step_pairs(ed.paper_rep)
    by = {j.judge: j for j in dep.judges}
    a, b = by[pa], by[pb]
    return (
        f"At {dep.prevalence:.0%} faulty runs instead of the design's {dep.design_prevalence:.0%}, the paper's outcome "
        f"judge's precision goes from {format_number(ed.paper_rep.judges[pa].metrics['precision'], 3)} to "
        f"{format_interval(a.values['precision'], a.low['precision'], a.high['precision'], 'bootstrap')} and its F1 "
        f"from {format_number(ed.paper_rep.judges[pa].metrics['f1'], 3)} to "
        f"{format_interval(a.values['f1'], a.low['f1'], a.high['f1'], 'bootstrap')}, while the step judge, which "
        f"raises almost no false alarm, keeps a precision of {format_number(b.values['precision'], 3)}. Ranked by "
        f"their confidence, where a judge ranking at random reaches the share itself "
        f"({format_number(dep.chance_auprc, 2)}), the outcome judge's AUPRC is "
        f"{format_interval(a.values['auprc'], a.low['auprc'], a.high['auprc'], 'bootstrap')} and the step judge's "
        f"{format_interval(b.values['auprc'], b.low['auprc'], b.high['auprc'], 'bootstrap')}"
    )


def paper_type_family(ed: Editions) -> PerTypeFamily:
    """The paper's LLM judges' per-type recalls read as one family (:func:`~trajectory_judge.analysis.statistics.simultaneous.per_type_family`)."""
    return per_type_family(ed.paper_rep, llm_judges(list(ed.paper_rep.judges)))


@computes
def type_family_table(fam: PerTypeFamily) -> pd.DataFrame:
    """One row per failure type, one column per judge: the recall with its simultaneous interval (its own where the
    recall is at 0 or 1 in every replicate, marked as the report marks an exact interval)."""
    rows: dict[str, dict[str, str]] = {}
    for c in fam.cells:
        rows.setdefault(label(c.failure_type), {})[judge_name(c.judge)] = format_interval(
            c.value, c.sim_low, c.sim_high, "bootstrap" if c.in_family else "clopper-pearson"
        )
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("failure_type")


def type_family_sentence(fam: PerTypeFamily) -> str:
    """The family in a sentence: its size, the critical value against a single cell's, and how much wider."""
    from scipy.stats import norm

    single = float(norm.ppf(0.5 + fam.level / 2))
    fixed = len(fam.cells) - fam.size
    return (
        f"Read together, the paper's {len(fam.cells)} per-type recalls of its LLM judges are one family: the "
        f"{fam.size} whose replicates vary share a simultaneous {fam.level:.0%} band (a {fam.method}) whose critical "
        f"value is {format_number(fam.critical, 2)} standard errors against {format_number(single, 2)} for one cell "
        f"alone, so each of their intervals is {format_number(fam.critical / single, 2)} times as wide"
        + (f"; the other {fixed}, at 0 or 1 in every replicate, keep their exact intervals" if fixed else "")
    )


def _boot(d: Any) -> str:
    """A paired difference (``value``, ``low``, ``high``) with its bootstrap interval."""
    return format_interval(d.value, d.low, d.high, "bootstrap")


def _p(p: float) -> str:
    return "–" if math.isnan(p) else "< 0.001" if p < 0.001 else f"{p:.3f}"


def quality_tests(rep: Report, scale: float = 1.0) -> list[DeltaTest]:
    """Bootstrap p, Holm, BH, MDE and TOST of every report delta on :data:`QUALITY_DELTAS`, with every margin of
    :data:`MARGINS` times ``scale``."""
    ds = [d for d in rep.deltas if d.metric in QUALITY_DELTAS and not math.isnan(d.value)]
    margins = {m: scale * v for m, v in MARGINS.items()}
    return delta_tests(rep.bootstrap, ds, margin=margins, alpha=ALPHA, power=POWER)


def margins_phrase() -> str:
    """The margins in words: ``±0.05 on F1, ... and ±0.02 on ECE``."""
    by: dict[float, list[str]] = {}
    for metric, m in MARGINS.items():
        by.setdefault(m, []).append(metric)
    return list_text([f"±{m:g} on {axes_words(names)}" for m, names in by.items()], "")


TESTING_COUNTS: tuple[str, ...] = (
    "All",
    "Without variance over the resamples (not tested)",
    "Interval excludes 0",
    f"Significant alone (p < {ALPHA:g})",
    "Significant after Holm's correction",
    "Significant after false-discovery control",
    "Interval holds 0",
    "Of those, equivalent to 0 (within the margin)",
)
"""The counts of :func:`testing_table`, its rows in plain words (the glossary says what each test is)."""

SMALLEST_DETECTABLE = "Smallest difference detectable (median of those)"
"""The last row of :func:`testing_table`: the median minimum detectable effect of the differences whose interval
holds 0."""


@computes
def testing_table(ed: Editions) -> pd.DataFrame:
    """One column per edition, one row per count of :data:`TESTING_COUNTS`: how many paired deltas exclude 0 before
    and after multiplicity control, how many hold 0, how many of those are equivalent to 0 within the margin; and
    their median minimum detectable effect (:data:`SMALLEST_DETECTABLE`). Rows, not columns, so the plain-word
    names fit the text column on a desktop and a phone alike."""
    cols = {}
    for source, (_, rep) in _editions(ed).items():
        every = quality_tests(rep)
        tests = [t for t in every if not t.degenerate]
        noise = [t for t in tests if t.delta.low <= 0 <= t.delta.high]
        counts = (
            len(every),
            len(every) - len(tests),
            len(tests) - len(noise),
            sum(t.pvalue < ALPHA for t in tests),
            sum(t.holm < ALPHA for t in tests),
            sum(t.bh < ALPHA for t in tests),
            len(noise),
            sum(t.equivalent for t in noise),
        )
        mde = float(pd.Series([t.mde for t in noise]).median()) if noise else math.nan
        cols[source_name(source)] = {
            **{name: str(n) for name, n in zip(TESTING_COUNTS, counts, strict=True)},
            SMALLEST_DETECTABLE: format_number(mde, 3),
        }
    return pd.DataFrame(cols).rename_axis("paired_differences")


def testing_caption() -> str:
    """The caption of :func:`testing_table`, its margins and power from :data:`MARGINS` and :data:`POWER`."""
    return (
        f"The paired deltas of {axes_words(QUALITY_DELTAS)} between every two judges: how many do not vary over the "
        "resamples, how many exclude 0 before and after multiplicity control, and for those that hold 0, how many "
        f"are equivalent to 0 within their margin ({margins_phrase()}) and their median minimum detectable effect "
        f"({POWER:.0%} power)."
    )


@computes
def margin_sensitivity_table(ed: Editions) -> pd.DataFrame:
    """Per edition, how many of the differences whose interval holds 0 are equivalent to 0 at each multiple of the
    margins (:data:`SENSITIVITY_SCALES`)."""
    cols = {}
    for source, (_, rep) in _editions(ed).items():
        col = {}
        for scale in SENSITIVITY_SCALES:
            tests = [t for t in quality_tests(rep, scale) if not t.degenerate and t.delta.low <= 0 <= t.delta.high]
            rates = format_number(MARGIN * scale, 3).rstrip("0")
            col[f"Margins ×{scale:g} (±{rates} on a rate)"] = f"{sum(t.equivalent for t in tests)} of {len(tests)}"
        cols[source_name(source)] = col
    return pd.DataFrame(cols).rename_axis("equivalent_to_0")


def front(rep: Report, quality: str) -> list[str]:
    """The judges of ``rep`` on the quality-cost front (``quality`` a statistic or a metric; cost in seconds per trajectory)."""
    q = {j: jr.statistics.get(quality, jr.metrics.get(quality)) for j, jr in rep.judges.items()}
    c = {j: cj for j, jr in rep.judges.items() if (cj := jr.metrics["s_per_traj"]) is not None}
    kept = {j: float(qj) for j, qj in q.items() if qj is not None and j in c}
    return pareto_front(kept, {j: float(c[j]) for j in kept})


def _names(judges: Sequence[str]) -> str:
    return list_text([judge_name(j) for j in judges], "no judge")


def _ours_ranking(rep, best: str | None, below: Sequence[str]) -> str:
    """The sentence on the ranking of the judges beside the paper's (their best LLM ranker, those below chance)."""
    whose = ours_wording().column
    head = (
        f"{whose}'s best LLM ranker is {judge_name(best)}, AUROC {_cell(rep, best, 'auroc')}; "
        if best is not None
        else f"{whose} holds no LLM judge to rank; "
    )
    under = [j for j in below if (iv := rep.judges[j].statistic_intervals.get("auroc")) is not None and iv.high < 0.5]
    held = [j for j in below if j not in under]
    if not below:
        return head + "none of its judges ranks below chance."
    out = head
    if under:
        out += (
            f"{plural(len(under), 'judge')} of its {len(rep.judges)} rank faults below clean runs more often than "
            f"above them, with an AUROC interval wholly under 0.5: {_names(under)}"
        )
    else:
        out += "no judge's AUROC interval lies wholly under 0.5"
    if held:
        out += (
            f"; {_names(held)} {'has' if len(held) == 1 else 'have'} an AUROC under 0.5 with an interval that holds "
            f"0.5, so the data cannot say that {'it ranks' if len(held) == 1 else 'they rank'} below chance"
        )
    return out + "."


def _loose(data: Dataset, rep: Report, q: float) -> str:
    """How many judges of ``rep`` would keep more than ``q`` (by more than one verdict) if tie groups were kept
    whole, and the range of what they would keep."""
    over = [c for j in rep.judges if (c := whole_groups_coverage(data, j, q)) > q + 1 / rep.judges[j].n]
    n = len(rep.judges)
    if not over:
        return f"none of the {n} judges"
    every = {1: "the only judge", 2: "both judges"}.get(n, f"all {n} judges")
    who = every if len(over) == n else f"{len(over)} of the {n} judges"
    low, high = format_number(min(over), 3), format_number(max(over), 3)
    if low != high:
        return f"{who} ({low} to {high} of their verdicts)"
    return f"{who} ({low} of its verdicts)" if len(over) == 1 else f"{who} ({low} of their verdicts each)"


def _achieved(rep: Report, j: str, q: float) -> str:
    """The coverage a judge achieves at ``q``, as a share."""
    return format_number(rep.judges[j].statistics[f"achieved_coverage:{q:g}"], 3)


def glue_values(ed: Editions) -> dict[str, str]:
    """Every number of the chapter's prose, as sentences."""
    prep, rep = ed.paper_rep, ed.rep
    (pa, pb), *_ = outcome_step_pairs(prep)
    pd_auroc = prep.statistic_delta(pa, pb, "auroc")
    pfa = flag_everything(ed.paper)
    ptests, otests = quality_tests(prep), quality_tests(rep)
    pnoise = [t for t in ptests if not t.degenerate and t.delta.low <= 0 <= t.delta.high]
    best_p = max(llm_judges(list(prep.judges)), key=lambda j: prep.judges[j].statistics["auroc"] or -1)
    ours_llm = llm_judges(list(rep.judges))
    best_o = max(ours_llm, key=lambda j: rep.judges[j].statistics["auroc"] or -1) if ours_llm else None
    below = [j for j, jr in rep.judges.items() if (jr.statistics["auroc"] or 0) < 0.5]
    mc = {j: mcnemar_pairs(ed.paper.trajectories, ed.paper.verdicts, j) for j in prep.judges}
    out_mc = mc[pa]
    surest = COVERAGES[0]
    most_tied = max(prep.judges, key=lambda j: prep.judges[j].statistics["auroc_tied_pairs"] or 0)
    tied_stats = prep.judges[most_tied].statistics
    return {
        "n_checked": str(checked(ed)),
        "level": f"{prep.bootstrap.confidence_level:.0%}",
        "references": (
            f"{pfa['auroc']:g} for AUROC, the share of faults for AUPRC, {pfa['kappa']:g} for Cohen's κ and "
            f"{pfa['mcc']:g} for MCC, {pfa['balanced_accuracy']:g} for balanced accuracy"
        ),
        "prevalence": format_number(pfa["prevalence"], 2),
        "flag_all_f1": format_number(prep.baselines[0].metrics["f1"], 3) if prep.baselines else "–",
        "paper_ranking": (
            f"On the paper's verdicts the best LLM ranker is {judge_name(best_p)}, AUROC {_cell(prep, best_p, 'auroc')}; "
            f"the step judge ranks faults above clean runs better than the outcome judge of the same model by "
            f"{_boot(pd_auroc)} in AUROC, an interval "
            f"{'that excludes 0' if pd_auroc.low > 0 or pd_auroc.high < 0 else 'that holds 0'}. Flagging everything "
            f"has AUROC {format_number(pfa['auroc'], 3)}, AUPRC {format_number(pfa['auprc'], 3)} (the share of faults), "
            f"and κ and MCC of {format_number(pfa['kappa'], 3)}, whatever its F1."
        ),
        "ours_ranking": _ours_ranking(rep, best_o, below),
        "selective": (
            f"Keeping its surest {surest:.0%} of verdicts (a share of {_achieved(prep, pb, surest)} kept, the tie "
            f"group at the cut in random order), the paper's step judge finds "
            f"{_cell(prep, pb, f'recall_at_coverage:{surest:g}')} of the faults it keeps and is wrong on "
            f"{_cell(prep, pb, f'risk_at_coverage:{surest:g}')} of what it keeps, against "
            f"{_cell(prep, pa, f'recall_at_coverage:{surest:g}')} and {_cell(prep, pa, f'risk_at_coverage:{surest:g}')} "
            f"for the outcome judge; their AURC is {_cell(prep, pb, 'aurc')} and {_cell(prep, pa, 'aurc')}, and "
            f"their E-AURC {_cell(prep, pb, 'e_aurc')} and {_cell(prep, pa, 'e_aurc')}."
        ),
        "whole_groups": (
            f"The cut has to be exact because ties are many: kept or dropped in whole tie groups, the step judge's "
            f"surest {surest:.0%} would be {format_number(whole_groups_coverage(ed.paper, pb, surest), 3)} of its "
            f"verdicts. Asked for {surest:.0%} that way, on the paper's verdicts {_loose(ed.paper, prep, surest)} would "
            f"keep more, and on {ours_wording().column.lower()}'s {_loose(ed.ours, rep, surest)}."
        ),
        "ties": (
            f"Ties weigh on AUROC too. On the paper's verdicts {judge_name(most_tied)} gives equal probabilities of "
            f'"faulty" to {format_number(tied_stats["auroc_tied_pairs"], 3)} of its (faulty, clean) pairs: its AUROC '
            f"of {format_number(tied_stats['auroc'], 3)} counts each such pair as one half, and breaking the ties "
            f"would put it anywhere from {format_number(tied_stats['auroc_ties_against'], 3)} to "
            f"{format_number(tied_stats['auroc_ties_for'], 3)}."
        ),
        "mcnemar": (
            f"On the paper's {out_mc.n} fault/clean-parent pairs the outcome judge flags the fault alone "
            f"{out_mc.fault_only} times and the parent alone {out_mc.parent_only} times (McNemar exact p "
            f"{_p(out_mc.pvalue)}); the step judge {mc[pb].fault_only} and {mc[pb].parent_only} (p {_p(mc[pb].pvalue)})."
        ),
        "margins": margins_phrase(),
        "testing": (
            f"Of the paper's {len(ptests)} paired deltas on {axes_phrase(QUALITY_DELTAS)}, "
            + (
                f"{sum(t.degenerate for t in ptests)} do not vary over the resamples and are not tested; of the rest, "
                if any(t.degenerate for t in ptests)
                else ""
            )
            + f"{sum(t.pvalue < ALPHA for t in ptests)} have a bootstrap p under {ALPHA:g}; "
            f"{sum(t.holm < ALPHA for t in ptests)} survive Holm's correction and {sum(t.bh < ALPHA for t in ptests)} "
            f"the Benjamini–Hochberg false-discovery rate of {ALPHA:g}. Of the {len(pnoise)} whose interval holds 0, "
            f"{sum(t.equivalent for t in pnoise)} are equivalent to 0 within their margin (TOST at {ALPHA:g}); the other "
            f"{len(pnoise) - sum(t.equivalent for t in pnoise)} are within noise only in that the design cannot tell. "
            f"The median minimum detectable effect behind those {len(pnoise)} is "
            f"{format_number(float(pd.Series([t.mde for t in pnoise]).median()) if pnoise else math.nan, 3)} at "
            f"{POWER:.0%} power: a smaller true difference would mostly go unseen. On this edition's verdicts, "
            f"{sum(t.holm < ALPHA for t in otests)} of {len(otests)} survive Holm."
        ),
        "front": (
            f"On the paper's verdicts the front of AUROC against seconds per trajectory holds {_names(front(prep, 'auroc'))}; "
            f"on F1 it holds {_names(front(prep, 'f1'))}. On this edition's: {_names(front(rep, 'auroc'))} on AUROC, "
            f"{_names(front(rep, 'f1'))} on F1."
        ),
    }


# --- figures ---------------------------------------------------------------------------------
GREY = "#bbbbbb"
"""The other judges behind the one a panel is about."""


def _curve(data: Dataset, judge: str) -> tuple[list[float], list[float], list[float], list[float]]:
    """A judge's expected risk–coverage curve (verdicts of equal confidence in random order) as coordinates from
    coverage 0, and the coverage and risk where each of its tie groups ends."""
    labels = {t.trajectory_id: _label(t) for t in data.trajectories}
    pairs = [(labels[v.trajectory_id], v) for v in data.verdicts if v.judge_id == judge]
    curve, ends = expected_risk_curve(pairs), risk_coverage(pairs)
    return ([c for c, _ in curve], [r for _, r in curve], [p["coverage"] for p in ends], [p["risk"] for p in ends])


@computes
def risk_coverage_figure(ed: Editions) -> Any:
    """Expected risk against coverage (verdicts of equal confidence in random order) in small multiples: one panel
    per judge, two a row, the paper's verdicts above and this edition's below. A panel draws its judge in the
    judge's colour and line style, a marker where each of its tie groups ends, and names it in its title, with the
    other judges of the same verdicts in grey behind it, so no legend is needed."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import PHONE_WIDTH_IN, judge_style, two_line_name

    editions = _editions(ed)
    rows = [max(1, math.ceil(len(rep.judges) / 2)) for _, rep in editions.values()]
    fig = plt.figure(figsize=(PHONE_WIDTH_IN, 1.55 * sum(rows) + 1.0))
    subfigs = fig.subfigures(len(rows), 1, height_ratios=[r + 0.35 for r in rows], squeeze=False)[:, 0]
    for sub, n_rows, (source, (data, rep)) in zip(subfigs, rows, editions.items()):
        axes = sub.subplots(n_rows, 2, sharex=True, sharey=True, squeeze=False)
        curves = {j: _curve(data, j) for j in rep.judges}
        for ax, j in zip(axes.flat, rep.judges):
            for other, (xs, ys, _, _) in curves.items():
                if other != j:
                    ax.plot(xs, ys, color=GREY, lw=1.0, zorder=1)
            style = judge_style(j)
            xs, ys, ex, ey = curves[j]
            ax.plot(xs, ys, color=style["color"], ls=style["linestyle"], lw=2.0, zorder=2)
            ax.plot(ex, ey, ls="none", marker=style["marker"], color=style["color"], markersize=5,
                    markeredgecolor="black", markeredgewidth=0.5, zorder=3)  # fmt: skip
            ax.set_title(two_line_name(j), loc="left")
            ax.grid(color="#e5e5e5", lw=0.6)
        for ax in list(axes.flat)[len(rep.judges) :]:
            ax.axis("off")
            ax.text(0.0, 0.5, "Grey: the other\njudges of the\nsame verdicts", transform=ax.transAxes, va="center")
        axes[0, 0].set(xlim=(0, 1.02), ylim=(0, 1), xticks=[0, 0.5, 1], yticks=[0, 0.5, 1], xticklabels=["0", "0.5", "1"],
                       yticklabels=["0", "0.5", "1"])  # fmt: skip
        sub.suptitle(source_name(source), fontweight="bold", x=0.02, ha="left")
    fig.supxlabel("Coverage (share of verdicts kept, surest first)")
    fig.supylabel("Expected risk (share of kept verdicts wrong)")
    return fig


def point_labels(judges: Sequence[str]) -> dict[str, str]:
    """Judges named for labels beside their points: the family and the model's size (``Step 1.5B``,
    ``Self-cons. ×3 14B``), the family alone for the rule engine, and the whole model where two judges
    would otherwise read the same."""
    from trajectory_judge.book.render.figures import two_line_name

    full = {j: two_line_name(j).replace("Self-consistency", "Self-cons.").split("\n") for j in judges}
    short = {j: f"{p[0]} {p[1].rpartition(' ')[2]}" if len(p) > 1 else p[0] for j, p in full.items()}
    seen = [s for s in short.values()]
    return {j: short[j] if seen.count(short[j]) == 1 else " ".join(full[j]) for j in judges}


@computes
def front_figure(ed: Editions) -> Any:
    """AUROC against seconds per trajectory for every judge, the paper's above and this edition's below: each
    judge in its colour and marker with its interval, named beside its point; the judges on the front drawn
    with a thick edge and joined by a dashed line; the random ranking a dotted line, named on the plot."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import MIN_FONT_PT, PHONE_WIDTH_IN, direct_labels, judge_style

    editions = _editions(ed)
    fig, axes = plt.subplots(len(editions), 1, figsize=(PHONE_WIDTH_IN, 7.6), sharex=True)
    labels = []
    for ax, (source, (_, rep)) in zip(axes, editions.items()):
        on = front(rep, "auroc")
        xs = [rep.judges[j].metrics["s_per_traj"] for j in on]
        ys = [rep.judges[j].statistics["auroc"] for j in on]
        ax.plot(xs, ys, color="#777777", lw=1.2, ls="--", zorder=1)
        points, bars, names = [], [], point_labels(list(rep.judges))
        for j, jr in rep.judges.items():
            style = judge_style(j)
            iv = jr.statistic_intervals["auroc"]
            x, y = float(jr.metrics["s_per_traj"] or 0.0), float(jr.statistics["auroc"] or math.nan)
            ax.errorbar([x], [y], yerr=[[y - iv.low], [iv.high - y]], fmt="none", ecolor=style["color"], capsize=2)
            ax.scatter([x], [y], color=style["color"], marker=style["marker"], s=48, zorder=3,
                       edgecolor="black", linewidth=1.6 if j in on else 0.4)  # fmt: skip
            points.append((x, y, names[j]))
            bars.append((x, iv.low, iv.high))
        ax.axhline(0.5, color="black", lw=0.8, ls=":")
        chance = ax.text(1.0, 0.5, "random ranking", transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                color="#444444", size=MIN_FONT_PT)  # fmt: skip
        ax.set(ylim=(0, 1.08), yticks=[0, 0.25, 0.5, 0.75, 1], ylabel="AUROC")
        ax.set_title(source_name(source), fontweight="bold", loc="left")
        ax.grid(color="#e5e5e5", lw=0.6)
        labels.append((ax, points, bars, chance))
    axes[-1].set(xlabel="Seconds per trajectory")
    axes[-1].set_xlim(left=-0.05 * axes[-1].get_xlim()[1])
    axes[0].plot([], [], color="#777777", lw=1.2, ls="--", label="Front: no other judge is better and cheaper")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper left")
    for ax, points, bars, chance in labels:
        direct_labels(ax, points, avoid=bars, avoid_text=[chance], size=MIN_FONT_PT)
    return fig
