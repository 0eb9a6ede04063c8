"""The bootstrap plan: every judge's per-trajectory outcomes as arrays, ready to resample.

:func:`make_plan` lays the verdicts out by trajectory and design cell; :func:`run_bootstraps`
draws the stratified paired replicates once for all judges and metrics, so every interval and
every paired delta of the report comes from the same resamples.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from trajectory_judge.analysis.core import metrics as M
from trajectory_judge.analysis.core.bootstrap import BootstrapResult, Family, KeptCounts, bootstrap_families
from trajectory_judge.analysis.core.loading import _validate, folder_types, judge_order
from trajectory_judge.analysis.core.names import delta_name, evaluate_names, judge_name, pair_blocks, split_name
from trajectory_judge.analysis.core.resampling import RESAMPLINGS, Resampling, instance_makeup
from trajectory_judge.models import (
    DESIGN_CELLS,
    TESTBED_FAILURE_TYPES,
    Label,
    Trajectory,
    Verdict,
    design_cell,
)

DELTA_METRICS: tuple[str, ...] = tuple(m for m in M.METRICS if m != "step_exact_n")
"""Metrics compared between every pair of judges."""


def boot_keys(types: tuple[str, ...] = TESTBED_FAILURE_TYPES) -> tuple[str, ...]:
    """Per-judge statistics that get an interval, with recall on each of ``types``."""
    return (*(m for m in M.METRICS if m != "step_exact_n"), *(f"recall:{t}" for t in types), "loud_minus_silent")


BOOT_KEYS: tuple[str, ...] = boot_keys()
"""Per-judge statistics that get an interval on a folder of the testbed's six types (:func:`boot_keys`)."""


# --- the bootstrap plan ----------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """Everything the bootstrap needs: data columns, statistic names, vectorised and loop statistics."""

    labels: list[Label]
    """Labels, one per trajectory."""
    cells: list[str]
    """Design cell of each trajectory (the bootstrap strata)."""
    judges: list[str]
    """Judges in report order."""
    verdicts: dict[str, list[Verdict | None]]
    """Per judge, its verdict on each trajectory or None."""
    columns: np.ndarray = field(repr=False)
    """``(n, d)`` the distinct count columns (most of a block's are zero or repeat another's)."""
    inverse: np.ndarray = field(repr=False)
    """``(k,)`` for each count column of every block, its distinct column: ``data == columns[:, inverse]``."""
    blocks: dict[tuple[str, ...], slice] = field(repr=False)
    """Columns of each block: ``(judge,)`` or ``(a, b, judge)`` for a pair's common subset."""
    names: tuple[str, ...]
    """Statistic names: ``judge|metric`` and ``delta|a|b|metric``."""
    types: tuple[str, ...] = TESTBED_FAILURE_TYPES
    """The failure types recall and typing are computed over: the folder's (:func:`folder_types`)."""
    other_type: bool = False
    """Whether the count columns hold an ``other type`` confusion column (:func:`metrics.needs_other`)."""
    instances: tuple[str, ...] = ()
    """Instance id of each trajectory (the clusters of the ``instances`` resampling)."""

    def strata(self, resampling: Resampling) -> list[str]:
        """The bootstrap's strata under ``resampling``: the design cells; each instance's make-up (its numbers
        of clean and faulty trajectories) for ``design-instances``; or one stratum of every row."""
        if resampling == "design":
            return list(self.cells)
        if resampling == "design-instances":
            return instance_makeup([not lab.faulty for lab in self.labels], self.instances)
        return ["all"] * len(self.cells)

    @property
    def boot_keys(self) -> tuple[str, ...]:
        """Per-judge statistics that get an interval (:func:`boot_keys` of :attr:`types`)."""
        return boot_keys(self.types)

    @property
    def data(self) -> np.ndarray:
        """``(n, k)`` count columns of every block (made from :attr:`columns` at each access)."""
        return self.columns[:, self.inverse]

    def block_data(self, key: tuple[str, ...]) -> np.ndarray:
        """``(n, len(COUNT_NAMES))`` the count columns of one block."""
        return self.columns[:, self.inverse[self.blocks[key]]]

    def distinct_statistic(self, sums: np.ndarray) -> np.ndarray:
        """:meth:`statistic` of the sums of :attr:`columns` (``(..., d)``)."""
        return self.statistic(sums[..., self.inverse])

    def statistic(self, sums: np.ndarray) -> np.ndarray:
        """Vectorised: column sums ``(..., k)`` -> statistics ``(..., len(names))``."""
        return evaluate_names(
            self.names,
            self.blocks,
            lambda key: M.metrics_from_counts(sums[..., self.blocks[key]], self.types, self.other_type),
        )


def make_plan(
    trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], pairs: Sequence[tuple[str, str]] | None = None
) -> Plan:
    """Align verdicts with trajectories and lay out the count columns of every judge and pair.

    ``pairs`` lists the ``(a, b)`` whose deltas ``b - a`` are wanted (judge ids of ``verdicts``);
    None means every pair, ``a`` earlier in report order.
    """
    _validate(trajectories, verdicts)
    types = folder_types(trajectories)
    labels = [t.label for t in trajectories]
    pos = {t.trajectory_id: i for i, t in enumerate(trajectories)}
    judges = judge_order(verdicts)
    aligned: dict[str, list[Verdict | None]] = {j: [None] * len(trajectories) for j in judges}
    for v in verdicts:
        aligned[v.judge_id][pos[v.trajectory_id]] = v
    other = any(M.needs_other(labels, aligned[j], types) for j in judges)  # type: ignore[arg-type]
    width = len(M.count_names(types, other))
    cols: list[list[Verdict | None]] = []  # each block's verdicts; counted into the columns below, one at a time
    blocks: dict[tuple[str, ...], slice] = {}

    def add(key: tuple[str, ...], vs: list[Verdict | None]) -> None:
        blocks[key] = slice(len(cols) * width, (len(cols) + 1) * width)
        cols.append(vs)

    for j in judges:
        add((j,), aligned[j])
    names = [judge_name(j, m) for j in judges for m in boot_keys(types)]
    if pairs is None:
        pairs = [(a, b) for ia, a in enumerate(judges) for b in judges[ia + 1 :]]
    for a, b in pairs:
        if a not in aligned or b not in aligned or a == b:
            raise ValueError(f"cannot compare {a!r} with {b!r}: not two judges of these verdicts")
        for key, vs in pair_blocks(aligned, a, b):
            add(key, vs)
        names += [delta_name(a, b, m) for m in DELTA_METRICS]
    cells = [design_cell(lab) for lab in labels]
    columns, inverse = _distinct_count_columns(labels, cols, types, other)
    instances = tuple(t.instance_id for t in trajectories)
    return Plan(labels, cells, judges, aligned, columns, inverse, blocks, tuple(names), types, other, instances)  # type: ignore[arg-type]


def _distinct_count_columns(
    labels: Sequence[Label | None], blocks: list[list[Verdict | None]], types: tuple[str, ...], other: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct count columns of every block's verdicts and each column's among them, one block counted at a
    time (columns are the same when their bytes are; a digest only narrows the search)."""
    found: dict[bytes, list[int]] = {}
    distinct: list[np.ndarray | None] = []
    width = len(M.count_names(types, other))
    inverse = np.empty(len(blocks) * width, dtype=np.intp)
    for b, vs in enumerate(blocks):
        counted = M.count_columns(labels, vs, types, other)  # type: ignore[arg-type]
        for j in range(counted.shape[1]):
            col = np.ascontiguousarray(counted[:, j])
            raw = col.tobytes()
            same = found.setdefault(hashlib.blake2b(raw, digest_size=16).digest(), [])
            at = next((i for i in same if distinct[i].tobytes() == raw), None)  # type: ignore[union-attr]
            if at is None:
                at = len(distinct)
                same.append(at)
                distinct.append(col)
            inverse[b * width + j] = at
        del counted
    columns = np.empty((len(labels), len(distinct)))
    for i in range(len(distinct)):
        columns[:, i] = distinct[i]
        distinct[i] = None  # each column held once
    return columns, inverse


def _structural_judges(plan: Plan, strata: Sequence[str]) -> set[str]:
    quality = [i for i, n in enumerate(M.count_names(plan.types, plan.other_type)) if n not in M.COST_COUNTS]
    first = {c: i for i, c in reversed(list(enumerate(strata)))}
    leader = [first[c] for c in strata]  # each row's stratum's first row: constant within strata = equal to it
    out = set()
    for j in plan.judges:
        block = plan.block_data((j,))[:, quality]
        if np.array_equal(block, block[leader]):
            out.add(j)
    return out


def _exact_and_structural(plan: Plan, strata: Sequence[str]) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    structural_judges = _structural_judges(plan, strata)
    k = np.full(len(plan.names), np.nan)
    n = np.full(len(plan.names), np.nan)
    structural = np.zeros(len(plan.names), dtype=bool)
    props = {
        j: M.proportion_counts(plan.block_data((j,)).sum(axis=0), plan.types, plan.other_type) for j in plan.judges
    }
    for i, name in enumerate(plan.names):
        j, m, reference = split_name(name)
        if reference is not None:
            continue
        if m in props[j]:
            k[i], n[i] = props[j][m]
        structural[i] = j in structural_judges and m not in M.COST_METRICS
    return (k, n), structural


# --- building the report ---------------------------------------------------------------------
def plan_family(plan: Plan, resampling: Resampling = "design") -> Family:
    """The report's statistics of ``plan`` as one family of the shared bootstrap (:func:`~.bootstrap.bootstrap_families`)."""
    exact, structural = _exact_and_structural(plan, plan.strata(resampling))
    return Family(plan.columns, plan.distinct_statistic, plan.names, exact, structural)


def run_bootstraps(
    plan: Plan,
    *,
    resamples: int = 10_000,
    seed: int = 7,
    batch: int | None = None,
    also: Sequence[Family] = (),
    resampling: Resampling = "design",
    kept: KeptCounts | None = None,
) -> tuple[BootstrapResult, ...]:
    """The report's bootstrap of ``plan`` and of each family of ``also``, on one shared resample drawn once,
    as ``resampling`` says (:mod:`~trajectory_judge.analysis.core.resampling`); its counts kept in ``kept``."""
    if resampling not in RESAMPLINGS:
        raise ValueError(f"resampling must be one of {', '.join(RESAMPLINGS)}, got {resampling!r}")
    return on_report_resamples(
        plan,
        [plan_family(plan, resampling), *also],
        resamples=resamples,
        seed=seed,
        batch=batch,
        resampling=resampling,
        kept=kept,
    )


def on_report_resamples(
    plan: Plan,
    families: Sequence[Family],
    *,
    resamples: int = 10_000,
    seed: int = 7,
    batch: int | None = None,
    resampling: Resampling = "design",
    kept: KeptCounts | None = None,
) -> tuple[BootstrapResult, ...]:
    """``families`` (statistics of ``plan``'s rows) bootstrapped on the replicates the report draws for ``plan``
    with the same ``resamples``, ``seed`` and ``resampling``: a statistic asked for after the report gets the
    report's resamples, and with the report's ``kept`` (:attr:`~trajectory_judge.analysis.core.report.Report.counts`)
    without the cost of counting them again."""
    if resampling not in RESAMPLINGS:
        raise ValueError(f"resampling must be one of {', '.join(RESAMPLINGS)}, got {resampling!r}")
    return bootstrap_families(
        families,
        strata=plan.strata(resampling),
        resamples=resamples,
        rng=np.random.default_rng(seed),
        batch=batch,
        strata_order=DESIGN_CELLS if resampling == "design" else None,
        clusters=list(plan.instances) if resampling in ("instances", "design-instances") else None,
        kept=kept,
    )
