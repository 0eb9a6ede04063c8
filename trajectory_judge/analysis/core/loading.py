"""Loading a data directory for analysis: trajectories and verdicts, validated together.

:func:`load_data` verifies every file the directory's checksum manifest pins when there is one
(not only the two it reads: a folder it trusts is trusted whole), reads
``trajectories.jsonl`` and ``verdicts.jsonl`` and checks that every verdict names a known
trajectory once per judge. :func:`judge_order` fixes the order judges appear in every table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from trajectory_judge.analysis.core.slim import Shared, TrajectoryRecord, VerdictRecord
from trajectory_judge.models import (
    DataError,
    JudgeSpec,
    Trajectory,
    Verdict,
    check_judge_id,
    check_verdict_step,
    folder_types,
    load_trajectories,
    load_verdicts,
    read_text,
    stream_trajectories,
    stream_verdicts,
    type_order,
)
from trajectory_judge.provenance.manifest import verify_folder, verify_manifest

_FAMILY_RANK = {"programmatic": 0, "outcome": 1, "step": 2, "reply": 3, "selfcons": 4}


class Dataset(NamedTuple):
    """Trajectories and the verdicts on them."""

    trajectories: list[Trajectory]
    verdicts: list[Verdict]


# --- loading and validation ------------------------------------------------------------------
T = TypeVar("T", Trajectory, TrajectoryRecord)
V = TypeVar("V", Verdict, VerdictRecord)


def load_data(directory: str | Path) -> Dataset:
    """Load ``trajectories.jsonl`` and ``verdicts.jsonl`` from ``directory`` and validate them.

    Every trajectory must carry a label; every verdict must name a known trajectory, be the
    only one for its (trajectory, judge), have a judge id that follows the grammar
    (:func:`~trajectory_judge.models.check_judge_id`) and name only a step that trajectory has; there must be
    at least one verdict. Violations raise :class:`DataError` with file and line.
    """
    trajectories, verdicts = _load(directory, lambda t: t, lambda v: v)
    return Dataset(trajectories, verdicts)


class SlimDataset(NamedTuple):
    """Trajectories and verdicts as the report reads them (:mod:`trajectory_judge.analysis.core.slim`)."""

    trajectories: list[TrajectoryRecord]
    verdicts: list[VerdictRecord]


def load_slim_data(directory: str | Path) -> SlimDataset:
    """:func:`load_data` for the report: the same reading, checks and messages, each line's object kept as a slim
    record (no steps' text, no rationales), so that memory stays small at many trajectories."""
    shared = Shared()  # one object per distinct step list, label and confidence of this folder
    trajectories, verdicts = _load(
        directory, lambda t: TrajectoryRecord.of(t, shared), lambda v: VerdictRecord.of(v, shared)
    )
    return SlimDataset(trajectories, verdicts)


def _load(
    directory: str | Path, keep_trajectory: Callable[[Trajectory], T], keep_verdict: Callable[[Verdict], V]
) -> tuple[list[T], list[V]]:
    """Both files read a line at a time (:func:`~trajectory_judge.models.stream_trajectories`), each line's object
    checked and handed to ``keep_*``, whose results are kept."""
    directory = Path(directory)
    tpath, vpath = directory / "trajectories.jsonl", directory / "verdicts.jsonl"
    verify_folder(directory, ("trajectories.jsonl", "verdicts.jsonl"))
    trajectories: list[T] = []
    by_id: dict[str, T] = {}
    for lineno, t in stream_trajectories(tpath):
        if t.label is None:
            raise DataError(f"{tpath}:{lineno}: trajectory {t.trajectory_id!r} has no label")
        trajectories.append(kept := keep_trajectory(t))
        by_id[kept.trajectory_id] = kept
    verdicts: list[V] = []
    stream = stream_verdicts(vpath, by_id)
    while True:
        try:
            item = next(stream, None)
        except DataError as exc:
            raise DataError(f"{exc}{forget_hint(directory, vpath, str(exc))}") from None
        if item is None:
            break
        lineno, v = item
        try:
            check_judge_id(v.judge_id)
            check_verdict_step(v, by_id[v.trajectory_id])
        except ValueError as exc:
            msg = f"{vpath}:{lineno}: invalid Verdict: {exc}"
            raise DataError(f"{msg}{forget_hint(directory, vpath, msg)}") from None
        verdicts.append(keep_verdict(v))
    if not verdicts:
        raise DataError(f"{vpath}: no verdicts to report on (the file is empty)")
    return trajectories, verdicts


def forget_hint(directory: Path, vpath: Path, message: str) -> str:
    """How to remove the verdict line a ``PATH:LINE: ...`` message names (``forget``), or "" if it names none."""
    import json
    import re
    import shlex

    m = re.match(re.escape(str(vpath)) + r":(\d+):", message)
    if m is None:
        return ""
    lines = vpath.read_text(encoding="utf-8").split("\n")
    try:
        obj = json.loads(lines[int(m.group(1)) - 1])
        jid, tid = obj["judge_id"], obj["trajectory_id"]
        if not (isinstance(jid, str) and isinstance(tid, str)):
            raise TypeError
    except (ValueError, KeyError, TypeError, IndexError):
        return "; fix or delete that line"
    q = shlex.quote
    return (
        f"; remove it (kept in forgotten.jsonl) with `trajectory-judge forget --data {q(str(directory))} "
        f"--judge {q(jid)} --trajectories {q(tid)}`, then rerun that judge"
    )


PAPER_ORDER = "order.txt"
"""File of a paper data directory listing the release's trajectory ids in the release's file order."""


def load_paper_data(paper_dir: str | Path, trajectories_dir: str | Path) -> Dataset:
    """The paper's data set: the release's verdicts (``paper_dir``) on our trajectories, in the release's order.

    The release's verdicts are scored against ``trajectories_dir/trajectories.jsonl`` (the same 400
    ids with the same labels). The stratified bootstrap draws trajectories in file order, so ours
    are put in the order of the release's trajectories file (``paper_dir/order.txt``); only then do
    the paper's intervals come out exactly. Both directories' manifests are verified first. Raises
    :class:`DataError` when the order and our trajectories hold different ids, or a verdict names
    an unknown trajectory.
    """
    paper_dir, trajectories_dir = Path(paper_dir), Path(trajectories_dir)
    verify_manifest(trajectories_dir, ("trajectories.jsonl",))
    verify_folder(paper_dir, ("verdicts.jsonl", PAPER_ORDER))
    tpath, opath = trajectories_dir / "trajectories.jsonl", paper_dir / PAPER_ORDER
    by_id = {t.trajectory_id: t for t in load_trajectories(tpath)}
    order = [ln.strip() for ln in read_text(opath).split("\n") if ln.strip()]
    if len(set(order)) != len(order) or set(order) != set(by_id):
        extra, missing = sorted(set(order) - set(by_id)), sorted(set(by_id) - set(order))
        raise DataError(
            f"{opath}: lists other trajectories than {tpath} ({len(extra)} not ours, {len(missing)} of ours missing, "
            f"{len(order) - len(set(order))} repeated)"
        )
    trajectories = [by_id[i] for i in order]
    verdicts = load_verdicts(paper_dir / "verdicts.jsonl", order)
    _validate(trajectories, verdicts)
    return Dataset(trajectories, verdicts)


def _validate(trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> None:
    ids = set()
    for i, t in enumerate(trajectories, 1):
        if t.label is None:
            raise DataError(f"trajectory {i} ({t.trajectory_id!r}) has no label")
        if t.trajectory_id in ids:
            raise DataError(f"trajectory {i}: duplicate trajectory_id {t.trajectory_id!r}")
        ids.add(t.trajectory_id)
    by_id = {t.trajectory_id: t for t in trajectories}
    seen: set[tuple[str, str]] = set()
    for i, v in enumerate(verdicts, 1):
        try:
            check_judge_id(v.judge_id)
            if v.trajectory_id not in ids:
                raise ValueError(f"verdict for unknown trajectory {v.trajectory_id!r}")
            check_verdict_step(v, by_id[v.trajectory_id])
        except ValueError as exc:
            raise DataError(f"verdict {i}: {exc}") from None
        key = (v.trajectory_id, v.judge_id)
        if key in seen:
            raise DataError(f"verdict {i}: duplicate verdict for trajectory {v.trajectory_id!r}, judge {v.judge_id!r}")
        seen.add(key)
    if not verdicts:
        raise DataError("no verdicts to report on")


def judge_order(verdicts: Sequence[Verdict]) -> list[str]:
    """Judge ids by family rank, then first appearance."""
    first = list(dict.fromkeys(v.judge_id for v in verdicts))
    return sorted(first, key=lambda j: (_rank(JudgeSpec.parse(j)), first.index(j)))


def _rank(spec: JudgeSpec) -> int:
    """A judge's family in report order; ensemble members and Python judges after every other judge."""
    return len(_FAMILY_RANK) if spec.is_member else _FAMILY_RANK.get(spec.family, len(_FAMILY_RANK))


def unparseable_counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """Per judge id (in :func:`judge_order`), the verdicts stored from a response that did not parse.

    Such a verdict votes clean at the lowest confidence (it is never dropped); an ensemble's
    counts when any of its members' responses did not parse. :func:`retry_hint` says how each
    kind of judge is asked again.
    """
    counts = dict.fromkeys(judge_order(verdicts), 0)
    for v in verdicts:
        counts[v.judge_id] += v.unparseable
    return counts


RETRY_HINTS: dict[str, str] = {
    "run": "`trajectory-judge run --retry-unparseable` judges them again",
    "python": "`run_judges(..., retry_unparseable=True)` judges them again",
    "inspect": "`trajectory-judge forget` sets them aside, then a new `inspect eval` and `import-inspect` judge them again",
}
"""How a judge's unparseable verdicts are judged again, by the path that made them: ``run`` (an LLM
judge of ``trajectory-judge run``), ``python`` (a judge in Python, through ``run_judges``) or
``inspect`` (an inspect_ai task imported by ``import-inspect``, which ``run`` cannot judge again)."""


def judge_sources(verdicts: Sequence[Verdict], records: Sequence[dict] = ()) -> dict[str, str]:
    """Per judge id, the path that made its verdicts (a key of :data:`RETRY_HINTS`).

    A Python (or rules) judge is ``python``; an LLM judge is ``inspect`` when every run record
    naming it is an import of an inspect_ai log, else ``run``.
    """
    backends: dict[str, set[str]] = {}
    for rec in records:
        for j in {*(rec.get("judges") or []), *(rec.get("per_judge") or {})}:
            backends.setdefault(j, set()).add(str(rec.get("backend")))
    out = {}
    for j in judge_order(verdicts):
        if JudgeSpec.parse(j).kind in ("python", "rules"):
            out[j] = "python"
        else:
            out[j] = "inspect" if backends.get(j) == {"inspect_ai"} else "run"
    return out


def retry_hint(source: str) -> str:
    """How the unparseable verdicts of a judge made by ``source`` (:func:`judge_sources`) are judged again."""
    return RETRY_HINTS[source]


def unparseable_sentence(verdicts: Sequence[Verdict], records: Sequence[dict] = ()) -> str:
    """The unparseable verdicts of every judge in one sentence (the report's line about them), with the
    way to judge them again that works for each judge (``records``: the folder's run records)."""
    counts = unparseable_counts(verdicts)
    totals = Counter(v.judge_id for v in verdicts)
    if not any(counts.values()):
        return "No judge's answers failed to parse" if len(counts) > 1 else "The judge's answers all parsed"
    sources = judge_sources(verdicts, records)
    by_source: dict[str, list[str]] = {}
    for j, n in counts.items():
        if n:
            by_source.setdefault(sources[j], []).append(f"{j} {n} of {totals[j]}")
    head = "Answers that did not parse (stored as clean at the lowest confidence): "
    if len(by_source) == 1:
        ((src, found),) = by_source.items()
        return head + ", ".join(found) + f"; {retry_hint(src)}"
    return head + "; ".join(f"{', '.join(found)} ({retry_hint(src)})" for src, found in by_source.items())


# --- what a folder cannot show -------------------------------------------------------------------
def absent_parts(trajectories: Sequence[Trajectory]) -> list[str]:
    """What the report cannot compute on these trajectories because their construction lacks it, one phrase each.

    The testbed builds every fault from a clean run of the same task (its *clean parent*, same
    ``instance_id``), in both outcome strata and all six failure types; a folder of one's own
    trajectories may have none of that. Each phrase names the measurement and why it is absent;
    empty for a folder that has everything (the testbed's own).
    """
    labels = [t.label for t in trajectories if t.label is not None]
    faults = [lab for lab in labels if lab.faulty]
    clean_tasks = {t.instance_id for t in trajectories if t.label is not None and not t.label.faulty}
    out: list[str] = []
    if not any(lab.faulty for lab in labels):
        out.append("recall and every fault measurement (no trajectory is labelled faulty)")
    if not any(not lab.faulty for lab in labels):
        out.append("the false-alarm rate (no clean trajectory)")
    if faults and not any(t.instance_id in clean_tasks for t in trajectories if t.label is not None and t.label.faulty):
        out.append("paired discrimination (no fault shares its instance_id with a clean trajectory, its clean parent)")
    if faults and not any(lab.outcome_correct for lab in faults):
        out.append("silent recall and the loud-minus-silent gap (no fault leaves the outcome correct)")
    if faults and all(lab.outcome_correct for lab in faults):
        out.append("loud recall and the loud-minus-silent gap (every fault leaves the outcome correct)")
    typed = {lab.failure_type for lab in faults if lab.failure_type is not None}
    missing = [t for t in folder_types(trajectories) if t not in typed]
    if faults and missing:
        out.append(
            f"recall of {', '.join(missing)} (no fault of {'that type' if len(missing) == 1 else 'these types'})"
        )
    untyped = sum(lab.failure_type is None for lab in faults)
    if untyped:
        out.append(
            f"the step and type of {untyped} fault{'s' if untyped != 1 else ''} labelled by outcome only "
            "(they count for detection, not for localisation or typing)"
        )
    return out


def absent_sentence(trajectories: Sequence[Trajectory]) -> str | None:
    """:func:`absent_parts` as the one sentence the report prints, or None when nothing is absent."""
    parts = absent_parts(trajectories)
    if not parts:
        return None
    return "Not measurable on these trajectories: " + "; ".join(parts) + "."


def present_types(trajectories: Sequence[Trajectory]) -> tuple[str, ...]:
    """The failure types some trajectory is labelled with, in table order (:func:`type_order`; all six on the
    testbed)."""
    return type_order(t.label.failure_type for t in trajectories if t.label is not None and t.label.faulty)
