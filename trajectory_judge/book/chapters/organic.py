"""Helpers of the chapter "Organic episodes" (``notebooks/organic.md``): counts, strata,
first violations, tools, endings and repeated calls of the episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from trajectory_judge.analysis.statistics import organic as O
from trajectory_judge.analysis.statistics.organic import load_episodes, longest_repeat  # noqa: F401  (re-exported for the chapter)
from trajectory_judge.provenance.computed import computes


def organic_status(episodes: Sequence | None, planned: int) -> str:
    """One sentence saying how many episodes there are, of how many planned, and by which model."""
    if episodes is None:
        return f"No organic episodes are in the data yet (organic.jsonl is absent; {planned} are planned)."
    models = sorted({e.agent_model for e in episodes})
    by = f" driven by {', '.join(models)}" if models else ""
    done = "all" if len(episodes) >= planned else "a partial run"
    return f"The data holds {len(episodes)} organic episodes{by}, {done} of the {planned} planned."


# --- the organic records as frames -------------------------------------------------------------
def _shown(name: str, series: bool = False) -> Callable[[Sequence | None], pd.DataFrame | pd.Series]:
    """The chapter's ``name``: the record :mod:`trajectory_judge.analysis.statistics.organic` computes under the
    same name, as a frame (or, with ``series``, a series), named as computed by this module's ``name``."""
    record = getattr(O, name)

    def shown(episodes: Sequence | None) -> pd.DataFrame | pd.Series:
        return record(episodes).to_series() if series else record(episodes).to_frame()

    shown.__name__ = shown.__qualname__ = name
    shown.__doc__ = f":func:`trajectory_judge.analysis.statistics.organic.{name}` as the chapter shows it."
    return computes(shown)


organic_counts = _shown("organic_counts")
"""One column per agent model of ours, then the published counts, one row per measure."""
organic_by_stratum = _shown("organic_by_stratum")
organic_types = _shown("organic_types")
organic_tools = _shown("organic_tools")
organic_endings = _shown("organic_endings")
repeated_calls = _shown("repeated_calls", series=True)
outcome_gaps = _shown("outcome_gaps", series=True)


def repeat_sentence(repeats: pd.Series) -> str:
    """Which tool the verbatim repeats of :func:`repeated_calls` mostly call, as a sentence (no final stop)."""
    from trajectory_judge.book.render.style import format_number

    if not len(repeats):
        return "No episode repeats a call verbatim"
    share = format_number(O.repeat_share(repeats), 2)
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
