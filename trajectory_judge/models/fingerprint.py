"""A judge's fingerprint: everything that changes its answers, recorded beside its id.

A judge id (``VIEW+NAME:MODEL``) names a judge; its fingerprint pins what that judge is: the model the
server was sent, the digest of its prompt template, the digest of its response schema and its decoding
(temperature, output budget, seed or the ensemble's seeds, top-p). Every path that writes verdicts
records the fingerprint of each judge in its run record (``runs.jsonl``, field ``fingerprints``), and
refuses to add verdicts to a judge id whose fingerprint on record differs: an edited template under the
same file name, or another temperature, is another judge and needs another name.

This module holds the record and how it is read back from run records; the writers compute it
(:meth:`trajectory_judge.judges.llm.LLMJudge.fingerprint`) and check it
(:mod:`trajectory_judge.run.fingerprints`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

SHORT = 12
"""Hex digits of a fingerprint's digest as messages and the report show it."""

FIELD = "fingerprints"
"""The run record's field holding each judge's fingerprint, keyed by judge id."""


def text_digest(text: str) -> str:
    """SHA-256 (hex) of ``text`` in UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def json_digest(value: Any) -> str:
    """SHA-256 (hex) of ``value`` as canonical JSON (sorted keys, no spaces)."""
    return text_digest(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


@dataclass(frozen=True)
class Fingerprint:
    """What a judge is, beyond its id: the fields that change its answers."""

    model: str | None
    """The model name the server was sent (``run --model``; an inspect log's model without its provider)."""
    prompt_sha256: str | None
    """SHA-256 of the prompt's fixed text: a template of one's own, or the built-in view prompt."""
    schema_sha256: str | None
    """SHA-256 of the response schema the judge answers in (canonical JSON)."""
    temperature: float | None
    """The sampling temperature (an ensemble's members' temperature)."""
    max_tokens: int | None
    """The output budget per answer."""
    seed: int | None = None
    """The seed of a single-pass judge (None for an ensemble, whose members' seeds are ``seeds``)."""
    seeds: tuple[int, ...] | None = None
    """An ensemble's seeds, one member each; None for a single-pass judge."""
    top_p: float | None = None
    """Nucleus sampling's top-p, when one was set (None: the server's default)."""

    def __post_init__(self) -> None:  # one spelling per value, so that 0 and 0.0 are one fingerprint
        for name, kind in (("temperature", float), ("top_p", float), ("max_tokens", int), ("seed", int)):
            if (value := getattr(self, name)) is not None:
                object.__setattr__(self, name, kind(value))
        if self.seeds is not None:
            object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the fields as canonical JSON: one value per judge."""
        return json_digest(self.fields())

    @property
    def short(self) -> str:
        """The digest's first :data:`SHORT` hex digits, as messages and the report show it."""
        return self.digest[:SHORT]

    def fields(self) -> dict[str, Any]:
        """The fields, as JSON values."""
        out = asdict(self)
        out["seeds"] = list(self.seeds) if self.seeds is not None else None
        return out

    def record(self) -> dict[str, Any]:
        """What a run record keeps: the fields and the digest."""
        return {**self.fields(), "sha256": self.digest}

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> Fingerprint:
        """The fingerprint a run record keeps (:meth:`record`); its digest is computed again, not trusted."""
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in rec.items() if k in known}
        if kw.get("seeds") is not None:
            kw["seeds"] = tuple(kw["seeds"])
        return cls(**kw)

    def differences(self, other: Fingerprint) -> list[str]:
        """What differs from ``self`` to ``other``, in words: ``prompt``, ``temperature 0 → 0.9``, ..."""
        out = []
        for name, label in _LABELS.items():
            a, b = getattr(self, name), getattr(other, name)
            if a == b:
                continue
            out.append(label if name.endswith("_sha256") else f"{label} {_shown(a)} → {_shown(b)}")
        return out

    def summary(self) -> str:
        """The decoding in a few words: ``temperature 0, max tokens 512, seed 7``."""
        parts = [f"temperature {_shown(self.temperature)}", f"max tokens {_shown(self.max_tokens)}"]
        parts.append(f"seeds {_shown(self.seeds)}" if self.seeds is not None else f"seed {_shown(self.seed)}")
        if self.top_p is not None:
            parts.append(f"top-p {_shown(self.top_p)}")
        return ", ".join(parts)


_LABELS: dict[str, str] = {
    "prompt_sha256": "prompt",
    "schema_sha256": "response schema",
    "model": "model",
    "temperature": "temperature",
    "max_tokens": "max tokens",
    "seed": "seed",
    "seeds": "seeds",
    "top_p": "top-p",
}
"""Each field as a message names it."""


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class OnRecord:
    """One fingerprint of a judge on record, and where it was first recorded."""

    fingerprint: Fingerprint
    """The fingerprint."""
    where: str
    """Where it is recorded first (``FILE:LINE``)."""


def wrote_judge(rec: Mapping[str, Any], judge_id: str) -> bool:
    """Whether a run record wrote verdicts of ``judge_id`` (its own, or for an ensemble its members')."""
    per = rec.get("per_judge")
    if not isinstance(per, Mapping):
        return bool(rec.get("written"))
    members = rec.get("members")
    ids = [judge_id, *((members.get(judge_id) or []) if isinstance(members, Mapping) else [])]
    return any(isinstance(per.get(k), Mapping) and (per[k].get("verdicts") or 0) > 0 for k in ids)


def recorded_fingerprints(records: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, list[OnRecord]]:
    """Each judge's distinct fingerprints in ``(where, run record)`` pairs, in order of first appearance.

    Only a record that wrote verdicts of a judge speaks for it: a run that was stopped before its first
    verdict, or one whose verdicts were all forgotten, says nothing about what the judge's verdicts are.
    A record without fingerprints (written before they were recorded) says nothing either.
    """
    out: dict[str, list[OnRecord]] = {}
    for where, rec in records:
        prints = rec.get(FIELD)
        if not isinstance(prints, Mapping):
            continue
        for judge_id, fp in prints.items():
            if not isinstance(fp, Mapping) or not wrote_judge(rec, judge_id):
                continue
            try:
                print_ = Fingerprint.from_record(fp)
            except (TypeError, ValueError):
                continue
            seen = out.setdefault(judge_id, [])
            if all(s.fingerprint != print_ for s in seen):
                seen.append(OnRecord(print_, where))
    return out
