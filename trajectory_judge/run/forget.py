"""``trajectory-judge forget``: remove a judge's verdicts from a data directory, keeping a backup.

The one way to take verdicts back out of a folder (a judge with a bug, a verdict ``report``
refuses): under the folder's writer lock, the lines of ``--judge`` (on ``--trajectories``, or on
all of them) are first appended to ``forgotten.jsonl`` beside the verdicts (fsynced), then
``verdicts.jsonl`` is replaced whole without them, through a temporary file; so a crash leaves
each line in one file or both, never in neither. Forgetting a self-consistency ensemble forgets
its members too (``members.jsonl``: the member ids of the same model, view and prompt), so that a rerun judges
both again. Lines are matched by their ``judge_id`` and ``trajectory_id`` fields as JSON, so a
line that no longer validates as a verdict can still be removed.

What pointed at the forgotten verdicts goes with them, set aside in ``forgotten.jsonl`` the same way:
their transcript links (``transcripts.jsonl``, written by ``import-inspect``), and, once a judge has
no verdict left in the folder, its part of the run records (``runs.jsonl``). A record of that judge
alone is moved whole; a record of several judges is kept for the others, rewritten without the
forgotten ones (its ``judges``, ``judge_kinds``, ``members``, ``per_judge``, ``rechecked``, ``fingerprints`` and
``written``; its wall and CPU time were spent and stay), with their ids listed under ``forgotten``,
and its line as it was is appended to ``forgotten.jsonl``. So the compute table and the runs
chapter no longer name a forgotten judge, and nothing is lost.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from trajectory_judge.analysis.core.misses import TRANSCRIPTS
from trajectory_judge.fileio import atomic_write_text
from trajectory_judge.models import DataError, JudgeSpec, read_text
from trajectory_judge.run.store import MEMBERS, RUNS, VERDICTS, append_durably, data_dir_lock

FORGOTTEN = "forgotten.jsonl"
"""The lines ``forget`` removed, appended beside the verdicts (kept, never deleted)."""


@dataclass(frozen=True)
class Forgotten:
    """What one ``forget`` removed."""

    verdicts: int
    """Lines removed from ``verdicts.jsonl``."""
    members: int
    """Lines removed from ``members.jsonl`` (an ensemble's members)."""
    transcripts: int
    """Transcript links removed from ``transcripts.jsonl``."""
    runs: int
    """Run records moved out of ``runs.jsonl`` or rewritten without the forgotten judges."""
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
    """Whether ``member`` is a member id of ``ensemble``: a sample of its view by its model, under its prompt
    (the built-in one, or the same prompt of one's own)."""
    spec = _spec(member)
    return (
        ensemble is not None
        and spec is not None
        and spec.is_member
        and (spec.model, spec.view, spec.prompt) == (ensemble.model, ensemble.view, ensemble.prompt)
    )


def _lines(path: Path) -> list[str]:
    """The lines of ``path`` that are not blank (none when it does not exist)."""
    return [line for line in read_text(path).split("\n") if line.strip()] if path.exists() else []


def _split(path: Path, wanted, scope: set[str] | None) -> tuple[list[str], list[str]]:
    """The lines of ``path`` to keep and to forget (``wanted(judge_id)`` and, with ``scope``, the trajectory in it)."""
    keep: list[str] = []
    drop: list[str] = []
    for line in _lines(path):
        jid, tid = _ids(line)
        (drop if wanted(jid) and (scope is None or tid in scope) else keep).append(line)
    return keep, drop


def forget_verdicts(data_dir: str | Path, judge_id: str, trajectory_ids: Sequence[str] | None = None) -> Forgotten:
    """Remove ``judge_id``'s verdicts (on ``trajectory_ids``, or all) from ``data_dir``; see the module docstring.

    Holds the directory's lock; :class:`DataError` when another process writes it or nothing matches.
    """
    d = Path(data_dir)
    vpath, mpath, backup = d / VERDICTS, d / MEMBERS, d / FORGOTTEN
    tpath, rpath = d / TRANSCRIPTS, d / RUNS
    if not vpath.exists():
        raise DataError(f"{vpath}: file not found")
    scope = set(trajectory_ids) if trajectory_ids is not None else None
    with data_dir_lock(d):
        keep_v, drop_v = _split(vpath, lambda j: j == judge_id, scope)
        spec = _spec(judge_id)
        ensemble = spec is not None and spec.kind == "ensemble"

        def forgotten(j: str | None) -> bool:
            return j == judge_id or bool(ensemble and _member_of(spec, j))

        keep_m, drop_m = _split(mpath, forgotten, scope)
        if not drop_v and not drop_m:
            raise DataError(_nothing(vpath, judge_id, scope))
        keep_t, drop_t = _split(tpath, forgotten, scope)
        left = {_ids(line)[0] for line in keep_v + keep_m}
        gone = {j for j in (_ids(line)[0] for line in drop_v + drop_m) if j is not None and j not in left}
        keep_r, drop_r = _runs_without(rpath, gone)
        append_durably(backup, "".join(line + "\n" for line in drop_v + drop_m + drop_t + drop_r).encode("utf-8"))
        rewritten = ((rpath, keep_r, drop_r), (tpath, keep_t, drop_t), (mpath, keep_m, drop_m), (vpath, keep_v, drop_v))
        for path, kept, dropped in rewritten:  # the verdicts last: an interrupted forget leaves them whole
            if dropped:
                atomic_write_text(path, "".join(line + "\n" for line in kept))
    return Forgotten(len(drop_v), len(drop_m), len(drop_t), len(drop_r), backup)


def _runs_without(path: Path, gone: set[str]) -> tuple[list[str], list[str]]:
    """The lines of ``runs.jsonl`` to keep (records rewritten without the judges in ``gone``) and those set aside.

    A line that is not a JSON object, or names none of ``gone``, is kept as it is.
    """
    keep: list[str] = []
    drop: list[str] = []
    for line in _lines(path) if gone else []:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            keep.append(line)
            continue
        judges = rec.get("judges") if isinstance(rec, dict) else None
        per = rec.get("per_judge") if isinstance(rec, dict) else None
        named = set(judges if isinstance(judges, list) else []) | set(per if isinstance(per, dict) else {})
        if not named & gone:
            keep.append(line)
            continue
        drop.append(line)
        if rest := _record_without(rec, gone):
            keep.append(json.dumps(rest, sort_keys=True, ensure_ascii=False))
    return keep, drop


def _record_without(rec: dict, gone: set[str]) -> dict | None:
    """``rec`` without the judges in ``gone`` (and their members), or None when it names no other judge."""
    judges = [j for j in rec.get("judges") or [] if j not in gone]
    if not judges:
        return None
    members = {e: ms for e, ms in (rec.get("members") or {}).items() if e not in gone}
    per = rec.get("per_judge") or {}
    dropped = {j for j in per if j in gone or (j not in judges and not any(j in ms for ms in members.values()))}
    out = dict(rec)
    out["judges"] = judges
    if isinstance(rec.get("judge_kinds"), dict):
        out["judge_kinds"] = {j: k for j, k in rec["judge_kinds"].items() if j in judges}
    if "members" in rec:
        out["members"] = members or None
    if isinstance(rec.get("rechecked"), dict):
        out["rechecked"] = {j: t for j, t in rec["rechecked"].items() if j in judges}
    if isinstance(rec.get("fingerprints"), dict):
        out["fingerprints"] = {j: f for j, f in rec["fingerprints"].items() if j in judges} or None
    if per:
        out["per_judge"] = {j: p for j, p in per.items() if j not in dropped}
        if isinstance(rec.get("written"), (int, float)):
            out["written"] = rec["written"] - sum(int((per[j] or {}).get("verdicts") or 0) for j in dropped)
    out["forgotten"] = sorted({*(rec.get("forgotten") or []), *(set(rec.get("judges") or []) - set(judges))})
    return out


def _nothing(vpath: Path, judge_id: str, scope: set[str] | None) -> str:
    judges = sorted({j for line in read_text(vpath).split("\n") if line.strip() for j in [_ids(line)[0]] if j})
    where = f" on {', '.join(sorted(scope))}" if scope is not None else ""
    return (
        f"{vpath}: no verdict of judge {judge_id!r}{where}; nothing changed "
        f"(judges there: {', '.join(judges) if judges else 'none'})"
    )
