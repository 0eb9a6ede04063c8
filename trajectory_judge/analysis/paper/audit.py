"""The audit of the published numbers: every number in :mod:`trajectory_judge.analysis.paper.published` recomputed
from the paper's verdicts, with a verdict per number (:func:`check_published`), and the Monte-Carlo check of its
interval bounds under other bootstrap seeds (:func:`seed_reports`, :func:`seed_spread`, :func:`seed_deltas`,
:func:`delta_distribution`).

Each row ends in one of :data:`VERDICTS`: *reproduces* (equal at the printed precision), *within Monte-Carlo
noise, measured* (an interval bound off in its last digit whose printed value other bootstrap seeds of the
stated procedure produce), *differs, explained* (the data settle an inconsistency of the text, said in ``why``),
or *cannot be recomputed* (``why``). The audit chapter renders these records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from trajectory_judge.analysis.core.cost import total_hours
from trajectory_judge.analysis.core.loading import Dataset
from trajectory_judge.analysis.core.report import Report, build_report
from trajectory_judge.analysis.paper import published as P
from trajectory_judge.analysis.paper.claims import Estimate
from trajectory_judge.analysis.paper.estimates import quoted_miss
from trajectory_judge.analysis.paper.paired_detail import camera_ready, reply_unchanged_types
from trajectory_judge.models import TESTBED_FAILURE_TYPES, Label, Trajectory, Verdict, design_cell

# --- auditing the published numbers ----------------------------------------------------------------
REPRODUCES, NOISE, EXPLAINED, NOT_RECOMPUTABLE, DIFFERS = (
    "reproduces",
    "within Monte-Carlo noise, measured",
    "differs, explained",
    "cannot be recomputed",
    "differs",
)
VERDICTS: tuple[str, ...] = (REPRODUCES, NOISE, EXPLAINED, NOT_RECOMPUTABLE, DIFFERS)
"""The verdicts of an audit row; ``differs`` (unexplained) should never occur."""


def printed_decimals(x: float) -> int:
    """The decimals a published value is printed with (0.38 has two)."""
    s = repr(float(x))
    return 0 if float(x).is_integer() else len(s.split(".")[1])


def _row(
    what: str, source: str, published: float, got: float | None, tolerance: str, verdict: str, why: str = ""
) -> dict:
    got = np.nan if got is None else float(got)
    return dict(zip(COLUMNS, (what, source, float(published), got, tolerance, verdict, why)))


def _point_row(what: str, source: str, published: float | None, got: float | None, digits: int, why: str = "") -> dict:
    if published is None:  # printed "n/a": reproduced when there is nothing to compute either
        ok = got is None or (isinstance(got, float) and np.isnan(got))
        return _row(what, source, np.nan, None, "n/a both", REPRODUCES if ok else DIFFERS, why)
    if got is None or (isinstance(got, float) and np.isnan(got)):
        return _row(what, source, published, None, "", NOT_RECOMPUTABLE, why)
    same = round(float(got), digits) == round(float(published), digits)
    return _row(what, source, published, got, f"{digits} decimals", REPRODUCES if same else DIFFERS, why)


def _bound_row(what: str, source: str, published: float, got: float) -> dict:
    d = printed_decimals(published)
    same = round(float(got), d) == round(float(published), d)
    return _row(what, source, published, got, f"{d} decimals", REPRODUCES if same else DIFFERS)


def _given(values: Mapping[str, float | None], name: str) -> float:
    """``values[name]``, a number the release's judges all have (raises on ``None``, as arithmetic on it would)."""
    v = values[name]
    if v is None:
        raise ValueError(f"no {name} to recompute a published number from")
    return v


def _labelled(t: Trajectory) -> Label:
    """The label of a loaded trajectory (loading refuses a trajectory without one)."""
    if t.label is None:
        raise ValueError(f"trajectory {t.trajectory_id!r} has no label")
    return t.label


def _count_recomputers(rep: Report) -> dict[str, Callable[[], float | None]]:
    J = rep.judges

    def flagged(j: str) -> float:
        m, s = J[j].metrics, J[j].strata
        return round(_given(m, "recall") * (s["silent"] + s["loud"]) + _given(m, "false_alarm_rate") * s["clean"])

    out: dict[str, Callable[[], float | None]] = {
        "step_flagged": lambda: flagged(P.STEP),
        "step_flagged_faulty": lambda: round(
            _given(J[P.STEP].metrics, "recall") * (J[P.STEP].strata["silent"] + J[P.STEP].strata["loud"])
        ),
        "step_exact_n": lambda: J[P.STEP].metrics["step_exact_n"],
        "step_exact": lambda: J[P.STEP].metrics["step_exact"],
        "pooled_recall_outcome": lambda: J[P.OUTCOME].metrics["recall"],
        "step8_flagged": lambda: flagged(P.STEP8),
        "step8_precision": lambda: J[P.STEP8].metrics["precision"],
        "step8_completion_tokens": lambda: J[P.STEP8].metrics["completion_tokens_mean"],
        "step_completion_tokens": lambda: J[P.STEP].metrics["completion_tokens_mean"],
        "selfcons_at_two_thirds": lambda: J[P.SELFCONS].confidence_support.get("0.666667", 0),
        "selfcons_at_one": lambda: J[P.SELFCONS].confidence_support.get("1.0", 0),
        "outcome_at_0.92": lambda: J[P.OUTCOME].confidence_support.get("0.92", 0),
        "confusion_hallucinated_as_wrong_tool": lambda: rep.confusion(P.STEP).loc[
            "hallucinated_argument", "wrong_tool"
        ],
        "confusion_premature_correct": lambda: rep.confusion(P.STEP).loc["premature_stop", "premature_stop"],
        "confusion_premature_as_claim": lambda: rep.confusion(P.STEP).loc["premature_stop", "unsupported_claim"],
        "confusion_premature_as_skipped": lambda: rep.confusion(P.STEP).loc["premature_stop", "skipped_precondition"],
        "confusion_claim_missed": lambda: rep.confusion(P.STEP).loc["unsupported_claim", "missed"],
        "step8_mass_at_0.90": lambda: rep.confidence_support(P.STEP8).get(0.9, 0) / J[P.STEP8].n,
        "judge_hours": lambda: total_hours(rep),
    }
    for j in P.PUBLISHED_JUDGES:
        out[f"confidence_support:{j}"] = partial(lambda judge: float(len(J[judge].confidence_support)), j)
    return out


def _text_recomputers(rep: Report, data: Dataset) -> dict[str, Callable[[], float | None]]:
    J, labels = rep.judges, [_labelled(t) for t in data.trajectories]
    m_out, m_step = J[P.OUTCOME].metrics, J[P.STEP].metrics
    rules_conf = sorted(J[P.RULES].confidence_support, key=float)
    pct = lambda x: 100 * x
    return {
        "abstract_outcome_loud_pct": lambda: pct(m_out["loud_recall"]),
        "abstract_outcome_silent_pct": lambda: pct(m_out["silent_recall"]),
        "abstract_outcome_far_pct": lambda: pct(m_out["false_alarm_rate"]),
        "abstract_step_silent_pct": lambda: pct(m_step["silent_recall"]),
        "abstract_step_cost_ratio": lambda: _given(m_step, "s_per_traj") / _given(m_out, "s_per_traj"),
        "abstract_claim_evades_step_pct": lambda: pct(1 - _given(J[P.STEP].per_type_recall, "unsupported_claim")),
        "abstract_selfcons_cost_ratio": lambda: (
            _given(J[P.SELFCONS].metrics, "s_per_traj") / _given(m_step, "s_per_traj")
        ),
        "design_trajectories": lambda: rep.n_trajectories,
        "design_clean": lambda: rep.design["clean"],
        "design_silent": lambda: rep.design["silent"],
        "design_loud": lambda: rep.design["loud"],
        "design_per_type": lambda: min(sum(1 for x in labels if x.failure_type == t) for t in TESTBED_FAILURE_TYPES),
        "design_skipped_silent": lambda: sum(
            1 for x in labels if x.failure_type == "skipped_precondition" and x.outcome_correct
        ),
        "verdicts_total": lambda: len(data.verdicts),
        "verdicts_unparseable": lambda: sum(1 for v in data.verdicts if v.error),
        "rules_confidence_fired": lambda: float(rules_conf[-1]),
        "rules_confidence_quiet": lambda: float(rules_conf[0]),
        "rules_silent_missed_pct": lambda: pct(1 - _given(J[P.RULES].metrics, "silent_recall")),
        "step8_base_rate": lambda: (rep.design["silent"] + rep.design["loud"]) / rep.n_trajectories,
        "section71_reply_unchanged_types": lambda: len(reply_unchanged_types(data.trajectories)),
        "abstract_reply_unchanged_types": lambda: len(reply_unchanged_types(data.trajectories)),
        "readme_pooled_recall_outcome": lambda: m_out["recall"],
        "readme_step8_completion_tokens": lambda: J[P.STEP8].metrics["completion_tokens_mean"],
        "section72_example_confidence": lambda: (lambda e: float("nan") if e is None else e.value)(
            quoted_miss(data.trajectories, data.verdicts)
        ),
    }


_EXPLAINED = {
    "section71_reply_unchanged_types": "§7.1 says three types leave the reply unchanged; the camera-ready abstract says four, and "
    "the data agree with it: every wrong_tool, hallucinated_argument, skipped_precondition and ignored_observation fault "
    "shows the outcome view of its clean parent",
    "readme_pooled_recall_outcome": "the README's design notes say 0.68, the paper (§1, §7.1) says 0.61; the data give the "
    "paper's value (faults flagged over all faults), so the README is the one in error",
    "readme_step8_completion_tokens": "the measured mean lies between 56 and 57: the paper rounds it, the README truncates it",
}

_NOT_RECOMPUTABLE = {
    "organic": "the release holds no organic episodes (its verdicts and run settings only)",
    "reply": "the release holds no reply-only judge: its verdicts are not released",
}


COLUMNS: tuple[str, ...] = ("quantity", "source", "published", "recomputed", "tolerance", "verdict", "why")
"""The fields of :class:`AuditRow`, the columns of :meth:`Audit.to_frame`."""


@dataclass(frozen=True)
class AuditRow:
    """One published number beside its recomputed value, with the verdict of the comparison."""

    quantity: str
    """What the number is (a judge id and metric, or a fact key with its description in parentheses)."""
    source: str
    """Where it is published (``Table 3``, ``§7.1``, ``abstract``, ``README strata table``...)."""
    published: float
    """The published value (NaN where the paper prints "n/a")."""
    recomputed: float
    """The value recomputed from the paper's verdicts (NaN where it cannot be recomputed)."""
    tolerance: str
    """The precision the comparison is made at (``3 decimals``), empty when nothing is compared."""
    verdict: str
    """One of :data:`VERDICTS`."""
    why: str
    """The reason, for a difference explained, a bound within noise or a number that cannot be recomputed."""


@dataclass(frozen=True)
class Audit:
    """Every published number recomputed, in the order of :mod:`trajectory_judge.analysis.paper.published`."""

    rows: tuple[AuditRow, ...]
    """One row per published number."""

    def to_frame(self) -> pd.DataFrame:
        """One row per number, the columns :data:`COLUMNS`."""
        return pd.DataFrame([asdict(r) for r in self.rows], columns=list(COLUMNS))

    def summary(self) -> dict[str, int]:
        """Rows per verdict (every one of :data:`VERDICTS`, zeros included) and the total."""
        return audit_summary(self.to_frame())


def audit_summary(audit: pd.DataFrame) -> dict[str, int]:
    """Rows per verdict of an audit's frame (every one of :data:`VERDICTS`, zeros included) and the total."""
    counts = audit["verdict"].value_counts()
    return {"total": len(audit), **{v: int(counts.get(v, 0)) for v in VERDICTS}}


def check_published(rep: Report, data: Dataset, spread: BoundSpread | pd.DataFrame | None = None) -> Audit:
    """Every number in :mod:`trajectory_judge.analysis.paper.published` beside its value recomputed from ``rep`` (on ``data``).

    Point estimates reproduce when equal at the printed precision; an interval bound or delta that
    is not is *within Monte-Carlo noise* when ``spread`` (:func:`seed_spread`) shows other seeds of
    the stated procedure printing the published value (a :class:`BoundSpread` or its frame).
    """
    rows: list[dict] = []
    main = rep.main_table()
    for j, row in P.PUBLISHED_MAIN.items():
        for m, v in row.items():
            rows.append(_point_row(f"{j} {m}", P.MAIN_SOURCE, v, float(main.loc[j, m]), 1 if m == "s_per_traj" else 3))
    per_type = rep.per_type_table()
    for j, row in P.PUBLISHED_PER_TYPE.items():
        for t, v in row.items():
            rows.append(_point_row(f"{j} recall {t}", P.PER_TYPE_SOURCE, v, float(per_type.loc[t, j]), 2))
    for j, row in P.PUBLISHED_STRATA.items():
        rows += [
            _point_row(f"{j} judged {s}", "README strata table", v, rep.judges[j].strata[s], 0) for s, v in row.items()
        ]
    rows += _interval_rows(rep)
    cr = camera_ready(rep, data.trajectories, P.OUTCOME, P.STEP).values
    rows += _fact_rows(P.PUBLISHED_COUNTS, _count_recomputers(rep))
    rows += _fact_rows(P.PUBLISHED_PAIRED, {k: partial(cr.__getitem__, k) for k in cr})
    rows += _fact_rows(P.PUBLISHED_TEXT, _text_recomputers(rep, data))
    frame = spread.to_frame() if isinstance(spread, BoundSpread) else spread
    df = _classify(pd.DataFrame(rows, columns=list(COLUMNS)), frame)
    return Audit(tuple(AuditRow(**r) for r in df.to_dict("records")))


def _interval_rows(rep: Report) -> list[dict]:
    rows = []
    for q in P.PUBLISHED_INTERVALS:
        jr = rep.judges[q.judge]
        if q.metric.startswith("recall:"):
            t = q.metric.split(":", 1)[1]
            v, iv = jr.per_type_recall[t], jr.per_type_intervals[t]
        else:
            v, iv = jr.metrics[q.metric], jr.intervals[q.metric]
        what = f"{q.judge} {q.metric}"
        rows.append(_point_row(what, q.source, q.value, v, max(2, printed_decimals(q.value))))
        rows += [
            _bound_row(f"{what} low", q.source, q.low, iv.low),
            _bound_row(f"{what} high", q.source, q.high, iv.high),
        ]
    for d in P.PUBLISHED_DELTAS:
        rows += _bound_rows(f"{d.metric}: {d.b} − {d.a}", d, rep.delta(d.a, d.b, d.metric))
    for g in P.PUBLISHED_GAPS:
        rows += _bound_rows(f"{g.judge} loud − silent recall", g, next(x for x in rep.gaps if x.judge == g.judge))
    return rows


def _bound_rows(what: str, published: P.PublishedDelta | P.PublishedGap, got: Any) -> list[dict]:
    """A published difference and its bounds beside the recomputed ones (``got.value``, ``.low``, ``.high``),
    each compared at its printed precision."""
    return [
        _bound_row(what, published.source, published.value, got.value),
        _bound_row(f"{what} low", published.source, published.low, got.low),
        _bound_row(f"{what} high", published.source, published.high, got.high),
    ]


def _classify(df: pd.DataFrame, spread: pd.DataFrame | None) -> pd.DataFrame:
    """Explained differences, and the seed rule for interval bounds and deltas: one *reproduces* when our seed prints
    it and so do at least half of the seeds in ``spread``; it is *within noise* when some seed prints it otherwise."""
    df = df.copy()
    for i, r in df.iterrows():
        key = r["quantity"].split(" (", 1)[0]
        if r["verdict"] == DIFFERS and key in _EXPLAINED:
            df.loc[i, ["verdict", "why"]] = [EXPLAINED, _EXPLAINED[key]]
        elif spread is not None and r["quantity"] in spread.index and r["verdict"] in (REPRODUCES, DIFFERS):
            s = spread.loc[r["quantity"]]
            k, n = int(s["seeds printing it"]), int(s["seeds"])
            seeds = f"{k} of {n} seeds print the published value"
            if r["verdict"] == REPRODUCES and 2 * k >= n:
                continue
            if s["within range"] or r["verdict"] == REPRODUCES:  # our seed printing it is one seed that does
                df.loc[i, ["verdict", "why"]] = [NOISE, seeds]
            else:  # unexplained: say how far the seeds reach, so the row shows what the check measured
                df.loc[i, "why"] = f"{seeds}; they give {float(s['min']):.3f} to {float(s['max']):.3f}"
    return df


def _number(x: float | int | None) -> float | None:
    """A recomputed number as a float; ``None`` (nothing to compute it from) stays ``None``."""
    return None if x is None else float(x)


def _fact_rows(
    facts: Mapping[str, P.PublishedCount], recompute: Mapping[str, Callable[[], float | int | None]]
) -> list[dict]:
    rows = []
    for key, fact in facts.items():
        what = f"{key} ({fact.what})"
        if key in recompute:
            rows.append(
                _point_row(what, fact.source, fact.value, _number(recompute[key]()), printed_decimals(fact.value))
            )
        else:
            why = _NOT_RECOMPUTABLE.get(key) or _NOT_RECOMPUTABLE["organic" if key.startswith("organic") else "reply"]
            rows.append(_point_row(what, fact.source, fact.value, None, 0, why))
    return rows


def seed_reports(
    trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], *, seeds: Sequence[int], resamples: int = 10_000
) -> dict[int, Report]:
    """One report per bootstrap seed, the rest of the procedure unchanged: the metrics, their intervals and deltas
    that the paper prints (the judge statistics, which it does not print, are left out; the metrics' replicates do
    not depend on them)."""
    return {s: build_report(trajectories, verdicts, resamples=resamples, seed=s, statistics=False) for s in seeds}


@dataclass(frozen=True)
class SeedDeltas:
    """One paired delta and its interval under each of several bootstrap seeds."""

    metric: str
    """The metric the delta is taken on."""
    a: str
    """The judge subtracted."""
    b: str
    """The judge the delta is taken for (``b - a``)."""
    by_seed: Mapping[int, Estimate]
    """Seed -> the delta's record under that seed."""

    def to_frame(self) -> pd.DataFrame:
        """One row per seed (the index): value, low, high."""
        rows = [(s, e.value, e.low, e.high) for s, e in self.by_seed.items()]
        return pd.DataFrame(rows, columns=["seed", "value", "low", "high"]).set_index("seed")

    def seeds_printing_high(self, value: float, decimals: int = 3) -> int:
        """Seeds whose upper bound prints as ``value`` at ``decimals``."""
        return sum(round(e.high, decimals) == value for e in self.by_seed.values())

    def upper_bound_counts(self) -> pd.DataFrame:
        """How many seeds give each upper bound (to three decimals)."""
        highs = pd.Series([e.high for e in self.by_seed.values()]).round(3)
        return highs.value_counts().sort_index().rename("Seeds").rename_axis("Upper bound").to_frame()


def seed_deltas(reports: Mapping[int, Report], a: str, b: str, metric: str) -> SeedDeltas:
    """The paired delta ``b - a`` of ``metric`` and its interval in each of ``reports`` (seed -> report)."""
    deltas = {s: r.delta(a, b, metric) for s, r in reports.items()}
    return SeedDeltas(metric, a, b, {s: Estimate(d.value, d.low, d.high, "bootstrap", d.n) for s, d in deltas.items()})


@dataclass(frozen=True)
class DeltaDistribution:
    """The distribution the paired silent-recall delta's bootstrap samples from, drawn at large B."""

    values: tuple[float, ...]
    """The attainable values of the delta, ascending (multiples of one over the silent faults)."""
    cdf: tuple[float, ...]
    """P(delta <= value) at each of ``values``."""
    resamples: int
    """Replicates drawn."""
    n: int
    """Silent faults the delta is a mean over."""

    def to_series(self) -> pd.Series:
        """P(delta <= x) indexed by x."""
        return pd.Series(self.cdf, index=pd.Index(self.values, name="delta"), name="cdf")

    def to_frame(self) -> pd.DataFrame:
        """One row per attainable value: delta (the index), cdf."""
        return self.to_series().to_frame()


def delta_distribution(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    a: str,
    b: str,
    *,
    resamples: int = 400_000,
    seed: int = 0,
) -> DeltaDistribution:
    """Distribution of the paired silent-recall delta ``b - a`` under the paper's cell-stratified bootstrap, at large B.

    Only silent faults enter the statistic, so the replicate is drawn over the silent design cells
    alone (same cell sizes as the full design).
    """
    fa = {v.trajectory_id: int(v.faulty) for v in verdicts if v.judge_id == a}
    fb = {v.trajectory_id: int(v.faulty) for v in verdicts if v.judge_id == b}
    silent = [
        t
        for t in trajectories
        if t.label and t.label.faulty and t.label.outcome_correct and t.trajectory_id in fa and t.trajectory_id in fb
    ]
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for cell in sorted({design_cell(t.label) for t in silent}):
        diffs = np.array([fb[t.trajectory_id] - fa[t.trajectory_id] for t in silent if design_cell(t.label) == cell])
        total += diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].sum(axis=1)
    counts = pd.Series(total).value_counts().sort_index()
    cdf = counts.cumsum().to_numpy() / resamples
    return DeltaDistribution(
        tuple(float(x) for x in counts.index / len(silent)), tuple(float(c) for c in cdf), resamples, len(silent)
    )


@dataclass(frozen=True)
class BoundRange:
    """One published interval bound or delta, recomputed under several bootstrap seeds."""

    quantity: str
    """The quantity, named as in :class:`AuditRow`."""
    published: float
    """The published value."""
    min: float
    """The smallest value any seed gives."""
    max: float
    """The largest."""
    seeds_printing: int
    """Seeds whose value prints as the published one (at its printed precision)."""
    seeds: int
    """Seeds tried."""
    within_range: bool
    """Whether the published value lies within the printed range of the seeds' values."""


@dataclass(frozen=True)
class BoundSpread:
    """Every published interval bound and delta under several bootstrap seeds of the stated procedure."""

    rows: tuple[BoundRange, ...]
    """One row per bound, in the audit's order."""

    def to_frame(self) -> pd.DataFrame:
        """Indexed by quantity: published, min, max, seeds printing it, seeds, within range."""
        df = pd.DataFrame([asdict(r) for r in self.rows]).set_index("quantity")
        return df.rename(columns={"seeds_printing": "seeds printing it", "within_range": "within range"})


def seed_spread(reports: Mapping[int, Report], data: Any = None) -> BoundSpread:
    """Every published interval bound and delta recomputed in each of ``reports`` (seed -> report): range, and how
    often it prints the same.

    Shows whether a bound that differs from the published one is within Monte-Carlo noise of the
    stated procedure (same resamples, another seed) rather than a different procedure.
    """
    cols, published = {}, None
    for s, rep in reports.items():
        rows = pd.DataFrame(_interval_rows(rep)).set_index("quantity")
        cols[s], published = rows["recomputed"], rows["published"]
    df = pd.DataFrame(cols)
    if published is None:
        raise ValueError("seed_spread needs at least one report")
    digits = published.map(printed_decimals)
    rounded = df.apply(lambda col: pd.Series([round(v, d) for v, d in zip(col, digits)], index=col.index))
    lo = [round(v, d) for v, d in zip(df.min(axis=1), digits)]
    hi = [round(v, d) for v, d in zip(df.max(axis=1), digits)]
    printing = rounded.eq(published, axis=0).sum(axis=1)
    within = (published >= lo) & (published <= hi)
    ranges = zip(df.index, published, df.min(axis=1), df.max(axis=1), printing, within)
    return BoundSpread(
        tuple(
            BoundRange(str(q), float(p), float(a), float(b), int(k), len(reports), bool(w))
            for q, p, a, b, k, w in ranges
        )
    )
