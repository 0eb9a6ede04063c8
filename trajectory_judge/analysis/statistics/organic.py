"""The organic episodes (the paper's §8): a language model drives the support-desk agent, and the checker and the
outcome check label each episode. Loading (:func:`load_episodes`), the counts the paper prints
(:class:`EpisodeCounts`, :func:`organic_counts`), and the tables of the organic chapter: per instance stratum,
first violation, tool, ending, repeated call and outcome field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from trajectory_judge.analysis.paper import published as P
from trajectory_judge.models import OUTCOME_ONLY, parse_jsonl, type_order
from trajectory_judge.testbed.env import STRATA, TOOLS


def load_episodes(directory: str | Path) -> list | None:
    """The episodes in ``DIR/organic.jsonl`` (manifest-verified), or ``None`` when there is none.

    A torn last line (a run writing right now) is ignored.
    """
    from trajectory_judge.models import Episode
    from trajectory_judge.provenance.manifest import verify_manifest
    from trajectory_judge.testbed.agent import ORGANIC

    path = Path(directory) / ORGANIC
    if not path.exists():
        return None
    verify_manifest(directory, (ORGANIC,))
    return parse_jsonl(path, Episode, allow_torn_tail=True)


@dataclass(frozen=True)
class EpisodeCounts:
    """What a set of organic episodes does, counted (the measures of the paper's §8 and Appendix G)."""

    episodes: int
    """Episodes."""
    flagged: int
    """Episodes the checker flagged or that end in a wrong customer-visible outcome."""
    loud: int
    """Episodes with a wrong outcome."""
    silent: int
    """Faulty episodes whose outcome is correct."""
    premature_stop: int
    """Episodes whose first violation is a premature stop."""
    escalate_calls: int
    """Calls to ``escalate`` across the episodes."""
    with_check_eligibility: int
    """Episodes that call ``check_eligibility`` at least once."""
    failed_tool_calls: int
    """Tool calls whose observation is not ok."""
    empty_final_answers: int
    """Episodes whose final answer is empty."""

    def to_frame(self) -> pd.DataFrame:
        """One row per measure (in words, the index ``measure``), one column ``count``."""
        return pd.DataFrame(
            {"count": [getattr(self, f) for f in MEASURES]}, index=pd.Index(list(MEASURES.values()), name="measure")
        )


MEASURES: dict[str, str] = {
    "episodes": "episodes",
    "flagged": "flagged or wrong outcome",
    "loud": "wrong outcome (loud)",
    "silent": "faulty, outcome correct (silent)",
    "premature_stop": "premature_stop",
    "escalate_calls": "escalate calls",
    "with_check_eligibility": "episodes calling check_eligibility",
    "failed_tool_calls": "failed tool calls",
    "empty_final_answers": "empty final answers",
}
"""The fields of :class:`EpisodeCounts` and the measure each names in the organic chapter's table."""

_PUBLISHED_KEYS: dict[str, str] = {f: f"organic_{f}" for f in MEASURES}
_PUBLISHED_KEYS["empty_final_answers"] = "organic_empty_final_answer"


def episode_counts(episodes: Sequence) -> EpisodeCounts:
    """The counts of :class:`EpisodeCounts` over ``episodes``."""
    labels = [e.trajectory.label for e in episodes]
    steps = [s for e in episodes for s in e.trajectory.steps]
    return EpisodeCounts(
        episodes=len(episodes),
        flagged=sum(lb.faulty for lb in labels),
        loud=sum(not lb.outcome_correct for lb in labels),
        silent=sum(lb.faulty and lb.outcome_correct for lb in labels),
        premature_stop=sum(lb.failure_type == "premature_stop" for lb in labels),
        escalate_calls=sum(s.call.tool == "escalate" for s in steps),
        with_check_eligibility=sum(
            any(s.call.tool == "check_eligibility" for s in e.trajectory.steps) for e in episodes
        ),
        failed_tool_calls=sum(not s.observation.ok for s in steps),
        empty_final_answers=sum(not e.trajectory.final_answer.strip() for e in episodes),
    )


def published_counts() -> EpisodeCounts:
    """The paper's counts for its agent (:data:`~trajectory_judge.analysis.paper.published.PUBLISHED_MODEL`), as quoted in
    :data:`~trajectory_judge.analysis.paper.published.PUBLISHED_COUNTS`."""
    return EpisodeCounts(**{f: int(P.PUBLISHED_COUNTS[k].value) for f, k in _PUBLISHED_KEYS.items()})


@dataclass(frozen=True)
class OrganicCounts:
    """The organic episodes counted per agent model of ours, beside the paper's published counts."""

    ours: Mapping[str, EpisodeCounts]
    """Agent model -> the counts of its episodes (sorted by model; empty with no episode)."""
    published: EpisodeCounts
    """The paper's counts (its one agent model)."""

    def to_frame(self) -> pd.DataFrame:
        """One column per agent model of ours (``ours (MODEL)``), then ``published (MODEL)``; one row per measure."""
        cols = {f"ours ({m})": c.to_frame()["count"] for m, c in self.ours.items()}
        cols[f"published ({P.PUBLISHED_MODEL})"] = self.published.to_frame()["count"]
        return pd.DataFrame(cols).astype("Int64").rename_axis("measure")


def organic_counts(episodes: Sequence | None) -> OrganicCounts:
    """:class:`EpisodeCounts` per agent model of ours and the published ones."""
    eps = list(episodes or ())
    ours = {m: episode_counts([e for e in eps if e.agent_model == m]) for m in sorted({e.agent_model for e in eps})}
    return OrganicCounts(ours, published_counts())


@dataclass(frozen=True)
class Table:
    """Rows of one kind (frozen dataclasses) with the frame the organic chapter prints them as."""

    rows: tuple[Any, ...]
    """The records, one per row, in the table's order."""
    index: str
    """The field of a row that names it (the frame's index)."""
    names: Mapping[str, str]
    """Field -> the column (or index) name the frame gives it."""

    def to_frame(self) -> pd.DataFrame:
        """One row per record, indexed by :attr:`index`, columns renamed by :attr:`names`."""
        fields = [f for f in self.names if f != self.index]
        df = pd.DataFrame(
            [[getattr(r, f) for f in fields] for r in self.rows],
            columns=[self.names[f] for f in fields],
            index=pd.Index([getattr(r, self.index) for r in self.rows], name=self.names[self.index]),
        )
        return df

    def to_series(self) -> pd.Series:
        """A table of one value column as a series (``int64``), named by that column."""
        (col,) = [f for f in self.names if f != self.index]
        return pd.Series(
            {getattr(r, self.index): getattr(r, col) for r in self.rows}, dtype="int64", name=self.names[col]
        ).rename_axis(self.names[self.index])


@dataclass(frozen=True)
class StratumRow:
    """The organic episodes of one instance stratum."""

    stratum: str
    """The instance stratum."""
    episodes: int
    """Episodes on its instances."""
    faulty: int
    """Those the checker flagged or that end in a wrong outcome."""
    loud: int
    """Those with a wrong outcome."""
    silent: int
    """Faulty ones whose outcome is correct."""
    published: str
    """The paper's count of faulty episodes in that stratum (``3 of 10``), empty where it prints none."""


_PUBLISHED_STRATA = {"already_refunded": "organic_already_refunded", "wrong_customer": "organic_wrong_customer"}


def organic_by_stratum(episodes: Sequence) -> Table:
    """One :class:`StratumRow` per instance stratum that has episodes, in generator order, with the published counts."""
    pub = {
        s: f"{P.PUBLISHED_COUNTS[f'{k}_failed'].value} of {P.PUBLISHED_COUNTS[f'{k}_n'].value}"
        for s, k in _PUBLISHED_STRATA.items()
    }
    rows = []
    for s in STRATA:
        labs = [e.trajectory.label for e in episodes if e.stratum == s]
        if labs:
            rows.append(
                StratumRow(
                    s,
                    len(labs),
                    sum(lb.faulty for lb in labs),
                    sum(not lb.outcome_correct for lb in labs),
                    sum(lb.faulty and lb.outcome_correct for lb in labs),
                    pub.get(s, ""),
                )
            )
    names = {
        "stratum": "instance stratum",
        "episodes": "episodes",
        "faulty": "faulty",
        "loud": "loud",
        "silent": "silent",
        "published": f"published faulty ({P.PUBLISHED_MODEL})",
    }
    return Table(tuple(rows), "stratum", names)


@dataclass(frozen=True)
class Count:
    """One thing counted over the organic episodes."""

    what: str
    """What is counted (a failure type, a tool, an outcome field)."""
    count: int
    """How many."""


def organic_types(episodes: Sequence) -> Table:
    """Rule-visible failure type (the checker's first violation) -> faulty episodes; ``outcome only`` when no rule
    fired."""
    c = Counter(e.trajectory.label.failure_type or OUTCOME_ONLY for e in episodes if e.trajectory.label.faulty)
    order = [t for t in (*type_order(k for k in c if k != OUTCOME_ONLY), OUTCOME_ONLY) if t in c]
    return Table(tuple(Count(t, c[t]) for t in order), "what", {"what": "first violation", "count": "episodes"})


@dataclass(frozen=True)
class ToolRow:
    """How the organic episodes use one tool."""

    tool: str
    """The tool."""
    calls: int
    """Calls to it."""
    failed: int
    """Calls whose observation is not ok."""
    episodes_using: int
    """Episodes that call it at least once."""


def organic_tools(episodes: Sequence) -> Table:
    """One :class:`ToolRow` per tool, in the environment's order."""
    rows = []
    for tool in TOOLS:
        calls = [s for e in episodes for s in e.trajectory.steps if s.call.tool == tool]
        used = sum(any(s.call.tool == tool for s in e.trajectory.steps) for e in episodes)
        rows.append(ToolRow(tool, len(calls), sum(not s.observation.ok for s in calls), used))
    names = {"tool": "tool", "calls": "calls", "failed": "failed", "episodes_using": "episodes using it"}
    return Table(tuple(rows), "tool", names)


def longest_repeat(steps: Sequence) -> int:
    """The longest run of consecutive steps making the same call (tool and arguments); 1 means none."""
    best = run = 1 if steps else 0
    for prev, cur in zip(steps, steps[1:]):
        run = run + 1 if (cur.call.tool, cur.call.args) == (prev.call.tool, prev.call.args) else 1
        best = max(best, run)
    return best


@dataclass(frozen=True)
class EndingRow:
    """The organic episodes that ended one way."""

    ended_by: str
    """``replied``, ``max_steps`` or ``unparseable_action``."""
    episodes: int
    """Episodes that ended so."""
    repeating: int
    """Of those, episodes with at least two consecutive identical calls."""
    longest_repeat: int
    """The longest such run in any of them (0 with no episode)."""
    outcome_correct: int
    """Of those, episodes reaching the expected outcome."""
    mean_steps: float
    """Their mean number of steps (NaN with no episode)."""


def organic_endings(episodes: Sequence) -> Table:
    """How episodes ended (reply, step limit, unparseable action), with repeated calls and outcomes."""
    rows = []
    for stop in ("replied", "max_steps", "unparseable_action"):
        eps = [e for e in episodes if e.stop == stop]
        runs = [longest_repeat(e.trajectory.steps) for e in eps]
        rows.append(
            EndingRow(
                stop,
                len(eps),
                sum(r > 1 for r in runs),
                max(runs, default=0),
                sum(e.trajectory.label.outcome_correct for e in eps),
                sum(len(e.trajectory.steps) for e in eps) / len(eps) if eps else float("nan"),
            )
        )
    names = {
        "ended_by": "ended by",
        "episodes": "episodes",
        "repeating": "repeating a call",
        "longest_repeat": "longest repeat",
        "outcome_correct": "outcome correct",
        "mean_steps": "mean steps",
    }
    return Table(tuple(rows), "ended_by", names)


def repeated_calls(episodes: Sequence) -> Table:
    """Per tool, the steps that repeat the previous step's call verbatim (most repeated first)."""
    c = Counter(
        cur.call.tool
        for e in episodes
        for prev, cur in zip(e.trajectory.steps, e.trajectory.steps[1:])
        if (cur.call.tool, cur.call.args) == (prev.call.tool, prev.call.args)
    )
    return Table(tuple(Count(t, n) for t, n in c.most_common()), "what", {"what": "tool", "count": "repeated steps"})


def repeat_share(counts: Iterable[int]) -> float | None:
    """The share of all verbatim repeats that call the most repeated tool: the first of :func:`repeated_calls`'
    counts (most repeated first) over their sum; None with no repeat."""
    values = [int(c) for c in counts]
    total = sum(values)
    return values[0] / total if total else None


def outcome_gaps(episodes: Sequence) -> Table:
    """Per customer-visible outcome field (refund, escalation, reply), the episodes that get it wrong."""
    keys = sorted({k for e in episodes for k in e.expected})
    rows = tuple(Count(k, sum(e.outcome.get(k) != e.expected.get(k) for e in episodes)) for k in keys)
    return Table(rows, "what", {"what": "outcome field", "count": "episodes wrong"})
