"""What a judge's flags say about the true fault rate of unlabelled traces (``trajectory-judge prevalence``).

A judge that flags a share ``q`` of a user's traces, with sensitivity ``se`` and specificity ``sp``
measured on a labelled calibration set (the planted faults of the testbed), implies a fault rate
``(q + sp - 1) / (se + sp - 1)`` (Rogan and Gladen, 1978). The correction assumes the user's faults are
caught at the rate the calibration faults are (and the user's clean traces falsely flagged at the rate of
the clean runs): a fault the calibration set does not contain may be caught at any rate.

The interval carries the binomial uncertainty of all three proportions, also at zero events: each
replicate draws ``se``, ``sp`` and ``q`` from their Jeffreys posteriors ``Beta(x + 1/2, n - x + 1/2)``
(the Jeffreys interval of Brown, Cai and DasGupta, 2001, is the equal-tailed interval of that
posterior), so a specificity observed at 12 of 12 is resampled below 1 as often as its counts allow, never
as exactly 1. The interval is the percentile interval of the estimate over the replicates. Its edge cases
are part of it:

* an uninformative judge: when more than ``alpha / 2`` of the replicates have ``se + sp - 1 <= 0`` (its
  lower confidence bound is not above 0), the flags may carry nothing to invert, and the estimate is
  reported as uninformative, the whole of [0, 1], with no point;
* replicates with ``se + sp - 1 <= 0`` (at most ``alpha / 2`` of them otherwise) are never left out:
  each counts as ``-inf`` for the lower bound and ``+inf`` for the upper, which can only widen the interval;
* a failed transfer: when the whole unclipped interval lies outside [0, 1], no fault rate in [0, 1] is
  consistent with the flags and the calibration, so the judge's error rates on the calibration set do not
  hold on the traces; the estimate is reported as such, with no interval;
* otherwise the point and the bounds are clipped to [0, 1], and the record names which of them were.

With a few of the user's traces labelled at random, prediction-powered inference estimates the rate without
the transfer assumption: PPI++ (Angelopoulos, Duchi and Zrnic, 2023; :mod:`~trajectory_judge.analysis.statistics.ppi`),
the flag rate weighted by the power-tuned ``lam`` and corrected by the labelled residuals, beside the
labels-only (classical) estimate it can never be much wider than.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, StrictBool

from trajectory_judge.analysis.statistics.ppi import MeanEstimate, ppi_mean
from trajectory_judge.models import DataError, Verdict, parse_jsonl

if TYPE_CHECKING:
    import pandas as pd

ASSUMPTION = (
    "the correction assumes the judge catches your faults at the rate it catches the planted ones and "
    "falsely flags your clean traces at the rate of the clean runs; faults unlike the planted ones break it"
)
"""What the Rogan-Gladen estimate assumes, as the command prints it."""

PPI_ASSUMPTION = "the labelled traces are a random sample of your traces"
"""What the prediction-powered estimate assumes instead."""

MIN_CALIBRATION = 50
"""Fewer faulty (or clean) calibration runs than this draw a warning: the sensitivity (or specificity) is
then loosely known, and a false-alarm rate near the fault rate moves the estimate far."""

MIN_LABELLED = 30
"""Fewer labelled traces than this draw a warning: the normal intervals of PPI++ and of the labels alone
are then rough (a rule of thumb for a binary mean)."""

ESTIMATED, UNINFORMATIVE, TRANSFER_FAILS = "estimated", "uninformative", "transfer fails"
"""The three outcomes of a corrected rate (:attr:`Corrected.status`)."""


@dataclass(frozen=True)
class Rate:
    """A proportion with its equal-tailed Jeffreys interval."""

    estimate: float
    """The observed share."""
    low: float
    """Lower bound (0 when no success was observed)."""
    high: float
    """Upper bound (1 when every trial was a success)."""
    successes: int
    """What the rate counts (flags, detected faults, clean verdicts)."""
    n: int
    """Out of how many."""
    method: str = "jeffreys"
    """How the interval was made."""


@dataclass(frozen=True)
class Informedness:
    """``sensitivity + specificity - 1`` (Youden's J), what the correction divides by, with its interval."""

    estimate: float
    """At the observed sensitivity and specificity."""
    low: float
    """Lower percentile bound over the replicates."""
    high: float
    """Upper percentile bound."""
    at_or_below_zero: int
    """Replicates in which it is at most 0 (the flags then carry nothing to invert)."""
    method: str = "jeffreys draws"
    """How the interval was made."""


@dataclass(frozen=True)
class Corrected:
    """A fault rate estimated from a judge's flags: an estimate clipped to [0, 1], or the reason there is none."""

    estimate: float | None
    """The estimate, clipped to [0, 1]; None when uninformative or when the transfer fails."""
    low: float | None
    """Lower bound, clipped (0 when uninformative; None when the transfer fails)."""
    high: float | None
    """Upper bound, clipped (1 when uninformative; None when the transfer fails)."""
    raw: float | None
    """The point before clipping (None when uninformative)."""
    raw_low: float | None
    """The lower bound before clipping (None when uninformative)."""
    raw_high: float | None
    """The upper bound before clipping (None when uninformative)."""
    clipped: bool
    """Whether clipping moved the point or a bound."""
    clipped_parts: tuple[str, ...]
    """Which of ``estimate``, ``low`` and ``high`` clipping moved, in that order."""
    status: str
    """``estimated``, ``uninformative`` (the whole of [0, 1]) or ``transfer fails`` (no interval)."""
    undefined_replicates: int
    """Replicates without an estimate (sensitivity plus specificity at most 1 there); each counts as
    ``-inf`` for the lower bound and ``+inf`` for the upper, none is left out."""
    method: str
    """How the interval was made: ``jeffreys draws``, ``normal`` or ``clopper-pearson``."""
    estimator: str
    """``rogan-gladen``, ``ppi++`` or ``classical`` (the labels alone)."""


@dataclass(frozen=True)
class Prevalence:
    """The judge's flag rate on the user's traces, its measured accuracy, and the fault rate they imply."""

    judge: str
    """The judge id."""
    flag_rate: Rate
    """Share of the user's traces the judge flags."""
    sensitivity: Rate
    """Share of the calibration set's faults it flags."""
    specificity: Rate
    """Share of the calibration set's clean runs it does not flag."""
    informedness: Informedness
    """Sensitivity plus specificity minus 1, what the correction divides by."""
    rogan_gladen: Corrected
    """The fault rate corrected by sensitivity and specificity."""
    ppi: Corrected | None
    """The PPI++ estimate from the labelled traces, when some are labelled."""
    classical: Corrected | None
    """The labelled traces' own rate (their labels alone), beside ``ppi``."""
    ppi_lambda: float | None
    """PPI++'s weight of the flags (0: the labels alone; 1: the original prediction-powered estimate)."""
    labelled: int
    """How many of the user's traces carry a label."""
    resamples: int
    """Replicates of the Rogan-Gladen interval."""
    seed: int
    """Their seed."""
    confidence_level: float
    """Two-sided coverage of the intervals."""
    warnings: tuple[str, ...]
    """What the inputs leave loosely known (small calibration or labelled sets, undefined replicates)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain values, with the Rogan-Gladen estimate's ``estimate``, ``low``, ``high``, ``clipped`` and
        ``status`` at the top."""
        out = asdict(self)
        rg = out["rogan_gladen"]
        top = {k: rg[k] for k in ("estimate", "low", "high", "clipped", "status")}
        return {**top, **out}

    def to_frame(self) -> pd.DataFrame:
        """One row per quantity: estimate, low, high, method, status."""
        import pandas as pd

        rows: dict[str, Any] = {
            "flag rate": self.flag_rate,
            "sensitivity": self.sensitivity,
            "specificity": self.specificity,
            "informedness": self.informedness,
            "fault rate (rogan-gladen)": self.rogan_gladen,
            "fault rate (ppi++)": self.ppi,
            "fault rate (labels alone)": self.classical,
        }
        return pd.DataFrame(
            [
                {
                    **{k: getattr(r, k) for k in ("estimate", "low", "high", "method")},
                    "status": getattr(r, "status", ESTIMATED),
                }
                for r in rows.values()
                if r is not None
            ],
            index=pd.Index([k for k, r in rows.items() if r is not None], name="quantity"),
        )


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _corrected(
    raw: float, raw_low: float, raw_high: float, *, method: str, estimator: str, undefined: int = 0
) -> Corrected:
    """A point and its interval clipped to [0, 1], naming what clipping moved."""
    values = {"estimate": raw, "low": raw_low, "high": raw_high}
    clipped = {k: _clip(v) for k, v in values.items()}
    parts = tuple(k for k in values if clipped[k] != values[k])
    bounds = (clipped["estimate"], clipped["low"], clipped["high"])
    return Corrected(*bounds, raw, raw_low, raw_high, bool(parts), parts, ESTIMATED, undefined, method, estimator)


def jeffreys_interval(successes: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """The equal-tailed Jeffreys interval of ``successes`` in ``n`` (Brown, Cai and DasGupta, 2001): the
    ``Beta(x + 1/2, n - x + 1/2)`` quantiles, with the lower bound 0 at ``x = 0`` and the upper 1 at ``x = n``."""
    from scipy.stats import beta

    alpha = 1 - confidence_level
    low, high = beta.ppf([alpha / 2, 1 - alpha / 2], successes + 0.5, n - successes + 0.5)
    return 0.0 if successes == 0 else float(low), 1.0 if successes == n else float(high)


def _rate(successes: int, n: int, confidence_level: float) -> Rate:
    return Rate(successes / n, *jeffreys_interval(successes, n, confidence_level), successes, n)


def rogan_gladen(
    detected: int,
    faults: int,
    false_alarms: int,
    clean: int,
    flagged: int,
    traces: int,
    *,
    resamples: int = 10_000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> tuple[Corrected, Informedness]:
    """The Rogan-Gladen fault rate from counts: ``detected`` of ``faults`` and ``false_alarms`` of ``clean``
    calibration runs flagged, ``flagged`` of ``traces`` flagged; ``resamples`` replicates drawn from the
    three Jeffreys posteriors (the module docstring says how the interval treats the edge cases)."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    alpha = round(1 - confidence_level, 12)  # 0.05, not 1 - 0.95 = 0.05000000000000004 (which moves a quantile)
    se_draws = gen.beta(detected + 0.5, faults - detected + 0.5, resamples)
    fa_draws = gen.beta(false_alarms + 0.5, clean - false_alarms + 0.5, resamples)
    q_draws = gen.beta(flagged + 0.5, traces - flagged + 0.5, resamples)
    j_draws = se_draws - fa_draws
    se, fa, q = detected / faults, false_alarms / clean, flagged / traces
    undefined = j_draws <= 0
    j = Informedness(
        se - fa,
        float(np.quantile(j_draws, alpha / 2, method="inverted_cdf")),
        float(np.quantile(j_draws, 1 - alpha / 2, method="inverted_cdf")),
        int(undefined.sum()),
    )
    if se - fa <= 0 or j.low <= 0:  # at least alpha / 2 of the replicates at or below 0
        uninformative = Corrected(
            None, 0.0, 1.0, None, None, None, False, (), UNINFORMATIVE, j.at_or_below_zero, "none", "rogan-gladen"
        )
        return uninformative, j
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = (q_draws - fa_draws) / j_draws
    low = float(np.quantile(np.where(undefined, -np.inf, rates), alpha / 2, method="inverted_cdf"))
    high = float(np.quantile(np.where(undefined, np.inf, rates), 1 - alpha / 2, method="inverted_cdf"))
    raw = (q - fa) / (se - fa)
    method = "jeffreys draws"
    if high < 0 or low > 1:
        fails = Corrected(
            None, None, None, raw, low, high, False, (), TRANSFER_FAILS, j.at_or_below_zero, method, "rogan-gladen"
        )
        return fails, j
    return _corrected(raw, low, high, method=method, estimator="rogan-gladen", undefined=j.at_or_below_zero), j


def _warnings(faults: int, clean: int, labelled: int, undefined: int, resamples: int) -> tuple[str, ...]:
    out = []
    for n, what, rate in ((faults, "faulty", "sensitivity"), (clean, "clean", "specificity")):
        if n < MIN_CALIBRATION:
            out.append(
                f"only {n} {what} calibration runs (fewer than {MIN_CALIBRATION}): the {rate} is loosely known, "
                "and the interval is wide"
            )
    if undefined:
        out.append(
            f"{undefined} of {resamples} replicates had sensitivity + specificity <= 1; each counts as -inf for the "
            "lower bound and +inf for the upper (none is left out)"
        )
    if 0 < labelled < MIN_LABELLED:
        out.append(
            f"only {labelled} labelled traces (fewer than {MIN_LABELLED}): the normal intervals of PPI++ and of the "
            "labels alone are rough"
        )
    return tuple(out)


def estimate_prevalence(
    calibration_faulty: Sequence[bool],
    calibration_flags: Sequence[bool],
    flags: Sequence[bool],
    *,
    labels: Sequence[bool | None] | None = None,
    judge: str = "",
    resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: int = 7,
) -> Prevalence:
    """The fault rate of the traces whose judge flags are ``flags``, corrected by the judge's accuracy on
    the labelled calibration set (its truth ``calibration_faulty`` and its flags).

    ``labels`` (one per trace, ``None`` where unlabelled) adds the PPI++ estimate and the labels' own. Raises
    :class:`ValueError` when the calibration set lacks faults or clean runs, or when there are no traces; a
    judge whose sensitivity plus specificity may be at most 1 is reported as uninformative, not refused.
    """
    truth, cflag = np.asarray(calibration_faulty, dtype=bool), np.asarray(calibration_flags, dtype=bool)
    uflag = np.asarray(flags, dtype=bool)
    if truth.shape != cflag.shape or truth.ndim != 1:
        raise ValueError("the calibration set needs one truth and one flag per trajectory")
    if not truth.any() or truth.all():
        raise ValueError("the calibration set needs both faulty and clean trajectories judged by the judge")
    if not len(uflag):
        raise ValueError("no traces to estimate the fault rate of")
    if not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    counts = {
        "detected": int((truth & cflag).sum()),
        "faults": int(truth.sum()),
        "false_alarms": int((~truth & cflag).sum()),
        "clean": int((~truth).sum()),
        "flagged": int(uflag.sum()),
        "traces": len(uflag),
    }
    rg, j = rogan_gladen(**counts, resamples=resamples, confidence_level=confidence_level, rng=seed)
    ppi = classical = lam = None
    labelled = 0
    if labels is not None:
        ppi, classical, lam, labelled = _ppi(uflag, labels, confidence_level=confidence_level)
    return Prevalence(
        judge=judge,
        flag_rate=_rate(counts["flagged"], counts["traces"], confidence_level),
        sensitivity=_rate(counts["detected"], counts["faults"], confidence_level),
        specificity=_rate(counts["clean"] - counts["false_alarms"], counts["clean"], confidence_level),
        informedness=j,
        rogan_gladen=rg,
        ppi=ppi,
        classical=classical,
        ppi_lambda=lam,
        labelled=labelled,
        resamples=resamples,
        seed=seed,
        confidence_level=confidence_level,
        warnings=_warnings(counts["faults"], counts["clean"], labelled, rg.undefined_replicates, resamples),
    )


def _from_mean(m: MeanEstimate, estimator: str) -> Corrected:
    return _corrected(m.estimate, m.low, m.high, method=m.method, estimator=estimator)


def _ppi(
    flags: np.ndarray, labels: Sequence[bool | None], *, confidence_level: float
) -> tuple[Corrected | None, Corrected | None, float | None, int]:
    if len(labels) != len(flags):
        raise ValueError("labels need one entry (True, False or None) per trace")
    has = np.asarray([y is not None for y in labels])
    if not has.any():
        return None, None, None, 0
    if has.all():
        raise ValueError("every trace is labelled: the labels' own rate needs no judge")
    if has.sum() < 2:
        raise ValueError("one labelled trace has no variance to estimate: label at least two")
    y = np.asarray([bool(v) for v in labels if v is not None], dtype=float)
    f = flags.astype(float)
    tuned = ppi_mean(y, f[has], f[~has], confidence_level=confidence_level)
    alone = ppi_mean(y, f[has], f[~has], lam=0.0, confidence_level=confidence_level)
    return _from_mean(tuned, "ppi++"), _from_mean(alone, "classical"), tuned.lam, int(has.sum())


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
    (:class:`~trajectory_judge.analysis.core.loading.Dataset`) as calibration, on ``verdicts`` (the judge's, on the user's
    traces, one each; ``labels`` one per verdict or None)."""
    by_id = {t.trajectory_id: t for t in data.trajectories}
    cal = [v for v in data.verdicts if v.judge_id == judge]
    if not cal:
        raise ValueError(f"the calibration folder holds no verdicts of judge {judge!r}")
    labs = [by_id[v.trajectory_id].label for v in cal]
    return estimate_prevalence(
        [bool(lab and lab.faulty) for lab in labs],
        [v.faulty for v in cal],
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
    from trajectory_judge.analysis.core.loading import load_data

    folder = Path(calibration)
    data = load_data(folder)
    _judge_verdicts(folder / "verdicts.jsonl", judge, {t.trajectory_id for t in data.trajectories})
    user = _judge_verdicts(Path(verdicts), judge)
    labelled = _labels(Path(labels), [v.trajectory_id for v in user]) if labels is not None else None
    try:
        return prevalence_from_data(data, judge, user, labels=labelled, resamples=resamples, seed=seed)
    except ValueError as exc:
        raise DataError(f"{folder}: {exc}") from None


def _signed(x: float, decimals: int) -> str:
    """``x`` with true minus signs and infinities written out, as the intervals are printed."""
    if not np.isfinite(x):
        return "\u2212\u221e" if x < 0 else "+\u221e"
    return f"{x:.{decimals}f}".replace("-", "\u2212")


def clipping_text(c: Corrected) -> str:
    """What clipping to [0, 1] moved, exactly (the point, a bound, or both): '' when nothing."""
    if not c.clipped or c.raw is None or c.raw_low is None or c.raw_high is None or c.estimate is None:
        return ""
    moved = []
    if "estimate" in c.clipped_parts:
        moved.append(f"the point from {_signed(c.raw, 3)} to {c.estimate:.3f}")
    for part, name, raw in (("low", "lower", c.raw_low), ("high", "upper", c.raw_high)):
        if part in c.clipped_parts:
            moved.append(f"the {name} bound from {_signed(raw, 2)} to {_clip(raw):.2f}")
    text = "clipped to [0, 1]: " + " and ".join(moved)
    if "estimate" not in c.clipped_parts:
        text += f" (the point, {c.estimate:.3f}, was not clipped)"
    return text


def status_text(c: Corrected, confidence_level: float = 0.95) -> str:
    """Why a Rogan-Gladen estimate has no interval, or no point: '' when it has both."""
    pct = f"{confidence_level:.0%}"
    if c.status == UNINFORMATIVE:
        return (
            f"uninformative: [0, 1]; sensitivity + specificity - 1 is not above 0 at {pct} confidence, so the flags "
            "may carry nothing the correction can invert"
        )
    if c.status == TRANSFER_FAILS and c.raw is not None and c.raw_low is not None and c.raw_high is not None:
        side = "above 1" if c.raw_low > 1 else "below 0"
        return (
            f"transfer fails: the correction gives {_signed(c.raw, 3)}, and its whole {pct} interval before clipping "
            f"({_signed(c.raw_low, 2)} to {_signed(c.raw_high, 2)}) lies {side}; the judge's error rates on the calibration "
            "set do not hold on these traces, so no interval is given"
        )
    return ""


def _line(name: str, r: Rate | Corrected | Informedness, what: str) -> str:
    from trajectory_judge.analysis.core.formatting import format_interval

    return f"  {name:<22}{format_interval(r.estimate, r.low, r.high, r.method):<24}{what}"


def summary_lines(p: Prevalence, calibration: str, verdicts: str) -> list[str]:
    """What ``prevalence`` prints: the inputs, the estimates, what was clipped or refused, and what it assumes."""
    pct = f"{p.confidence_level:.0%}"
    rg = p.rogan_gladen
    out = [
        f"fault rate of {p.flag_rate.n} traces ({verdicts}) from the flags of {p.judge}",
        _line("flag rate", p.flag_rate, f"{p.flag_rate.successes} of {p.flag_rate.n} traces flagged"),
        _line("sensitivity", p.sensitivity, f"{p.sensitivity.successes} of {p.sensitivity.n} faults in {calibration}"),
        _line("specificity", p.specificity, f"{p.specificity.successes} of {p.specificity.n} clean runs"),
        _line("informedness", p.informedness, "sensitivity + specificity - 1, what the correction divides by"),
    ]
    method = f"Rogan-Gladen, {pct} interval over {p.resamples} draws from the three Jeffreys posteriors"
    if rg.status == ESTIMATED:
        out.append(_line("fault rate", rg, method))
        if rg.clipped:
            out.append(f"  {clipping_text(rg)}")
    else:
        out.append(f"  {'fault rate':<22}{status_text(rg, p.confidence_level)}")
    out.append(f"  assumes: {ASSUMPTION}")
    if p.ppi is not None and p.classical is not None:
        out.append(
            _line(
                "fault rate (PPI++)",
                p.ppi,
                f"prediction-powered, lambda {p.ppi_lambda:.2f}, {p.labelled} labelled traces",
            )
        )
        if p.ppi.clipped:
            out.append(f"  {clipping_text(p.ppi)}")
        out.append(_line("fault rate (labels)", p.classical, f"the {p.labelled} labels alone"))
        if p.classical.clipped:
            out.append(f"  {clipping_text(p.classical)}")
        out.append(f"  assumes: {PPI_ASSUMPTION}")
    out += [f"  note: {w}" for w in p.warnings]
    return out
