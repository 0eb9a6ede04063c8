"""One judge on one trajectory: what it is handed, and what is stored when it fails.

The judge is handed :meth:`~trajectory_judge.judges.blind.Blinder.blind` of the trajectory (no
label, an opaque id); its verdicts are checked against the trajectory and stored under the real
id. A judge that raises (other than a client failure, an interruption or a full disk) or returns
verdicts that do not fit the trajectory costs that trajectory, not the run: it is stored as
:func:`failed_verdicts` (an unparseable verdict; one that raised keeps the exception and its
traceback in its ``error``), which ``run_judges(..., retry_unparseable=True)`` judges again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from trajectory_judge.backends.errors import JudgeClientError
from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.blind import Blinder
from trajectory_judge.models import Trajectory, Verdict, check_verdict_step
from trajectory_judge.run.stopping import Interrupted, is_disk_full


def member_ids(judge: Judge) -> tuple[str, ...]:
    """The member judge ids of an ensemble judge (one with ``member_ids`` and ``judge_members``), else ()."""
    if hasattr(judge, "judge_members") and hasattr(judge, "aggregate"):
        return tuple(getattr(judge, "member_ids", ()))
    return ()


JUDGE_RAISED = "the judge raised "
"""How the reason of a verdict stored for a judge that raised begins (after :data:`JUDGE_FAILED`)."""

TRACEBACK_CHARS = 8000
"""The most of a judge's traceback kept in its verdict's ``error`` (the innermost frames, where it is longer)."""


def raised(exc: BaseException) -> str:
    """``the judge raised TYPE: MESSAGE`` and, on the lines after, the traceback of ``exc``."""
    import traceback

    tb = "".join(traceback.format_exception(exc)).rstrip()
    return f"{JUDGE_RAISED}{type(exc).__name__}: {exc}\n{tb}"


JUDGE_FAILED = "unparseable verdict: "
"""How the ``error`` of a verdict stored for a judge that failed begins (an exception, or a verdict
that does not fit its trajectory); :attr:`~trajectory_judge.models.Verdict.unparseable` counts it,
and a retry of unparseable verdicts judges it again."""


def _stops_the_run(exc: BaseException) -> bool:
    """Whether an exception raised inside a judge stops the run instead of costing one trajectory.

    Client failures (the server, not the judge), interruptions and a full disk stop it; anything
    else a judge raises is the judge's failure on that trajectory.
    """
    return not isinstance(exc, Exception) or isinstance(exc, (JudgeClientError, Interrupted)) or is_disk_full(exc)


def judge_task(judge: Judge, traj: Trajectory, blinder: Blinder) -> list[Verdict]:
    """A plain judge's verdict, or an ensemble's members followed by their aggregate, keyed by the real id.

    The judge is handed :meth:`Blinder.blind` of ``traj`` (no label, an opaque id). A verdict that
    does not state its ``latency_s`` gets the time the judge took, measured here. A judge that raises
    (other than a client failure or an interruption) or returns verdicts that do not fit ``traj``
    gets :func:`failed_verdicts` instead: that trajectory is lost to it, not the run.
    """
    seen = blinder.blind(traj)
    t0 = time.perf_counter()
    try:
        if member_ids(judge):
            members = judge.judge_members(seen)  # type: ignore[attr-defined]
            vs = [*members, judge.aggregate(members)]  # type: ignore[attr-defined]
        else:
            vs = [judge.judge(seen)]
    except BaseException as exc:
        if _stops_the_run(exc):
            raise
        return failed_verdicts(judge, traj, raised(exc), round(time.perf_counter() - t0, 6), limit=TRACEBACK_CHARS)
    took = round(time.perf_counter() - t0, 6)
    try:
        checked = _check_verdicts(vs, seen, traj, judge)
    except ValueError as exc:
        return failed_verdicts(judge, traj, str(exc), took)
    return [
        blinder.unblind(v).model_copy(update={"latency_s": took})
        if "latency_s" not in v.model_fields_set
        else blinder.unblind(v)
        for v in checked
    ]


def failed_verdicts(
    judge: Judge, traj: Trajectory, reason: str, latency_s: float = 0.0, *, limit: int = 500
) -> list[Verdict]:
    """What is stored when ``judge`` failed on ``traj``: for each of its ids (members first) a clean
    verdict at confidence 0.5 whose ``error`` is :data:`JUDGE_FAILED` and ``reason`` (an unparseable
    answer is stored alike, so it is counted and scored as one). A reason longer than ``limit``
    keeps its first line and the end of the rest (a traceback's innermost frames)."""
    if len(reason) > limit:
        first, _, rest = reason.partition("\n")
        first = first if len(first) <= limit // 2 else first[: limit // 2 - 3] + "..."
        reason = first + ("\n..." + rest[-(limit - len(first) - 4) :] if rest else "")
    return [
        Verdict(
            trajectory_id=traj.trajectory_id,
            judge_id=jid,
            faulty=False,
            confidence=0.5,
            rationale=None,
            latency_s=latency_s,
            error=f"{JUDGE_FAILED}{reason}",
        )
        for jid in (*member_ids(judge), judge.judge_id)
    ]


def _check_verdicts(vs: Sequence[Verdict], seen: Trajectory, traj: Trajectory, judge: Judge) -> list[Verdict]:
    """``vs`` re-validated, keyed as expected (``seen``'s id, the judge's ids) and naming only steps
    ``traj`` has; else a :class:`ValueError` saying what is wrong."""
    from pydantic import ValidationError

    expected = [*member_ids(judge), judge.judge_id]
    for v in vs:
        if not isinstance(v, Verdict):
            raise ValueError(f"judge {judge.judge_id!r} returned {type(v).__name__}, not a Verdict")
    got = [v.judge_id for v in vs]
    if got != expected or any(v.trajectory_id != seen.trajectory_id for v in vs):
        raise ValueError(
            f"judge {judge.judge_id!r} returned verdicts keyed {[(v.trajectory_id, v.judge_id) for v in vs]}; "
            f"expected trajectory id {seen.trajectory_id!r} (the opaque id it was handed) and judge ids {expected}"
        )
    out = []
    for v in vs:
        try:  # a verdict changed after it was made (pydantic does not check assignments) is checked again
            Verdict.model_validate(v.model_dump(warnings=False))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ValueError(
                f"invalid verdict from {v.judge_id!r}: {where + ': ' if where else ''}"
                f"{err['msg'].removeprefix('Value error, ')}"
            ) from None
        check_verdict_step(v, traj)
        out.append(v)
    return out
