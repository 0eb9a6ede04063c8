"""``trajectory-judge merge``: several data folders of the same trajectories into one.

A study of several models is often run as several folders (one per machine, server or model). The
merge checks that every folder holds byte-for-byte the same ``trajectories.jsonl`` (the verdicts'
trajectory ids mean the same thing only then), and takes the union of what the folders add to it:

- verdicts and ensemble members, one per (trajectory, judge id): the same record in two folders
  is kept once, and so are two that differ only in what was measured of the call (:data:`MEASURED`:
  latency and tokens; the first folder's is kept, and the summary says how many were folded); two
  records that differ in anything else are a conflict, refused with one line naming both files and
  lines and the fields that differ, before anything is written;
- a judge id whose run records hold two fingerprints (:mod:`trajectory_judge.models.fingerprint`: an
  edited prompt, another decoding, in one folder and another) is refused in the same way: they are two
  judges under one name;
- organic episodes, one per episode id, likewise;
- run records, transcript links and the set-aside files (``forgotten.jsonl``, ``retried.jsonl``):
  every distinct line, in order of first appearance.

A file of a source that the merge does not know (notes, a torn tail set aside) is named in one note
on stderr, not dropped silently. The result is written atomically: a new folder is built beside
its destination and renamed into place; an existing folder (which then counts as the first source)
is written under its lock, one whole file at a time, and refused when pinned unless ``--force``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajectory_judge.fileio import atomic_write_bytes, atomic_write_text, fsync_dir
from trajectory_judge.models import (
    DataError,
    Episode,
    Verdict,
    load_trajectories,
    load_verdicts,
    parse_jsonl,
    recorded_fingerprints,
)
from trajectory_judge.provenance.manifest import MANIFEST, verify_manifest
from trajectory_judge.run.store import LOCK, MEMBERS, RETRIED, RUNS, TRAJECTORIES, VERDICTS

ORGANIC, TRANSCRIPTS, FORGOTTEN = "organic.jsonl", "transcripts.jsonl", "forgotten.jsonl"

KEYED: dict[str, Callable[[dict[str, Any]], str]] = {
    VERDICTS: lambda r: f"trajectory {r['trajectory_id']!r}, judge {r['judge_id']!r}",
    MEMBERS: lambda r: f"trajectory {r['trajectory_id']!r}, member {r['judge_id']!r}",
    ORGANIC: lambda r: f"episode {r['episode_id']!r}",
}
"""Files of one record per key (what a conflict names), merged by key."""

MEASURED: frozenset[str] = frozenset({"latency_s", "prompt_tokens", "completion_tokens"})
"""A verdict's fields that measure its call rather than say what the judge decided: two verdicts that differ
only in these (one judge run through two paths, which time a call each in its own way) are one verdict."""

FOLDABLE: frozenset[str] = frozenset({VERDICTS, MEMBERS})
"""The files whose records are verdicts, folded when they differ only in :data:`MEASURED` fields."""

LINES: tuple[str, ...] = (RUNS, TRANSCRIPTS, FORGOTTEN, RETRIED)
"""Files merged as the distinct lines of every source."""

IGNORED: frozenset[str] = frozenset({MANIFEST, LOCK})
"""A source's files that are not data: its checksums (verified, not copied) and its writer lock."""


@dataclass
class Merged:
    """What the merge will write: each file's lines, and what it counted on the way."""

    files: dict[str, list[str]] = field(default_factory=dict)
    shared: dict[str, int] = field(default_factory=dict)
    """Per keyed file, records found identical in more than one folder (kept once)."""
    folded: dict[str, int] = field(default_factory=dict)
    """Per verdict file, records that differed from one kept only in :data:`MEASURED` fields (the first kept)."""
    not_merged: list[str] = field(default_factory=list)
    """Source files the merge does not know, as paths."""


def _lines(path: Path) -> list[tuple[int, str]]:
    """The non-blank lines of ``path`` with their numbers; a last line without its newline is refused."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise DataError(
            f"{path}: the last line is incomplete (a writer was cut off); a rerun of the command that writes "
            "it repairs it, then merge again; nothing was written"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (at byte offset {exc.start}); nothing was written") from None
    out = [(i, ln) for i, ln in enumerate(text.split("\n"), 1) if ln.strip()]
    for i, ln in out:
        try:
            json.loads(ln)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{i}: not valid JSON ({exc.msg}); nothing was written") from None
    return out


def _validate(folder: Path, name: str, known: list[str]) -> None:
    """Each file's own checks (its model, one record per key, known trajectories), as its loaders make them."""
    path = folder / name
    if name == VERDICTS:
        load_verdicts(path, known)
    elif name == MEMBERS:
        parse_jsonl(path, Verdict)
    elif name == ORGANIC:
        parse_jsonl(path, Episode)


def _diff(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    return ", ".join(keys[:4]) + (" ..." if len(keys) > 4 else "")


def check_trajectories(sources: Sequence[Path]) -> list[str]:
    """The trajectory ids every source shares, or :class:`DataError` when one's ``trajectories.jsonl`` differs."""
    first, digest, known = sources[0] / TRAJECTORIES, None, []
    for src in sources:
        if not src.is_dir():
            raise DataError(f"{src}: no such folder")
        verify_manifest(src)
        tpath = src / TRAJECTORIES
        if not tpath.is_file():
            raise DataError(f"{tpath}: file not found; every folder merged holds the same trajectories.jsonl")
        d = hashlib.sha256(tpath.read_bytes()).hexdigest()
        if digest is None:
            digest, known = d, [t.trajectory_id for t in load_trajectories(tpath)]
        elif d != digest:
            raise DataError(
                f"{tpath} differs from {first} (sha256 {d[:12]}… and {digest[:12]}…): only folders of byte-for-byte "
                "the same trajectories are merged; nothing was written"
            )
    return known


def collect(sources: Sequence[Path]) -> Merged:
    """Read and check every source; :class:`DataError` (one line, nothing written) on any disagreement."""
    if not sources:
        raise DataError("name at least one folder to merge")
    known = check_trajectories(sources)
    check_fingerprints(_run_records(sources))  # two judges under one id, before their verdicts are compared
    out = Merged()
    seen: dict[str, dict[str, tuple[str, Path, int]]] = {n: {} for n in KEYED}
    lines_seen: dict[str, set[str]] = {n: set() for n in LINES}
    for src in sources:
        for path in sorted(src.iterdir()):
            name = path.name
            if name == TRAJECTORIES or name in IGNORED or (name.startswith(".") and name.endswith(".tmp")):
                continue
            if name not in KEYED and name not in LINES:
                out.not_merged.append(str(path))
                continue
            _validate(src, name, known)
            rows = out.files.setdefault(name, [])
            for lineno, line in _lines(path):
                if name in LINES:
                    if line not in lines_seen[name]:
                        lines_seen[name].add(line)
                        rows.append(line)
                elif _keep(out, seen[name], name, line, path, lineno):
                    rows.append(line)
    return out


def _run_records(sources: Sequence[Path]) -> list[tuple[str, dict[str, Any]]]:
    """Every source's run records as ``(FILE:LINE, record)`` (their files already read once and found whole)."""
    return [
        (f"{src / RUNS}:{i}", rec)
        for src in sources
        if (src / RUNS).is_file()
        for i, line in _lines(src / RUNS)
        if isinstance(rec := json.loads(line), dict)
    ]


def check_fingerprints(runs: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """Refuse, in one line, a judge id whose run records (``FILE:LINE``, record) hold two fingerprints."""
    for judge_id, prints in recorded_fingerprints(runs).items():
        if len(prints) > 1:
            a, b = prints[0], prints[1]
            folder = Path(b.where.rpartition(":")[0]).parent
            raise DataError(
                f"judge {judge_id} has fingerprint {a.fingerprint.short} in {a.where} and {b.fingerprint.short} in "
                f"{b.where}: they differ in {', '.join(a.fingerprint.differences(b.fingerprint)) or 'their digests'}, "
                "so they are two judges under one id; rename one (run it again under another prompt file name or "
                f"--judge-model-name) or take it out of its folder (`trajectory-judge forget --data {folder} --judge "
                f"{judge_id}`) and merge again; nothing was written"
            )


def _keep(out: Merged, seen: dict[str, tuple[str, Path, int]], name: str, line: str, path: Path, lineno: int) -> bool:
    """Whether a keyed record is new (then noted in ``seen``); False for a copy of one kept; DataError for a conflict."""
    rec = json.loads(line)
    key = KEYED[name](rec)
    if key not in seen:
        seen[key] = (line, path, lineno)
        return True
    kept, kpath, klineno = seen[key]
    first = json.loads(kept)
    if first == rec:
        out.shared[name] = out.shared.get(name, 0) + 1
        return False
    if name in FOLDABLE and _unmeasured(first) == _unmeasured(rec):
        out.folded[name] = out.folded.get(name, 0) + 1
        return False
    raise DataError(
        f"{path}:{lineno}: conflicts with {kpath}:{klineno} for {key} (they differ in "
        f"{_diff(json.loads(kept), rec)}); keep one of them (`trajectory-judge forget --data FOLDER "
        "--judge ID` removes a judge from a folder) and merge again; nothing was written"
    )


def _unmeasured(rec: dict[str, Any]) -> dict[str, Any]:
    """A verdict's fields without those that measure its call (:data:`MEASURED`)."""
    return {k: v for k, v in rec.items() if k not in MEASURED}


def write_merged(merged: Merged, trajectories: Path, out: Path, *, exists: bool) -> None:
    """Write ``merged`` into ``out``: a new folder built beside it and renamed, or an existing one file by file."""
    text = {name: "".join(f"{ln}\n" for ln in rows) for name, rows in merged.files.items()}
    if exists:  # the caller holds its lock
        for name, body in text.items():
            atomic_write_text(out / name, body)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.merge-{secrets.token_hex(4)}")
    tmp.mkdir()
    try:
        atomic_write_bytes(tmp / TRAJECTORIES, trajectories.read_bytes())
        for name, body in text.items():
            atomic_write_text(tmp / name, body)
        os.rename(tmp, out)  # fails if another process made ``out`` meanwhile: nothing is replaced
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(out.parent)


def summary(merged: Merged, n_sources: int, out: Path) -> str:
    """What the merge wrote, in one line."""
    verdicts = [json.loads(ln) for ln in merged.files.get(VERDICTS, [])]
    judges = list(dict.fromkeys(v["judge_id"] for v in verdicts))
    parts = [f"{len(verdicts)} verdicts of {len(judges)} judge{'s' if len(judges) != 1 else ''}"]
    for name, what in ((MEMBERS, "ensemble members"), (ORGANIC, "organic episodes"), (RUNS, "run records")):
        if merged.files.get(name):
            parts.append(f"{len(merged.files[name])} {what}")
    shared = sum(merged.shared.values())
    tail = f"; {shared} records were in more than one folder, identical, and are kept once" if shared else ""
    folded = sum(merged.folded.values())
    if folded:
        tail += (
            f"; {folded} verdict{'s' if folded != 1 else ''} differed from another folder's only in latency or tokens "
            "(one judge's answer, timed by two paths) and were folded into the first folder's"
        )
    return f"trajectory-judge merge: {n_sources} folders into {out}: " + ", ".join(parts) + tail


def collect_and_write(sources: Sequence[Path], out: Path, *, exists: bool) -> Merged:
    merged = collect(sources)
    if merged.not_merged:
        print(
            "trajectory-judge merge: note: not merged (merge knows trajectories, verdicts, members, organic "
            f"episodes, run records, transcripts and set-aside lines): {', '.join(merged.not_merged)}",
            file=sys.stderr,
        )
    write_merged(merged, sources[0] / TRAJECTORIES, out, exists=exists)
    return merged
