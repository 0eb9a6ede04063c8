"""Self-consistency: the step judge sampled k=3 times at temperature 0.7, strict-majority vote.

Aggregation rule:

- ``faulty`` is the strict majority of the k member verdicts (2 of 3);
- ``confidence`` is the vote share of that majority (at k=3 only 2/3 or 1 can occur);
- ``failure_type`` and ``failure_step`` are taken from the majority members only (the members
  that voted faulty when the majority is faulty; nothing when it is clean): the most frequent
  non-missing value among them, ties broken by member order (seed 7 before 8 before 9);
- latency and tokens are the sums over members (the ensemble costs k passes);
- a member whose response did not parse votes clean (as any judge's would) and its error is
  kept in the ensemble verdict's ``error``.

Every member is a verdict in its own right, with its own judge id naming view, temperature and
seed (:meth:`~trajectory_judge.models.JudgeSpec.member`, e.g. ``step@T0.7/seed7:qwen2.5-coder:1.5b``). The runner keeps them in
``DATA/members.jsonl``, so the ensemble can be re-derived from its members and each member can be
scored as a single-pass sampled judge.

With a prompt of one's own (``template``, :mod:`~trajectory_judge.judges.custom`), the members sample
that template over the step view instead of the built-in step prompt, under the step view's schema and
parser; the ensemble is ``selfconsK+NAME:MODEL`` and its members ``step+NAME@T0.7/seed7:MODEL``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

from trajectory_judge.backends.clients import ModelClient
from trajectory_judge.judges.custom import PromptTemplate
from trajectory_judge.judges.llm import PromptedJudge, completion_verdict
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.models import ENSEMBLE_VIEW, Fingerprint, JudgeSpec, Trajectory, Verdict

K = 3


TEMPERATURE = 0.7


SEEDS: tuple[int, ...] = (7, 8, 9)


T = TypeVar("T")


def check_seeds(seeds: Sequence[int], what: str = "seeds") -> tuple[int, ...]:
    """``seeds`` as a tuple if they can be an ensemble's (one member each: three or more, an odd number for a
    strict majority, none twice), else a ValueError in one line naming ``what``."""
    out = tuple(int(s) for s in seeds)
    if len(out) < 3 or len(out) % 2 == 0:
        raise ValueError(
            f"{what} {','.join(map(str, out)) or '(none)'}: an ensemble needs an odd number of seeds, 3 or more "
            f"(one member each, so that a strict majority always exists), got {len(out)}"
        )
    if len(set(out)) != len(out):
        raise ValueError(f"{what} {','.join(map(str, out))}: a seed repeats, so two members would be one")
    return out


def _mode(values: Sequence[T | None]) -> T | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    counts = Counter(present)
    top = max(counts.values())
    return next(v for v in present if counts[v] == top)  # first in member order among the tied


def aggregate(members: Sequence[Verdict], *, trajectory_id: str, judge_id: str) -> Verdict:
    """Strict-majority aggregate of member verdicts (see the module docstring)."""
    k = len(members)
    n_faulty = sum(m.faulty for m in members)
    faulty = n_faulty * 2 > k
    majority = [m for m in members if m.faulty == faulty]
    share = len(majority) / k
    errors = [f"member {i}: {m.error}" for i, m in enumerate(members) if m.error]
    rationale = f"{n_faulty}/{k} members voted faulty. " + ((majority[0].rationale or "") if majority else "")
    return Verdict(
        trajectory_id=trajectory_id,
        judge_id=judge_id,
        faulty=faulty,
        failure_step=_mode([m.failure_step for m in majority]) if faulty else None,
        failure_type=_mode([m.failure_type for m in majority]) if faulty else None,
        confidence=share,
        rationale=rationale,
        latency_s=sum(m.latency_s for m in members),
        prompt_tokens=sum(m.prompt_tokens for m in members),
        completion_tokens=sum(m.completion_tokens for m in members),
        error="; ".join(errors) or None,
    )


class SelfConsistencyJudge(PromptedJudge):
    """The step judge run ``len(seeds)`` times at ``temperature``; id ``f"selfcons{k}:{model_name}"``.

    With ``template`` (a prompt of one's own) each member sends the template over the step view; the id is
    then ``f"selfcons{k}+{template.name}:{model_name}"`` and the members' ``step+NAME@T.../seed...``.
    """

    view = ENSEMBLE_VIEW
    """The view every member reads."""

    def __init__(
        self,
        client: ModelClient,
        model_name: str,
        *,
        temperature: float = TEMPERATURE,
        seeds: Sequence[int] = SEEDS,
        template: PromptTemplate | None = None,
    ) -> None:
        if len(seeds) % 2 == 0:
            raise ValueError(f"need an odd number of members for a strict majority, got {len(seeds)}")
        self.client = client
        self.model_name = model_name
        self.temperature = temperature
        self.seeds = tuple(seeds)
        self.template = template
        name = template.name if template is not None else None
        self.judge_id = JudgeSpec.self_consistency(len(self.seeds), model_name, name).judge_id
        self.member_ids = tuple(
            JudgeSpec.member(self.view, temperature, s, model_name, name).judge_id for s in self.seeds
        )
        self.schema = response_schema(self.view)

    def fingerprint(self) -> Fingerprint:
        """What this ensemble is beyond its id: the model sent, the prompt's (the template's, or the step
        prompt's) and schema's digests, the members' temperature and seeds, the output budget."""
        return self.prompted_fingerprint(seeds=self.seeds)

    def judge_members(self, traj: Trajectory) -> list[Verdict]:
        """k samples of the prompt, one per seed, each a verdict under its member id."""
        prompt = self.prompt(traj)
        return [
            completion_verdict(
                self.client.complete(prompt, self.schema, temperature=self.temperature, seed=seed),
                trajectory_id=traj.trajectory_id,
                judge_id=mid,
                traj=traj,
            )
            for seed, mid in zip(self.seeds, self.member_ids)
        ]

    def aggregate(self, members: Sequence[Verdict]) -> Verdict:
        """The ensemble verdict of these members (their trajectory, this judge's id)."""
        return aggregate(members, trajectory_id=members[0].trajectory_id, judge_id=self.judge_id)

    def judge(self, traj: Trajectory) -> Verdict:
        """k samples of the step prompt, one per seed, aggregated by strict majority."""
        return self.aggregate(self.judge_members(traj))
