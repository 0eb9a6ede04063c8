"""The judged set: clean runs plus an equal number of mutants per failure type, stratified-shuffled.

Hosts for each failure type are the first instances (in index order) that can host it, so
the composition follows from the strata: ``ignored_observation`` lives only where a restocking
fee makes the authorised amount differ from the total, and ``skipped_precondition`` alternates
full-price (silent) and restocking (loud) hosts.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from trajectory_judge.models import DESIGN_CELLS, TESTBED_FAILURE_TYPES, Trajectory, design_cell
from trajectory_judge.testbed.env import Instance, generate_instances
from trajectory_judge.testbed.inject import can_host, inject
from trajectory_judge.testbed.oracle import solve


def composition(n: int) -> tuple[int, int]:
    """(clean count, mutants per type) for a set of ``n``: a quarter clean, the rest split six ways."""
    if n < 8 or n % 8:
        raise ValueError(f"n must be a positive multiple of 8 (a quarter clean, six equal fault types), got {n}")
    per_type = n // 8
    return n - 6 * per_type, per_type


def _hosts(instances: list[Instance], failure_type: str, k: int) -> list[Instance]:
    hosts = [inst for inst in instances if can_host(inst, failure_type)][:k]
    if len(hosts) < k:
        raise ValueError(f"only {len(hosts)} instances can host {failure_type}, need {k}")
    return hosts


def generate(n: int = 400, seed: int = 7) -> list[Trajectory]:
    """The labelled trajectories in generation order (clean first, then each type)."""
    n_clean, per_type = composition(n)
    instances = generate_instances(max(n_clean, 6 * per_type), seed)
    out = [solve(inst) for inst in instances[:n_clean]]
    for ftype in TESTBED_FAILURE_TYPES:
        out.extend(inject(inst, ftype, seed) for inst in _hosts(instances, ftype, per_type))
    return out


def stratified_order(cells: list[str], seed: int) -> list[int]:
    """A permutation under which every prefix is a stratified sample of ``cells``.

    Position k goes to the cell furthest behind its proportional share k * n_c / n (ties by a
    seeded cell order); within a cell, members come in a seeded random order.
    """
    rng = random.Random(f"shuffle-{seed}")
    members: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(cells):
        members[c].append(i)
    names = sorted(members)
    rng.shuffle(names)
    for c in names:
        rng.shuffle(members[c])
    n = len(cells)
    taken = {c: 0 for c in names}
    order: list[int] = []
    for k in range(1, n + 1):
        best = max(
            (c for c in names if taken[c] < len(members[c])),
            key=lambda c: k * len(members[c]) / n - taken[c],
        )
        order.append(members[best][taken[best]])
        taken[best] += 1
    return order


def build_dataset(n: int = 400, seed: int = 7) -> list[Trajectory]:
    """The judged set, shuffled so that any prefix is stratified over the eight design cells."""
    trajs = generate(n, seed)
    cells = [design_cell(t.label) for t in trajs]
    unknown = set(cells) - set(DESIGN_CELLS)
    if unknown:  # would mean an injector changed which outcome a type breaks
        raise AssertionError(f"trajectories fell outside the design cells: {sorted(unknown)}")
    return [trajs[i] for i in stratified_order(cells, seed)]


def write_trajectories(
    out_dir: str | None, make: Callable[[], list[Trajectory]], *, force: bool = False
) -> tuple[Path, list[Trajectory], float]:
    """Write ``make()``'s trajectories to ``out_dir/trajectories.jsonl`` under ``build-dataset``'s guards,
    returning the file, the trajectories and the seconds it took; the broken-pins note is printed after.

    Never over verdicts that name trajectories it would change, nor over bytes a ``SHA256SUMS`` pins, unless
    ``force``; nothing is written before a refusal.
    """
    import hashlib

    from trajectory_judge.fileio import atomic_write_text
    from trajectory_judge.models import DataError, dumps
    from trajectory_judge.provenance.manifest import read_manifest
    from trajectory_judge.provenance.outputs import guard_output, guard_referenced
    from trajectory_judge.provenance.pins import is_pinned, pinned_refusal, writable_folder

    start = time.perf_counter()
    folder = writable_folder(out_dir, what="trajectories", force=True, option="--out DIR")  # pins: below
    if folder.exists() and not folder.is_dir():
        raise DataError(f"refusing to write into {folder}: --out names a directory, and {folder} is a file")
    out = folder / "trajectories.jsonl"
    guard_output(out, own=("trajectories.jsonl",))
    trajs = make()
    text = "".join(dumps(t) + "\n" for t in trajs)
    guard_referenced(out, text, [folder / "verdicts.jsonl", folder / "members.jsonl"], force=force)
    if is_pinned(folder) and not force:
        pinned = (read_manifest(folder) or {}).get(out.name)
        if pinned != hashlib.sha256(text.encode("utf-8")).hexdigest():
            raise pinned_refusal(folder, f"trajectories other than the {out.name} it pins")
    atomic_write_text(out, text)
    return out, trajs, time.perf_counter() - start


def declare_design(folder: Path, *, force: bool = False) -> str | None:
    """Write ``folder``'s ``design.json`` (:func:`~trajectory_judge.models.design_declaration`) unless it
    already says the same; in a pinned folder only with ``force``. A note for the terminal when it was left
    as it is for a pin, else None."""
    from trajectory_judge.fileio import atomic_write_text
    from trajectory_judge.models import DESIGN_FILE, design_declaration
    from trajectory_judge.provenance.pins import is_pinned

    path, text = folder / DESIGN_FILE, design_declaration()
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return None
    if is_pinned(folder) and not force:
        return f"note: {folder} is pinned by SHA256SUMS, so {DESIGN_FILE} was not written (--force writes it)"
    atomic_write_text(path, text)
    return None
