"""One judge id, one judge: every writer checks its judges' fingerprints against the folder's run records.

A run, an import (``import-inspect``, ``import-results``) or a merge that would add verdicts under a
judge id whose fingerprint on record (:mod:`trajectory_judge.models.fingerprint`) differs from its own
is refused, before anything is written, in one line that names both fingerprints, what differs and the
ways out: another name for the new judge, or ``trajectory-judge forget`` for the old one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trajectory_judge.models import DataError, Fingerprint, JudgeSpec, OnRecord, recorded_fingerprints
from trajectory_judge.run.store import RUNS


def new_name(judge_id: str, prompt_option: str = "--prompt", name_option: str = "--judge-model-name") -> str:
    """How the new judge of ``judge_id`` gets another id: its prompt file renamed (a prompt of one's own), or
    another model name in the id."""
    prompt = JudgeSpec.parse(judge_id).prompt is not None
    return f"rename the {prompt_option} file, or {name_option}" if prompt else name_option


def judge_fingerprints(judges: Sequence[Any]) -> dict[str, Fingerprint]:
    """The fingerprint of each judge that has one (a ``fingerprint()`` method), by judge id."""
    out = {}
    for j in judges:
        make = getattr(j, "fingerprint", None)
        if callable(make):
            fp = make()
            if isinstance(fp, Fingerprint):
                out[j.judge_id] = fp
    return out


def record_lines(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The run records of ``path`` as ``(FILE:LINE, record)``; lines that are no JSON object are left out
    (a torn last line; ``report`` says which)."""
    if not path.exists():
        return []
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append((f"{path}:{i}", rec))
    return out


def on_record(data: str | Path) -> dict[str, list[OnRecord]]:
    """Each judge's fingerprints in ``DATA/runs.jsonl``."""
    return recorded_fingerprints(record_lines(Path(data) / RUNS))


def refusal(
    judge_id: str, old: OnRecord, new: Fingerprint, *, new_where: str, folder: str | Path, ways: str
) -> DataError:
    """The one-line refusal of two fingerprints under ``judge_id``; ``ways``: how the new one gets a new name."""
    diff = ", ".join(old.fingerprint.differences(new)) or "their digests"
    return DataError(
        f"judge {judge_id} has fingerprint {old.fingerprint.short} in {old.where} and {new_where} gives it "
        f"{new.short}: they differ in {diff}, so they are two judges; give the new one a new name ({ways}) or take "
        f"the old one out first (`trajectory-judge forget --data {folder} --judge {judge_id}`); nothing was written"
    )


def check_fingerprints(
    data: str | Path,
    new: Mapping[str, Fingerprint],
    *,
    what: str = "this run",
    prompt_option: str = "--prompt",
    name_option: str = "--judge-model-name",
    recorded: Mapping[str, Iterable[OnRecord]] | None = None,
) -> None:
    """Refuse (:class:`DataError`, one line) a judge of ``new`` whose fingerprint differs from one on record
    in ``data`` (``recorded``: already read; default ``DATA/runs.jsonl``). ``what`` names the writer, the
    options say how its judge is renamed (:func:`new_name`)."""
    known = on_record(data) if recorded is None else recorded
    for judge_id, fp in new.items():
        for old in known.get(judge_id, ()):
            if old.fingerprint != fp:
                ways = new_name(judge_id, prompt_option, name_option)
                raise refusal(judge_id, old, fp, new_where=what, folder=data, ways=ways)
