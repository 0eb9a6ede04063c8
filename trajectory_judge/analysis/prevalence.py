"""What a judge's flags say about the true fault rate of unlabelled traces (``trajectory-judge prevalence``).

A judge that flags a share ``q`` of a user's traces, with sensitivity ``se`` and specificity ``sp``
measured on a labelled folder (the planted faults of the testbed), implies a fault rate
``(q + sp - 1) / (se + sp - 1)`` (Rogan and Gladen, 1978). The interval is a percentile bootstrap that
resamples both samples at once: the calibration folder within its design cells (as every interval of
the book) and the user's traces as one stratum, through :func:`~trajectory_judge.analysis.bootstrap.bootstrap`
on the two samples stacked. The estimate and its bounds are clipped to [0, 1], and the result says
when they were. The correction assumes the user's faults are caught at the rate the planted ones
are (and the user's clean traces falsely flagged at the rate of the clean runs): a fault the planted
set does not contain may be caught at any rate.

With a few of the user's traces labelled, prediction-powered inference (Angelopoulos et al., 2023)
estimates the rate without that assumption: the flag rate on the unlabelled traces, corrected by the
mean of ``label - flag`` on the labelled ones, again with a bootstrap over both.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, StrictBool

from trajectory_judge.analysis.bootstrap import bootstrap
from trajectory_judge.models import DataError, Verdict, design_cell, parse_jsonl

ASSUMPTION = (
    "the correction assumes the judge catches your faults at the rate it catches the planted ones and "
    "falsely flags your clean traces at the rate of the clean runs; faults unlike the planted ones break it"
)
"""What the Rogan-Gladen estimate assumes, as the command prints it."""

PPI_ASSUMPTION = "the labelled traces are a random sample of your traces"
"""What the prediction-powered estimate assumes instead."""


@dataclass(frozen=True)
class Rate:
    """A rate with its percentile bootstrap interval."""

    estimate: float
    """The value on the samples as they are."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    successes: int
    """What the rate counts (flags, detected faults, clean verdicts)."""
    n: int
    """Out of how many."""


@dataclass(frozen=True)
class Corrected:
    """A fault rate estimated from a judge's flags, clipped to [0, 1]."""

    estimate: float
    """The estimate, clipped to [0, 1]."""
    low: float
    """Lower bound of the percentile interval, clipped."""
    high: float
    """Upper bound, clipped."""
    raw: float
    """The estimate before clipping."""
    clipped: bool
    """Whether clipping moved the estimate or a bound."""
    undefined_replicates: int
    """Replicates without an estimate (sensitivity plus specificity at or below 1 in that replicate); the
    interval ignores them."""
    method: str
    """``rogan-gladen`` or ``ppi``."""


@dataclass(frozen=True)
class Prevalence:
    """The judge's flag rate on the user's traces, its measured accuracy, and the fault rate they imply."""

    judge: str
    """The judge id."""
    flag_rate: Rate
    """Share of the user's traces the judge flags."""
    sensitivity: Rate
    """Share of the calibration folder's faults it flags."""
    specificity: Rate
    """Share of the calibration folder's clean runs it does not flag."""
    rogan_gladen: Corrected
    """The fault rate corrected by sensitivity and specificity."""
    ppi: Corrected | None
    """The prediction-powered estimate from the labelled traces, when some are labelled."""
    labelled: int
    """How many of the user's traces carry a label."""
    resamples: int
    """Bootstrap replicates."""
    seed: int
    """Bootstrap seed."""
    confidence_level: float
    """Two-sided coverage of the intervals."""

    def to_dict(self) -> dict[str, Any]:
        """Plain values, with the Rogan-Gladen estimate's ``estimate``, ``low`` and ``high`` at the top."""
        out = asdict(self)
        rg = out["rogan_gladen"]
        return {"estimate": rg["estimate"], "low": rg["low"], "high": rg["high"], "clipped": rg["clipped"], **out}


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _corrected(result: Any, column: int, method: str) -> Corrected:
    raw, low, high = (float(x[column]) for x in (result.estimate, result.low, result.high))
    est, lo, hi = _clip(raw), _clip(low), _clip(high)
    clipped = (est, lo, hi) != (raw, low, high)
    undefined = int(np.isnan(result.distribution[:, column]).sum())
    return Corrected(est, lo, hi, raw, clipped, undefined, method)


def _rate(result: Any, column: int, successes: int, n: int) -> Rate:
    return Rate(float(result.estimate[column]), float(result.low[column]), float(result.high[column]), successes, n)


def _rg_statistic(sums: np.ndarray) -> np.ndarray:
    """Columns: detected faults, faults, false alarms, clean runs, flags, traces -> se, sp, q, rate."""
    with np.errstate(divide="ignore", invalid="ignore"):
        se = sums[..., 0] / sums[..., 1]
        fa = sums[..., 2] / sums[..., 3]
        q = sums[..., 4] / sums[..., 5]
        informative = se - fa
        rate = np.where(informative > 0, (q - fa) / np.where(informative > 0, informative, 1.0), np.nan)
    return np.stack([se, 1 - fa, q, rate], axis=-1)


def _ppi_statistic(sums: np.ndarray) -> np.ndarray:
    """Columns: label - flag on labelled traces, labelled, flags on unlabelled traces, unlabelled -> rate."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (sums[..., 2] / sums[..., 3] + sums[..., 0] / sums[..., 1])[..., None]


def estimate_prevalence(
    calibration_faulty: Sequence[bool],
    calibration_flags: Sequence[bool],
    calibration_strata: Sequence[str],
    flags: Sequence[bool],
    *,
    labels: Sequence[bool | None] | None = None,
    judge: str = "",
    resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 7,
) -> Prevalence:
    """The fault rate of the traces whose judge flags are ``flags``, corrected by the judge's accuracy on
    the labelled calibration set (its truth ``calibration_faulty``, its flags, its design cells).

    ``labels`` (one per trace, ``None`` where unlabelled) adds the prediction-powered estimate. Raises
    :class:`ValueError` when the calibration set lacks faults or clean runs, or when the judge's
    sensitivity plus specificity is at most 1 (its flags then say nothing the correction can invert).
    """
    truth, cflag = np.asarray(calibration_faulty, dtype=bool), np.asarray(calibration_flags, dtype=bool)
    uflag = np.asarray(flags, dtype=bool)
    if truth.shape != cflag.shape or len(calibration_strata) != len(truth):
        raise ValueError("the calibration set needs one truth, one flag and one stratum per trajectory")
    if not truth.any() or truth.all():
        raise ValueError("the calibration set needs both faulty and clean trajectories judged by the judge")
    if not len(uflag):
        raise ValueError("no traces to estimate the fault rate of")
    cal = np.column_stack([truth & cflag, truth, ~truth & cflag, ~truth, np.zeros((len(truth), 2))])
    user = np.column_stack([np.zeros((len(uflag), 4)), uflag, np.ones(len(uflag))])
    strata = [f"calibration:{s}" for s in calibration_strata] + ["traces"] * len(uflag)
    res = bootstrap(
        np.vstack([cal, user]),
        _rg_statistic,
        strata=strata,
        names=("sensitivity", "specificity", "flag_rate", "rate"),
        resamples=resamples,
        confidence_level=confidence_level,
        rng=seed,
    )
    se, sp = float(res.estimate[0]), float(res.estimate[1])
    if se + sp <= 1:
        raise ValueError(
            f"judge {judge or '?'} has sensitivity {se:.3f} and specificity {sp:.3f} on the calibration set; "
            "their sum is at most 1, so its flags carry no information the correction can invert"
        )
    ppi, labelled = None, 0
    if labels is not None:
        ppi, labelled = _ppi(uflag, labels, resamples=resamples, confidence_level=confidence_level, seed=seed)
    n_faulty, n_clean = int(truth.sum()), int((~truth).sum())
    return Prevalence(
        judge=judge,
        flag_rate=_rate(res, 2, int(uflag.sum()), len(uflag)),
        sensitivity=_rate(res, 0, int((truth & cflag).sum()), n_faulty),
        specificity=_rate(res, 1, int((~truth & ~cflag).sum()), n_clean),
        rogan_gladen=_corrected(res, 3, "rogan-gladen"),
        ppi=ppi,
        labelled=labelled,
        resamples=resamples,
        seed=seed,
        confidence_level=confidence_level,
    )


def _ppi(
    flags: np.ndarray, labels: Sequence[bool | None], *, resamples: int, confidence_level: float, seed: int
) -> tuple[Corrected | None, int]:
    if len(labels) != len(flags):
        raise ValueError("labels need one entry (True, False or None) per trace")
    has = np.asarray([y is not None for y in labels])
    if not has.any():
        return None, 0
    if has.all():
        raise ValueError("every trace is labelled: the labels' own rate needs no judge")
    y = np.asarray([bool(v) if v is not None else False for v in labels], dtype=float)
    f = flags.astype(float)
    lab = np.column_stack([(y - f) * has, has, np.zeros((len(f), 2))])
    unl = np.column_stack([np.zeros((len(f), 2)), f * ~has, ~has])
    rows = np.where(has[:, None], lab, unl)
    res = bootstrap(
        rows,
        _ppi_statistic,
        strata=np.where(has, "labelled", "unlabelled"),
        names=("rate",),
        resamples=resamples,
        confidence_level=confidence_level,
        rng=seed,
    )
    return _corrected(res, 0, "ppi"), int(has.sum())


class _TraceLabel(BaseModel):
    """One labelled trace of ``--labels``."""

    model_config = ConfigDict(extra="forbid")

    trajectory_id: str
    faulty: StrictBool


def _judge_verdicts(path: Path, judge: str, known: set[str] | None = None) -> list[Verdict]:
    """The judge's verdicts in ``path``, one per trajectory (a second one is an error naming its line)."""
    verdicts = parse_jsonl(path, Verdict)
    lines = [i for i, ln in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if ln.strip()]
    seen: set[str] = set()
    out = []
    for lineno, v in zip(lines, verdicts):
        if v.judge_id != judge:
            continue
        if v.trajectory_id in seen:
            raise DataError(f"{path}:{lineno}: trajectory_id: a second verdict of {judge} on {v.trajectory_id!r}")
        if known is not None and v.trajectory_id not in known:
            raise DataError(f"{path}:{lineno}: trajectory_id: {v.trajectory_id!r} is not a trajectory of the folder")
        seen.add(v.trajectory_id)
        out.append(v)
    if not out:
        judges = sorted({v.judge_id for v in verdicts})
        raise DataError(f"{path}: no verdicts of judge {judge!r} (it holds {', '.join(judges) or 'none'})")
    return out


def _labels(path: Path, ids: Sequence[str]) -> list[bool | None]:
    records = parse_jsonl(path, _TraceLabel)
    lines = [i for i, ln in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if ln.strip()]
    index = {t: i for i, t in enumerate(ids)}
    out: list[bool | None] = [None] * len(ids)
    for lineno, r in zip(lines, records):
        if r.trajectory_id not in index:
            raise DataError(f"{path}:{lineno}: trajectory_id: {r.trajectory_id!r} has no verdict of the judge")
        if out[index[r.trajectory_id]] is not None:
            raise DataError(f"{path}:{lineno}: trajectory_id: {r.trajectory_id!r} is labelled twice")
        out[index[r.trajectory_id]] = r.faulty
    if not records:
        raise DataError(f"{path}: no labels (the file is empty)")
    return out


def prevalence_from_data(
    data: Any,
    judge: str,
    verdicts: Sequence[Verdict],
    *,
    labels: Sequence[bool | None] | None = None,
    resamples: int = 10_000,
    seed: int = 7,
) -> Prevalence:
    """:func:`estimate_prevalence` with the judge's verdicts in a loaded labelled folder
    (:class:`~trajectory_judge.analysis.loading.Dataset`) as calibration, on ``verdicts`` (the judge's, on the user's
    traces, one each; ``labels`` one per verdict or None)."""
    by_id = {t.trajectory_id: t for t in data.trajectories}
    cal = [v for v in data.verdicts if v.judge_id == judge]
    if not cal:
        raise ValueError(f"the calibration folder holds no verdicts of judge {judge!r}")
    labs = [by_id[v.trajectory_id].label for v in cal]
    return estimate_prevalence(
        [bool(lab and lab.faulty) for lab in labs],
        [v.faulty for v in cal],
        [design_cell(lab) for lab in labs],
        [v.faulty for v in verdicts],
        labels=labels,
        judge=judge,
        resamples=resamples,
        seed=seed,
    )


def prevalence_from_files(
    judge: str,
    calibration: str | Path,
    verdicts: str | Path,
    *,
    labels: str | Path | None = None,
    resamples: int = 10_000,
    seed: int = 7,
) -> Prevalence:
    """:func:`prevalence_from_data` on a labelled folder holding the judge's verdicts and a verdicts file on
    the user's traces (and optionally a labels file: JSONL lines ``{"trajectory_id": ..., "faulty": ...}``)."""
    from trajectory_judge.analysis.loading import load_data

    folder = Path(calibration)
    data = load_data(folder)
    _judge_verdicts(folder / "verdicts.jsonl", judge, {t.trajectory_id for t in data.trajectories})
    user = _judge_verdicts(Path(verdicts), judge)
    labelled = _labels(Path(labels), [v.trajectory_id for v in user]) if labels is not None else None
    try:
        return prevalence_from_data(data, judge, user, labels=labelled, resamples=resamples, seed=seed)
    except ValueError as exc:
        raise DataError(f"{folder}: {exc}") from None


def _line(name: str, r: Rate | Corrected, what: str) -> str:
    from trajectory_judge.analysis.formatting import format_interval

    return f"  {name:<22}{format_interval(r.estimate, r.low, r.high, 'bootstrap'):<24}{what}"


def summary_lines(p: Prevalence, calibration: str, verdicts: str) -> list[str]:
    """What ``prevalence`` prints: the inputs, the estimate, and what it assumes."""
    pct = f"{p.confidence_level:.0%}"
    rg = p.rogan_gladen
    out = [
        f"fault rate of {p.flag_rate.n} traces ({verdicts}) from the flags of {p.judge}",
        _line("flag rate", p.flag_rate, f"{p.flag_rate.successes} of {p.flag_rate.n} traces flagged"),
        _line("sensitivity", p.sensitivity, f"{p.sensitivity.successes} of {p.sensitivity.n} faults in {calibration}"),
        _line("specificity", p.specificity, f"{p.specificity.successes} of {p.specificity.n} clean runs"),
        _line("fault rate", rg, f"Rogan-Gladen, {pct} bootstrap over both samples ({p.resamples} replicates)"),
    ]
    if rg.clipped:
        out.append(f"  clipped to [0, 1]: unclipped estimate {rg.raw:.3f}")
    if rg.undefined_replicates:
        out.append(f"  {rg.undefined_replicates} replicates had sensitivity + specificity <= 1 and were left out")
    out.append(f"  assumes: {ASSUMPTION}")
    if p.ppi is not None:
        out.append(_line("fault rate (PPI)", p.ppi, f"prediction-powered, {p.labelled} labelled traces"))
        if p.ppi.clipped:
            out.append(f"  clipped to [0, 1]: unclipped estimate {p.ppi.raw:.3f}")
        out.append(f"  assumes: {PPI_ASSUMPTION}")
    return out


def cli_prevalence(args: Any) -> int:
    """``trajectory-judge prevalence --judge J --calibration DIR --verdicts FILE [--labels FILE] [--json OUT]``."""
    from trajectory_judge.fileio import atomic_write_text
    from trajectory_judge.provenance.outputs import guard_output

    inputs = [args.verdicts, str(Path(args.calibration) / "verdicts.jsonl")] + ([args.labels] if args.labels else [])
    if args.json:
        guard_output(args.json, inputs=inputs)
    p = prevalence_from_files(
        args.judge, args.calibration, args.verdicts, labels=args.labels, resamples=args.resamples, seed=args.seed
    )
    print("\n".join(summary_lines(p, args.calibration, args.verdicts)))
    if args.json:
        record = {
            **p.to_dict(),
            "inputs": {"calibration": args.calibration, "verdicts": args.verdicts, "labels": args.labels},
            "assumes": ASSUMPTION,
        }
        atomic_write_text(args.json, json.dumps(record, indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
