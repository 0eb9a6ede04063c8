"""What a judge is handed: the trajectory without its label, under an opaque id.

A trajectory's id names its fault (``INS-00036-hallucinated_argument``), its instance id says
whose sibling it is (instances past the clean ones host faults only), and its label is the
answer. A judge gets none of them. :class:`Blinder` hands each judge a copy of the trajectory
with ``label=None`` and, as both ``trajectory_id`` and ``instance_id``, an opaque id
(:func:`opaque_id`): a keyed hash of the real id under a key the judge never sees. The runner
maps the judge's verdicts back to the real id (:meth:`Blinder.unblind`), so stored verdicts,
resumes and reports keep the real ids; only the judge's view changes.

The key is random per :class:`Blinder` unless one is given: the same key gives the same opaque
ids (a caller that must map ids back later, such as an eval log, keeps its key), and without the key the opaque ids say nothing about the real ones.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from trajectory_judge.models import Trajectory, Verdict

OPAQUE_PREFIX = "T-"
"""Every opaque id starts with this, followed by 16 hex digits."""


def new_key() -> bytes:
    """A fresh random key (32 bytes) for :func:`opaque_id`."""
    return secrets.token_bytes(32)


def opaque_id(trajectory_id: str, key: bytes) -> str:
    """The opaque id of ``trajectory_id`` under ``key``: ``T-`` and 16 hex digits of HMAC-SHA256.

    Deterministic for a given key; without the key it carries no information about the real id.
    """
    if not key:
        raise ValueError("an opaque id needs a non-empty key (see new_key())")
    digest = hmac.new(key, trajectory_id.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"{OPAQUE_PREFIX}{digest[:16]}"


def judge_view(traj: Trajectory, key: bytes) -> Trajectory:
    """What a judge is handed of ``traj``: a deep copy without the label, under its opaque id.

    The goal, the steps and the final answer are kept as they are: they are the evidence.
    """
    oid = opaque_id(traj.trajectory_id, key)
    fresh = Trajectory.model_validate_json(traj.model_dump_json(exclude={"label"}))  # a deep copy, faster than deepcopy
    return fresh.model_copy(update={"trajectory_id": oid, "instance_id": oid})


class Blinder:
    """Blinds trajectories for judges and maps their verdicts back to the real ids."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key if key is not None else new_key()
        self._real: dict[str, str] = {}

    def opaque_id(self, trajectory_id: str) -> str:
        """The opaque id of ``trajectory_id`` under this blinder's key (remembered for :meth:`real_id`)."""
        oid = opaque_id(trajectory_id, self.key)
        known = self._real.setdefault(oid, trajectory_id)
        if known != trajectory_id:  # pragma: no cover - a 64-bit collision
            raise ValueError(f"trajectories {known!r} and {trajectory_id!r} share opaque id {oid}; use another key")
        return oid

    def blind(self, traj: Trajectory) -> Trajectory:
        """:func:`judge_view` of ``traj``, its opaque id remembered."""
        self.opaque_id(traj.trajectory_id)
        return judge_view(traj, self.key)

    def real_id(self, oid: str) -> str:
        """The real trajectory id behind opaque id ``oid``; :class:`KeyError` if this blinder never issued it."""
        return self._real[oid]

    def unblind(self, verdict: Verdict) -> Verdict:
        """``verdict`` keyed by the real trajectory id (its ``trajectory_id`` must be an id this blinder issued)."""
        return verdict.model_copy(update={"trajectory_id": self.real_id(verdict.trajectory_id)})
