"""Helpers of the audit (``notebooks/audit.md``): every published number recomputed from the
release, and the comparison of our run's set-up with the release's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis import published as P
from trajectory_judge.analysis.cost import read_run_records
from trajectory_judge.book.appendix import total_hours
from trajectory_judge.book.paired import family_of
from trajectory_judge.models import design_cell

# --- judges ---------------------------------------------------------------------------------
FAMILIES: tuple[str, ...] = ("programmatic", "outcome", "step", "reply", "selfcons3")
"""Judge families in report order (others follow)."""




# --- auditing the published numbers ----------------------------------------------------------------
def release_path(fetch: bool = True) -> Path:
    """The release directory (``TJ_RELEASE_DIR`` or the cache), fetched there if absent and ``fetch``.

    Raises :class:`~trajectory_judge.provenance.release.ReleaseError` when it is absent and cannot be fetched.
    """
    from trajectory_judge.provenance.release import (
        ReleaseError,
        default_dir,
        fetch_release,
        verified,
    )

    d = default_dir()
    if verified(d):
        return d
    if not fetch:
        raise ReleaseError(f"no verified release in {d}; run `trajectory-judge fetch-release` or set TJ_RELEASE_DIR")
    return fetch_release(d)


def _printed_decimals(x: float) -> int:
    s = repr(float(x))
    return 0 if float(x).is_integer() else len(s.split(".")[1])


def _point_row(what: str, source: str, published: float | None, got: float | None, digits: int, note: str = "") -> dict:
    if published is None:
        agree = got is None or (isinstance(got, float) and np.isnan(got))
        return dict(quantity=what, source=source, published=np.nan, recomputed=np.nan, tolerance="n/a both", agree=agree, note=note)
    if got is None or (isinstance(got, float) and np.isnan(got)):
        return dict(quantity=what, source=source, published=published, recomputed=np.nan, tolerance="", agree=None, note=note)
    agree = round(float(got), digits) == round(float(published), digits)
    return dict(quantity=what, source=source, published=float(published), recomputed=float(got),
                tolerance=f"{digits} decimals", agree=agree, note=note)  # fmt: skip


def _bound_row(what: str, source: str, published: float, got: float, tol: float = 0.01) -> dict:
    d = _printed_decimals(published)
    note = "" if round(float(got), d) == float(published) else f"within ±{tol}, not equal at {d} decimals"
    return dict(quantity=what, source=source, published=float(published), recomputed=float(got),
                tolerance=f"±{tol}", agree=abs(float(got) - float(published)) <= tol + 1e-12, note=note)  # fmt: skip


def _count_recomputers(rep) -> dict[str, Callable[[], float]]:
    J = rep.judges

    def flagged(j: str) -> float:
        m, s = J[j].metrics, J[j].strata
        return round(m["recall"] * (s["silent"] + s["loud"]) + m["false_alarm_rate"] * s["clean"])

    out: dict[str, Callable[[], float]] = {
        "step_flagged": lambda: flagged(P.STEP),
        "step_flagged_faulty": lambda: round(J[P.STEP].metrics["recall"] * (J[P.STEP].strata["silent"] + J[P.STEP].strata["loud"])),
        "step_exact_n": lambda: J[P.STEP].metrics["step_exact_n"],
        "step_exact": lambda: J[P.STEP].metrics["step_exact"],
        "pooled_recall_outcome": lambda: J[P.OUTCOME].metrics["recall"],
        "step8_flagged": lambda: flagged(P.STEP8),
        "step8_precision": lambda: J[P.STEP8].metrics["precision"],
        "step8_completion_tokens": lambda: J[P.STEP8].metrics["completion_tokens_mean"],
        "step_completion_tokens": lambda: J[P.STEP].metrics["completion_tokens_mean"],
        "selfcons_at_two_thirds": lambda: J[P.SELFCONS].confidence_support.get("0.666667", 0),
        "selfcons_at_one": lambda: J[P.SELFCONS].confidence_support.get("1.0", 0),
        "outcome_at_0.92": lambda: J[P.OUTCOME].confidence_support.get("0.92", 0),
        "confusion_hallucinated_as_wrong_tool": lambda: rep.confusion(P.STEP).loc["hallucinated_argument", "wrong_tool"],
        "confusion_premature_correct": lambda: rep.confusion(P.STEP).loc["premature_stop", "premature_stop"],
        "confusion_premature_as_claim": lambda: rep.confusion(P.STEP).loc["premature_stop", "unsupported_claim"],
        "confusion_premature_as_skipped": lambda: rep.confusion(P.STEP).loc["premature_stop", "skipped_precondition"],
        "confusion_claim_missed": lambda: rep.confusion(P.STEP).loc["unsupported_claim", "missed"],
        "step8_mass_at_0.90": lambda: rep.confidence_support(P.STEP8).get(0.9, 0) / J[P.STEP8].n,
        "judge_hours": lambda: total_hours(rep),
    }
    for j in P.PUBLISHED_JUDGES:
        out[f"confidence_support:{j}"] = (lambda j=j: len(J[j].confidence_support))
    return out


def _paired_recomputers(rep) -> dict[str, Callable[[], float]]:
    J = rep.judges
    pd_out, pd_step = J[P.OUTCOME].paired_discrimination, J[P.STEP].paired_discrimination
    four = P.REPLY_UNCHANGED_TYPES
    claims = rep.claim_table(P.STEP)
    always = claims[claims["recall"] == 1.0]
    rest = claims.drop(always.index)
    ft, fa = J[P.STEP].strata["clean"], J[P.STEP].metrics["false_alarm_rate"]
    return {
        "outcome_recall_reply_unchanged_min": lambda: min(J[P.OUTCOME].per_type_recall[t] for t in four),
        "outcome_recall_reply_unchanged_max": lambda: max(J[P.OUTCOME].per_type_recall[t] for t in four),
        "outcome_paired_reply_unchanged": lambda: max(abs(pd_out[t].value) for t in four),
        "outcome_paired_loud": lambda: pd_out["loud"].value,
        "outcome_paired_silent": lambda: pd_out["silent"].value,
        "outcome_loud_recall": lambda: J[P.OUTCOME].metrics["loud_recall"],
        "outcome_silent_recall": lambda: J[P.OUTCOME].metrics["silent_recall"],
        "step_recall_reply_unchanged": lambda: min(J[P.STEP].per_type_recall[t] for t in four),
        "step_clean_flagged": lambda: round(fa * ft),
        "step_clean_flagged_ci_high": lambda: J[P.STEP].intervals["false_alarm_rate"].high,
        "claim_sentences": lambda: len(claims),
        "claim_always_flagged_sentences": lambda: len(always),
        "claim_other_flagged": lambda: int(rest["flagged"].sum()),
        "claim_other_n": lambda: int(rest["n"].sum()),
        "step_paired_reply_unchanged": lambda: min(pd_step[t].value for t in four),
    }


def audit_frame(rep) -> pd.DataFrame:
    """Every number in :mod:`trajectory_judge.analysis.published` beside its value recomputed from ``rep``.

    ``agree`` is True/False, or ``None`` when the release cannot recompute it (``note`` says why).
    Point estimates agree when equal at the printed precision (3 decimals in the main table,
    2 in the per-type table, as printed elsewhere); interval bounds and deltas within 0.01.
    """
    rows: list[dict] = []
    main = rep.main_table()
    for j, row in P.PUBLISHED_MAIN.items():
        for m, v in row.items():
            got = float(main.loc[j, m]) if j in main.index else np.nan
            rows.append(_point_row(f"{j} {m}", P.MAIN_SOURCE, v, got, 1 if m == "s_per_traj" else 3))
    per_type = rep.per_type_table()
    for j, row in P.PUBLISHED_PER_TYPE.items():
        for t, v in row.items():
            rows.append(_point_row(f"{j} recall {t}", P.PER_TYPE_SOURCE, v, float(per_type.loc[t, j]), 2))
    for q in P.PUBLISHED_INTERVALS:
        jr = rep.judges[q.judge]
        if q.metric.startswith("recall:"):
            t = q.metric.split(":", 1)[1]
            v, iv = jr.per_type_recall[t], jr.per_type_intervals[t]
        else:
            v, iv = jr.metrics[q.metric], jr.intervals[q.metric]
        what = f"{q.judge} {q.metric}"
        rows.append(_point_row(what, q.source, q.value, v, max(2, _printed_decimals(q.value))))
        rows += [_bound_row(f"{what} low", q.source, q.low, iv.low), _bound_row(f"{what} high", q.source, q.high, iv.high)]
    for d in P.PUBLISHED_DELTAS:
        got = rep.delta(d.a, d.b, d.metric)
        what = f"{d.metric}: {d.b} − {d.a}"
        rows += [_bound_row(what, d.source, d.value, got.value), _bound_row(f"{what} low", d.source, d.low, got.low),
                 _bound_row(f"{what} high", d.source, d.high, got.high)]  # fmt: skip
    for g in P.PUBLISHED_GAPS:
        got = next(x for x in rep.gaps if x.judge == g.judge)
        what = f"{g.judge} loud − silent recall"
        rows += [_bound_row(what, g.source, g.value, got.value), _bound_row(f"{what} low", g.source, g.low, got.low),
                 _bound_row(f"{what} high", g.source, g.high, got.high)]  # fmt: skip
    rows += _fact_rows(P.PUBLISHED_COUNTS, _count_recomputers(rep))
    rows += _fact_rows(P.PUBLISHED_PAIRED, _paired_recomputers(rep))
    return pd.DataFrame(rows, columns=["quantity", "source", "published", "recomputed", "tolerance", "agree", "note"])


_NOT_IN_RELEASE = {
    "organic": "the release holds no organic episodes (trajectories, verdicts and run.json only)",
    "reply": "the release holds no reply-only judge: its verdicts are not released",
}


def _fact_rows(facts: Mapping[str, P.PublishedCount], recompute: Mapping[str, Callable[[], float]]) -> list[dict]:
    rows = []
    for key, fact in facts.items():
        what = f"{key} ({fact.what})"
        if key in recompute:
            digits = _printed_decimals(fact.value)
            note = "the paper rounds the measured mean; the README truncates it to 56" if key == "step8_completion_tokens" else ""
            rows.append(_point_row(what, fact.source, fact.value, float(recompute[key]()), digits, note))
        else:
            reason = _NOT_IN_RELEASE["organic" if key.startswith("organic") else "reply"]
            rows.append(_point_row(what, fact.source, fact.value, None, 0, reason))
    return rows


def audit_summary(audit: pd.DataFrame) -> dict[str, int]:
    """Counts of published numbers that agree, disagree, and cannot be recomputed from the release."""
    a = audit["agree"]
    return {"total": len(a), "agree": int((a == True).sum()), "differ": int((a == False).sum()),  # noqa: E712
            "not_recomputable": int(a.isna().sum())}  # fmt: skip


def bound_spread(trajectories, verdicts, a: str, b: str, metric: str, *, seeds: Sequence[int], resamples: int = 10_000) -> pd.DataFrame:
    """The paired delta ``b - a`` and its interval under several bootstrap seeds (one report per seed)."""
    from trajectory_judge.analysis.report import build_report

    rows = []
    for s in seeds:
        d = build_report(trajectories, verdicts, resamples=resamples, seed=s).delta(a, b, metric)
        rows.append((s, d.value, d.low, d.high))
    return pd.DataFrame(rows, columns=["seed", "value", "low", "high"]).set_index("seed")


def silent_delta_cdf(trajectories, verdicts, a: str, b: str, *, resamples: int = 400_000, seed: int = 0) -> pd.Series:
    """Distribution of the paired silent-recall delta under the paper's cell-stratified bootstrap, at large B.

    Only silent faults enter the statistic, so the replicate is drawn over the silent design cells
    alone (same cell sizes as the full design). Returns P(delta <= x) at each attainable value x.
    """
    fa = {v.trajectory_id: int(v.faulty) for v in verdicts if v.judge_id == a}
    fb = {v.trajectory_id: int(v.faulty) for v in verdicts if v.judge_id == b}
    silent = [t for t in trajectories if t.label and t.label.faulty and t.label.outcome_correct
              and t.trajectory_id in fa and t.trajectory_id in fb]  # fmt: skip
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    for cell in sorted({design_cell(t.label) for t in silent}):
        diffs = np.array([fb[t.trajectory_id] - fa[t.trajectory_id] for t in silent if design_cell(t.label) == cell])
        total += diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].sum(axis=1)
    counts = pd.Series(total).value_counts().sort_index()
    return pd.Series(counts.cumsum().to_numpy() / resamples, index=counts.index / len(silent), name="cdf").rename_axis("delta")


# --- our edition beside the release ----------------------------------------------------------------
COMPARE_METRICS: tuple[str, ...] = ("f1", "silent_recall", "loud_recall", "false_alarm_rate", "type_macro_f1", "ece", "s_per_traj")


def comparison_frame(ours, release) -> pd.DataFrame:
    """Judge by judge, family by family: our judges' metrics beside the release's, with their n."""
    rows = []
    for source, rep in (("ours", ours), ("release", release)):
        for j, jr in rep.judges.items():
            rows.append({"family": family_of(j), "source": source, "judge": j, "n": jr.n,
                         **{m: jr.metrics.get(m) for m in COMPARE_METRICS}})  # fmt: skip
    df = pd.DataFrame(rows)
    rank = {f: i for i, f in enumerate(FAMILIES)}
    df["_r"] = df["family"].map(lambda f: rank.get(f, len(rank)))
    df = df.sort_values(["_r", "source", "judge"], kind="stable").drop(columns="_r")
    return df.set_index(["family", "source", "judge"]).astype({m: float for m in COMPARE_METRICS})


def read_runs(directory: str | Path) -> list[dict[str, Any]]:
    """Run records of a data directory: ``runs.jsonl`` (ours) or ``run.json`` (the release); [] when absent."""
    d = Path(directory)
    if (d / "runs.jsonl").exists():
        return read_run_records(d)
    if (d / "run.json").exists():
        return list(json.loads((d / "run.json").read_text(encoding="utf-8")).get("runs", []))
    return []


def setup_frame(runs: Sequence[Mapping[str, Any]], source: str) -> pd.DataFrame:
    """One row per distinct set-up in run records: judges, model, server, hardware host, decoding."""
    rows = []
    for r in runs:
        server = r.get("server") or {}
        dec = r.get("decoding") or {}
        judges = r.get("judges")
        rows.append({
            "source": source, "kind": r.get("kind", "judges"),
            "judges": ", ".join(judges) if isinstance(judges, list) else str(judges or r.get("agent_model", "")),
            "model": r.get("model"), "server": server.get("server", "ollama (per README)" if source == "release" else None),
            "model file": Path(server["model_path"]).name if server.get("model_path") else None,
            "host": r.get("host"), "n_ctx": dec.get("num_ctx", server.get("n_ctx")),
            "temperature": dec.get("temperature"), "seed": dec.get("seed", r.get("seed")),
        })  # fmt: skip
    df = pd.DataFrame(rows, columns=["source", "kind", "judges", "model", "server", "model file", "host", "n_ctx", "temperature", "seed"])
    return df.astype(object).where(df.notna(), "").drop_duplicates().reset_index(drop=True)


def seed_spread(trajectories, verdicts, *, seeds: Sequence[int], resamples: int = 10_000) -> pd.DataFrame:
    """Every published interval bound recomputed under several bootstrap seeds: range, and how often it prints the same.

    Shows whether a bound that differs from the published one is within Monte-Carlo noise of the
    stated procedure (same resamples, another seed) rather than a different procedure.
    """
    from trajectory_judge.analysis.report import build_report

    cols = {}
    for s in seeds:
        au = audit_frame(build_report(trajectories, verdicts, resamples=resamples, seed=s))
        bounds = au[au["quantity"].str.endswith((" low", " high"))].set_index("quantity")
        cols[s] = bounds["recomputed"]
        published = bounds["published"]
    df = pd.DataFrame(cols)
    digits = published.map(_printed_decimals)
    rounded = df.apply(lambda col: pd.Series([round(v, d) for v, d in zip(col, digits)], index=col.index))
    lo = [round(v, d) for v, d in zip(df.min(axis=1), digits)]
    hi = [round(v, d) for v, d in zip(df.max(axis=1), digits)]
    return pd.DataFrame({"published": published, "min": df.min(axis=1), "max": df.max(axis=1),
                         "seeds printing it": rounded.eq(published, axis=0).sum(axis=1), "seeds": len(seeds),
                         "within range": (published >= lo) & (published <= hi)})  # fmt: skip
