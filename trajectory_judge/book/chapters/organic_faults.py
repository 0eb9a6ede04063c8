"""Helpers of the chapter "Organic episodes" (``notebooks/organic.md``): counts, strata,
first violations, tools, endings and repeated calls of the episodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from trajectory_judge.analysis import published as P
from trajectory_judge.models import FAILURE_TYPES, parse_jsonl
from trajectory_judge.provenance.computed import computes
from trajectory_judge.testbed.env import STRATA, TOOLS


# --- organic episodes -------------------------------------------------------------------------
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


def organic_status(episodes: Sequence | None, planned: int) -> str:
    """One sentence saying how many episodes there are, of how many planned, and by which model."""
    if episodes is None:
        return f"No organic episodes are in the data yet (organic.jsonl is absent; {planned} are planned)."
    models = sorted({e.agent_model for e in episodes})
    by = f" driven by {', '.join(models)}" if models else ""
    done = "all" if len(episodes) >= planned else "a partial run"
    return f"The data holds {len(episodes)} organic episodes{by}, {done} of the {planned} planned."


def _episode_row(eps: Sequence) -> dict[str, float]:
    labels = [e.trajectory.label for e in eps]
    steps = [s for e in eps for s in e.trajectory.steps]
    return {
        "episodes": len(eps),
        "flagged or wrong outcome": sum(lb.faulty for lb in labels),
        "wrong outcome (loud)": sum(not lb.outcome_correct for lb in labels),
        "faulty, outcome correct (silent)": sum(lb.faulty and lb.outcome_correct for lb in labels),
        "premature_stop": sum(lb.failure_type == "premature_stop" for lb in labels),
        "escalate calls": sum(s.call.tool == "escalate" for s in steps),
        "episodes calling check_eligibility": sum(
            any(s.call.tool == "check_eligibility" for s in e.trajectory.steps) for e in eps
        ),
        "failed tool calls": sum(not s.observation.ok for s in steps),
        "empty final answers": sum(not e.trajectory.final_answer.strip() for e in eps),
    }


_PUBLISHED_ORGANIC = {
    "episodes": "organic_episodes",
    "flagged or wrong outcome": "organic_flagged",
    "wrong outcome (loud)": "organic_loud",
    "faulty, outcome correct (silent)": "organic_silent",
    "premature_stop": "organic_premature_stop",
    "escalate calls": "organic_escalate_calls",
    "episodes calling check_eligibility": "organic_with_check_eligibility",
    "failed tool calls": "organic_failed_tool_calls",
    "empty final answers": "organic_empty_final_answer",
}


@computes
def organic_counts(episodes: Sequence | None) -> pd.DataFrame:
    """One column per agent model of ours, then the published (qwen2.5:14b) counts, one row per measure."""
    cols: dict[str, dict[str, float]] = {}
    for model in sorted({e.agent_model for e in episodes or ()}):
        cols[f"ours ({model})"] = _episode_row([e for e in episodes if e.agent_model == model])
    cols[f"published ({P.PUBLISHED_MODEL})"] = {k: P.PUBLISHED_COUNTS[v].value for k, v in _PUBLISHED_ORGANIC.items()}
    return pd.DataFrame(cols).astype("Int64").rename_axis("measure")


_PUBLISHED_STRATA = {"already_refunded": "organic_already_refunded", "wrong_customer": "organic_wrong_customer"}


@computes
def organic_by_stratum(episodes: Sequence) -> pd.DataFrame:
    """Instance stratum x (episodes, faulty, loud, silent), strata in generator order, with the published counts quoted."""
    rows = []
    for s in STRATA:
        eps = [e for e in episodes if e.stratum == s]
        labs = [e.trajectory.label for e in eps]
        rows.append(
            (
                s,
                len(eps),
                sum(lb.faulty for lb in labs),
                sum(not lb.outcome_correct for lb in labs),
                sum(lb.faulty and lb.outcome_correct for lb in labs),
            )
        )
    df = pd.DataFrame(rows, columns=["instance stratum", "episodes", "faulty", "loud", "silent"]).set_index(
        "instance stratum"
    )
    pub = {
        s: (P.PUBLISHED_COUNTS[f"{k}_failed"].value, P.PUBLISHED_COUNTS[f"{k}_n"].value)
        for s, k in _PUBLISHED_STRATA.items()
    }
    df[f"published faulty ({P.PUBLISHED_MODEL})"] = [
        f"{pub[s][0]} of {pub[s][1]}" if s in pub else "" for s in df.index
    ]
    return df[df["episodes"] > 0]


@computes
def organic_types(episodes: Sequence) -> pd.DataFrame:
    """Rule-visible failure type (the checker's first violation) -> episodes; ``outcome only`` when no rule fired."""
    c = Counter(e.trajectory.label.failure_type or "outcome only" for e in episodes if e.trajectory.label.faulty)
    order = [t for t in (*FAILURE_TYPES, "outcome only") if t in c]
    return pd.DataFrame({"episodes": [c[t] for t in order]}, index=pd.Index(order, name="first violation"))


@computes
def organic_tools(episodes: Sequence) -> pd.DataFrame:
    """Per tool: calls, failed calls, and episodes that call it at least once."""
    rows = []
    for tool in TOOLS:
        calls = [s for e in episodes for s in e.trajectory.steps if s.call.tool == tool]
        used = sum(any(s.call.tool == tool for s in e.trajectory.steps) for e in episodes)
        rows.append((tool, len(calls), sum(not s.observation.ok for s in calls), used))
    return pd.DataFrame(rows, columns=["tool", "calls", "failed", "episodes using it"]).set_index("tool")


def longest_repeat(steps: Sequence) -> int:
    """The longest run of consecutive steps making the same call (tool and arguments); 1 means none."""
    best = run = 1 if steps else 0
    for prev, cur in zip(steps, steps[1:]):
        run = run + 1 if (cur.call.tool, cur.call.args) == (prev.call.tool, prev.call.args) else 1
        best = max(best, run)
    return best


@computes
def organic_endings(episodes: Sequence) -> pd.DataFrame:
    """How episodes ended (reply, step limit, unparseable action), with repeated calls and outcomes.

    ``repeating a call`` counts episodes with at least two consecutive identical calls; ``longest
    repeat`` is the longest such run in any of them.
    """
    rows = []
    for stop in ("replied", "max_steps", "unparseable_action"):
        eps = [e for e in episodes if e.stop == stop]
        runs = [longest_repeat(e.trajectory.steps) for e in eps]
        rows.append(
            (
                stop,
                len(eps),
                sum(r > 1 for r in runs),
                max(runs, default=0),
                sum(e.trajectory.label.outcome_correct for e in eps),
                sum(len(e.trajectory.steps) for e in eps) / len(eps) if eps else float("nan"),
            )
        )
    cols = ["episodes", "repeating a call", "longest repeat", "outcome correct", "mean steps"]
    return pd.DataFrame([r[1:] for r in rows], columns=cols, index=pd.Index([r[0] for r in rows], name="ended by"))


@computes
def repeated_calls(episodes: Sequence) -> pd.Series:
    """Per tool, the steps that repeat the previous step's call verbatim (most repeated first)."""
    c = Counter(
        cur.call.tool
        for e in episodes
        for prev, cur in zip(e.trajectory.steps, e.trajectory.steps[1:])
        if (cur.call.tool, cur.call.args) == (prev.call.tool, prev.call.args)
    )
    return pd.Series(dict(c.most_common()), dtype="int64", name="repeated steps").rename_axis("tool")


@computes
def outcome_gaps(episodes: Sequence) -> pd.Series:
    """Per customer-visible outcome field (refund, escalation, reply), the episodes that get it wrong."""
    keys = sorted({k for e in episodes for k in e.expected})
    return pd.Series(
        {k: sum(e.outcome.get(k) != e.expected.get(k) for e in episodes) for k in keys},
        dtype="int64",
        name="episodes wrong",
    ).rename_axis("outcome field")


def repeat_sentence(repeats: pd.Series) -> str:
    """Which tool the verbatim repeats of :func:`repeated_calls` mostly call, as a sentence (no final stop)."""
    from trajectory_judge.book.render.style import format_number

    if not len(repeats):
        return "No episode repeats a call verbatim"
    share = format_number(float(repeats.iloc[0] / repeats.sum()), 2)
    return (
        f"Of all verbatim repeats, a share of {share} are calls to {repeats.index[0]}, made again instead of "
        "moving on to the closing reply"
    )


def gap_sentence(gaps: pd.Series, n_wrong: int) -> str:
    """Which outcome fields the episodes with a wrong outcome get wrong (:func:`outcome_gaps`), as a sentence."""
    if not len(gaps):
        return "With no episode in the data, no outcome field can be checked"
    if n_wrong == 0:
        return "No episode gets a customer-visible outcome field wrong"
    fields = ", ".join(f"{k} in {v}" for k, v in gaps.items())
    return (
        f"Split by outcome field, the {n_wrong} episodes with a wrong outcome get these fields wrong ({fields} "
        "episodes; one episode can miss several)"
    )


# --- how the chapter shows them ---------------------------------------------------------------
def _source_column(column: str) -> str:
    """``ours (model)`` as ``This edition · Model``, ``published (model)`` as ``Paper · Model``."""
    from trajectory_judge.book.render.style import model_name

    who, _, rest = column.partition(" (")
    model = rest.rstrip(")")
    head = {"ours": "This edition", "published": "Paper", "published faulty": "Paper: faulty"}.get(who, who)
    return f"{head} \u00b7 {model_name(model)}" if model else head


@computes
def counts_view(counts: pd.DataFrame) -> pd.DataFrame:
    """:func:`organic_counts` with its columns named by source and model and its rows in words."""
    out = counts.rename(columns=_source_column)
    from trajectory_judge.book.render.style import LABELS

    out.index = pd.Index([LABELS.get(m, m[:1].upper() + m[1:]) for m in out.index], name="measure")
    return out


@computes
def strata_view(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`organic_by_stratum` with the published column named by source and model, missing quotes as missing."""
    out = frame.rename(columns=_source_column)
    return out.replace("", None)
