"""The report: every metric, interval, paired delta and gap, from trajectories and raw verdicts.

Python API for the book::

    from trajectory_judge import load_data, build_report
    rep = build_report(*load_data("data/"), resamples=10_000, seed=7)
    rep.main_table(); rep.per_type_table(); rep.confusion("step:qwen2.5:14b"); rep.deltas_frame()

Judges are ordered by family (programmatic, outcome, step, reply, selfcons, others), then by
first appearance in the verdicts; a delta of pair ``(a, b)`` is ``b - a`` with ``a`` earlier in
that order (or ``a`` the reference judge), so ``step - outcome`` and ``selfcons - step`` read as in
the paper. ``build_report(..., pairs="compared")`` computes deltas only for the pairs a reader
compares (:mod:`trajectory_judge.analysis.core.comparisons`), which grow linearly with the number of
judges; the default, every pair, is what the book's appendix lists. Every report carries the
baselines flag everything and flag nothing (:mod:`trajectory_judge.analysis.core.baselines`).

Interval methods (see :mod:`trajectory_judge.analysis.core.bootstrap`): a judge whose verdicts are constant
within every design cell (the rule engine) has no sampling variance under the design-conditioned
bootstrap; its quality metrics are reported with method ``structural`` and
``low = high = value`` (kept numeric so tables and plots need no special case). Cost metrics
are always bootstrapped. Proportions observed at 0 or 1 get Clopper-Pearson intervals.
Metrics whose value is null have no interval entry.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trajectory_judge.analysis.core import metrics as M
from trajectory_judge.analysis.core.agreement import Agreement, agreement_family, agreement_frame, read_agreement
from trajectory_judge.analysis.core.baselines import (
    AnchorReading,
    Baseline,
    baseline_sentence,
    baselines,
    baselines_frame,
    flag_everything,
    read_against_anchors,
)
from trajectory_judge.analysis.core.bootstrap import BootstrapResult, KeptCounts
from trajectory_judge.analysis.core.comparisons import Comparison, all_pairs, compared_pairs
from trajectory_judge.analysis.core.deltas import Delta, Gap, deltas_frame, read_deltas, read_gaps
from trajectory_judge.analysis.core.intervals import NO_INTERVAL, Interval, rounded as _num
from trajectory_judge.analysis.core.judge_statistics import (
    STATISTICS,
    JudgeStatistics,
    make_statistics_plan,
    read_statistics,
    statistics_family,
)
from trajectory_judge.analysis.core.loading import judge_order
from trajectory_judge.analysis.core.paired import (
    PairedValue,
    claim_detection,
    paired_discrimination,
)
from trajectory_judge.analysis.core.plan import (
    BOOT_KEYS,
    DELTA_METRICS,
    Plan,
    make_plan,
    run_bootstraps,
)
from trajectory_judge.analysis.core.registry import metric_names
from trajectory_judge.analysis.core.resampling import METHOD, Resampling
from trajectory_judge.models import Trajectory, Verdict, stratum
from trajectory_judge.provenance.computed import computes

if TYPE_CHECKING:
    import pandas as pd

MAIN_COLUMNS: tuple[str, ...] = metric_names(main=True)
"""Columns of the paper's main table (Table 3)."""


STATISTICS_NOTE = (
    'AUROC and AUPRC score each judge\'s probability of "faulty": its confidence when it flags, one minus '
    "its confidence when it does not. Read AUROC against 0.5, AUPRC against the prevalence of faults, kappa "
    "and MCC against 0 and balanced accuracy against 0.5 (what flagging everything reaches). AUROC counts a "
    "(faulty, clean) pair of equal scores as one half; auroc_tied_pairs is the share of such pairs, and "
    "auroc_ties_against and auroc_ties_for the AUROC with every tie broken against the judge or in its favour. "
    "Selective prediction keeps the judge's most confident verdicts, verdicts of equal confidence in random "
    "order, and gives expected values: AURC is the area under the risk-coverage curve (lower is better), "
    "E-AURC what it exceeds the best ordering's by; at each coverage q the judge keeps exactly ceil(q n) of its "
    "n verdicts (achieved_coverage), with the recall on the kept faults and the risk (share of the kept "
    "verdicts that are wrong)."
)
"""How the statistics are made and read, where they are shown."""


@dataclass(frozen=True)
class JudgeReport:
    """Everything measured about one judge."""

    judge_id: str
    """Judge id, e.g. ``step:qwen2.5:14b``."""
    n: int
    """Trajectories it judged."""
    strata: dict[str, int]
    """Judged trajectories per stratum (clean, silent, loud)."""
    metrics: dict[str, float | None]
    """Headline metrics (:data:`trajectory_judge.analysis.core.metrics.METRICS`)."""
    intervals: dict[str, Interval]
    """Interval per non-null headline metric (except ``step_exact_n``)."""
    per_type_recall: dict[str, float | None]
    """Recall on each failure type."""
    per_type_intervals: dict[str, Interval]
    """Interval per non-null per-type recall (Appendix E, Table 6)."""
    paired_discrimination: dict[str, PairedValue]
    """Flag rate on faults minus on their clean parents, by group."""
    confidence_support: dict[str, int]
    """Distinct stated confidences and their counts."""
    confusion: dict[str, dict[str, int]]
    """True type -> predicted type or ``missed`` -> count."""
    calibration_bins: list[dict[str, Any]]
    """Ten equal-width bins: population, mean confidence, accuracy."""
    claim_detection: dict[str, tuple[int, int]]
    """Invented sentence -> (flagged, judged) on ``unsupported_claim``."""
    baselines: tuple[Baseline, ...] = ()
    """Flag everything and flag nothing on the trajectories this judge judged: its own anchors."""
    statistics: dict[str, float | None] = field(default_factory=dict)
    """AUROC with its tie diagnostic, AUPRC (with its reference ``prevalence``), kappa, MCC, balanced accuracy,
    AURC, E-AURC, and the achieved coverage, recall and risk at each coverage
    (:data:`trajectory_judge.analysis.core.judge_statistics.STATISTICS`); ranking statistics score the judge's
    probability of "faulty" (its confidence when it flags, one minus it when it does not)."""
    statistic_intervals: dict[str, Interval] = field(default_factory=dict)
    """Interval per non-null statistic, from the report's resamples."""

    def to_frame(self) -> pd.DataFrame:
        """One row per headline metric and statistic: value, low, high, method (NaN and ``none`` without one)."""
        import pandas as pd

        rows = []
        for kind, values, ivs in (
            ("metric", self.metrics, self.intervals),
            ("statistic", self.statistics, self.statistic_intervals),
        ):
            for m, v in values.items():
                iv = ivs.get(m)
                rows.append(
                    (
                        kind,
                        m,
                        math.nan if v is None else v,
                        *((iv.low, iv.high, iv.method) if iv else (math.nan, math.nan, "none")),
                    )
                )
        return pd.DataFrame(rows, columns=["kind", "name", "value", "low", "high", "method"]).set_index("name")


@dataclass(frozen=True)
class Report:
    """The full analysis of one set of trajectories and verdicts."""

    n_trajectories: int
    """Trajectories in the set."""
    design: dict[str, int]
    """Trajectories per stratum."""
    judges: dict[str, JudgeReport]
    """Per-judge results, in report order."""
    deltas: tuple[Delta, ...]
    """``b - a`` for every compared pair of judges and every metric both have."""
    gaps: tuple[Gap, ...]
    """Loud minus silent recall per judge."""
    resamples: int
    """Bootstrap replicates."""
    seed: int
    """Bootstrap seed."""
    bootstrap: BootstrapResult = field(repr=False)
    """The replicate distribution behind every interval."""
    baselines: tuple[Baseline, ...] = ()
    """Flag everything and flag nothing on the same trajectories (:mod:`trajectory_judge.analysis.core.baselines`)."""
    pairs: str = "all"
    """Which pairs have deltas: ``all``, or ``compared`` (same model, same view, against ``reference``)."""
    reference: str | None = None
    """The judge every other was compared with, if one was named."""
    statistic_deltas: tuple[Delta, ...] = ()
    """Paired ``b - a`` of AUROC, AUPRC, kappa, MCC, balanced accuracy and AURC for every compared pair."""
    statistics_bootstrap: BootstrapResult | None = field(default=None, repr=False)
    """The replicates of the statistics (the same resamples as :attr:`bootstrap`); None when they were not asked for."""
    agreement: tuple[Agreement, ...] = ()
    """κ and error overlap between every pair of judges (:mod:`~trajectory_judge.analysis.core.agreement`), with the
    statistics."""
    resampling: Resampling = "design"
    """What the bootstrap resampled (:mod:`~trajectory_judge.analysis.core.resampling`): the design's cells,
    the trajectories, or whole instances."""
    counts: KeptCounts = field(default_factory=KeptCounts, repr=False, compare=False)
    """The counted replicates of this report's passes and of the statistics read after it at its seed (the claims
    register's estimates, the statistics at another prevalence): each such pass over the same units counts its
    draws once (:class:`~trajectory_judge.analysis.core.bootstrap.KeptCounts`; no digit depends on it)."""

    @property
    def method(self) -> str:
        """How every interval was made, in words: ``95% paired bootstrap over trajectories, B = 10,000, seed 7``."""
        level = round(100 * self.bootstrap.confidence_level) if len(self.bootstrap.names) else 95
        return f"{level}% {METHOD[self.resampling]}, B = {self.resamples:,}, seed {self.seed}"

    @property
    def has_statistics(self) -> bool:
        """Whether the judge statistics were computed (``build_report(..., statistics=True)``, ``report --statistics``)."""
        return self.statistics_bootstrap is not None

    @property
    def types(self) -> tuple[str, ...]:
        """The failure types recall is reported for: the folder's (:func:`~trajectory_judge.analysis.core.loading.folder_types`)."""
        first = next(iter(self.judges.values()), None)
        return tuple(first.per_type_recall) if first is not None else ()

    # --- machine-readable --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON document as Python objects (floats rounded, NaN as None)."""
        judges = {}
        for j, jr in self.judges.items():
            judges[j] = {
                "n": jr.n,
                "strata": dict(jr.strata),
                "metrics": {m: _num(v) for m, v in jr.metrics.items()},
                "intervals": {m: iv.to_dict() for m, iv in jr.intervals.items()},
                "per_type_recall": {t: _num(v) for t, v in jr.per_type_recall.items()},
                "paired_discrimination": {
                    g: {"value": _num(p.value), "n": p.n} for g, p in jr.paired_discrimination.items()
                },
                "confidence_support": dict(jr.confidence_support),
                "baselines": _baselines_dict(jr.baselines),
                **{
                    m: {"value": _num(v), **(iv.to_dict() if (iv := jr.statistic_intervals.get(m)) else NO_INTERVAL)}
                    for m, v in jr.statistics.items()
                },
            }
        return {
            "n_trajectories": self.n_trajectories,
            "design": dict(self.design),
            "judges": judges,
            "baselines": _baselines_dict(self.baselines),
            "pairs": self.pairs,
            "reference": self.reference,
            "resampling": self.resampling,
            "statistics_computed": self.has_statistics,
            "agreement": [p.to_dict() for p in self.agreement],
            "deltas": [d.to_dict() for d in self.deltas],
            "gaps": [g.to_dict() for g in self.gaps],
            "statistic_deltas": [d.to_dict() for d in self.statistic_deltas],
        }

    def to_json(self) -> str:
        """Deterministic JSON text (byte-identical for the same inputs, seed and resamples)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    # --- tables for the book -----------------------------------------------------------
    @computes
    def main_table(self) -> pd.DataFrame:
        """Table 3: one row per judge, the main-table metrics."""
        rows = {j: {c: jr.metrics[c] for c in MAIN_COLUMNS} for j, jr in self.judges.items()}
        return _frame(rows, "judge")

    @computes
    def to_frame(self) -> pd.DataFrame:
        """One row per judge: n, every headline metric and every statistic (point values)."""
        rows = {j: {"n": jr.n, **jr.metrics, **jr.statistics} for j, jr in self.judges.items()}
        return _frame(rows, "judge")

    @computes
    def statistics_frame(self) -> pd.DataFrame:
        """Long table: judge, statistic, value, low, high, method (AUROC, AUPRC, kappa, MCC, ...)."""
        import pandas as pd

        rows = []
        for j, jr in self.judges.items():
            for m, v in jr.statistics.items():
                iv = jr.statistic_intervals.get(m)
                rows.append((j, m, v, *((iv.low, iv.high, iv.method) if iv else (None, None, None))))
        return pd.DataFrame(rows, columns=["judge", "statistic", "value", "low", "high", "method"])

    @computes
    def statistic_deltas_frame(self) -> pd.DataFrame:
        """Paired deltas ``b - a`` of the statistics, with intervals."""
        return deltas_frame(self.statistic_deltas)

    def statistic_delta(self, a: str, b: str, metric: str) -> Delta:
        """The paired delta ``b - a`` of one statistic (either order of the pair; sign follows it)."""
        return _find_delta(self.statistic_deltas, a, b, metric)

    @computes
    def metrics_table(self) -> pd.DataFrame:
        """Every headline metric, one row per judge."""
        return _frame({j: dict(jr.metrics) for j, jr in self.judges.items()}, "judge")

    @computes
    def strata_table(self) -> pd.DataFrame:
        """Judged trajectories per stratum, one row per judge."""
        return _frame({j: dict(jr.strata) for j, jr in self.judges.items()}, "judge")

    @computes
    def intervals_frame(self) -> pd.DataFrame:
        """Long table: judge, metric, value, low, high, method (headline and per-type)."""
        import pandas as pd

        rows = []
        for j, jr in self.judges.items():
            for m, iv in jr.intervals.items():
                rows.append((j, m, jr.metrics[m], iv.low, iv.high, iv.method))
            for t, iv in jr.per_type_intervals.items():
                rows.append((j, f"recall:{t}", jr.per_type_recall[t], iv.low, iv.high, iv.method))
        return pd.DataFrame(rows, columns=["judge", "metric", "value", "low", "high", "method"])

    @computes
    def per_type_table(self) -> pd.DataFrame:
        """Table 4: recall per failure type (rows) and judge (columns), with the false-alarm anchor row."""
        import pandas as pd

        data = {
            j: [*(jr.per_type_recall[t] for t in self.types), jr.metrics["false_alarm_rate"]]
            for j, jr in self.judges.items()
        }
        index = pd.Index([*self.types, "false_alarms_on_clean"], name="failure_type")
        return pd.DataFrame(data, index=index, dtype=float)

    @computes
    def confusion(self, judge: str) -> pd.DataFrame:
        """Confusion matrix of one judge: true type (rows) x predicted type or ``missed``."""
        import pandas as pd

        mat = self._judge(judge).confusion
        return pd.DataFrame.from_dict(mat, orient="index").rename_axis(index="true", columns="predicted")

    @computes
    def calibration_bins(self, judge: str) -> pd.DataFrame:
        """Reliability-diagram data of one judge: bin edges, population, confidence, accuracy."""
        import pandas as pd

        return pd.DataFrame(self._judge(judge).calibration_bins).set_index("bin")

    @computes
    def confidence_support(self, judge: str) -> pd.Series:
        """Count of each distinct confidence one judge stated."""
        import pandas as pd

        sup = self._judge(judge).confidence_support
        return pd.Series({float(k): v for k, v in sup.items()}, name="count", dtype=int).rename_axis("confidence")

    @computes
    def paired_frame(self) -> pd.DataFrame:
        """Paired discrimination: one row per (judge, group) with value and n."""
        import pandas as pd

        rows = [(j, g, p.value, p.n) for j, jr in self.judges.items() for g, p in jr.paired_discrimination.items()]
        return pd.DataFrame(rows, columns=["judge", "group", "value", "n"])

    @computes
    def claim_table(self, judge: str) -> pd.DataFrame:
        """Detection of ``unsupported_claim`` per invented sentence for one judge."""
        import pandas as pd

        rows = [(s, k, n, k / n) for s, (k, n) in self._judge(judge).claim_detection.items()]
        return pd.DataFrame(rows, columns=["sentence", "flagged", "n", "recall"]).set_index("sentence")

    @computes
    def deltas_frame(self) -> pd.DataFrame:
        """All paired deltas ``b - a`` with intervals, why the pair is compared and on how many trajectories."""
        return deltas_frame(self.deltas)

    def delta(self, a: str, b: str, metric: str) -> Delta:
        """The delta ``b - a`` of ``metric`` (either order of the pair is accepted; sign follows it)."""
        return _find_delta(self.deltas, a, b, metric)

    @computes
    def baselines_frame(self) -> pd.DataFrame:
        """Flag everything and flag nothing: n and detection metrics, one row each."""
        return baselines_frame(self.baselines)

    def anchor_reading(self) -> AnchorReading:
        """Every judge's F1 read against flagging everything on the trajectories it judged."""
        return read_against_anchors(
            self.baselines, {j: (jr.metrics["f1"], jr.baselines) for j, jr in self.judges.items()}
        )

    @computes
    def anchors_frame(self) -> pd.DataFrame:
        """One row per judge: what it judged, its F1, and the F1 of flagging everything on the same trajectories."""
        import pandas as pd

        reading = self.anchor_reading()
        rows = {}
        for j, jr in self.judges.items():
            every = flag_everything(jr.baselines or self.baselines)
            rows[j] = {
                "n": jr.n,
                "faults": every.faults,
                "f1": jr.metrics["f1"],
                "flag_everything_f1": every.metrics["f1"],
                "above": j in reading.above,
            }
        columns = ["n", "faults", "f1", "flag_everything_f1", "above"]
        return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("judge")

    @computes
    def gaps_frame(self) -> pd.DataFrame:
        """Loud minus silent recall per judge, with intervals."""
        import pandas as pd

        return pd.DataFrame([g.__dict__ for g in self.gaps], columns=["judge", "metric", "value", "low", "high"])

    def to_markdown(self, types: tuple[str, ...] | None = None, absent: str | None = None) -> str:
        """The tables as Markdown: recall of ``types`` only (default the folder's, :attr:`types`), ``absent``
        (what the trajectories cannot show) once under the heading, and paired discrimination only where it has pairs."""
        per_type = self.per_type_table().loc[[*(self.types if types is None else types), "false_alarms_on_clean"]]
        paired = self.paired_frame()
        paired = paired[paired["n"] > 0]
        parts = [
            f"# Report\n\n{self.n_trajectories} trajectories: "
            + ", ".join(f"{v} {k}" for k, v in self.design.items())
            + f". Intervals: {self.method}."
            + (f"\n\n{absent}" if absent else ""),
            "## Main table\n\n" + _md(self.main_table()),
            "## Strata judged\n\n" + _md(self.strata_table()),
            "## Recall per failure type\n\n" + _md(per_type),
            "## Intervals\n\n" + _md(self.intervals_frame().set_index(["judge", "metric"])),
            "## Paired discrimination\n\n"
            + (_md(paired.set_index(["judge", "group"])) if len(paired) else "No fault with a judged clean parent."),
            "## Loud minus silent\n\n" + _md(self.gaps_frame().set_index("judge")),
            "## Baselines\n\n"
            + _md(self.baselines_frame())
            + "\n\n"
            + baseline_sentence(
                self.baselines,
                {j: jr.metrics["f1"] for j, jr in self.judges.items()},
                own={j: jr.baselines for j, jr in self.judges.items()},
            ),
            "## Each judge against flagging everything on what it judged\n\n" + _md(self.anchors_frame()),
            "## Paired deltas (b - a)\n\n" + _md(self.deltas_frame().set_index(["a", "b", "metric"])),
        ]
        if self.has_statistics:
            parts += [
                "## Ranking, agreement and selective prediction\n\n"
                + STATISTICS_NOTE
                + "\n\n"
                + _md(self.statistics_frame().set_index(["judge", "statistic"])),
                "## Paired deltas of the statistics (b - a)\n\n"
                + _md(self.statistic_deltas_frame().set_index(["a", "b", "metric"])),
                "## Agreement between judges\n\n"
                "Cohen's κ between two judges' flags, and of the trajectories either gets wrong the share both get "
                "wrong (error overlap), on the trajectories both judged.\n\n"
                + _md(agreement_frame(self.agreement).set_index(["a", "b"])),
            ]
        else:
            parts.append(f"## Ranking, agreement and selective prediction\n\n{STATISTICS_ON_REQUEST}")
        return "\n\n".join(parts) + "\n"

    def _judge(self, judge: str) -> JudgeReport:
        if judge not in self.judges:
            raise KeyError(f"unknown judge {judge!r}; known: {', '.join(self.judges)}")
        return self.judges[judge]


def _find_delta(deltas: Sequence[Delta], a: str, b: str, metric: str) -> Delta:
    """The delta ``b - a`` of ``metric`` among ``deltas``, either order of the pair (the sign follows it)."""
    for d in deltas:
        if d.metric == metric and (d.a, d.b) == (a, b):
            return d
        if d.metric == metric and (d.a, d.b) == (b, a):
            return Delta(a, b, metric, -d.value, -d.high, -d.low, d.kind, d.n)
    raise KeyError(f"no delta of {metric!r} between {a!r} and {b!r}")


def _baselines_dict(rows: Sequence[Baseline]) -> dict[str, Any]:
    return {b.name: {"n": b.n, "faults": b.faults, "metrics": {m: _num(v) for m, v in b.metrics.items()}} for b in rows}


def _frame(rows: Mapping[str, Mapping[str, Any]], index: str) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(index)


def _md(df: pd.DataFrame) -> str:
    df = df.reset_index()
    cell = lambda v: (
        "n/a"
        if v is None or (isinstance(v, float) and math.isnan(v))
        else (f"{v:.3f}" if isinstance(v, float) else str(v))
    )
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.astype(object).itertuples(index=False)]
    return "\n".join([head, sep, *body])


STATISTICS_ON_REQUEST = (
    "Not computed: `report --statistics` (or `build_report(..., statistics=True)`) adds AUROC, AUPRC, "
    "κ, MCC, balanced accuracy, AURC, E-AURC and recall and risk at exact coverage, with intervals and paired "
    "deltas, the ties behind AUROC, and the "
    "agreement between every pair of judges."
)
"""What a report made without the judge statistics says in their place."""


def build_report(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    *,
    resamples: int = 10_000,
    seed: int = 7,
    pairs: str = "all",
    reference: str | None = None,
    batch: int | None = None,
    statistics: bool = True,
    resampling: Resampling = "design",
) -> Report:
    """Compute every metric of every judge, with intervals, paired deltas, gaps and baselines.

    ``resampling`` says what the bootstrap resamples (:mod:`~trajectory_judge.analysis.core.resampling`): the
    design's cells (the default: the testbed is a planted design), the trajectories of a sample, or
    whole instances. ``statistics`` adds the judge statistics (:mod:`~trajectory_judge.analysis.core.judge_statistics`) from the
    same resamples; they cost about as much again as the metrics, so the command line computes them only
    on request. ``pairs="all"`` gives a delta for every pair of judges; ``"compared"`` only for the pairs a
    reader compares (:func:`~trajectory_judge.analysis.core.comparisons.compared_pairs`: views of one
    model, one view across models, and every judge against ``reference``). ``batch`` bounds the
    replicates held in memory at once; the numbers do not depend on it.
    """
    if pairs not in ("all", "compared"):
        raise ValueError(f"pairs must be 'all' or 'compared', got {pairs!r}")
    if reference is not None and pairs != "compared":
        raise ValueError("a reference judge needs pairs='compared'")
    order = judge_order(verdicts)
    chosen: tuple[Comparison, ...] = all_pairs(order) if pairs == "all" else compared_pairs(order, reference)
    plan = make_plan(trajectories, verdicts, [(c.a, c.b) for c in chosen])
    kinds = {(c.a, c.b): c.kind for c in chosen}
    agreement: tuple[Agreement, ...] = ()
    kept = KeptCounts()
    if not statistics:  # the metrics alone: the statistics' columns and reading cost as much again
        (boot,) = run_bootstraps(plan, resamples=resamples, seed=seed, batch=batch, resampling=resampling, kept=kept)
        stats = None
    else:
        stats_plan = make_statistics_plan(plan.labels, plan.verdicts, [(c.a, c.b) for c in chosen])
        agree = agreement_family(plan.labels, plan.verdicts, plan.judges)
        boot, stats_boot, agree_boot = run_bootstraps(
            plan,
            resamples=resamples,
            seed=seed,
            batch=batch,
            also=[statistics_family(stats_plan, plan.strata(resampling)), agree],
            resampling=resampling,
            kept=kept,
        )
        agreement = read_agreement(agree, agree_boot)
    reached: dict[tuple[str, str], bool] = {}
    judges = {j: _judge_report(j, plan, boot, trajectories, reached) for j in plan.judges}
    deltas, gaps = read_deltas(plan.verdicts, boot, kinds), read_gaps(plan, boot)
    if statistics:
        stats = read_statistics(stats_plan, stats_boot, plan.labels, plan.verdicts, kinds=kinds)
        judges = {j: _with_statistics(jr, stats) for j, jr in judges.items()}
    design = {"clean": 0, "silent": 0, "loud": 0}
    for lab in plan.labels:
        design[stratum(lab)] += 1
    return Report(
        len(trajectories),
        design,
        judges,
        deltas,
        gaps,
        resamples,
        seed,
        boot,
        baselines(trajectories),
        pairs,
        reference,
        stats.deltas if stats is not None else (),
        stats.bootstrap if stats is not None else None,
        agreement,
        resampling,
        kept,
    )


def _with_statistics(jr: JudgeReport, stats: JudgeStatistics) -> JudgeReport:
    from dataclasses import replace

    ivs = stats.intervals[jr.judge_id]
    return replace(
        jr,
        statistics=dict(stats.values[jr.judge_id]),
        statistic_intervals={m: Interval(*ivs[m]) for m in STATISTICS if m in ivs},
    )


def _judge_report(
    j: str, plan: Plan, boot: BootstrapResult, trajectories: Sequence[Trajectory], reached: dict[tuple[str, str], bool]
) -> JudgeReport:
    """Everything measured about judge ``j``: plain metrics checked against the bootstrap's, and their intervals."""
    idx = {name: i for i, name in enumerate(boot.names)}

    def interval(name: str, value: float) -> Interval:
        i = idx[name]
        if boot.method[i] == "structural":  # the plain value, not the count form's rounding of it
            return Interval(value, value, "structural")
        return Interval(float(boot.low[i]), float(boot.high[i]), boot.method[i])

    pairs = [(lab, v) for lab, v in zip(plan.labels, plan.verdicts[j]) if v is not None]
    values = M.judge_metrics(pairs, plan.types)
    _check_agrees(j, values, boot, idx, plan.boot_keys)
    by_id = {v.trajectory_id: v for v in plan.verdicts[j] if v is not None}
    strata = {"clean": 0, "silent": 0, "loud": 0}
    for lab, _ in pairs:
        strata[stratum(lab)] += 1
    return JudgeReport(
        judge_id=j,
        n=len(pairs),
        strata=strata,
        metrics={m: values[m] for m in M.METRICS},
        intervals={m: interval(f"{j}|{m}", values[m]) for m in DELTA_METRICS if values[m] is not None},  # type: ignore[arg-type]
        per_type_recall={t: values[f"recall:{t}"] for t in plan.types},
        per_type_intervals={
            t: interval(f"{j}|recall:{t}", values[f"recall:{t}"])  # type: ignore[arg-type]
            for t in plan.types
            if values[f"recall:{t}"] is not None
        },
        paired_discrimination=paired_discrimination(j, trajectories, by_id, reached=reached),
        confidence_support=M.confidence_support(by_id.values()),
        confusion=M.confusion(pairs, plan.types),
        calibration_bins=M.calibration_bins(pairs),
        claim_detection=claim_detection(trajectories, by_id),
        baselines=baselines([t for t in trajectories if t.trajectory_id in by_id]),
    )


def _check_agrees(
    judge: str,
    values: Mapping[str, float | None],
    boot: BootstrapResult,
    idx: Mapping[str, int],
    keys: Sequence[str] = BOOT_KEYS,
) -> None:
    """The vectorised statistic at unit weights must equal the plain definition."""
    for m in keys:
        plain, vec = values[m], float(boot.estimate[idx[f"{judge}|{m}"]])
        same = (plain is None and math.isnan(vec)) or (plain is not None and math.isclose(plain, vec, abs_tol=1e-9))
        if not same:
            raise RuntimeError(f"{judge} {m}: count form gives {vec}, plain form {plain}")
