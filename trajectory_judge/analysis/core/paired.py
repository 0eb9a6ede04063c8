"""Paired discrimination (camera-ready) and detection per invented sentence.

Paired discrimination of a judge on a set of faults is its flag rate on the faults minus its
flag rate on their clean parents (the clean trajectory with the same ``instance_id``), over the
faults whose parent the judge also judged. A judge whose input is identical for a fault and its
parent can only score 0 there: what looks like recall is its flag rate on clean runs.

Whether a fault *reaches the judge's input* is decided by rendering the judge's view of the
fault and of its parent and comparing the two (by digest: :func:`~trajectory_judge.analysis.core.slim.view_key`,
which a slim record keeps from loading); no list of fault types is assumed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trajectory_judge.analysis.core.slim import view_key
from trajectory_judge.models import TESTBED_FAILURE_TYPES, JudgeSpec, Trajectory, Verdict, folder_types, type_order

SPLIT_GROUPS: tuple[str, ...] = ("all", "loud", "silent", "reaches_input", "hidden_from_input")
"""The groups paired discrimination is reported over before the failure types, in report order."""

PAIRED_GROUPS: tuple[str, ...] = (*SPLIT_GROUPS, *TESTBED_FAILURE_TYPES)
"""The groups paired discrimination is reported over on a folder of the testbed's types; on another folder
the types are its own (:func:`~trajectory_judge.models.folder_types`)."""

REPLY_GROUPS: tuple[str, ...] = ("reply_unchanged", "reply_changed")
"""Extra groups by whether the outcome view (goal and final answer) equals the parent's, whatever
the judge's own view."""


@dataclass(frozen=True)
class PairedValue:
    """Paired discrimination over one group of faults."""

    value: float | None
    """Mean of flag(fault) - flag(parent); ``None`` when the group is empty."""
    n: int
    """Faults in the group that have a judged clean parent."""
    fault_rate: float | None = None
    """Flag rate on those faults; ``None`` when the group is empty."""
    parent_rate: float | None = None
    """Flag rate on their clean parents (one per fault): the anchor the group's recall is read
    against, since a judge that cannot tell a fault from its parent reaches this recall by flagging
    clean runs of the same instances; ``None`` when the group is empty."""
    disagree: int = 0
    """Faults whose verdict differs from their parent's."""


def clean_parents(trajectories: Sequence[Trajectory]) -> dict[str, Trajectory]:
    """instance_id -> its clean trajectory (the first one, if several)."""
    out: dict[str, Trajectory] = {}
    for t in trajectories:
        if t.label is not None and not t.label.faulty:
            out.setdefault(t.instance_id, t)
    return out


def reaches_input(judge_id: str, fault: Trajectory, parent: Trajectory) -> bool:
    """True when the judge's rendered view of the fault differs from that of its parent."""
    view = JudgeSpec.parse(judge_id).rendered_view
    return view_key(view, fault) != view_key(view, parent)


def unchanged_types(trajectories: Sequence[Trajectory], view: str) -> list[str]:
    """Failure types none of whose faults reaches ``view``: every fault with a clean parent renders as that parent."""
    parents = clean_parents(trajectories)
    same: dict[str, bool] = {}
    for t in trajectories:
        parent = parents.get(t.instance_id)
        if t.label is None or not t.label.faulty or parent is None:
            continue
        ft = t.label.failure_type
        if ft is not None:
            same[ft] = same.get(ft, True) and view_key(view, t) == view_key(view, parent)
    return list(type_order(t for t, unchanged in same.items() if unchanged))


def paired_discrimination(
    judge_id: str,
    trajectories: Sequence[Trajectory],
    verdicts: Mapping[str, Verdict],
    *,
    reached: dict[tuple[str, str], bool] | None = None,
    reply_groups: bool = False,
) -> dict[str, PairedValue]:
    """Paired discrimination by group (:data:`SPLIT_GROUPS`, then the folder's failure types, and
    :data:`REPLY_GROUPS` with ``reply_groups``); ``verdicts`` keyed by trajectory id.

    ``reached`` caches :func:`reaches_input` by (view, fault id) across calls for judges sharing a view.
    """
    parents = clean_parents(trajectories)
    reached = {} if reached is None else reached
    view = JudgeSpec.parse(judge_id).rendered_view
    rendered: dict[tuple[str, str], bytes] = {}  # a parent's view, rendered once for all its faults

    def parent_view(v: str, parent: Trajectory) -> bytes:
        key = (v, parent.trajectory_id)
        if key not in rendered:
            rendered[key] = view_key(v, parent)
        return rendered[key]

    paired_groups = (*SPLIT_GROUPS, *folder_types(trajectories))
    groups_out = (*paired_groups, *REPLY_GROUPS) if reply_groups else paired_groups
    pairs: dict[str, list[tuple[int, int]]] = {g: [] for g in groups_out}
    for t in trajectories:
        lab = t.label
        if lab is None or not lab.faulty or t.trajectory_id not in verdicts:
            continue
        parent = parents.get(t.instance_id)
        if parent is None or parent.trajectory_id not in verdicts:
            continue
        pair = (int(verdicts[t.trajectory_id].faulty), int(verdicts[parent.trajectory_id].faulty))
        groups = ["all", "silent" if lab.outcome_correct else "loud"]
        tests = [(view, "reaches_input", "hidden_from_input")] + (
            [("outcome", "reply_changed", "reply_unchanged")] if reply_groups else []
        )
        for v, yes, no in tests:
            key = (v, t.trajectory_id)
            if key not in reached:
                reached[key] = view_key(v, t) != parent_view(v, parent)
            groups.append(yes if reached[key] else no)
        if lab.failure_type is not None:
            groups.append(lab.failure_type)
        for g in groups:
            pairs[g].append(pair)
    return {g: _paired_value(ps) for g, ps in pairs.items()}


def _paired_value(pairs: Sequence[tuple[int, int]]) -> PairedValue:
    """Paired discrimination, rates and disagreements of (flag(fault), flag(parent)) pairs."""
    if not pairs:
        return PairedValue(None, 0)
    n, flagged, parents = len(pairs), sum(a for a, _ in pairs), sum(b for _, b in pairs)
    return PairedValue((flagged - parents) / n, n, flagged / n, parents / n, sum(a != b for a, b in pairs))


def type_anchor(paired: Mapping[str, PairedValue], group: str) -> float | None:
    """The anchor a judge's recall on ``group`` (a failure type, or any paired group) is read against:
    its flag rate on the clean parents of that group's faults (``paired`` is a judge's
    :func:`paired_discrimination`); ``None`` when no fault of the group has a judged parent."""
    return paired[group].parent_rate if group in paired else None


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def invented_sentence(fault: Trajectory, parent: Trajectory | None) -> str:
    """The text an ``unsupported_claim`` fault appended to its parent's final answer.

    With a parent whose final answer is a prefix of the fault's, the suffix; otherwise the
    last sentence of the fault's final answer.
    """
    answer = fault.final_answer.strip()
    if parent is not None:
        base = parent.final_answer.strip()
        if answer.startswith(base) and len(answer) > len(base):
            return answer[len(base) :].strip()
    parts = [p for p in _SENTENCE_END.split(answer) if p]
    return parts[-1].strip() if parts else ""


def claim_detection(trajectories: Sequence[Trajectory], verdicts: Mapping[str, Verdict]) -> dict[str, tuple[int, int]]:
    """Invented sentence -> (flagged, judged) over the judged ``unsupported_claim`` faults, sorted by sentence."""
    parents = clean_parents(trajectories)
    out: dict[str, list[int]] = {}
    for t in trajectories:
        lab = t.label
        if lab is None or lab.failure_type != "unsupported_claim" or t.trajectory_id not in verdicts:
            continue
        sentence = invented_sentence(t, parents.get(t.instance_id))
        counts = out.setdefault(sentence, [0, 0])
        counts[0] += int(verdicts[t.trajectory_id].faulty)
        counts[1] += 1
    return {s: (out[s][0], out[s][1]) for s in sorted(out)}
