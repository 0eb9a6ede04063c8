"""Variance over generation seeds: the self-consistency members scored as judges in their own right.

The paper's intervals are over trajectories, conditional on one generation seed. A self-consistency
ensemble samples the same step prompt at several seeds, so keeping its members (``members.jsonl``,
one verdict per trajectory and member id such as ``step@T0.7/seed7:qwen2.5-coder:1.5b``) gives
several single-pass sampled judges for free. This module

- re-derives every ensemble verdict from its stored members and compares it with the one on disk
  (:func:`check_ensembles`), which pins both the aggregation and the server's determinism;
- scores each member with the same report as every other judge and sets the spread between seeds
  beside the width of one seed's bootstrap interval (:func:`seed_variance`);
- measures how often the seeds agree on a trajectory (all-agree share, Fleiss' and Cohen's kappa).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from trajectory_judge.analysis.core.confusion import confusion_statistics, flag_counts
from trajectory_judge.analysis.core.cost import read_run_records
from trajectory_judge.analysis.core.registry import metric_names
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.models import ENSEMBLE_VIEW, DataError, JudgeSpec, Trajectory, Verdict, load_verdicts, stratum
from trajectory_judge.provenance.manifest import verify_manifest

if TYPE_CHECKING:
    import pandas as pd

MEMBERS_FILE = "members.jsonl"
"""Where the runner keeps ensemble members, beside ``verdicts.jsonl``."""

SEED_METRICS: tuple[str, ...] = metric_names(main=True, count=False)
"""The main table's metrics, compared across seeds."""


def parse_member_id(judge_id: str) -> JudgeSpec:
    """The record of a member id ``view@T<temperature>/seed<n>:model``, or ``view+NAME@T...`` under a prompt of
    one's own (:meth:`JudgeSpec.parse`, whose ``view``, ``temperature``, ``seed`` and ``model`` are then set, and
    ``prompt`` for the latter); a ValueError names any other id."""
    spec = JudgeSpec.parse(judge_id)
    if not spec.is_member:
        raise ValueError(f"{judge_id!r} is not a member id (expected view@T<temperature>/seed<n>:model)")
    return spec


def _member_key(s: JudgeSpec) -> tuple[str, str, str, float, int]:
    """Model, view, prompt (``""`` for the built-in one), temperature and seed of a member's record (all but the
    prompt set for a member): the members of one ensemble share all but the seed."""
    assert s.model is not None and s.temperature is not None and s.seed is not None
    return s.model, s.view, s.prompt or "", s.temperature, s.seed


def load_members(directory: str | Path, trajectory_ids: Sequence[str] | None = None) -> list[Verdict]:
    """The member verdicts of ``directory`` (checksum-verified when listed), or ``[]`` without a file."""
    directory = Path(directory)
    path = directory / MEMBERS_FILE
    if not path.exists():
        return []
    verify_manifest(directory, (MEMBERS_FILE,))
    members = load_verdicts(path, trajectory_ids)
    for v in members:
        try:
            parse_member_id(v.judge_id)
        except ValueError as exc:
            raise DataError(f"{path}: {exc}") from None
    return members


def member_ids(members: Sequence[Verdict]) -> list[str]:
    """Member judge ids ordered by model, view, prompt (the built-in one first) and temperature, then seed."""
    specs = {parse_member_id(v.judge_id) for v in members}
    return [s.judge_id for s in sorted(specs, key=_member_key)]


def complete_ids(members: Sequence[Verdict], ids: Sequence[str]) -> list[str]:
    """Trajectories judged by every member in ``ids``, in order of first appearance."""
    seen: dict[str, set[str]] = defaultdict(set)
    for v in members:
        seen[v.trajectory_id].add(v.judge_id)
    return [t for t, js in seen.items() if set(ids) <= js]


@dataclass(frozen=True)
class EnsembleCheck:
    """Ensemble verdicts re-derived from their stored members, against those on disk."""

    ensemble: str
    """The ensemble's judge id, e.g. ``selfcons3:qwen2.5-coder:1.5b``."""
    members: tuple[str, ...]
    """Its member ids, in aggregation order (by seed)."""
    complete: int
    """Trajectories with every member stored."""
    same: int
    """Of those with an ensemble verdict on disk: re-derived verdict identical (all fields but latency)."""
    different: tuple[str, ...]
    """Trajectories whose re-derived verdict differs from the one on disk."""
    without_ensemble: tuple[str, ...]
    """Trajectories with all members but no ensemble verdict on disk."""
    rerun_same: int = 0
    """Ensemble verdicts already on disk when their members were sampled again, and the same then
    (the run records' ``rechecked``): the server's determinism across sessions."""
    rerun_different: int = 0
    """Ensemble verdicts already on disk that came out different when their members were sampled again."""

    def to_frame(self) -> pd.DataFrame:
        """One row: the counts."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "ensemble": self.ensemble,
                    "members": len(self.members),
                    "complete": self.complete,
                    "same": self.same,
                    "different": len(self.different),
                    "without ensemble": len(self.without_ensemble),
                    "rerun same": self.rerun_same,
                    "rerun different": self.rerun_different,
                }
            ]
        ).set_index("ensemble")


def rerun_counts(runs: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per ensemble id, (same, different) summed over the run records' ``rechecked`` tallies."""
    out: dict[str, tuple[int, int]] = {}
    for rec in runs:
        for judge, tally in (rec.get("rechecked") or {}).items():
            same, diff = out.get(judge, (0, 0))
            out[judge] = (same + int(tally.get("same", 0)), diff + int(tally.get("different", 0)))
    return out


def _decision(v: Verdict) -> dict:
    return v.model_dump(exclude={"latency_s"})


def check_ensembles(
    verdicts: Sequence[Verdict], members: Sequence[Verdict], runs: Sequence[Mapping[str, Any]] = ()
) -> list[EnsembleCheck]:
    """Re-derive every ensemble verdict from its members (:func:`trajectory_judge.judges.selfcons.aggregate`).

    Members are grouped by model, view, prompt and temperature; a group is checked against the ensemble id
    the grammar gives it (``selfconsK:MODEL``, or ``selfconsK+NAME:MODEL`` for samples of a prompt of one's
    own named NAME; K its members), so only groups of two or more samples of the ensemble's view (step) are
    checked. With the data's run records (``runs``), each check also
    carries how many ensemble verdicts were already on disk when their members were sampled again, and
    whether they came out the same.
    """
    from trajectory_judge.judges.selfcons import (
        aggregate,
    )  # here, not above: its model clients cost the report's import

    reruns = rerun_counts(runs)
    groups: dict[tuple[str, str, str, float], list[str]] = defaultdict(list)
    for mid in member_ids(members):
        model, view, prompt, temperature, _seed = _member_key(parse_member_id(mid))
        groups[(model, view, prompt, temperature)].append(mid)
    by_key = {(v.trajectory_id, v.judge_id): v for v in [*verdicts, *members]}
    checks = []
    for (model, view, prompt, _t), ids in groups.items():
        if view != ENSEMBLE_VIEW or len(ids) < 2:
            continue  # no ensemble id of the grammar names samples of another view, or a single sample
        ensemble = JudgeSpec.self_consistency(len(ids), model, prompt or None).judge_id
        same, different, missing = 0, [], []
        done = complete_ids(members, ids)
        for tid in done:
            derived = aggregate([by_key[(tid, m)] for m in ids], trajectory_id=tid, judge_id=ensemble)
            stored = by_key.get((tid, ensemble))
            if stored is None:
                missing.append(tid)
            elif _decision(derived) == _decision(stored):
                same += 1
            else:
                different.append(tid)
        checks.append(
            EnsembleCheck(
                ensemble, tuple(ids), len(done), same, tuple(different), tuple(missing), *reruns.get(ensemble, (0, 0))
            )
        )
    return checks


def fleiss_kappa(ratings: np.ndarray) -> float:
    """Fleiss' kappa of a (subjects x raters) array of category labels (every subject rated by all raters)."""
    ratings = np.asarray(ratings)
    n_sub, n_rat = ratings.shape
    cats = np.unique(ratings)
    counts = np.stack([(ratings == c).sum(axis=1) for c in cats], axis=1)  # subjects x categories
    p_j = counts.sum(axis=0) / (n_sub * n_rat)
    p_i = (np.square(counts).sum(axis=1) - n_rat) / (n_rat * (n_rat - 1))
    p_bar, p_e = p_i.mean(), np.square(p_j).sum()
    return float("nan") if p_e == 1 else float((p_bar - p_e) / (1 - p_e))


@dataclass(frozen=True)
class SeedAgreement:
    """How often the seeds give the same flag on a trajectory."""

    members: tuple[str, ...]
    n: int
    """Trajectories every member judged."""
    all_agree: int
    """Trajectories on which every member gives the same flag."""
    fleiss_kappa: float
    """Fleiss' kappa of the flags (members as raters)."""
    cohen_kappa: dict[tuple[str, str], float]
    """Cohen's kappa of the flags, for every pair of members."""
    votes: pd.DataFrame | None = None
    """Stratum (clean, silent, loud) x number of members flagging a trajectory (0 .. k): trajectory counts."""

    @property
    def all_agree_share(self) -> float:
        """Share of trajectories on which every member agrees."""
        return self.all_agree / self.n if self.n else float("nan")

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of members: their Cohen's kappa."""
        import pandas as pd

        rows = [{"member a": a, "member b": b, "cohen_kappa": k} for (a, b), k in self.cohen_kappa.items()]
        return pd.DataFrame(rows, columns=["member a", "member b", "cohen_kappa"])


@dataclass(frozen=True)
class SeedVariance:
    """The main table's metrics for each seed, their spread, and one seed's interval width."""

    members: tuple[str, ...]
    """Member judge ids, by seed."""
    greedy: str | None
    """The greedy (T=0) step judge of the same model, when the data has it."""
    n: int
    """Trajectories every member judged (all metrics are computed on these)."""
    values: pd.DataFrame
    """Metric x judge (members, then the greedy judge)."""
    widths: pd.DataFrame
    """Metric x member: the width of that member's 95% bootstrap interval."""
    agreement: SeedAgreement
    lows: pd.DataFrame | None = None
    """Metric x judge (as ``values``): the lower end of each 95% interval."""
    highs: pd.DataFrame | None = None
    """Metric x judge (as ``values``): the upper end of each 95% interval."""
    deltas: pd.DataFrame | None = None
    """Paired differences between seeds: one row per (a, b, metric) with ``value`` (b - a) and the 95%
    paired interval ``low``..``high``, from the same resamples as every interval."""

    def differing(self, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """The paired seed differences (on ``metrics``, default all) whose interval excludes zero."""
        import pandas as pd

        d = pd.DataFrame(columns=["a", "b", "metric", "value", "low", "high"]) if self.deltas is None else self.deltas
        if metrics is not None:
            d = d[d["metric"].isin(list(metrics))]
        return d[(d["low"] > 0) | (d["high"] < 0)]

    def to_frame(self) -> pd.DataFrame:
        """Per metric: each seed's value, range (max - min), standard deviation, mean one-seed interval width,
        range over width, and the greedy judge's value."""
        seeds = self.values[list(self.members)]
        out = seeds.copy()
        out["range"] = seeds.max(axis=1) - seeds.min(axis=1)
        out["sd"] = seeds.std(axis=1, ddof=1)
        out["interval_width"] = self.widths[list(self.members)].mean(axis=1)
        out["range_over_width"] = out["range"] / out["interval_width"]
        if self.greedy is not None:
            out[self.greedy] = self.values[self.greedy]
        return out


STRATA: tuple[str, ...] = ("clean", "silent", "loud")
"""The values of :func:`trajectory_judge.models.stratum`: clean runs, faults whose outcome survived
(silent) and faults that broke it (loud)."""


def seed_agreement(
    members: Sequence[Verdict], ids: Sequence[str], trajectory_ids: Sequence[str], strata: Sequence[str] | None = None
) -> SeedAgreement:
    """Agreement of the members' flags on ``trajectory_ids`` (each judged by every member); with
    ``strata`` (one per trajectory), how many members flag each trajectory, by stratum."""
    import pandas as pd

    flag = {(v.trajectory_id, v.judge_id): v.faulty for v in members}
    ratings = np.array([[flag[(t, m)] for m in ids] for t in trajectory_ids], dtype=int).reshape(
        len(trajectory_ids), len(ids)
    )
    all_agree = int((ratings.min(axis=1) == ratings.max(axis=1)).sum())
    pairs = {
        (a, b): float(confusion_statistics(*flag_counts(ratings[:, i], ratings[:, j]))["kappa"])
        for (i, a), (j, b) in combinations(list(enumerate(ids)), 2)
    }
    kappa = fleiss_kappa(ratings) if len(trajectory_ids) else float("nan")
    votes = None
    if strata is not None:
        counts = pd.crosstab(
            pd.Categorical(list(strata), categories=STRATA),
            pd.Categorical(ratings.sum(axis=1), categories=range(len(ids) + 1)),
            dropna=False,
        )
        votes = counts.rename_axis(index="stratum", columns="flagged by").astype(int)
    return SeedAgreement(tuple(ids), len(trajectory_ids), all_agree, kappa, pairs, votes)


def seed_variance(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    members: Sequence[Verdict],
    *,
    model: str | None = None,
    resamples: int = 10_000,
    seed: int = 7,
) -> SeedVariance | None:
    """Score every member of one model's ensemble (and the greedy judge of the same model, view and prompt) on
    the trajectories all members judged, with the same report as the book's other tables. The members are those
    of ``model`` (default: the first member's) and of the first such member's view and prompt (the built-in
    prompt's members before those of a prompt of one's own). None when there are no members."""
    ids = [m for m in member_ids(members) if model is None or parse_member_id(m).model == model]
    if not ids:
        return None
    import pandas as pd

    model, view, prompt, _t, _seed = _member_key(parse_member_id(ids[0]))
    ids = [m for m in ids if _member_key(parse_member_id(m))[:3] == (model, view, prompt)]
    common = set(complete_ids(members, ids))
    trajs = [t for t in trajectories if t.trajectory_id in common]
    greedy = JudgeSpec.llm(view, model, prompt or None).judge_id
    chosen = [v for v in members if v.judge_id in ids and v.trajectory_id in common]
    gverdicts = [v for v in verdicts if v.judge_id == greedy and v.trajectory_id in common]
    has_greedy = len(gverdicts) == len(trajs) and len(trajs) > 0
    rep = build_report(trajs, chosen + (gverdicts if has_greedy else []), resamples=resamples, seed=seed)
    judges = ids + ([greedy] if has_greedy else [])
    values = pd.DataFrame(
        {j: {m: rep.judges[j].metrics.get(m) for m in SEED_METRICS} for j in judges}, dtype=float
    ).loc[list(SEED_METRICS)]
    ends = {
        side: pd.DataFrame(
            {
                j: {m: getattr(iv, side) if (iv := rep.judges[j].intervals.get(m)) else np.nan for m in SEED_METRICS}
                for j in judges
            },
            dtype=float,
        ).loc[list(SEED_METRICS)]
        for side in ("low", "high")
    }
    widths = (ends["high"] - ends["low"])[ids]
    order = [t.trajectory_id for t in trajs]
    agreement = seed_agreement(chosen, ids, order, [stratum(t.label) for t in trajs])  # type: ignore[arg-type]
    deltas = pd.DataFrame(
        [d.__dict__ for d in rep.deltas if d.a in ids and d.b in ids and d.metric in SEED_METRICS],
        columns=["a", "b", "metric", "value", "low", "high"],
    )
    return SeedVariance(
        tuple(ids),
        greedy if has_greedy else None,
        len(trajs),
        values,
        widths,
        agreement,
        ends["low"],
        ends["high"],
        deltas,
    )


def members_summary(
    directory: str | Path,
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    *,
    resamples: int = 2_000,
    seed: int = 7,
    records: Sequence[dict[str, Any]] | None = None,
) -> str:
    """The report's text about ensemble members: each member judge's n and headline metrics, the
    re-derivation check (against the folder's run records, ``records`` when the caller has read them), and the
    seeds' agreement ("" when the data keeps no members)."""
    members = load_members(directory, [t.trajectory_id for t in trajectories])
    if not members:
        return ""
    import pandas as pd

    ids = member_ids(members)
    rep = build_report(trajectories, members, resamples=resamples, seed=seed)
    cols = ["f1", "silent_recall", "loud_recall", "false_alarm_rate", "ece"]
    table = pd.DataFrame({j: {"n": rep.judges[j].n, **{c: rep.judges[j].metrics.get(c) for c in cols}} for j in ids}).T
    text = table.to_string(formatters={"n": lambda v: str(int(v))}, float_format=lambda v: f"{v:.3f}", na_rep="n/a")
    lines = ["Ensemble members (members.jsonl):", text]
    for c in check_ensembles(verdicts, members, read_run_records(directory) if records is None else records):
        lines.append(
            f"{c.ensemble} re-derived from {len(c.members)} members on {c.complete} trajectories: "
            f"{c.same} same as on disk, {len(c.different)} different, {len(c.without_ensemble)} without one; "
            f"sampled again after being on disk: {c.rerun_same} same, {c.rerun_different} different"
        )
    sv = seed_variance(trajectories, verdicts, members, resamples=resamples, seed=seed)
    if sv is not None:
        a = sv.agreement
        lines.append(f"seeds agree on {a.all_agree} of {a.n} trajectories; Fleiss' kappa {a.fleiss_kappa:.3f}")
    return "\n".join(lines)
