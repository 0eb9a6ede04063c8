"""Output paths that would destroy inputs are refused before anything is written.

Every verb that writes a whole file (``check --out``, ``report --json/--markdown``, ``manifest``,
``build-dataset --out``) asks :func:`guard_output` first. It refuses, with one line naming both
paths, an output that is

- the same file as one of the verb's inputs (also through a symlink or a hard link),
- the same file as another output of the same invocation, or
- one of the data files of a data directory (:data:`DATA_NAMES`), which only ``run`` and
  ``agent`` append to and only their own verb regenerates.

:func:`guard_referenced` keeps ``build-dataset`` from replacing trajectories that verdicts in the
same directory refer to.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from trajectory_judge.models import DataError

MANIFEST = "SHA256SUMS"
"""A data directory's checksum manifest (:mod:`.manifest`)."""

DATA_FILES: tuple[str, ...] = ("trajectories.jsonl", "verdicts.jsonl", "members.jsonl", "runs.jsonl", "organic.jsonl")
"""The data files of a data directory: the files a manifest covers when present."""

DATA_NAMES: tuple[str, ...] = (*DATA_FILES, MANIFEST)
"""The files of a data directory that no whole-file output may land on (but their own verb's)."""


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file: the same inode when both exist, else the same resolved path."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:  # pragma: no cover - unreadable path; fall back to names
        pass
    return a.resolve() == b.resolve()


def is_data_file(path: str | Path) -> bool:
    """``path`` is named like a data file and already exists or sits in a data directory."""
    path = Path(path)
    if path.name not in DATA_NAMES:
        return False
    return path.exists() or path.is_symlink() or any((path.parent / n).exists() for n in DATA_NAMES)


def guard_output(
    out: str | Path, *, inputs: Iterable[str | Path] = (), outputs: Iterable[str | Path] = (), own: Iterable[str] = ()
) -> None:
    """Raise :class:`DataError` if writing ``out`` would overwrite an input, another output or a data file.

    ``own`` names the data files this verb legitimately regenerates (``manifest`` its
    ``SHA256SUMS``, ``build-dataset`` its ``trajectories.jsonl``).
    """
    out = Path(out)
    if out.is_dir():
        raise DataError(f"cannot write {out}: it is a directory; give a file path")
    for inp in inputs:
        if same_file(out, inp):
            raise DataError(f"refusing to write {out}: it is the input {inp}; choose another output path")
    for other in outputs:
        if same_file(out, other):
            raise DataError(f"refusing to write {out}: the output {other} is the same file; give two paths")
    if out.name not in set(own) and is_data_file(out):
        raise DataError(
            f"refusing to write {out}: it is the {out.name} of the data directory {out.parent}; write outputs elsewhere"
        )


def _ids_per_line(path: Path) -> dict[str, bytes]:
    """``trajectory_id`` -> its whole line, for every line of ``path`` that parses (others ignored)."""
    out: dict[str, bytes] = {}
    if not path.is_file():
        return out
    for line in path.read_bytes().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("trajectory_id"), str):
            out.setdefault(obj["trajectory_id"], line)
    return out


def guard_referenced(path: str | Path, new_text: str, referrers: Iterable[str | Path], *, force: bool = False) -> None:
    """Refuse to replace ``path`` by ``new_text`` if that changes or drops a trajectory a verdict refers to.

    ``referrers`` are the verdict files of the directory. Rewriting identical trajectories is
    allowed; so is anything with ``force``.
    """
    path = Path(path)
    if force or not path.is_file():
        return
    old = _ids_per_line(path)
    new: dict[str, bytes] = {}
    for line in new_text.encode("utf-8").splitlines():
        new.setdefault(json.loads(line)["trajectory_id"], line)
    changed = {i for i, line in old.items() if new.get(i) != line}
    for ref in referrers:
        hit = sorted(changed & set(_ids_per_line(Path(ref))))
        if hit:
            raise DataError(
                f"refusing to replace {path}: {len(hit)} trajectories that verdicts in {ref} refer to "
                f"would change or disappear (e.g. {hit[0]}); use --force, or --out another directory"
            )
