"""JSON-lines reading and writing: a bad line is a :class:`DataError` naming the file and the line,
and a whole-file write happens completely or not at all."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from trajectory_judge.fileio import atomic_open, note_read
from trajectory_judge.models.records import Trajectory, Verdict


class DataError(ValueError):
    """Bad input data; the message names the file and line."""


M = TypeVar("M", bound=BaseModel)


def dumps(record: BaseModel) -> str:
    """One compact, deterministic JSON line (no trailing newline)."""
    return json.dumps(record.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    msg = err["msg"].removeprefix("Value error, ")
    where = ".".join(str(p) for p in err["loc"])
    if err["type"] not in ("missing", "extra_forbidden", "value_error") and not isinstance(
        err.get("input"), (dict, list)
    ):
        got = repr(err["input"])
        msg += f" (got {got if len(got) <= 60 else got[:57] + '...'})"
    return f"{where}: {msg}" if where else msg


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file; a missing file or one that is not UTF-8 is a :class:`DataError`.

    Other operating-system errors (a directory, no permission) propagate as :class:`OSError`.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    try:
        text = (data := path.read_bytes()).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    # announced to whoever logs reads (the book's kernels: its provenance lines)
    note_read(path, hashlib.sha256(data).hexdigest(), len(data))
    return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as Path.read_text


def parse_line(path: str | Path, lineno: int, line: str, model: type[M]) -> M:
    """One JSONL line as a ``model`` record; a line that is not JSON or not a valid record is a :class:`DataError`
    naming ``path``, ``lineno`` and the first field at fault.

    The line is validated as JSON first (pydantic's parser, the fast path); a line that fails there is read again
    by :func:`json.loads` and validated as Python, which either accepts it (JSON's ``NaN``, refused there and then
    judged by the field) or says why in the words every reader of the project uses."""
    try:
        return model.model_validate_json(line)
    except ValidationError:
        pass
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise DataError(f"{path}:{lineno}: invalid {model.__name__}: {_first_error(exc)}") from None


def parse_jsonl(path: str | Path, model: type[M], *, allow_torn_tail: bool = False) -> list[M]:
    """Read a JSONL file of ``model`` records; bad lines raise :class:`DataError` naming file and line
    (:func:`parse_line`).

    With ``allow_torn_tail`` a last line without a newline that does not parse is ignored
    (the signature of a crash mid-write); the caller is responsible for repairing it.
    """
    path = Path(path)
    text = read_text(path)
    lines = text.split("\n")
    torn_ok = allow_torn_tail and not text.endswith("\n")
    out: list[M] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(parse_line(path, lineno, line, model))
        except DataError:
            if torn_ok and lineno == len(lines):
                break
            raise
    return out


def jsonl_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line of a UTF-8 file, read a line at a time.

    Numbered as :func:`read_text` with ``split("\\n")`` numbers them (universal newlines); a missing file or
    bytes that are not UTF-8 are a :class:`DataError`, as there. When the whole file has been read its reading
    is announced (its SHA-256), as ``read_text`` announces it.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    sha, size, lineno = hashlib.sha256(), 0, 0
    with path.open("rb") as fh:
        for raw in fh:
            sha.update(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {size + exc.start})"
                ) from None
            size += len(raw)
            for part in text.removesuffix("\n").removesuffix("\r").split("\r"):
                lineno += 1
                if part.strip():
                    yield lineno, part
    note_read(path, sha.hexdigest(), size)


def stream_trajectories(path: str | Path) -> Iterator[tuple[int, Trajectory]]:
    """``(line number, trajectory)`` of each line, read and validated a line at a time; an empty file, or a
    duplicate id, is an error."""
    path = Path(path)
    seen: set[str] = set()
    for i, (lineno, line) in enumerate(jsonl_lines(path)):
        t = parse_line(path, lineno, line, Trajectory)
        if t.trajectory_id in seen:
            raise DataError(f"{path}: duplicate trajectory_id {t.trajectory_id!r} (record {i + 1})")
        seen.add(sys.intern(t.trajectory_id))
        yield lineno, t
    if not seen:
        raise DataError(f"{path}: no trajectories (the file is empty)")


def stream_verdicts(path: str | Path, trajectory_ids: Iterable[str] | None = None) -> Iterator[tuple[int, Verdict]]:
    """``(line number, verdict)`` of each line, read and validated a line at a time; a duplicate (trajectory,
    judge) or, given ``trajectory_ids``, an unknown trajectory is an error."""
    path = Path(path)
    known = set(trajectory_ids) if trajectory_ids is not None else None
    seen: dict[str, set[str]] = {}  # judge -> its trajectories (of interned ids: no object per verdict)
    for lineno, line in jsonl_lines(path):
        v = parse_line(path, lineno, line, Verdict)
        judged = seen.setdefault(sys.intern(v.judge_id), set())
        if v.trajectory_id in judged:
            raise DataError(
                f"{path}:{lineno}: duplicate verdict for trajectory {v.trajectory_id!r}, judge {v.judge_id!r}"
            )
        judged.add(sys.intern(v.trajectory_id))
        if known is not None and v.trajectory_id not in known:
            raise DataError(f"{path}:{lineno}: verdict for unknown trajectory {v.trajectory_id!r}")
        yield lineno, v


def load_trajectories(path: str | Path) -> list[Trajectory]:
    """Load trajectories (:func:`stream_trajectories`); an empty file, or a duplicate id, is an error."""
    return [t for _, t in stream_trajectories(path)]


def load_verdicts(path: str | Path, trajectory_ids: Iterable[str] | None = None) -> list[Verdict]:
    """Load verdicts (:func:`stream_verdicts`); a duplicate (trajectory, judge) key or an unknown trajectory is an
    error."""
    return [v for _, v in stream_verdicts(path, trajectory_ids)]


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> None:
    """Write records atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "w") as fh:
        for r in records:
            fh.write(dumps(r) + "\n")
