"""The book's shared style: how judges are named and numbers written on every page.

Judge ids (``family[k]:model``, or ``programmatic`` for the rule engine) are parsed once here,
so every chapter names, orders and groups judges the same way; intervals are formatted in one
way; the versions table closes the book's pages.
"""

from __future__ import annotations

import math
import platform
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Sequence

import pandas as pd

from trajectory_judge.judges.views import VIEWS

RULES = "programmatic"
"""Judge id (and family) of the rule engine."""


FAMILIES: tuple[str, ...] = (RULES, "outcome", "step", "reply", "selfcons")
"""Judge families, in report order."""


COMPARISONS: tuple[tuple[str, str], ...] = (("outcome", "step"), ("step", "reply"), ("step", "selfcons"))
"""Pairs of families compared at the same model, as ``(a, b)`` read ``b - a``."""




DAGGER = "\u2020"
"""Marks an exact (Clopper-Pearson) interval."""


_FAMILY = re.compile(r"^([a-z_]+?)(\d*)$")


# --- judges ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeSpec:
    """What a judge id says about the judge."""

    judge_id: str
    """The id as it appears in the verdicts."""
    family: str
    """``programmatic``, ``outcome``, ``step``, ``reply``, ``selfcons`` (or another user family)."""
    view: str
    """What it reads: ``rules`` (the whole trajectory, by rule), or a view of :data:`VIEWS`."""
    model: str | None
    """The model behind an LLM judge; None for the rule engine."""
    ensemble: int
    """Samples per verdict (1 for a single pass, k for ``selfconsk``)."""

    @property
    def is_llm(self) -> bool:
        """True for every judge that is not the rule engine."""
        return self.family != RULES


def parse_judge_id(judge_id: str) -> JudgeSpec:
    """Split ``family[k]:model`` (or ``programmatic``) into family, view, model and ensemble size.

    The self-consistency ensemble reads the step view; a family outside :data:`FAMILIES` is
    taken to read the step view too. Raises :class:`ValueError` for an LLM id without a model.
    """
    head, sep, model = judge_id.partition(":")
    m = _FAMILY.match(head)
    if m is None:
        raise ValueError(f"judge id {judge_id!r}: family {head!r} is not lower-case letters")
    family, k = m.group(1), m.group(2)
    if family == RULES:
        if sep:
            raise ValueError(f"judge id {judge_id!r}: the rule engine takes no model")
        return JudgeSpec(judge_id, RULES, "rules", None, 1)
    if not sep or not model:
        raise ValueError(f"judge id {judge_id!r}: expected 'family:model'")
    view = family if family in VIEWS else "step"
    return JudgeSpec(judge_id, family, view, model, int(k) if k else 1)


def judges_frame(judge_ids: Sequence[str]) -> pd.DataFrame:
    """One row per judge: family, view, model and ensemble size, indexed by judge id."""
    rows = [parse_judge_id(j).__dict__ for j in judge_ids]
    df = pd.DataFrame(rows, columns=["judge_id", "family", "view", "model", "ensemble"]).set_index("judge_id")
    return df.rename_axis("judge").fillna({"model": "(none: rules)"})


def llm_judges(judge_ids: Sequence[str]) -> list[str]:
    """The judge ids that are not the rule engine, in the given order."""
    return [j for j in judge_ids if parse_judge_id(j).is_llm]


def views_present(judge_ids: Sequence[str]) -> list[str]:
    """The LLM views (prompt kinds) the judges use, in :data:`VIEWS` order."""
    used = {parse_judge_id(j).view for j in llm_judges(judge_ids)}
    return [v for v in VIEWS if v in used]


def family_pairs(judge_ids: Sequence[str], comparisons: Sequence[tuple[str, str]] = COMPARISONS) -> list[tuple[str, str]]:
    """``(a, b)`` judge pairs of the same model whose families form one of ``comparisons``."""
    specs = [parse_judge_id(j) for j in judge_ids]
    out = []
    for fa, fb in comparisons:
        for a in specs:
            for b in specs:
                if a.family == fa and b.family == fb and a.model == b.model:
                    out.append((a.judge_id, b.judge_id))
    return out


# --- formatting ------------------------------------------------------------------------------
def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def format_interval(value: float | None, low: float | None = None, high: float | None = None, method: str | None = None) -> str:
    """``0.452 [0.38, 0.52]``; a dagger for an exact interval; the bare value when structural or without one."""
    if _missing(value):
        return "n/a"
    text = f"{value:.3f}"
    if method is None or method == "structural" or _missing(low) or _missing(high):
        return text
    text += f" [{low:.2f}, {high:.2f}]"
    return text + DAGGER if method == "clopper-pearson" else text


def judge_label(judge_id: str, n: int | None = None) -> str:
    """A two-line axis label: family (and ensemble size), then the model and ``n``."""
    s = parse_judge_id(judge_id)
    head = s.family + (f" x{s.ensemble}" if s.ensemble > 1 else "")
    tail = s.model or "rules"
    return f"{head}\n{tail}" + (f"\nn={n}" if n is not None else "")


def list_text(items: Sequence[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no items."""
    items = list(items)
    if not items:
        return empty
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def versions_table(packages: Sequence[str] = ("trajectory-judge", "numpy", "pandas", "matplotlib", "seaborn", "myst-nb", "jupyter-book")) -> pd.DataFrame:
    """Python and the installed version of each package ("not installed" when absent)."""
    rows = [("python", platform.python_version())]
    for p in packages:
        try:
            rows.append((p, metadata.version(p)))
        except metadata.PackageNotFoundError:
            rows.append((p, "not installed"))
    return pd.DataFrame(rows, columns=["package", "version"]).set_index("package")
