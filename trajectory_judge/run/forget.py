"""``trajectory-judge forget``: remove a judge's verdicts from a data directory, keeping a backup.

The one way to take verdicts back out of a folder (a judge with a bug, a verdict ``report``
refuses): under the folder's writer lock, the lines of ``--judge`` (on ``--trajectories``, or on
all of them) are first appended to ``forgotten.jsonl`` beside the verdicts (fsynced), then
``verdicts.jsonl`` is replaced whole without them, through a temporary file; so a crash leaves
each line in one file or both, never in neither. Forgetting a self-consistency ensemble forgets
its members too (``members.jsonl``: the member ids of the same model and view), so that a rerun judges
both again. Lines are matched by their ``judge_id`` and ``trajectory_id`` fields as JSON, so a
line that no longer validates as a verdict can still be removed; nothing else is rewritten.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.models import DataError, JudgeSpec, read_text
from trajectory_judge.provenance.pins import broken_pins_note, writable_folder
from trajectory_judge.run.store import MEMBERS, VERDICTS, append_line, data_dir_lock

FORGOTTEN = "forgotten.jsonl"
"""The lines ``forget`` removed, appended beside the verdicts (kept, never deleted)."""


@dataclass(frozen=True)
class Forgotten:
    """What one ``forget`` removed."""

    verdicts: int
    """Lines removed from ``verdicts.jsonl``."""
    members: int
    """Lines removed from ``members.jsonl`` (an ensemble's members)."""
    backup: Path
    """Where the removed lines were appended."""


def _ids(line: str) -> tuple[str | None, str | None]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None, None
    if not isinstance(obj, dict):
        return None, None
    return obj.get("judge_id"), obj.get("trajectory_id")


def _spec(judge_id: str | None) -> JudgeSpec | None:
    """The record of ``judge_id``, or None for an id outside the grammar (its lines can be forgotten all the same)."""
    try:
        return JudgeSpec.parse(judge_id) if judge_id is not None else None
    except ValueError:
        return None


def _member_of(ensemble: JudgeSpec | None, member: str | None) -> bool:
    """Whether ``member`` is a member id of ``ensemble``: a sample of its view by its model."""
    spec = _spec(member)
    return (
        ensemble is not None
        and spec is not None
        and spec.is_member
        and (spec.model, spec.view) == (ensemble.model, ensemble.view)
    )


def _split(path: Path, wanted, scope: set[str] | None) -> tuple[list[str], list[str]]:
    """The lines of ``path`` to keep and to forget (``wanted(judge_id)`` and, with ``scope``, the trajectory in it)."""
    if not path.exists():
        return [], []
    keep: list[str] = []
    drop: list[str] = []
    for line in read_text(path).split("\n"):
        if not line.strip():
            continue
        jid, tid = _ids(line)
        (drop if wanted(jid) and (scope is None or tid in scope) else keep).append(line)
    return keep, drop


def forget_verdicts(data_dir: str | Path, judge_id: str, trajectory_ids: Sequence[str] | None = None) -> Forgotten:
    """Remove ``judge_id``'s verdicts (on ``trajectory_ids``, or all) from ``data_dir``; see the module docstring.

    Holds the directory's lock; :class:`DataError` when another process writes it or nothing matches.
    """
    d = Path(data_dir)
    vpath, mpath, backup = d / VERDICTS, d / MEMBERS, d / FORGOTTEN
    if not vpath.exists():
        raise DataError(f"{vpath}: file not found")
    scope = set(trajectory_ids) if trajectory_ids is not None else None
    with data_dir_lock(d):
        keep_v, drop_v = _split(vpath, lambda j: j == judge_id, scope)
        spec = _spec(judge_id)
        ensemble = spec is not None and spec.kind == "ensemble"
        keep_m, drop_m = _split(mpath, lambda j: j == judge_id or (ensemble and _member_of(spec, j)), scope)
        if not drop_v and not drop_m:
            raise DataError(_nothing(vpath, judge_id, scope))
        fd = os.open(backup, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            append_line(fd, "".join(line + "\n" for line in drop_v + drop_m).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        if drop_m:
            atomic_write_text(mpath, "".join(line + "\n" for line in keep_m))
        if drop_v:
            atomic_write_text(vpath, "".join(line + "\n" for line in keep_v))
    return Forgotten(len(drop_v), len(drop_m), backup)


def _nothing(vpath: Path, judge_id: str, scope: set[str] | None) -> str:
    judges = sorted({j for line in read_text(vpath).split("\n") if line.strip() for j in [_ids(line)[0]] if j})
    where = f" on {', '.join(sorted(scope))}" if scope is not None else ""
    return (
        f"{vpath}: no verdict of judge {judge_id!r}{where}; nothing changed "
        f"(judges there: {', '.join(judges) if judges else 'none'})"
    )


def cli_forget(args: argparse.Namespace) -> int:
    """``trajectory-judge forget --data DIR --judge ID [--trajectories ID,...] [--force]``.

    A folder pinned by ``SHA256SUMS`` is refused without ``--force``, before anything is written.
    """
    data = writable_folder(args.data, what="a shorter verdicts.jsonl", force=getattr(args, "force", False))
    scope = None
    if args.trajectories is not None:
        scope = [t.strip() for t in args.trajectories.split(",") if t.strip()]
        if not scope:
            raise ValueError("--trajectories: give one or more trajectory ids, separated by commas")
    r = forget_verdicts(data, args.judge, scope)
    members = f" and {r.members} member verdict{'s' if r.members != 1 else ''}" if r.members else ""
    print(
        f"trajectory-judge: forgot {r.verdicts} verdict{'s' if r.verdicts != 1 else ''}{members} of {args.judge!r}; "
        f"the lines are kept in {r.backup}; `trajectory-judge run` judges them again",
        file=sys.stderr,
    )
    if note := broken_pins_note(data):
        print(note, file=sys.stderr)
    return 0
