"""The crash-safe, resumable runner: judges x trajectories -> ``DIR/verdicts.jsonl``.

- Verdicts are appended one JSON line at a time, each flushed and fsynced, keyed by
  ``(trajectory_id, judge_id)``. A rerun skips every key already on disk, so an interrupted run
  is resumed by running the same command again.
- A crash mid-write can leave a torn last line (no newline, not parseable). On resume it is
  detected, reported and moved to a file beside the verdicts (``verdicts.jsonl.torn-1``, named in
  the message; never deleted); every complete line before it is kept.
- ``--limit N`` judges the first N trajectories only. The dataset's order is a deterministic
  shuffle under which any prefix is a stratified sample, so raising the limit in rounds keeps
  partial data balanced.
- Client failures (transport faults after retries, a prompt too long for the context, a
  rejected request) stop the run with a clear message and a non-zero exit code. They are never
  written as verdicts; the verdicts already written are kept. Anything else a judge raises, and a
  verdict that does not fit its trajectory, costs that trajectory only: it is stored as an
  unparseable verdict (:func:`failed_verdicts`) and judged again by ``--retry-unparseable``.
- A judge is handed the trajectory without its label, under an opaque id
  (:mod:`trajectory_judge.judges.blind`); its verdicts are stored under the real id.
- Every invocation appends one metadata record to ``DIR/runs.jsonl``: judges, backend, model,
  the server's build and model hash, decoding parameters, package version, git commit, start
  and end time, counts, seconds per verdict, and how it ended.

Any object with a ``judge_id`` and ``judge(traj) -> Verdict`` (:class:`~.judges.base.Judge`)
can be run with :func:`run_judges`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack, suppress
from dataclasses import asdict, dataclass, field
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import Any

__version__ = _dist_version("trajectory-judge")

from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.blind import Blinder
from trajectory_judge.models import DataError, Trajectory, Verdict, check_judge_id, load_verdicts
from trajectory_judge.provenance.pins import writable_folder
from trajectory_judge.run.fingerprints import check_fingerprints, judge_fingerprints
from trajectory_judge.run.isolated import Isolated, check_isolatable
from trajectory_judge.run.meter import CpuMeter
from trajectory_judge.run.progress import Progress
from trajectory_judge.run.record import base_record, now, per_judge_costs
from trajectory_judge.run.stopping import Interrupted
from trajectory_judge.run.store import (
    MEMBERS,
    VerdictWriter,
    append_run_record_or_warn,
    data_dir_lock,
    repair_torn_tail,
    set_aside_unparseable,
)
from trajectory_judge.run.task import JUDGE_FAILED, JUDGE_RAISED, judge_task, member_ids


def _source(judge_id: str) -> str:
    """The path whose retry judges ``judge_id`` again: ``python`` for a judge in Python, ``run`` for an LLM judge."""
    from trajectory_judge.models import JudgeSpec

    return "python" if JudgeSpec.parse(judge_id).kind in ("python", "rules") else "run"


# --- running -------------------------------------------------------------------------------
@dataclass
class RunResult:
    """What one invocation did."""

    planned: int = 0
    """Verdicts in scope: one per (trajectory, judge), and one per ensemble member as well, so that
    ``planned`` counts what ``written`` and ``skipped`` count (``written + skipped == planned`` when a
    run ends ``ok``)."""
    skipped: int = 0
    """Verdicts in scope already on disk (members included), not written again."""
    written: int = 0
    """Verdicts written by this invocation, ensemble members included."""
    unparseable: int = 0
    """Written verdicts that record an unparseable response (voting clean at 0.5)."""
    failed: int = 0
    """Written verdicts that stand for a judge's failure (:data:`JUDGE_FAILED`; counted in ``unparseable`` too)."""
    raised: int = 0
    """Of ``failed``, the verdicts of a judge that raised (the exception and traceback in their ``error``)."""
    retried: int = 0
    """(trajectory, judge) pairs whose unparseable verdicts were set aside to be judged again."""
    status: str = "ok"
    """``ok``, ``failed`` (a client failure stopped it) or ``interrupted``."""
    message: str | None = None
    """The failure or interruption message."""
    repaired: str | None = None
    """The torn-tail repair message, if a repair happened."""
    per_judge: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per judge (and ensemble member): verdicts written, mean latency (s/verdict), mean prompt and completion tokens."""
    rechecked: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per ensemble judge: recomputed verdicts that are the ``same`` as, or ``different`` from, the one on disk."""


def same_verdict(a: Verdict, b: Verdict) -> bool:
    """Two verdicts agree on everything a judge decides and spends (all fields but latency)."""
    return a.model_dump(exclude={"latency_s"}) == b.model_dump(exclude={"latency_s"})


def _plan(
    trajectories: Sequence[Trajectory], judges: Sequence[Judge], done: set[tuple[str, str]], result: RunResult
) -> tuple[list[tuple[Trajectory, Judge]], int]:
    """The (trajectory, judge) tasks still to do, and the verdicts (members included) they will write;
    ``result.planned`` and ``result.skipped`` count verdicts, members included, as ``written`` does."""
    tasks: list[tuple[Trajectory, Judge]] = []
    to_write = 0
    for t in trajectories:
        for j in judges:
            keys = [(t.trajectory_id, k) for k in (j.judge_id, *member_ids(j))]
            missing = sum(k not in done for k in keys)
            result.planned += len(keys)
            result.skipped += len(keys) - missing
            if missing:
                tasks.append((t, j))
                to_write += missing
    return tasks, to_write


class _Recorder:
    """Writes each new verdict to its file (ensemble members apart), counts it, and compares
    recomputed ensemble verdicts with those already on disk."""

    def __init__(
        self,
        path: Path,
        mpath: Path,
        members: set[str],
        on_disk: dict[tuple[str, str], Verdict],
        done: set[tuple[str, str]],
        result: RunResult,
        bar: Progress,
    ) -> None:
        self.members, self.on_disk, self.done, self.result, self.bar = members, on_disk, done, result, bar
        self.writer = VerdictWriter(path)
        self.mwriter = VerdictWriter(mpath) if members else None
        self.written: list[Verdict] = []
        self.warned: set[str] = set()
        self.first_raise: Verdict | None = None

    def __call__(self, vs: list[Verdict]) -> None:
        before = self.result.written
        for v in vs:
            key = (v.trajectory_id, v.judge_id)
            if key in self.done:
                if key in self.on_disk:  # an ensemble verdict recomputed with its members: compare
                    tally = self.result.rechecked.setdefault(v.judge_id, {"same": 0, "different": 0})
                    tally["same" if same_verdict(v, self.on_disk[key]) else "different"] += 1
                continue
            (self.mwriter if v.judge_id in self.members else self.writer).write(v)  # type: ignore[union-attr]
            self.done.add(key)
            self._count(v)
        self.bar.update(f"last {vs[-1].judge_id} {sum(v.latency_s for v in vs):.1f}s", n=self.result.written - before)

    def _count(self, v: Verdict) -> None:
        self.result.written += 1
        self.result.unparseable += v.unparseable
        if v.error and v.error.startswith(JUDGE_FAILED):
            self.result.failed += 1
            reason = v.error.removeprefix(JUDGE_FAILED)
            if reason.startswith(JUDGE_RAISED):
                self.result.raised += 1
                self.first_raise = self.first_raise or v
            if v.judge_id not in self.warned:  # once per judge: the rest are counted in the summary
                from trajectory_judge.analysis.core.loading import retry_hint

                self.warned.add(v.judge_id)
                print(
                    f"trajectory-judge: warning: judge {v.judge_id!r} failed on trajectory {v.trajectory_id!r} "
                    f"({reason.splitlines()[0]}); stored as an unparseable verdict (clean at 0.5), "
                    f"{retry_hint(_source(v.judge_id))}",
                    file=sys.stderr,
                )
        self.written.append(v)

    def raised_summary(self) -> str | None:
        """``N verdicts raised; first: ...`` (the first exception and where its traceback is kept), or None."""
        v = self.first_raise
        if v is None or v.error is None:
            return None
        n = self.result.raised
        first = v.error.removeprefix(JUDGE_FAILED).removeprefix(JUDGE_RAISED).splitlines()[0]
        return (
            f"{n} verdict{'s' if n != 1 else ''} raised; first: {first} (judge {v.judge_id!r}, trajectory "
            f"{v.trajectory_id!r}; each traceback is in its verdict's error field)"
        )

    def close(self) -> None:
        """Close both files (fsynced) and the progress bar; fill ``result.per_judge``; say once what raised."""
        if summary := self.raised_summary():
            print(f"trajectory-judge: warning: {summary}", file=sys.stderr)
        try:
            self.writer.close()
        finally:
            if self.mwriter is not None:
                self.mwriter.close()
            self.bar.close()
            self.result.per_judge = per_judge_costs(self.written)


def _repair(path: Path, mpath: Path, ensembles: bool, result: RunResult) -> None:
    """Repair torn last lines of the verdict files (a crash mid-write), saying so."""
    repairs = [r for r in (repair_torn_tail(path), repair_torn_tail(mpath) if ensembles else None) if r]
    for r in repairs:
        print(f"trajectory-judge: {r}", file=sys.stderr)
    result.repaired = "; ".join(repairs) or None


def _on_disk(
    path: Path, mpath: Path, ensembles: bool, known: Iterable[str] | None
) -> tuple[dict[tuple[str, str], Verdict], set[tuple[str, str]]]:
    """The verdicts on disk by key, and every key done (members included).

    A verdict file holding two verdicts for one key, or (with ``known``) a verdict on a trajectory
    not in ``known``, is a :class:`DataError` naming its line and the command that removes it.
    """
    from trajectory_judge.analysis.core.loading import forget_hint

    known = set(known) if known is not None else None
    out: list[list[Verdict]] = []
    for p in (path, mpath) if ensembles else (path,):
        try:
            out.append(load_verdicts(p, known) if p.exists() else [])
        except DataError as exc:
            raise DataError(f"{exc}{forget_hint(p.parent, p, str(exc))}") from None
    on_disk = {(v.trajectory_id, v.judge_id): v for v in out[0]}
    return on_disk, set(on_disk) | {(v.trajectory_id, v.judge_id) for vs in out[1:] for v in vs}


def run_judges(
    trajectories: Sequence[Trajectory],
    judges: Sequence[Judge],
    verdicts_path: str | Path,
    *,
    members_path: str | Path | None = None,
    concurrency: int = 1,
    progress: bool = True,
    abort: Callable[[], None] | None = None,
    retry_unparseable: bool = False,
    run_record: Mapping[str, Any] | None = None,
    record: bool = True,
    blind_key: bytes | None = None,
    known_ids: Iterable[str] | None = None,
    force: bool = False,
    isolate: bool = False,
) -> RunResult:
    """Judge every trajectory with every judge, skipping keys on disk; append verdicts durably.

    Every judge id (and member id) must follow the judge-id grammar
    (:func:`~trajectory_judge.models.check_judge_id`), none twice, else :class:`ValueError` before
    anything is written. With ``record`` the run appends its record to ``runs.jsonl`` beside the
    verdicts however it ends (``run_record`` adds the command line's settings). With
    ``retry_unparseable`` these judges' unparseable verdicts on these trajectories (an ensemble's
    with its members) are first moved to ``retried.jsonl`` and judged again.

    Pairs are visited trajectory by trajectory, so an interrupted run leaves balanced partial data.
    Each judge is handed :func:`~trajectory_judge.judges.blind.judge_view` of the trajectory (no
    label, an opaque id keyed by ``blind_key``, by default random per call); verdicts are stored
    under the real ids. A client failure or an interruption stops the run after the requests in
    flight finish (their verdicts are written) and is re-raised; anything else a judge raises, or a
    verdict that does not fit its trajectory, costs only that trajectory (:mod:`.task`).

    An ensemble's member verdicts go to ``members_path`` (default ``members.jsonl`` beside the
    verdicts); one whose members are missing is judged again for them, and its recomputed verdict
    compared with the stored one (``RunResult.rechecked``), never written twice. A verdict file with
    two verdicts for one key, or one on a trajectory outside ``known_ids`` (when given: the whole
    trajectories file, of which ``trajectories`` may be a prefix), stops the run before it judges.
    On Ctrl-C at ``concurrency`` > 1, ``abort`` (the clients' ``abort``) cuts off the requests in flight.

    A judge with a ``fingerprint()`` (every LLM judge and ensemble: model, prompt and schema digests,
    decoding; :mod:`trajectory_judge.models.fingerprint`) is held to the fingerprint its id has on record in
    the folder's ``runs.jsonl``: another one is refused with :class:`~trajectory_judge.models.DataError`
    before anything is written, and the run record keeps each judge's fingerprint.

    It obeys the folder's rules as the command line's writers do: a folder pinned by ``SHA256SUMS`` is
    refused with :class:`~trajectory_judge.models.DataError` before anything is written (``force=True``
    writes there anyway; re-pin it afterwards), and the folder's writer lock
    (:func:`~trajectory_judge.run.store.data_dir_lock`) is held throughout, so a second writer, in this
    process's caller or in another process, is refused rather than interleaved.

    With ``isolate`` each judge written outside this package (a Python judge of one's own) runs in a
    process of its own that is handed only the judge's view (:class:`~trajectory_judge.run.isolated.Isolated`):
    nothing it can walk to, the caller's frames included, holds a label. Its class must be importable by
    name (defined in a module, not in ``__main__``); one that is not is refused before anything is written.
    """
    path = Path(verdicts_path)
    _check_ids(judges)  # a judge id outside the grammar is refused before the folder is touched
    writable_folder(path.parent, what="verdicts and a run record", force=force, force_option="force=True")
    path.parent.mkdir(parents=True, exist_ok=True)
    with data_dir_lock(path.parent), ExitStack() as stack:
        check_fingerprints(path.parent, judge_fingerprints(judges))  # before a line is written, a record too
        if isolate:  # every judge pickled, so every refusal made, before any process starts
            pickled = [check_isolatable(j) if _own_judge(j) else None for j in judges]
            judges = [
                j if p is None else stack.enter_context(Isolated(j, p)) for j, p in zip(judges, pickled, strict=True)
            ]
        ids = [j.judge_id for j in judges]
        mpath = Path(members_path) if members_path is not None else path.with_name(MEMBERS)
        rec = None
        if record:
            ensembles = {j.judge_id: list(member_ids(j)) for j in judges if member_ids(j)}
            rec = {**base_record(ids, ensembles, concurrency=concurrency), **(run_record or {})}
            rec["fingerprints"] = {k: fp.record() for k, fp in judge_fingerprints(judges).items()} or None
        meter, t0, result = CpuMeter((rec or {}).get("server_launch")), time.monotonic(), RunResult()
        try:
            _run(
                trajectories,
                judges,
                path,
                mpath,
                result,
                concurrency=concurrency,
                progress=progress,
                abort=abort,
                retry_unparseable=retry_unparseable,
                blinder=Blinder(blind_key),
                known_ids=known_ids,
            )
        except BaseException as exc:
            if result.status == "ok":  # stopped before judging began (a bad verdicts file, Ctrl-C)
                result.status = "interrupted" if isinstance(exc, (KeyboardInterrupt, Interrupted)) else "failed"
                result.message = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            stack.close()  # isolated judges' processes end first, so that their CPU time is counted
            if rec is not None:
                rec.update(asdict(result), ended=now(), wall_s=round(time.monotonic() - t0, 3), cpu_s=meter.read())
                append_run_record_or_warn(path.parent, rec)
        return result


def _own_judge(judge: Judge) -> bool:
    """Whether ``judge`` was written outside this package (so :class:`Isolated` may run it)."""
    return not type(judge).__module__.startswith("trajectory_judge.")


def _check_ids(judges: Sequence[Judge]) -> list[str]:
    """The judges' ids, each (and each ensemble member's) checked against the grammar, none twice."""
    ids = [getattr(j, "judge_id", None) for j in judges]
    for j, jid in zip(judges, ids):
        if not isinstance(jid, str):
            raise ValueError(
                f"{type(j).__name__} has no judge_id text; a judge needs one (see the guide's 'Judge ids' page)"
            )
        for k in (jid, *member_ids(j)):
            check_judge_id(k)
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate judge ids: {ids}")
    return ids  # type: ignore[return-value]


def _run(
    trajectories: Sequence[Trajectory],
    judges: Sequence[Judge],
    path: Path,
    mpath: Path,
    result: RunResult,
    *,
    concurrency: int,
    progress: bool,
    abort: Callable[[], None] | None,
    retry_unparseable: bool,
    blinder: Blinder,
    known_ids: Iterable[str] | None,
) -> None:
    """The body of :func:`run_judges`: fills ``result``; a judge's exception is re-raised carrying it."""
    ids = [j.judge_id for j in judges]
    members = {m for j in judges for m in member_ids(j)}
    _repair(path, mpath, bool(members), result)
    if retry_unparseable:
        ensembles = {j.judge_id: tuple(member_ids(j)) for j in judges if member_ids(j)}
        result.retried = set_aside_unparseable(path, mpath, ids, ensembles, [t.trajectory_id for t in trajectories])
    on_disk, done = _on_disk(path, mpath, bool(members), known_ids)
    tasks, to_write = _plan(trajectories, judges, done, result)
    record = _Recorder(
        path,
        mpath,
        members,
        on_disk,
        done,
        result,
        Progress(to_write, desc=",".join(ids), enabled=progress, concurrency=concurrency),
    )
    error: BaseException | None = None
    try:
        if concurrency <= 1:
            try:
                for t, j in tasks:
                    record(judge_task(j, t, blinder))
            except BaseException as exc:  # noqa: BLE001 - re-raised below after bookkeeping
                error = exc
        else:
            error = _run_pool(tasks, concurrency, record, blinder, abort)
    finally:
        record.close()
    if error is not None:
        result.status = "interrupted" if isinstance(error, (KeyboardInterrupt, Interrupted)) else "failed"
        result.message = f"{type(error).__name__}: {error}"
        error.run_result = result  # type: ignore[attr-defined]
        raise error


def _run_pool(
    tasks: list[tuple[Trajectory, Judge]], concurrency: int, record, blinder: Blinder, abort: Callable[[], None] | None
) -> BaseException | None:
    it: Iterable[tuple[Trajectory, Judge]] = iter(tasks)
    error: BaseException | None = None
    pending: dict[Future, tuple[Trajectory, Judge]] = {}
    with ThreadPoolExecutor(max_workers=concurrency) as ex:

        def fill() -> None:
            while error is None and len(pending) < concurrency:
                try:
                    t, j = next(it)  # type: ignore[call-overload]
                except StopIteration:
                    return
                pending[ex.submit(judge_task, j, t, blinder)] = (t, j)

        try:
            fill()
            while pending:
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for f in finished:
                    t, j = pending.pop(f)
                    try:
                        record(f.result())
                    except BaseException as exc:  # noqa: BLE001
                        error = error or exc
                fill()
        except BaseException as exc:  # noqa: BLE001 - Ctrl-C while waiting: cut off what is in flight
            error = error or exc
            if abort is not None:
                abort()
            _drain(pending, record)
    return error


def _drain(pending: dict[Future, tuple[Trajectory, Judge]], record) -> None:
    """Record what each task still in flight ends with, once cut off; their own errors are not the run's."""
    for f in list(pending):
        pending.pop(f)
        with suppress(BaseException):
            record(f.result())
