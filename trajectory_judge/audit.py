"""Book helpers for the paired, organic, appendix and audit chapters.

The notebooks call these so that a code cell stays a few lines; everything here is computed from
trajectories, verdicts, episodes and the package's own constants. Judges are never named: they are
discovered from the verdicts, and grouped by family (the part of the id before the first colon).

Sections: judges; paired discrimination; organic episodes; appendix tables; auditing the published
numbers (:mod:`trajectory_judge.published`) against a report on the release; our edition beside the
release.
"""

from __future__ import annotations

import inspect
import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import published as P
from .checker import RULES, TRACED_ARGS
from .cost import read_run_records
from .env import ESCALATION_STRATA, STRATA, TOOLS, SupportDesk, generate_instances
from .inject import ANCHORS, can_host, mutate_calls
from .judges.views import render_view
from .models import FAILURE_TYPES, Trajectory, Verdict, design_cell, parse_jsonl
from .oracle import oracle_calls
from .paired import clean_parents, reaches_input

# --- judges ---------------------------------------------------------------------------------
FAMILIES: tuple[str, ...] = ("programmatic", "outcome", "step", "reply", "selfcons3")
"""Judge families in report order (others follow)."""


def family_of(judge_id: str) -> str:
    """The family of a judge id: ``step:qwen2.5:14b`` -> ``step``."""
    return judge_id.split(":", 1)[0]


def model_of(judge_id: str) -> str | None:
    """The model of a judge id, ``None`` for the rule engine."""
    return judge_id.split(":", 1)[1] if ":" in judge_id else None


def judges_of(judges: Iterable[str], family: str) -> list[str]:
    """The judge ids of one family, in the given order."""
    return [j for j in judges if family_of(j) == family]


# --- paired discrimination --------------------------------------------------------------------
PAIRED_VIEW_GROUPS: tuple[str, ...] = ("loud", "silent", "reaches_input", "hidden_from_input")
"""The groups the paired figure shows."""


def paired_detail(trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict]) -> pd.DataFrame:
    """Per judge and group: faults with a judged clean parent, flag rate on them, on their parents, the difference.

    ``fault_rate - parent_rate`` is paired discrimination (it equals the report's); ``disagree``
    counts faults whose verdict differs from their parent's. Groups as in
    :data:`trajectory_judge.paired.PAIRED_GROUPS`, plus ``reply_unchanged`` / ``reply_changed``
    (whether the outcome view, goal and final answer, equals the parent's, whatever the judge's
    own view); empty groups are left out.
    """
    parents = clean_parents(trajectories)
    by_judge: dict[str, dict[str, Verdict]] = {}
    for v in verdicts:
        by_judge.setdefault(v.judge_id, {})[v.trajectory_id] = v
    rows = []
    for judge, vs in by_judge.items():
        acc: dict[str, list[tuple[int, int]]] = {}
        for t in trajectories:
            lab, parent = t.label, parents.get(t.instance_id)
            if lab is None or not lab.faulty or t.trajectory_id not in vs or parent is None or parent.trajectory_id not in vs:
                continue
            pair = (int(vs[t.trajectory_id].faulty), int(vs[parent.trajectory_id].faulty))
            view = "reaches_input" if reaches_input(judge, t, parent) else "hidden_from_input"
            reply = "reply_unchanged" if render_view("outcome", t) == render_view("outcome", parent) else "reply_changed"
            for g in ("all", "silent" if lab.outcome_correct else "loud", view, reply, str(lab.failure_type)):
                acc.setdefault(g, []).append(pair)
        for g, pairs in acc.items():
            f, p = np.asarray(pairs).T
            rows.append((judge, g, len(pairs), f.mean(), p.mean(), f.mean() - p.mean(), int((f != p).sum())))
    cols = ["judge", "group", "n", "fault_rate", "parent_rate", "paired", "disagree"]
    return pd.DataFrame(rows, columns=cols)


def paired_wide(detail: pd.DataFrame, value: str = "paired", groups: Sequence[str] | None = None) -> pd.DataFrame:
    """``detail`` as judge x group (groups in report order, judges in their order of appearance)."""
    from .paired import PAIRED_GROUPS

    default = (*PAIRED_GROUPS[:5], "reply_unchanged", "reply_changed", *PAIRED_GROUPS[5:])
    order = [g for g in (groups or default) if g in set(detail["group"])]
    wide = detail.pivot(index="judge", columns="group", values=value)
    return wide.reindex(index=list(dict.fromkeys(detail["judge"])), columns=order).rename_axis(columns=None)


def hidden_input_summary(detail: pd.DataFrame) -> pd.DataFrame:
    """Judges with faults hidden from their input: recall there, flag rate on the parents, paired value."""
    hid = detail[detail["group"] == "hidden_from_input"].set_index("judge")
    return hid[["n", "fault_rate", "parent_rate", "paired", "disagree"]]


def paired_figure(detail: pd.DataFrame):
    """Two panels over :data:`PAIRED_VIEW_GROUPS`: recall on the faults, and paired discrimination."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, col, title in zip(axes, ("fault_rate", "paired"), ("recall on the faults", "paired discrimination")):
        wide = paired_wide(detail, col, PAIRED_VIEW_GROUPS).T
        wide.plot.bar(ax=ax, rot=0, width=0.8, legend=False)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_title(title)
        ax.set_xlabel("")
    axes[0].set_ylabel("rate")
    axes[1].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


_PUBLISHED_PAIRED_ROWS = (
    ("outcome", "loud", "outcome_paired_loud"), ("outcome", "silent", "outcome_paired_silent"),
    ("outcome", "reply_unchanged", "outcome_paired_reply_unchanged"),
    ("step", "reply_unchanged", "step_paired_reply_unchanged"), ("reply", "reply_unchanged", "reply_paired_reply_unchanged"),
)  # fmt: skip


def paired_beside_published(detail: pd.DataFrame) -> pd.DataFrame:
    """The camera-ready abstract's paired values, each beside every judge of ours of the same family and group."""
    rows = []
    for fam, group, key in _PUBLISHED_PAIRED_ROWS:
        pub = P.PUBLISHED_PAIRED[key].value
        ours = detail[(detail["judge"].map(family_of) == fam) & (detail["group"] == group)]
        for r in ours.itertuples() if len(ours) else [None]:
            rows.append((fam, group, r.judge if r else "(none of ours)", r.n if r else pd.NA, r.paired if r else float("nan"), pub))
    cols = ["family", "group", "our judge", "n", "ours", f"published ({P.PUBLISHED_MODEL})"]
    return pd.DataFrame(rows, columns=cols).astype({"n": "Int64"}).set_index(["family", "group"])


def hidden_claim_sentence(hidden: pd.DataFrame) -> str:
    """What the data say about recall on faults hidden from an outcome view, judge by judge."""
    if hidden.empty:
        return "No judge with an outcome view is in the data yet, so the claim cannot be checked here."
    parts = []
    for j, r in hidden.iterrows():
        same = "identical to" if r["disagree"] == 0 else f"different from (on {r['disagree']} faults)"
        parts.append(f"{j} flags {r['fault_rate']:.3f} of the {int(r['n'])} hidden faults and {r['parent_rate']:.3f} of their "
                     f"clean parents, its verdicts {same} its verdicts on the parents (paired {r['paired']:+.3f})")  # fmt: skip
    return "; ".join(parts) + "."


# --- organic episodes -------------------------------------------------------------------------
def load_episodes(directory: str | Path) -> list | None:
    """The episodes in ``DIR/organic.jsonl`` (manifest-verified), or ``None`` when there is none.

    A torn last line (a run writing right now) is ignored.
    """
    from .agent import ORGANIC, Episode
    from .manifest import verify_manifest

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
        "episodes calling check_eligibility": sum(any(s.call.tool == "check_eligibility" for s in e.trajectory.steps) for e in eps),
        "failed tool calls": sum(not s.observation.ok for s in steps),
        "empty final answers": sum(not e.trajectory.final_answer.strip() for e in eps),
    }


_PUBLISHED_ORGANIC = {
    "episodes": "organic_episodes", "flagged or wrong outcome": "organic_flagged", "wrong outcome (loud)": "organic_loud",
    "faulty, outcome correct (silent)": "organic_silent", "premature_stop": "organic_premature_stop",
    "escalate calls": "organic_escalate_calls", "episodes calling check_eligibility": "organic_with_check_eligibility",
    "failed tool calls": "organic_failed_tool_calls", "empty final answers": "organic_empty_final_answer",
}  # fmt: skip


def organic_counts(episodes: Sequence | None) -> pd.DataFrame:
    """One column per agent model of ours, then the published (qwen2.5:14b) counts, one row per measure."""
    cols: dict[str, dict[str, float]] = {}
    for model in sorted({e.agent_model for e in episodes or ()}):
        cols[f"ours ({model})"] = _episode_row([e for e in episodes if e.agent_model == model])  # type: ignore[union-attr]
    cols[f"published ({P.PUBLISHED_MODEL})"] = {k: P.PUBLISHED_COUNTS[v].value for k, v in _PUBLISHED_ORGANIC.items()}
    return pd.DataFrame(cols).astype("Int64").rename_axis("measure")


_PUBLISHED_STRATA = {"already_refunded": "organic_already_refunded", "wrong_customer": "organic_wrong_customer"}


def organic_by_stratum(episodes: Sequence) -> pd.DataFrame:
    """Instance stratum x (episodes, faulty, loud, silent), strata in generator order, with the published counts quoted."""
    rows = []
    for s in STRATA:
        eps = [e for e in episodes if e.stratum == s]
        labs = [e.trajectory.label for e in eps]
        rows.append((s, len(eps), sum(lb.faulty for lb in labs), sum(not lb.outcome_correct for lb in labs),
                     sum(lb.faulty and lb.outcome_correct for lb in labs)))  # fmt: skip
    df = pd.DataFrame(rows, columns=["stratum", "episodes", "faulty", "loud", "silent"]).set_index("stratum")
    pub = {s: (P.PUBLISHED_COUNTS[f"{k}_failed"].value, P.PUBLISHED_COUNTS[f"{k}_n"].value) for s, k in _PUBLISHED_STRATA.items()}
    df[f"published faulty ({P.PUBLISHED_MODEL})"] = [f"{pub[s][0]} of {pub[s][1]}" if s in pub else "" for s in df.index]
    return df[df["episodes"] > 0]


def organic_types(episodes: Sequence) -> pd.DataFrame:
    """Rule-visible failure type (the checker's first violation) -> episodes; ``outcome only`` when no rule fired."""
    c = Counter(e.trajectory.label.failure_type or "outcome only" for e in episodes if e.trajectory.label.faulty)
    order = [t for t in (*FAILURE_TYPES, "outcome only") if t in c]
    return pd.DataFrame({"episodes": [c[t] for t in order]}, index=pd.Index(order, name="first violation"))


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


def organic_endings(episodes: Sequence) -> pd.DataFrame:
    """How episodes ended (reply, step limit, unparseable action), with repeated calls and outcomes.

    ``repeating a call`` counts episodes with at least two consecutive identical calls; ``longest
    repeat`` is the longest such run in any of them.
    """
    rows = []
    for stop in ("replied", "max_steps", "unparseable_action"):
        eps = [e for e in episodes if e.stop == stop]
        runs = [longest_repeat(e.trajectory.steps) for e in eps]
        rows.append((stop, len(eps), sum(r > 1 for r in runs), max(runs, default=0),
                     sum(e.trajectory.label.outcome_correct for e in eps),
                     sum(len(e.trajectory.steps) for e in eps) / len(eps) if eps else float("nan")))  # fmt: skip
    cols = ["episodes", "repeating a call", "longest repeat", "outcome correct", "mean steps"]
    return pd.DataFrame([r[1:] for r in rows], columns=cols, index=pd.Index([r[0] for r in rows], name="ended by"))


def repeated_calls(episodes: Sequence) -> pd.Series:
    """Per tool, the steps that repeat the previous step's call verbatim (most repeated first)."""
    c = Counter(cur.call.tool for e in episodes for prev, cur in zip(e.trajectory.steps, e.trajectory.steps[1:])
                if (cur.call.tool, cur.call.args) == (prev.call.tool, prev.call.args))  # fmt: skip
    return pd.Series(dict(c.most_common()), dtype="int64", name="repeated steps").rename_axis("tool")


def outcome_gaps(episodes: Sequence) -> pd.Series:
    """Per customer-visible outcome field (refund, escalation, reply), the episodes that get it wrong."""
    keys = sorted({k for e in episodes for k in e.expected})
    return pd.Series({k: sum(e.outcome.get(k) != e.expected.get(k) for e in episodes) for k in keys},
                     dtype="int64", name="episodes wrong").rename_axis("outcome field")


# --- appendix tables ----------------------------------------------------------------------------
def tools_table() -> pd.DataFrame:
    """The seven tools: what each does (its docstring) and the arguments the checker traces."""
    rows = []
    for tool in TOOLS:
        doc = (inspect.getdoc(getattr(SupportDesk, tool)) or "").splitlines()[0]
        rows.append((tool, ", ".join(TRACED_ARGS.get(tool, ())) or "(prose, not traced)", doc))
    return pd.DataFrame(rows, columns=["tool", "grounded arguments", "behaviour"]).set_index("tool")


def env_strata_table(n: int = 60, seed: int = 7) -> pd.DataFrame:
    """The instance strata: expected action, and how many of the first ``n`` seeded instances fall in each."""
    counts = Counter(i.stratum for i in generate_instances(n, seed))
    rows = [(s, "escalate" if s in ESCALATION_STRATA else "refund", counts[s]) for s in STRATA]
    return pd.DataFrame(rows, columns=["stratum", "expected action", f"of first {n} instances"]).set_index("stratum")


def rules_table() -> pd.DataFrame:
    """The checker's rules: priority and the failure type each evidences."""
    rows = [(r.split("_", 1)[0], r.split("_", 1)[1].replace("_", " "), prio, ftype) for r, (prio, ftype) in RULES.items()]
    return pd.DataFrame(rows, columns=["rule", "what it checks", "priority", "failure type"]).set_index("rule")


def _describe_edit(before: Sequence, after: Sequence, answer: str | None) -> str:
    if answer is not None and len(after) < len(before):
        return f"truncate before step {len(after)} ({before[len(after)].tool}); fixed final answer"
    if len(after) < len(before):
        k = next(i for i, (x, y) in enumerate(zip(before, after)) if x.tool != y.tool or x.args != y.args)
        return f"delete step {k} ({before[k].tool}); step {k} becomes {after[k].tool}({', '.join(after[k].args)})"
    k = next(i for i, (x, y) in enumerate(zip(before, after)) if x.tool != y.tool or x.args != y.args)
    changed = [a for a in after[k].args if before[k].args.get(a) != after[k].args.get(a)]
    if before[k].tool != after[k].tool:
        return f"step {k}: {before[k].tool} replaced by {after[k].tool}"
    return f"step {k}: {after[k].tool} with a different {', '.join(changed)}"


def injector_table(seed: int = 7) -> pd.DataFrame:
    """Per failure type: labelled step, the edit (computed on the first instance that hosts it), and who can host it."""
    instances = generate_instances(len(STRATA), seed)
    rows = []
    for ftype in FAILURE_TYPES:
        hosts = [i for i in instances if can_host(i, ftype)]
        before = oracle_calls(hosts[0])
        after, answer = mutate_calls(hosts[0], ftype, seed)
        rows.append((ftype, ANCHORS[ftype], _describe_edit(before, after, answer), ", ".join(i.stratum for i in hosts)))
    return pd.DataFrame(rows, columns=["failure type", "labelled step", "edit", "host strata"]).set_index("failure type")


def per_type_intervals_frame(rep) -> pd.DataFrame:
    """Long frame: judge, failure type, recall, interval and method (Appendix E, Table 6)."""
    rows = []
    for j, jr in rep.judges.items():
        for t in FAILURE_TYPES:
            v, iv = jr.per_type_recall.get(t), jr.per_type_intervals.get(t)
            if v is not None:
                rows.append((j, t, v, iv.low if iv else np.nan, iv.high if iv else np.nan, iv.method if iv else ""))
    return pd.DataFrame(rows, columns=["judge", "failure type", "recall", "low", "high", "method"])


def formatted_intervals(long: pd.DataFrame, index: str, columns: str, digits: int = 2) -> pd.DataFrame:
    """``value [low, high]`` strings (``†`` for exact intervals, no bracket for structural ones), pivoted."""
    def cell(r: pd.Series) -> str:
        v = f"{r.iloc[2]:.{digits}f}"
        if r["method"] == "structural":
            return v
        mark = "†" if r["method"] == "clopper-pearson" else ""
        return f"{v} [{r['low']:.{digits}f}, {r['high']:.{digits}f}]{mark}"

    df = long.assign(cell=long.apply(cell, axis=1))
    return df.pivot(index=index, columns=columns, values="cell").reindex(
        index=list(dict.fromkeys(long[index])), columns=list(dict.fromkeys(long[columns]))
    ).rename_axis(columns=None)


def localisation_frame(rep) -> pd.DataFrame:
    """Per judge: exact and within-one-step localisation with the scored cases, and the Brier score."""
    cols = ["step_exact", "step_within_one", "step_exact_n", "brier"]
    return rep.metrics_table()[cols].astype({"step_exact_n": int})


def cost_frame(rep) -> pd.DataFrame:
    """Per judge: seconds and tokens per trajectory, total hours, and the published s/traj where there is one."""
    df = rep.metrics_table()[["s_per_traj", "prompt_tokens_mean", "completion_tokens_mean"]].copy()
    df["hours"] = [jr.metrics["s_per_traj"] * jr.n / 3600 for jr in rep.judges.values()]
    df[f"published s/traj ({P.PUBLISHED_MODEL})"] = [P.PUBLISHED_MAIN.get(j, {}).get("s_per_traj") for j in df.index]
    return df.astype(float)


def total_hours(rep) -> float:
    """Judge time over every verdict, in hours."""
    return float(sum(jr.metrics["s_per_traj"] * jr.n for jr in rep.judges.values()) / 3600)


# --- auditing the published numbers ----------------------------------------------------------------
def release_path(fetch: bool = True) -> Path:
    """The release directory (``TJ_RELEASE_DIR`` or the cache), fetched there if absent and ``fetch``.

    Raises :class:`~trajectory_judge.release.ReleaseError` when it is absent and cannot be fetched.
    """
    from .release import ReleaseError, default_dir, fetch_release, verified

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
    """Every number in :mod:`trajectory_judge.published` beside its value recomputed from ``rep``.

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
    from .report import build_report

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
    from .report import build_report

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
