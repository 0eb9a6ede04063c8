"""The book's shared style: how judges are named and numbers written on every page.

Judges are named, coloured and grouped from the fields of their id's record
(:class:`trajectory_judge.models.JudgeSpec`, parsed once in the data model), so every chapter
names, orders and groups judges the same way; intervals are formatted in one way; the versions
table closes the book's pages.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.formatting import (  # noqa: F401 - re-exported: the book's one number format
    DAGGER,
    MARKS,
    MISSING,
    STRUCTURAL,
    ZERO_WIDTH,
    format_interval,
    format_number,
    is_missing as _missing,
    list_text,
    marks_in,
)
from trajectory_judge.analysis.core.registry import REGISTRY
from trajectory_judge.judges.views import VIEWS
from trajectory_judge.models import ENSEMBLE_FAMILY, PYTHON_FAMILY, RULES_ID, JudgeSpec
from trajectory_judge.provenance.computed import computes

RULES = RULES_ID
"""Judge id (and family) of the rule engine."""


PYTHON = PYTHON_FAMILY
"""Family (and view) of a judge written in Python (any id of the grammar's ``NAME[:DETAIL]`` form)."""


FAMILIES: tuple[str, ...] = (RULES, *VIEWS, ENSEMBLE_FAMILY, PYTHON)
"""Judge families, in report order."""


COMPARISONS: tuple[tuple[str, str], ...] = (("outcome", "step"), ("step", "reply"), ("step", "selfcons"))
"""Pairs of families compared at the same model, as ``(a, b)`` read ``b - a``."""


# --- judges ----------------------------------------------------------------------------------


_FRAME_FIELDS = ("judge_id", "family", "view", "model", "ensemble")


@computes
def judges_frame(judge_ids: Sequence[str]) -> pd.DataFrame:
    """One row per judge: family, view, model and ensemble size, indexed by judge id."""
    rows = [{f: getattr(JudgeSpec.parse(j), f) for f in _FRAME_FIELDS} for j in judge_ids]
    df = pd.DataFrame(rows, columns=list(_FRAME_FIELDS)).set_index("judge_id")
    df.loc[df["family"] == PYTHON, "model"] = "(none: Python)"
    return df.rename_axis("judge").fillna({"model": "(none: rules)"})


def llm_judges(judge_ids: Sequence[str]) -> list[str]:
    """The judge ids that are not the rule engine, in the given order."""
    return [j for j in judge_ids if JudgeSpec.parse(j).is_llm]


def views_present(judge_ids: Sequence[str]) -> list[str]:
    """The LLM views (prompt kinds) the judges use, in :data:`VIEWS` order."""
    used = {JudgeSpec.parse(j).view for j in llm_judges(judge_ids)}
    return [v for v in VIEWS if v in used]


def family_pairs(
    judge_ids: Sequence[str], comparisons: Sequence[tuple[str, str]] = COMPARISONS
) -> list[tuple[str, str]]:
    """``(a, b)`` judge pairs of the same model whose families form one of ``comparisons`` (ensemble members,
    samples of a judge rather than judges compared, are left out). An ensemble is paired with the single pass of
    its own prompt: ``selfcons3:M`` with ``step:M``, ``selfcons3+NAME:M`` with ``step+NAME:M``."""
    specs = [s for s in map(JudgeSpec.parse, judge_ids) if not s.is_member]
    out = []
    for fa, fb in comparisons:
        for a in specs:
            for b in specs:
                if a.family == fa and b.family == fb and a.model == b.model:
                    if ENSEMBLE_FAMILY in (fa, fb) and a.prompt != b.prompt:
                        continue  # another prompt's samples: not this judge sampled
                    out.append((a.judge_id, b.judge_id))
    return out


# --- names a reader sees -----------------------------------------------------------------------
FAMILY_NAMES: dict[str, str] = {
    RULES: "Rules",
    "outcome": "Outcome",
    "step": "Step",
    "reply": "Reply",
    "selfcons": "Self-consistency",
    PYTHON: "Python judge",
}
"""How each judge family is written."""

MODEL_NAMES: dict[str, str] = {
    "qwen2.5:14b": "Qwen2.5 14B",
    "llama3.1:8b": "Llama 3.1 8B",
    "qwen2.5-coder:1.5b": "Qwen2.5-Coder 1.5B",
    "qwen2.5-coder:0.5b": "Qwen2.5-Coder 0.5B",
}
"""How the models of the paper and of this edition are written."""

SOURCES: dict[str, str] = {"release": "Paper (release)", "edition": "This edition"}
"""Where a row's numbers come from: the paper's released verdicts or this edition's own run."""

LABELS: dict[str, str] = {
    **{m.name: m.label for m in REGISTRY.values()},
    "wrong_tool": "Wrong tool",
    "hallucinated_argument": "Hallucinated argument",
    "skipped_precondition": "Skipped precondition",
    "ignored_observation": "Ignored observation",
    "premature_stop": "Premature stop",
    "unsupported_claim": "Unsupported claim",
    "all": "All faults",
    "loud": "Loud",
    "silent": "Silent",
    "clean": "Clean",
    "missed": "Missed",
    "reaches_input": "Reaches the input",
    "hidden_from_input": "Hidden from the input",
    "loud_minus_silent": "Loud \u2212 silent",
    "paired": "Paired discrimination",
    "n_pairs": "Pairs",
    "judge": "Judge",
    "judge_id": "Judge id",
    "family": "Family",
    "view": "View",
    "model": "Model",
    "ensemble": "Samples",
    "n": "n",
    "source": "Source",
    "model_sha256": "Model SHA-256",
    "n_ctx": "Context",
    "package": "Package",
    "version": "Version",
    "python": "Python",
}
"""Human names of the metric, failure-type, group and column keys used by the analysis."""

COUNT_KEYS: frozenset[str] = frozenset({"n", "step_exact_n", "n_pairs", "ensemble", "n_ctx", "seed"})
"""Keys whose values are counts, written as integers."""

DECIMALS: dict[str, int] = {m.name: m.decimals for m in REGISTRY.values() if m.decimals != 3}
"""Decimals of keys that are not written with the default three."""


def label(key: Any) -> str:
    """The human name of a column or row key: :data:`LABELS`, a judge name for a judge id, else the
    key with underscores as spaces and a capital first letter; non-text keys pass through."""
    if not isinstance(key, str):
        return key
    if key in LABELS:
        return LABELS[key]
    if key.startswith("recall:"):
        return label(key.split(":", 1)[1])
    try:  # a bare word is a key, not a Python judge's NAME: only ids with a ':' and the rules' are judges here
        if ":" in key or key == RULES:
            return judge_name(key)
    except ValueError:
        pass
    text = key.replace("_", " ")
    return text[:1].upper() + text[1:]


def model_name(model: str) -> str:
    """``qwen2.5-coder:1.5b`` as ``Qwen2.5-Coder 1.5B``; an unknown model as ``name size``."""
    if model in MODEL_NAMES:
        return MODEL_NAMES[model]
    name, _, size = model.partition(":")
    return f"{name} {size.upper()}".strip()


def judge_name(judge_id: str) -> str:
    """A judge as a person writes it: ``Step \u00b7 Qwen2.5-Coder 1.5B``, ``Self-consistency \u00d73 \u00b7 ...``,
    ``Rules``, ``short-run (Python judge)``. Raises :class:`ValueError` for a string that is not a judge id."""
    spec = JudgeSpec.parse(judge_id)
    if spec.family == PYTHON:
        return f"{judge_id} ({FAMILY_NAMES[PYTHON]})"
    if not spec.is_llm:
        return FAMILY_NAMES[RULES]
    if spec.is_member:
        view = FAMILY_NAMES.get(spec.view, spec.view) + (f" ({spec.prompt} prompt)" if spec.prompt else "")
        return f"{view} (T {spec.temperature:g}, seed {spec.seed}) \u00b7 {model_name(spec.model or '')}"
    family = FAMILY_NAMES.get(spec.family, spec.family.capitalize())
    if spec.ensemble > 1:
        family += f" \u00d7{spec.ensemble}"
    if spec.prompt:  # a prompt of one's own over the view
        family += f" ({spec.prompt} prompt)"
    return f"{family} \u00b7 {model_name(spec.model or '')}"


def source_name(source: str) -> str:
    """``release`` as ``Paper (release)``, ``edition`` as ``This edition`` (``Your folder (NAME)`` when
    the book is built on a reader's folder, :func:`trajectory_judge.book.paths.own_folder`); other text unchanged."""
    if source == "edition":
        from trajectory_judge.book.paths import own_folder

        folder = own_folder()
        if folder is not None:
            return f"Your folder ({folder})"
    return SOURCES.get(source, source)


def with_source(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """``frame`` with an outer ``Source`` index level, so the paper's judges and ours group visibly."""
    return pd.concat({source_name(source): frame}, names=["source"])


def by_source(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Frames of the paper (``release``) and of this edition (``edition``), stacked in the order given
    (the paper's first) under a Source level; when one function computed them all, the stack names it
    (:mod:`trajectory_judge.provenance.computed`)."""
    return pd.concat([with_source(f, s) for s, f in frames.items()])


# --- formatting (one format for the book and the terminal: analysis.formatting) -------------------
def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``1 ensemble``, ``3 ensembles`` (``plural_form`` for irregular nouns)."""
    return f"{n} {singular if n == 1 else (plural_form or singular + 's')}"


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def number_word(n: int, most: int = 10) -> str:
    """``one`` ... ``ten`` (up to ``most``, at most ``twelve``) for small counts, digits beyond."""
    return _WORDS[n] if 0 <= n <= min(most, len(_WORDS) - 1) else str(n)


@computes
def versions_table(
    packages: Sequence[str] = (
        "trajectory-judge",
        "numpy",
        "pandas",
        "matplotlib",
        "seaborn",
        "myst-nb",
        "jupyter-book",
    ),
) -> pd.DataFrame:
    """Python and the installed version of each package ("not installed" when absent)."""
    rows = [("python", platform.python_version())]
    for p in packages:
        try:
            rows.append((p, metadata.version(p)))
        except metadata.PackageNotFoundError:
            rows.append((p, "not installed"))
    return pd.DataFrame(rows, columns=["package", "version"]).set_index("package")


# --- testbed and organic names (added for the testbed, judges, metrics, organic and seeds chapters) ---
STRATUM_NAMES: dict[str, str] = {
    "happy": "Full price",
    "restocking": "Restocking fee",
    "expired": "Expired window",
    "non_refundable": "Non-refundable",
    "wrong_customer": "Other customer's order",
    "already_refunded": "Already refunded",
}
"""How each instance stratum of the support desk is written."""

ENDING_NAMES: dict[str, str] = {
    "replied": "Replied",
    "max_steps": "Step limit",
    "unparseable_action": "Unparseable action",
}
"""How an organic episode's ending is written."""


def design_cell_name(cell: str) -> str:
    """A design cell as a reader writes it: ``wrong_tool/silent`` as ``Wrong tool, silent``."""
    ftype, _, outcome = cell.partition("/")
    head = label(ftype)
    return f"{head}, {outcome}" if outcome else head


def _register_names() -> None:
    """Strata, endings and design cells join :data:`LABELS`, so tables relabel them as row keys."""
    from trajectory_judge.models import DESIGN_CELLS

    LABELS.update(STRATUM_NAMES)
    LABELS.update(ENDING_NAMES)
    LABELS.update({c: design_cell_name(c) for c in DESIGN_CELLS if "/" in c})
    LABELS.update(
        {
            "wall_h": "Wall hours",
            "cpu_h": "CPU hours",
            "cpu_runs": "Runs with CPU time",
            "written": "Written",
            "total": "Total",
            "kind": "Kind",
            "interval_width": "One seed's interval width",
            "range_over_width": "Range / width",
            "sd": "SD",
        }
    )


_register_names()
