"""Helpers of the audit (``notebooks/audit.md``): every published number recomputed from the
paper's verdicts, with a verdict per number (the comparison of our run's set-up with the release's is
in :mod:`trajectory_judge.book.chapters.setups`, re-exported here).

Each row of :func:`audit_frame` ends in one of :data:`VERDICTS`: *reproduces* (equal at the printed
precision), *within Monte-Carlo noise, measured* (an interval bound off in its last digit whose
printed value other bootstrap seeds of the stated procedure produce), *differs, explained* (the
data settle an inconsistency of the text, said in ``why``), or *cannot be recomputed* (``why``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from trajectory_judge.analysis.paper.audit import (  # noqa: F401  (the verdicts are re-exported: the chapter imports them)
    DIFFERS,
    EXPLAINED,
    NOISE,
    NOT_RECOMPUTABLE,
    REPRODUCES,
    VERDICTS,
    BoundSpread,
    SeedDeltas,
    audit_summary,
    check_published,
    delta_distribution,
    printed_decimals,
    seed_deltas,
    seed_reports,
    seed_spread as compute_seed_spread,
)
from trajectory_judge.book.chapters.appendix import true_minus
from trajectory_judge.book.chapters.setups import (  # noqa: F401  (re-exported: the audit chapter imports them from here)
    NOT_RECORDED,
    STATED,
    comparison_frame,
    read_runs,
    setup_frame,
)
from trajectory_judge.book.render.style import LABELS, _missing, format_number, judge_name, label
from trajectory_judge.models import JudgeSpec
from trajectory_judge.provenance.computed import computes


# --- the audit's records as frames --------------------------------------------------------------
@computes
def audit_frame(rep, data, spread: pd.DataFrame | BoundSpread | None = None) -> pd.DataFrame:
    """:func:`trajectory_judge.analysis.paper.audit.check_published` as the frame the chapter's tables read: columns
    quantity, source, published, recomputed, tolerance, verdict (one of :data:`VERDICTS`) and why."""
    return check_published(rep, data, spread).to_frame()


@computes
def seed_spread(reports: Mapping[int, Any], data=None) -> pd.DataFrame:
    """:func:`trajectory_judge.analysis.paper.audit.seed_spread` as a frame indexed by quantity."""
    return compute_seed_spread(reports, data).to_frame()


@computes
def upper_bound_counts(deltas: SeedDeltas) -> pd.DataFrame:
    """How many seeds of :func:`~trajectory_judge.analysis.paper.audit.seed_deltas`' record give each upper bound (to three
    decimals)."""
    return deltas.upper_bound_counts()


@computes
def silent_delta_cdf(trajectories, verdicts, a: str, b: str, *, resamples: int = 400_000, seed: int = 0) -> pd.Series:
    """:func:`trajectory_judge.analysis.paper.audit.delta_distribution` as P(delta <= x) indexed by x."""
    return delta_distribution(trajectories, verdicts, a, b, resamples=resamples, seed=seed).to_series()


# --- the audit as the book shows it -----------------------------------------------------------------
VERDICT_MARKS: dict[str, str] = {
    REPRODUCES: "\u2713",
    NOISE: "\u2248",
    EXPLAINED: "\u2717",
    DIFFERS: "\u2717",
    NOT_RECOMPUTABLE: "n.a.",
}
"""The one-character verdict of an audit row: reproduces, within noise, differs, cannot be recomputed."""


def _is_judge(word: str) -> bool:
    """Whether a word of a quantity is the id of the rules or an LLM judge (``recall:wrong_tool`` is a metric,
    though the grammar would read it as a Python judge)."""
    try:
        return JudgeSpec.parse(word).kind != "python"
    except ValueError:
        return False


def quantity_name(quantity: str) -> str:
    """An audit quantity in words: judge ids as judge names, metric keys as their labels, a fact
    key followed by its description as the description."""
    fact = re.match(r"^[\w.:\-]+ \((.*)\)$", quantity)
    if fact:
        text = fact.group(1)
        return text[:1].upper() + text[1:]
    words = []
    for w in quantity.split(" "):
        key, colon = (w[:-1], ":") if w.endswith(":") else (w, "")
        if _is_judge(key):
            words.append(judge_name(key) + (colon or ""))
        elif key.startswith("recall:") or key in LABELS:
            words.append(label(key).lower() + colon)
        else:
            words.append(w.replace("_", " "))
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def _value_text(x: float, digits: int) -> str:
    text = format_number(x, 0, count=True) if not _missing(x) and float(x).is_integer() else format_number(x, digits)
    return true_minus(text)


@computes
def audit_display(checks: pd.DataFrame, why: bool = False) -> pd.DataFrame:
    """The audit rows as shown: verdict mark first, the quantity in words, its source, the published
    value at its printed precision and the recomputed value one digit finer (and ``why``)."""
    digits = [int(t.split()[0]) if t and t.split()[0].isdigit() else 3 for t in checks["tolerance"]]
    out = pd.DataFrame(
        {
            "Verdict": checks["verdict"].map(VERDICT_MARKS),
            "Quantity": checks["quantity"].map(quantity_name),
            "Source": checks["source"],
            "Published": [_value_text(v, d) for v, d in zip(checks["published"], digits)],
            "Recomputed": [_value_text(v, d + 1) for v, d in zip(checks["recomputed"], digits)],
        }
    )
    if why:
        out["Why"] = checks["why"]
    return out


@computes
def spread_display(spread: pd.DataFrame) -> pd.DataFrame:
    """The seed spread of the published bounds as shown: the published value at the precision the paper prints it,
    the seeds' lowest and highest one digit finer, and whether the published value lies between them at its own
    precision."""
    digits = [max(2, printed_decimals(v)) for v in spread["published"]]  # bounds are printed with two decimals at least
    out = pd.DataFrame(
        {
            "Published": [_value_text(v, d) for v, d in zip(spread["published"], digits)],
            "Lowest": [_value_text(v, d + 1) for v, d in zip(spread["min"], digits)],
            "Highest": [_value_text(v, d + 1) for v, d in zip(spread["max"], digits)],
            "Seeds printing it": spread["seeds printing it"].to_numpy(),
            "Seeds": spread["seeds"].to_numpy(),
            "Within range at its printed digits": spread["within range"].map({True: "yes", False: "no"}).to_numpy(),
        },
        index=spread.index.map(quantity_name),
    )
    return out.rename_axis("Quantity")


@computes
def verdict_counts(checks: pd.DataFrame) -> pd.DataFrame:
    """Rows per verdict with its mark, in :data:`VERDICTS` order (zeros included, except an
    unexplained difference, which is listed only when it occurs)."""
    summary = audit_summary(checks)
    rows = [(VERDICT_MARKS[v], v[:1].upper() + v[1:], summary[v]) for v in VERDICTS if v != DIFFERS or summary[v]]
    return pd.DataFrame(rows, columns=["Verdict", "Meaning", "Numbers"]).set_index("Verdict")


@computes
def open_rows(checks: pd.DataFrame) -> pd.DataFrame:
    """The audit rows that do not simply reproduce, except the organic-episode counts (whose one reason,
    that the release holds no episodes, the chapter says once)."""
    return checks[(checks["verdict"] != REPRODUCES) & ~checks["quantity"].str.startswith("organic_")]


def audit_counts(checks: pd.DataFrame) -> dict[str, Any]:
    """What the audit's first section says in numbers, by glue name: the rows in all (``audit_total``) and per
    verdict (``audit_reproduces``, ``audit_noise``, ``audit_explained``, ``audit_missing``), the organic-episode
    counts among those that cannot be recomputed (``n_missing_organic``), the rows of :func:`open_rows`
    (``audit_open``) and :func:`unexplained_sentence` (``audit_unexplained``)."""
    summary = audit_summary(checks)
    names = {REPRODUCES: "reproduces", NOISE: "noise", EXPLAINED: "explained", NOT_RECOMPUTABLE: "missing"}
    missing = checks[checks["verdict"] == NOT_RECOMPUTABLE]
    return {
        "audit_total": summary["total"],
        **{f"audit_{name}": summary[key] for key, name in names.items()},
        "n_missing_organic": int(missing["quantity"].str.startswith("organic_").sum()),
        "audit_open": len(open_rows(checks)),
        "audit_unexplained": unexplained_sentence(checks),  # empty when every difference is explained
    }


def abstract_reproduces(checks: pd.DataFrame) -> bool:
    """Whether every number of the camera-ready abstract about the outcome and step judges reproduces (its
    reply-only judge's verdicts are not released)."""
    camera = checks[checks["source"] == "abstract"]
    return bool((camera[~camera["quantity"].str.startswith("reply_")]["verdict"] == REPRODUCES).all())


def contradiction_numbers(checks: pd.DataFrame, rep: Any) -> dict[str, Any]:
    """The numbers of the two statements of the published material that disagree, by glue name: the reply types
    §7.1 counts and the data give (``reply_types_71``, ``reply_types_data``), and the outcome judge's pooled recall
    by the README, the paper and the verdicts (``readme_pooled``, ``paper_pooled``, ``data_pooled``)."""
    from trajectory_judge.analysis.paper import published as P

    explained = checks[checks["verdict"] == EXPLAINED].set_index("quantity")
    reply = explained.filter(like="section71", axis=0)
    return {
        "reply_types_71": int(reply["published"].iloc[0]),
        "reply_types_data": int(reply["recomputed"].iloc[0]),
        "readme_pooled": float(explained.filter(like="readme_pooled", axis=0)["published"].iloc[0]),
        "paper_pooled": float(P.PUBLISHED_COUNTS["pooled_recall_outcome"].value),
        "data_pooled": float(rep.judges[P.OUTCOME].metrics["recall"]),
    }


def upper_bound_numbers(cdf: pd.Series, deltas: SeedDeltas, confidence_level: float, resamples: int) -> dict[str, Any]:
    """Why the published upper bound of the silent-recall delta is within Monte-Carlo noise, by glue name: the
    upper percentile (``upper_q``), the published bound (``pub_high``), the grid point below it (``grid_below``),
    the probability the procedure puts at or below that point (``cdf_below``, from ``cdf``:
    :func:`silent_delta_cdf`), the standard error of an empirical CDF at the percentile with ``resamples``
    replicates (``cdf_se``) and the seeds of ``deltas`` that print the published bound (``seeds_pub``)."""
    from trajectory_judge.analysis.paper import published as P

    pub = next(d for d in P.PUBLISHED_DELTAS if d.metric == "silent_recall")
    nearest = abs(cdf.index - pub.high).argmin()  # the grid point the published bound rounds
    below = cdf.index[nearest - 1]  # and the one below it
    q = 1 - (1 - confidence_level) / 2  # the upper percentile, 0.975
    return {
        "upper_q": q,
        "pub_high": pub.high,
        "grid_below": float(below),
        "cdf_below": float(cdf.loc[below]),
        "cdf_se": (q * (1 - q) / resamples) ** 0.5,
        "seeds_pub": deltas.seeds_printing_high(pub.high),
    }


def rules_comparison(ours: Any, paper: Any) -> str:
    """Whether the rule engine's quality metrics on this edition's trajectories and on the release's are the same
    (to summation-order noise), different, or not compared (a folder with no rule-engine verdicts)."""
    if "programmatic" not in ours.judges:
        return "not compared (this data has no rule-engine verdicts)"
    quality = ("f1", "silent_recall", "loud_recall", "false_alarm_rate", "step_exact", "type_macro_f1", "ece", "brier")
    a, b = ours.judges["programmatic"].metrics, paper.judges["programmatic"].metrics
    return "the same" if max(abs(a[m] - b[m]) for m in quality) < 1e-9 else "different"


def paper_models() -> str:
    """The models the published judges ran, in words."""
    from trajectory_judge.analysis.paper import published as P
    from trajectory_judge.book.render.style import list_text, model_name

    return list_text([model_name(P.PUBLISHED_MODEL), model_name(P.STEP8.split(":", 1)[1])])


def spread_sentence(spread: pd.DataFrame, seeds: int) -> str:
    """Whether the published bounds fall inside the range the seeds of the stated procedure produce, and
    which do not (``spread``: :func:`seed_spread`'s frame)."""
    n, out = len(spread), spread[~spread["within range"]]
    if out.empty:
        return (
            f"All {n} published bounds fall inside the range that {seeds} seeds of the stated procedure produce: "
            "none of the differences needs another explanation than the seed."
        )
    beyond = "; ".join(
        f"{q} (published {format_number(r['published'])}; the seeds give {format_number(r['min'])} to "
        f"{format_number(r['max'])})"
        for q, r in out.iterrows()
    )
    return (
        f"{n - len(out)} of the {n} published bounds fall inside the range that {seeds} seeds of the stated "
        f"procedure produce, and for them the seed is explanation enough. "
        f"{'One falls' if len(out) == 1 else f'{len(out)} fall'} outside it: {beyond}. Such a bound is a percentile of a "
        "statistic that takes few values, so a published bound one step beyond every seed's can come from "
        "another generator of the same procedure; the seeds cannot show that it does."
    )


def unexplained_sentence(checks: pd.DataFrame) -> str:
    """What the audit says of its rows that differ with no explanation: nothing when there are none, else
    each row with its published and recomputed value and how far the other seeds reach."""
    rows = checks[checks["verdict"] == DIFFERS]
    if rows.empty:
        return ""
    items = "; ".join(
        f"{r['quantity']}, published {format_number(r['published'])} and recomputed {format_number(r['recomputed'])}"
        + (f" ({r['why']})" if r["why"] else "")
        for _, r in rows.iterrows()
    )
    n = len(rows)
    return (
        f" {'One number differs' if n == 1 else f'{n} numbers differ'} with no explanation and beyond the seeds' reach: "
        f"{items}."
    )


def register_markdown(rule: str) -> str:
    """The register's one rule as a Markdown block quote."""
    return f"> **The rule.** {rule}\n"


def contradictions_markdown(claims) -> str:
    """The contradicted statements as a Markdown list, one item per statement, led by where it is and followed by
    its robustness and a link to its row of the register below (on this page)."""
    from trajectory_judge.book.render.claim_text import robustness_mark

    return (
        "\n".join(f"- **{c.where}.** {c.sentence()[:-1]}{robustness_mark(c, '')}." for c in claims.contradicted())
        + "\n"
    )


def register_phrases(claims: Any) -> dict[str, Any]:
    """What the audit's prose says of the register, by glue name: ``register_summary`` (how the verdicts fall on the
    whole register, the fragile ones with what flips each and those Holm's adjustment withdraws) and
    ``abstract_summary`` (the abstract's claims, naming those not borne out), both written by
    :func:`~trajectory_judge.book.render.claim_summary.summary_sentence`; and ``fragile_keys``, the fragile claims'
    keys, for the chapter's checks."""
    from trajectory_judge.book.render.claim_summary import summary_sentence, tally

    whole = tally(claims, "register")
    return {
        "register_summary": summary_sentence(whole, name=False, robustness="flips") + ".",
        "abstract_summary": summary_sentence(tally(claims, "abstract"), robustness="none") + ".",
        "fragile_keys": {c.key for c in whole.fragile},
    }


@computes
def disclosure_table(claims: Any) -> pd.DataFrame:
    """Every change of the register's rule after the data, with the verdicts before and after it
    (:func:`~trajectory_judge.analysis.paper.rule_changes.disclosure_frame`)."""
    from trajectory_judge.analysis.paper.rule_changes import disclosure_frame

    return disclosure_frame(claims.register)


def third_sentence(claims: Any) -> str:
    """What the current rule gives the claims stated as a fraction in words, read both ways, in a sentence."""
    from trajectory_judge.analysis.paper.claims import CONSISTENT
    from trajectory_judge.analysis.paper.rule_changes import words_now
    from trajectory_judge.book.render.style import list_text

    both = {
        k: tuple(v if v != CONSISTENT else "consistent with the claim" for v in pair)
        for k, pair in words_now(claims.register).items()
    }
    said = [
        f"{claims[k].where.split(';')[0]} ({claims[k].stated.text}) is {a if a == b else f'{a} centred on the fraction and {b} at one figure'}"
        for k, (a, b) in both.items()
    ]
    same = all(a == b for a, b in both.values())
    head = "the two readings give the same verdicts" if same else "the two readings differ"
    return f"Under the rule as it now stands, {head}: {list_text(said)}."
