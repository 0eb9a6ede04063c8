"""Quantities computed once into :class:`~trajectory_judge.analysis.paper.claims.Estimate` records.

A metric of the report is read from the report (its one interval, the one every table prints);
a quantity the report does not hold (a share of a judge's detections, a paired difference between
two judges on one fault type, an accuracy difference between confidence levels) is bootstrapped
here with the report's own procedure: trajectories resampled within their design cell, the
report's replicates and seed, Clopper-Pearson where a proportion is observed at 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from trajectory_judge.analysis.core.bootstrap import bootstrap, percentile_interval
from trajectory_judge.analysis.core.metrics import is_correct
from trajectory_judge.analysis.core.names import delta_name
from trajectory_judge.analysis.core.paired import clean_parents, invented_sentence, unchanged_types
from trajectory_judge.analysis.core.registry import REGISTRY, metric_names
from trajectory_judge.analysis.core.report import JudgeReport, Report
from trajectory_judge.analysis.paper.claims import Estimate
from trajectory_judge.models import JudgeSpec, Trajectory, Verdict, design_cell
from trajectory_judge.testbed.inject import INVENTED_PROMISES

QUALITY_AXES: tuple[str, ...] = metric_names(quality_axis=True)
"""The quality axes on which the ensemble is compared with one greedy pass."""

LOWER_IS_BETTER = frozenset(metric_names(lower_is_better=True))
"""Metrics on which a smaller value is better."""

AXIS_WORDS = {m: REGISTRY[m].words for m in QUALITY_AXES}
"""The quality axes in words."""


_COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def axes_words(axes: Sequence[str]) -> str:
    """Quality axes in words, in a list: ``F1, silent recall and ECE``."""
    names = [AXIS_WORDS.get(a, a) for a in axes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else "none"


def axes_phrase(of: Sequence[str] = QUALITY_AXES, qualifier: str = "") -> str:
    """A set of quality axes counted and named: ``the eight quality axes (F1, ..., Brier score)``; ``qualifier``
    follows the count (``other than ECE``)."""
    n = len(of)
    count = _COUNT_WORDS[n] if n < len(_COUNT_WORDS) else str(n)
    return f"the {count} quality axes{' ' + qualifier if qualifier else ''} ({axes_words(of)})"


def axes_detail(axes: Sequence[str], of: Sequence[str] = QUALITY_AXES, qualifier: str = "") -> str:
    """What a count of quality axes counts, in words: ``of the eight quality axes (F1, ...), namely ECE``."""
    return f"of {axes_phrase(of, qualifier)}" + (f", namely {axes_words(axes)}" if axes else "")


def metric(rep: Report, judge: str, name: str, detail: str = "") -> Estimate:
    """A headline metric of the report (``recall:TYPE`` for a per-type recall), with the report's interval."""
    jr = rep.judges[judge]
    if name.startswith("recall:"):
        t = name.split(":", 1)[1]
        v, iv, n = jr.per_type_recall[t], jr.per_type_intervals.get(t), _type_n(rep, judge, t)
    else:
        v, iv, n = jr.metrics[name], jr.intervals.get(name), _metric_n(jr, name)
    if v is None:
        return Estimate(float("nan"), float("nan"), float("nan"), "none", n, detail)
    if iv is None:
        return Estimate.exact(float(v), n, detail)
    boot = rep.bootstrap
    key = f"{judge}|{name}"
    reps = boot.distribution[:, boot.index(key)] if key in boot.names else None
    return Estimate(float(v), iv.low, iv.high, iv.method, n, detail, reps, _proportion_units(jr, name, float(v), n))


PROPORTIONS = frozenset(metric_names(proportion=True))
"""Metrics that are a share of units (faults, clean runs, flags or scored cases)."""


def _proportion_units(jr: JudgeReport, name: str, value: float, n: int) -> np.ndarray | None:
    """The 0s and 1s whose mean a proportion metric is (``recall:TYPE`` included), or None for another metric."""
    if name == "precision":
        n = flagged(jr)
    elif not (name.startswith("recall:") or name in PROPORTIONS):
        return None
    k = value * n
    if not n or abs(k - round(k)) > 1e-6:
        return None
    return np.r_[np.ones(round(k)), np.zeros(n - round(k))]


def flagged(jr: JudgeReport) -> int:
    """Trajectories the judge flagged, from its recall and false-alarm rate (a missing rate counts as 0)."""
    s, m = jr.strata, jr.metrics
    return round((m["recall"] or 0) * (s["silent"] + s["loud"]) + (m["false_alarm_rate"] or 0) * s["clean"])


def _type_n(rep: Report, judge: str, t: str) -> int:
    return sum(rep.judges[judge].confusion.get(t, {}).values()) or 0


def _metric_n(jr: JudgeReport, name: str) -> int:
    s = jr.strata
    return {
        "silent_recall": s["silent"],
        "loud_recall": s["loud"],
        "false_alarm_rate": s["clean"],
        "recall": s["silent"] + s["loud"],
        "step_exact": int(jr.metrics.get("step_exact_n") or 0),
    }.get(name, jr.n)


def delta(rep: Report, a: str, b: str, name: str, detail: str = "") -> Estimate:
    """The report's paired delta ``b - a`` of one metric."""
    d = rep.delta(a, b, name)
    boot = rep.bootstrap
    if delta_name(a, b, name) in boot.names:
        reps = boot.distribution[:, boot.index(delta_name(a, b, name))]
    else:
        reps = -boot.distribution[:, boot.index(delta_name(b, a, name))]
    return Estimate(d.value, d.low, d.high, "bootstrap", d.n, detail, reps)


def gap(rep: Report, judge: str, detail: str = "") -> Estimate:
    """The report's loud-minus-silent recall gap of one judge."""
    g = next(x for x in rep.gaps if x.judge == judge)
    boot = rep.bootstrap
    return Estimate(
        g.value,
        g.low,
        g.high,
        "bootstrap",
        rep.judges[judge].strata["silent"] + rep.judges[judge].strata["loud"],
        detail,
        boot.distribution[:, boot.index(f"{judge}|loud_minus_silent")],
    )


def replicate_function(
    rep: Report, names: Sequence[str], f: Callable[..., np.ndarray], detail: str = "", n: int | None = None
) -> Estimate:
    """A function of report statistics (``JUDGE|metric`` names) evaluated on every replicate of the report's bootstrap."""
    boot = rep.bootstrap
    cols = [boot.distribution[:, boot.index(x)] for x in names]
    est = [float(boot.estimate[boot.index(x)]) for x in names]
    dist = np.asarray(f(*cols), dtype=float)[:, None]
    low, high = percentile_interval(dist, boot.confidence_level)
    value = float(f(*[np.asarray(e) for e in est]))
    return Estimate(value, float(low[0]), float(high[0]), "bootstrap", n, detail, dist[:, 0])


def _bootstrapped(
    rep: Report,
    rows: np.ndarray,
    cells: Sequence[str],
    f: Callable[[np.ndarray], np.ndarray],
    n: int | None,
    detail: str,
    units: np.ndarray | None = None,
    exact: tuple[np.ndarray, np.ndarray] | None = None,
) -> Estimate:
    """``f`` of the column sums of ``rows``, bootstrapped by design cell with the report's replicates and seed."""
    res = bootstrap(
        rows,
        lambda s: f(s)[..., None],
        strata=list(cells),
        resamples=rep.resamples,
        rng=rep.seed,
        kept=rep.counts,
        exact=exact,
    )
    est, low, high = float(res.estimate[0]), float(res.low[0]), float(res.high[0])
    return Estimate(est, low, high, res.method[0], n, detail, res.distribution[:, 0], units)


def _ratio(num: int, den: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda s: s[..., num] / s[..., den]


def ratio_of_sums(
    rows: np.ndarray, cells: Sequence[str], num: int, den: int, rep: Report, detail: str = ""
) -> Estimate:
    """Sum of column ``num`` over sum of column ``den``, bootstrapped by design cell (Clopper-Pearson at 0 or 1)."""
    succ, trials = rows[:, num].sum(), rows[:, den].sum()
    units = (
        rows[rows[:, den] > 0, num] / rows[rows[:, den] > 0, den]
        if set(np.unique(rows[:, den])) <= {0.0, 1.0}
        else None
    )
    exact = (np.array([succ]), np.array([trials]))
    return _bootstrapped(rep, rows, cells, _ratio(num, den), int(trials), detail, units, exact)


def difference_of_ratios(
    rows: np.ndarray,
    cells: Sequence[str],
    cols: tuple[int, int, int, int],
    rep: Report,
    detail: str = "",
    n: int | None = None,
) -> Estimate:
    """``rows[a]/rows[b] - rows[c]/rows[d]`` (column sums), bootstrapped by design cell."""
    a, b, c, d = cols
    return _bootstrapped(rep, rows, cells, lambda s: _ratio(a, b)(s) - _ratio(c, d)(s), n, detail)


def _by_id(verdicts: Sequence[Verdict], judge: str) -> dict[str, Verdict]:
    return {v.trajectory_id: v for v in verdicts if v.judge_id == judge}


def _pairs(
    trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], judges: Sequence[str]
) -> Iterator[tuple[Trajectory, Trajectory, list[dict[str, Verdict]]]]:
    """(fault, parent) pairs judged by every one of ``judges``."""
    parents = clean_parents(trajectories)
    by = [_by_id(verdicts, j) for j in judges]
    for t in trajectories:
        p = parents.get(t.instance_id)
        if (
            t.label
            and t.label.faulty
            and p is not None
            and all(t.trajectory_id in b and p.trajectory_id in b for b in by)
        ):
            yield t, p, by


def paired_group(
    rep: Report,
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    judge: str,
    group: Callable[[Trajectory, Trajectory], bool],
    detail: str = "",
) -> Estimate:
    """Paired discrimination of ``judge`` (flag on the fault minus flag on its clean parent) over the faults ``group`` selects."""
    rows, cells = [], []
    for t, p, (b,) in _pairs(trajectories, verdicts, [judge]):
        g = float(group(t, p))
        rows.append([g * (int(b[t.trajectory_id].faulty) - int(b[p.trajectory_id].faulty)), g])
        cells.append(design_cell(t.label))
    arr = np.asarray(rows, dtype=float)
    n = int(arr[:, 1].sum())
    detail = detail or f"over the {n} faults with a judged clean parent"
    return _bootstrapped(rep, arr, cells, _ratio(0, 1), n, detail, arr[arr[:, 1] > 0, 0])


def paired_difference(
    rep: Report,
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    a: str,
    b: str,
    failure_type: str,
    detail: str = "",
) -> Estimate:
    """Paired discrimination of ``b`` minus that of ``a`` on one failure type, on one shared resample."""
    rows, cells = [], []
    for t, p, (va, vb) in _pairs(trajectories, verdicts, [a, b]):
        if t.label is None or t.label.failure_type != failure_type:  # None never: _pairs yields faults
            continue
        da = int(va[t.trajectory_id].faulty) - int(va[p.trajectory_id].faulty)
        db = int(vb[t.trajectory_id].faulty) - int(vb[p.trajectory_id].faulty)
        rows.append([db - da, 1.0])
        cells.append(design_cell(t.label))
    arr = np.asarray(rows, dtype=float)
    detail = detail or f"over the {len(rows)} faults with a clean parent both judged"
    return _bootstrapped(rep, arr, cells, _ratio(0, 1), len(rows), detail, arr[:, 0])


def type_recall_difference(
    rep: Report,
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    a: str,
    b: str,
    failure_type: str,
    detail: str = "",
) -> Estimate:
    """Recall of ``b`` minus recall of ``a`` on one failure type, paired on the faults both judged."""
    va, vb = _by_id(verdicts, a), _by_id(verdicts, b)
    faults = [
        t
        for t in trajectories
        if t.label and t.label.failure_type == failure_type and t.trajectory_id in va and t.trajectory_id in vb
    ]
    arr = np.asarray(
        [[int(vb[t.trajectory_id].faulty) - int(va[t.trajectory_id].faulty), 1.0] for t in faults], dtype=float
    )
    cells = [design_cell(t.label) for t in faults]
    return _bootstrapped(rep, arr, cells, _ratio(0, 1), len(faults), detail, arr[:, 0])


def misattributed_share(
    rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], judge: str
) -> Estimate:
    """Of the faults ``judge`` flagged, the share it named with another type or none."""
    by = _by_id(verdicts, judge)
    rows, cells = [], []
    for t in trajectories:
        v = by.get(t.trajectory_id)
        if t.label is None or not t.label.faulty or v is None:
            continue
        flagged = int(v.faulty)
        rows.append([flagged * int(v.failure_type != t.label.failure_type), flagged])
        cells.append(design_cell(t.label))
    arr = np.asarray(rows, dtype=float)
    wrong, flagged = int(arr[:, 0].sum()), int(arr[:, 1].sum())
    return ratio_of_sums(
        arr, cells, 0, 1, rep, f"{wrong} of the {flagged} faults it flagged named with another type or none"
    )


def accuracy_at_top_confidence(
    rep: Report, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], judge: str
) -> Estimate:
    """Accuracy of ``judge`` at its most frequent stated confidence minus its accuracy at every other confidence."""
    by = _by_id(verdicts, judge)
    pairs = [(t.label, by[t.trajectory_id]) for t in trajectories if t.label is not None and t.trajectory_id in by]
    confs = [v.confidence for _, v in pairs]
    top = max(set(confs), key=lambda c: (confs.count(c), c))
    rows = [
        [
            float(is_correct(lab, v)) * (v.confidence == top),
            float(v.confidence == top),
            float(is_correct(lab, v)) * (v.confidence != top),
            float(v.confidence != top),
        ]
        for lab, v in pairs
    ]
    arr = np.asarray(rows)
    k = int(arr[:, 1].sum())
    detail = (
        f"accuracy {arr[:, 0].sum() / k:.3f} on the {k} verdicts at confidence {top:g}, "
        f"{arr[:, 2].sum() / arr[:, 3].sum():.3f} on the other {len(pairs) - k}"
    )
    return difference_of_ratios(arr, [design_cell(lab) for lab, _ in pairs], (0, 1, 2, 3), rep, detail, len(pairs))


def hidden_types(trajectories: Sequence[Trajectory], judge: str) -> list[str]:
    """Failure types none of whose faults reaches ``judge``'s input (its view of every fault equals its parent's)."""
    return unchanged_types(trajectories, JudgeSpec.parse(judge).rendered_view)


def promise_groups(trajectories: Sequence[Trajectory]) -> dict[str, list[str]]:
    """Invented sentence -> the ids of the unsupported-claim faults that carry it."""
    parents = clean_parents(trajectories)
    out: dict[str, list[str]] = {}
    for t in trajectories:
        if t.label is not None and t.label.failure_type == "unsupported_claim":
            out.setdefault(invented_sentence(t, parents.get(t.instance_id)), []).append(t.trajectory_id)
    return out


QUOTED_MISS_PROMISE = 1
"""Index in :data:`trajectory_judge.testbed.inject.INVENTED_PROMISES` of this edition's wording of the invented
promise §7.2 quotes (a linked plan cancelled): its faults are, trajectory id for trajectory id, the release's faults
carrying the quoted sentence (``tests/test_register.py`` checks the match against the release)."""


def quoted_miss(traj: Sequence[Trajectory], verd: Sequence[Verdict]) -> Estimate | None:
    """The step judge's confidence on its misses among the faults carrying §7.2's quoted promise (this edition's
    wording :data:`QUOTED_MISS_PROMISE`, the release's faults by trajectory id); None when it misses none."""
    ids = set(promise_groups(traj).get(INVENTED_PROMISES[QUOTED_MISS_PROMISE], []))
    from trajectory_judge.analysis.paper.published import STEP

    conf = sorted(v.confidence for v in verd if v.judge_id == STEP and v.trajectory_id in ids and not v.faulty)
    if not conf:
        return None
    return Estimate(
        conf[len(conf) // 2],
        conf[0],
        conf[-1],
        "range over the group's misses",
        len(conf),
        f"{len(conf)} of the {len(ids)} faults carrying that promise judged clean",
    )
