"""``trajectory-judge report``: the report on stdout, and as JSON and Markdown files.

The terminal shows every headline metric with its 95% interval and the judge's n, the baselines,
and the paired deltas of the pairs a reader compares (:mod:`trajectory_judge.analysis.core.comparisons`).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from trajectory_judge.analysis.core.baselines import BASELINE_METRICS, baseline_sentence
from trajectory_judge.analysis.core.comparisons import split_judge_id
from trajectory_judge.analysis.core.cost import RUNS, ComputeSpent, compute_spent, run_records
from trajectory_judge.analysis.core.formatting import MISSING, TextTable, format_interval, format_number, marks_for
from trajectory_judge.analysis.core.judge_statistics import COVERAGES
from trajectory_judge.analysis.core.loading import (
    Dataset,
    absent_parts,
    absent_sentence,
    load_slim_data,
    present_types,
    unparseable_counts,
    unparseable_sentence,
)
from trajectory_judge.analysis.core.registry import REGISTRY, STATISTIC_REGISTRY
from trajectory_judge.analysis.core.report import STATISTICS_ON_REQUEST, Report, _md, build_report
from trajectory_judge.analysis.core.resampling import folder_resampling
from trajectory_judge.analysis.statistics.abstention import Abstention
from trajectory_judge.analysis.statistics.deployment import Deployment, at_prevalence
from trajectory_judge.analysis.statistics.seeds import MEMBERS_FILE, members_summary
from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.models import OnRecord, Trajectory, Verdict, load_verdicts, recorded_fingerprints
from trajectory_judge.provenance.manifest import hashing_once
from trajectory_judge.provenance.outputs import DATA_NAMES, guard_output

TERMINAL_AXES: dict[str, tuple[str, ...]] = {
    "Detection": ("f1", "silent_recall", "loud_recall", "false_alarm_rate"),
    "Localisation, typing, calibration, cost": ("step_exact", "type_macro_f1", "ece", "s_per_traj"),
}
"""The headline metrics on the terminal, in two tables that each fit about 120 columns."""

HEADERS: dict[str, str] = {m.name: m.header for m in REGISTRY.values()}
"""Column headers in words."""

STATISTIC_AXES: dict[str, tuple[str, ...]] = {
    'Ranking by the probability of "faulty" (confidence when flagging, 1 − confidence when not)': (
        "auroc",
        "auroc_ties",
        "auroc_tied_pairs",
        "auprc",
        "prevalence",
    ),
    "Selective prediction (the judge keeps its surest verdicts)": ("aurc", "e_aurc"),
    "Agreement with the labels beyond chance": ("kappa", "mcc", "balanced_accuracy"),
}
"""The judge statistics on the terminal, one table per title (the recall and risk at each coverage follow
in :func:`coverage_table`)."""

STATISTIC_HEADERS: dict[str, str] = {
    **{s.name: s.header for s in STATISTIC_REGISTRY.values()},
    "auroc_ties": "AUROC, ties against–for",
}
"""Column headers of the statistics."""

COVERAGE_TITLE = "Recall on the kept faults and risk (share wrong) at exact coverage q (kept: ceil(q n) of n verdicts)"
"""Title of :func:`coverage_table`."""

TIES_NOTE = (
    "Ties: AUROC counts a (faulty, clean) pair of equal scores as one half; tied pairs is their share, and "
    "ties against–for the AUROC with every tie broken against the judge or in its favour. Selective prediction "
    "orders verdicts of equal confidence at random and gives expected values; E-AURC is AURC less the best "
    "ordering's (every correct verdict first)."
)
"""What the terminal says under the statistics about ties."""

DELTA_COLUMNS: tuple[str, ...] = ("f1", "silent_recall", "loud_recall", "false_alarm_rate")
"""Metrics whose paired deltas the terminal shows (``--json`` and ``--markdown`` have them all)."""


def metric_cell(rep: Report, judge: str, metric: str) -> str:
    """The value and its interval as the book writes them (:func:`~.formatting.format_interval`:
    ``0.752 (0.70–0.80)``, with ``†``, ``‡`` or ``*`` for an exact, zero-width or structural one);
    ``–`` when undefined. Step localisation adds its n."""
    jr = rep.judges[judge]
    cell = _with_interval(jr.metrics[metric], jr.intervals.get(metric))
    if metric == "step_exact":
        cell += f" n={int(jr.metrics['step_exact_n'] or 0)}"
    return cell


EXCLUDES_ZERO = "§"
"""Marks, on the terminal, a paired delta whose interval excludes 0."""


def statistic_cell(rep: Report, judge: str, name: str) -> str:
    """A statistic and its interval as :func:`metric_cell` writes a metric; AUPRC's reference (the prevalence)
    and the tied share bare; ``auroc_ties`` the range of AUROC over tie-breaking, ``low–high``."""
    jr = rep.judges[judge]
    if name == "auroc_ties":
        low, high = jr.statistics.get("auroc_ties_against"), jr.statistics.get("auroc_ties_for")
        return MISSING if low is None or high is None else f"{format_number(low)}–{format_number(high)}"
    if name in ("prevalence", "auroc_tied_pairs"):
        return format_number(jr.statistics.get(name))
    return _with_interval(jr.statistics.get(name), jr.statistic_intervals.get(name))


def _with_interval(value: float | None, iv: Any) -> str:
    return format_interval(value, iv.low if iv else None, iv.high if iv else None, iv.method if iv else None)


def statistics_table(rep: Report, names: tuple[str, ...]) -> TextTable:
    """One row per judge: n, then each statistic of ``names`` as :func:`statistic_cell`."""
    return _judge_rows(rep, {STATISTIC_HEADERS[m]: m for m in names}, statistic_cell)


def coverage_table(rep: Report) -> TextTable:
    """One row per judge and coverage of :data:`~trajectory_judge.analysis.core.judge_statistics.COVERAGES`: the
    coverage achieved (share and count kept), the recall on the kept faults and the risk, with intervals."""
    rows = {}
    for j, jr in rep.judges.items():
        for q in COVERAGES:
            achieved = jr.statistics.get(f"achieved_coverage:{q:g}")
            kept = MISSING if achieved is None else f"{format_number(achieved)} ({round(achieved * jr.n)} of {jr.n})"
            rows[f"{j}, {q:.0%}"] = {
                "kept": kept,
                "recall": statistic_cell(rep, j, f"recall_at_coverage:{q:g}"),
                "risk": statistic_cell(rep, j, f"risk_at_coverage:{q:g}"),
            }
    return TextTable.from_rows(rows, "judge, coverage")


def terminal_table(rep: Report, metrics: tuple[str, ...]) -> TextTable:
    """One row per judge: n, then each of ``metrics`` as :func:`metric_cell`."""
    return _judge_rows(rep, {HEADERS[m]: m for m in metrics}, metric_cell)


def _judge_rows(rep: Report, columns: dict[str, str], cell: Callable[[Report, str, str], str]) -> TextTable:
    """One row per judge: n, then ``cell(rep, judge, name)`` under each header of ``columns`` (header -> name)."""
    rows = {j: {"n": jr.n, **{h: cell(rep, j, m) for h, m in columns.items()}} for j, jr in rep.judges.items()}
    return TextTable.from_rows(rows, "judge")


def baselines_table(rep: Report) -> TextTable:
    """The baselines with their detection metrics (exact: fixed by the design), and flagging everything on
    the trajectories of each judge that judged only part of the design."""
    labelled = [(f"baseline: {b.name}", b) for b in rep.baselines]
    labelled += [(f"flag everything on {j}'s", b) for j, b in rep.anchor_reading().own.items()]
    rows = {
        label: {"n": b.n, **{HEADERS[m]: format_number(b.metrics[m]) for m in BASELINE_METRICS}}
        for label, b in labelled
    }
    return TextTable.from_rows(rows, "baseline")


def pair_label(a: str, b: str, kind: str) -> str:
    """``b − a`` in few words: ``step − outcome · MODEL`` for views of one model, ``step · B − A`` across models."""
    (va, ma), (vb, mb) = split_judge_id(a), split_judge_id(b)
    if kind == "same model":
        return f"{vb} − {va} · {mb}"
    if kind == "same view":
        return f"{vb} · {mb} − {ma}"
    return f"{b} − {a}"


def deltas_table(rep: Report, metrics: tuple[str, ...] = DELTA_COLUMNS) -> TextTable:
    """One row per compared pair: n, and ``b - a`` of each of ``metrics`` with its interval (:data:`EXCLUDES_ZERO`:
    excludes 0; ``–`` where the pair has no delta of it)."""
    cells: dict[str, dict[str, Any]] = {}
    for d in rep.deltas:
        if d.metric not in metrics:
            continue
        row = cells.setdefault(pair_label(d.a, d.b, d.kind), {"n": d.n})
        mark = EXCLUDES_ZERO if d.low > 0 or d.high < 0 else ""
        row[HEADERS[d.metric]] = format_interval(d.value, d.low, d.high, "bootstrap") + mark
    columns = ["n", *(HEADERS[m] for m in metrics)]
    return TextTable.from_rows({k: {c: row.get(c, "–") for c in columns} for k, row in cells.items()}, "b − a", columns)


TYPE_HEADERS: dict[str, str] = {
    "wrong_tool": "wrong tool",
    "hallucinated_argument": "halluc. arg.",
    "skipped_precondition": "skipped precond.",
    "ignored_observation": "ignored obs.",
    "premature_stop": "premature stop",
    "unsupported_claim": "unsupp. claim",
    "false_alarms_on_clean": "false alarms",
}
"""Short headers of the per-type recall table on the terminal."""


def per_type_terminal(rep: Report, types: tuple[str, ...] | None = None) -> TextTable:
    """Recall per failure type of ``types`` (default the folder's, ``rep.types``), one row per judge (so it grows
    down, not across), and the false-alarm rate."""
    types = rep.types if types is None else types
    rows = {
        j: {
            "n": jr.n,
            **{TYPE_HEADERS.get(t, t): _float(jr.per_type_recall[t]) for t in types},
            TYPE_HEADERS["false_alarms_on_clean"]: _float(jr.metrics["false_alarm_rate"]),
        }
        for j, jr in rep.judges.items()
    }
    return TextTable.from_rows(rows, "judge")


def _float(x: Any) -> float:
    return math.nan if x is None else float(x)


def terminal_text(rep: Report, types: tuple[str, ...] | None = None, absent: str | None = None) -> str:
    """The whole terminal report (without the data directory's members and compute sections): recall per
    type of ``types`` only, and ``absent`` (what the trajectories cannot show) once, after the heading."""
    head = (
        f"{rep.n_trajectories} trajectories: "
        + ", ".join(f"{v} {k}" for k, v in rep.design.items())
        + f".\nIntervals: {rep.method}, written as the book writes them, value (low–high);\n"
        + "\n".join(f"{m} {why}" for m, why in marks_for(rep.resampling).items())
        + "."
    )
    parts = [head] + ([absent] if absent else [])
    for title, metrics in TERMINAL_AXES.items():
        parts.append(f"{title}\n{terminal_table(rep, metrics).to_string()}")
    if rep.has_statistics:
        for title, names in STATISTIC_AXES.items():
            parts.append(f"{title}\n{statistics_table(rep, names).to_string()}")
            if "aurc" in names:
                parts.append(f"{COVERAGE_TITLE}\n{coverage_table(rep).to_string()}")
        parts.append(
            "Reference values: AUROC 0.5, AUPRC the prevalence of faults, κ and MCC 0, balanced accuracy 0.5 "
            "(flagging everything).\n" + TIES_NOTE
        )
    else:
        parts.append(f"Ranking, agreement and selective prediction: {STATISTICS_ON_REQUEST}")
    f1 = {j: jr.metrics["f1"] for j, jr in rep.judges.items()}
    parts.append(
        f"Baselines (computed from the labels)\n{baselines_table(rep).to_string()}\n"
        + baseline_sentence(rep.baselines, f1, own={j: jr.baselines for j, jr in rep.judges.items()})
    )
    parts.append(
        "Recall per failure type (the last column is the anchor: recall at or below it is no evidence)\n"
        + per_type_terminal(rep, types).to_string(float_format=lambda v: f"{v:.2f}", na_rep="–")
    )
    deltas = deltas_table(rep)
    which = f"each judge against {rep.reference}, " if rep.reference else ""
    what = "every pair" if rep.pairs == "all" else f"{which}views of one model, one view across models"
    if deltas.empty:
        parts.append(f"Paired deltas: none ({what}: no such pair among these judges; --reference JUDGE adds some).")
    else:
        parts.append(
            f"Paired deltas b − a ({what}; {EXCLUDES_ZERO} interval excludes 0; all metrics in --json and --markdown)\n"
            + deltas.to_string()
        )
    return "\n\n".join(parts)


def judge_fingerprints(records: list[dict[str, Any]], judges: list[str]) -> dict[str, list[OnRecord]]:
    """Each judge's fingerprints on record (:mod:`trajectory_judge.models.fingerprint`), [] for one without."""
    prints = recorded_fingerprints((f"{RUNS}:{i}", r) for i, r in enumerate(records, 1))
    return {j: prints.get(j, []) for j in judges}


def fingerprints_line(prints: dict[str, list[OnRecord]]) -> str:
    """The judges' fingerprints in one line: ``Fingerprints (...): step:m 1a2b3c4d5e6f, ...``."""
    shown = [f"{j} {' and '.join(o.fingerprint.short for o in ps)}" for j, ps in prints.items() if ps]
    two = [j for j, ps in prints.items() if len(ps) > 1]
    none = [j for j, ps in prints.items() if not ps]
    if not shown:
        return f"Fingerprints (model, prompt and schema digests, decoding): none on record in {RUNS}"
    line = "Fingerprints (model, prompt and schema digests, decoding): " + ", ".join(shown)
    if two:
        line += f"; two judges under one id: {', '.join(two)}"
    if none:
        line += f"; none on record for {', '.join(none)}"
    return line


def fingerprints_markdown(prints: dict[str, list[OnRecord]]) -> str:
    """The ``## Judge fingerprints`` section of the Markdown report: one row per judge and fingerprint."""
    rows = ["| judge | fingerprint | model | prompt | decoding |", "|---|---|---|---|---|"]
    for j, ps in prints.items():
        if not ps:
            rows.append(f"| {j} | – | – | – | – |")
        for fp in (o.fingerprint for o in ps):
            prompt = (fp.prompt_sha256 or "–")[:12]
            rows.append(f"| {j} | {fp.short} | {fp.model or '–'} | {prompt} | {fp.summary()} |")
    return "\n## Judge fingerprints\n\n" + "\n".join(rows) + "\n"


def compute_markdown(spent: ComputeSpent) -> str:
    """The ``## Compute spent`` section of the Markdown report (from the run records)."""
    table = "\n\n" + _md(spent.to_frame()) if spent.rows else ""
    return f"\n## Compute spent\n\n{spent.sentence()}.{table}\n"


def cli_report(args: Any) -> int:
    """``trajectory-judge report``: print the tables; write JSON and Markdown on request.

    Every file the folder's ``SHA256SUMS`` pins is verified before anything is computed, each hashed
    once however many of the loaders read it. Trajectories and verdicts are read a line at a time into
    slim records (:func:`~trajectory_judge.analysis.core.loading.load_slim_data`); the whole verdicts are read
    again only to re-derive ensembles from their members.
    """
    with hashing_once():
        return _report(args)


def _report(args: Any) -> int:
    _guard_outputs(args)
    runs = run_records(args.data)  # read once: the note below, the unparseable hints, ensembles and compute spent
    if runs.torn is not None:
        print(
            f"trajectory-judge report: note: {Path(args.data) / RUNS}:{runs.torn}: last line is incomplete "
            "(a run cut off while writing it); ignored",
            file=sys.stderr,
        )
    slim = load_slim_data(args.data)  # trajectories and verdicts without their text
    # the records carry every field the report's functions read of a Trajectory and a Verdict
    data = Dataset(cast("list[Trajectory]", slim.trajectories), cast("list[Verdict]", slim.verdicts))
    pairs = "all" if args.all_pairs else "compared"
    rep = build_report(
        data.trajectories,
        data.verdicts,
        resamples=args.resamples,
        seed=args.seed,
        pairs=pairs,
        reference=args.reference,
        statistics=args.statistics,
        resampling=args.resample or folder_resampling(args.data),  # --resample, else the folder's own choice
    )
    absent, types = absent_sentence(data.trajectories), present_types(data.trajectories)
    print(terminal_text(rep, types, absent))
    records = runs.records
    unparseable = unparseable_sentence(data.verdicts, records)
    print(f"\n{unparseable}.")
    members = ""
    if (Path(args.data) / MEMBERS_FILE).exists():  # re-deriving ensembles compares whole verdicts
        full = load_verdicts(Path(args.data) / "verdicts.jsonl", [t.trajectory_id for t in data.trajectories])
        members = members_summary(args.data, data.trajectories, full, seed=args.seed, records=records)
    if members:
        print("\n" + members)
    prints = judge_fingerprints(records, list(rep.judges))
    print("\n" + fingerprints_line(prints))
    spent = compute_spent(args.data, records)
    print(f"\n{spent.sentence()}.")
    if spent.rows:
        print(spent.to_frame().to_string(float_format=lambda v: f"{v:.2f}", na_rep="not measured"))
    extra = _on_request(args, data, rep)
    for text, _ in extra.values():
        print("\n" + text)
    if args.json:
        body = {**rep.to_dict(), "unparseable": unparseable_counts(data.verdicts)}
        body |= {key: doc for key, (_, doc) in extra.items()}
        body["not_measurable"] = absent_parts(data.trajectories)
        body["fingerprints"] = {j: [o.fingerprint.record() for o in ps] for j, ps in prints.items()}
        atomic_write_text(args.json, json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    if args.markdown:
        atomic_write_text(
            args.markdown,
            rep.to_markdown(types, absent)
            + f"\n## Unparseable answers\n\n{unparseable}.\n"
            + fingerprints_markdown(prints)
            + compute_markdown(spent),
        )
    return 0


def _on_request(args: Any, data: Dataset, rep: Report) -> dict[str, tuple[str, dict[str, Any]]]:
    """The sections asked for by ``--prevalence`` and ``--abstain``: per ``--json`` key, the terminal's text and the
    JSON document."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    if getattr(args, "prevalence", None) is not None:
        dep = at_prevalence(rep, args.prevalence, trajectories=data.trajectories, verdicts=data.verdicts)
        out["at_prevalence"] = (deployment_text(dep), dep.to_dict())
    if getattr(args, "abstain", None) is not None:
        from trajectory_judge.analysis.statistics.abstention import abstention_of

        res = abstention_of(data.trajectories, data.verdicts, alpha=args.abstain)
        out["abstention"] = (abstention_text(res), res.to_dict())
    return out


def deployment_text(dep: Deployment) -> str:
    """The terminal's section on the statistics at another prevalence."""
    ranking = "auprc" in dep.statistics
    lines = [
        f"At a prevalence of {dep.prevalence:g} (the folder's is {dep.design_prevalence:.3g}): precision, F1, kappa and "
        f"MCC from each judge's recall and false-alarm rate"
        + (f", and AUPRC from its ranking (a judge ranking at random reaches {dep.chance_auprc:g})" if ranking else "")
        + f"; {dep.level:.0%} intervals",
    ]
    for j in dep.judges:
        cells = [
            f"{s} {_num3(j.values[s])} ({_num3(j.low[s])}{' to ' if j.low[s] < 0 else '-'}{_num3(j.high[s])})"
            for s in dep.statistics
        ]
        lines.append(f"  {j.judge}: " + ", ".join(cells))
    return "\n".join(lines)


def abstention_text(res: Abstention) -> str:
    """The terminal's section on each judge's certified confidence threshold."""
    lines = [
        f"Abstention: the lowest confidence at or above which a judge's verdicts are wrong at most {res.alpha:g} of the "
        f"time, with {1 - res.delta:.0%} confidence, on runs drawn as this folder's were (fixed-sequence testing)"
    ]
    for t in res.judges:
        if t.threshold is None:
            lines.append(f"  {t.judge}: none certified (escalate every verdict; p {t.p_value:.3g} at its surest)")
        else:
            lines.append(
                f"  {t.judge}: confidence >= {t.threshold:g} keeps {t.kept} of {t.n} ({t.coverage:.1%}), "
                f"{t.wrong} wrong ({t.risk:.3f}), p {t.p_value:.3g}"
            )
    return "\n".join(lines)


def _num3(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.3f}"


def _guard_outputs(args: Any) -> None:
    """Refuse ``--json``/``--markdown`` paths that would overwrite what the report reads (or each other)."""
    inputs = [Path(args.data) / n for n in DATA_NAMES]
    if args.json:
        guard_output(args.json, inputs=inputs)
    if args.markdown:
        guard_output(args.markdown, inputs=inputs, outputs=[args.json] if args.json else [])
