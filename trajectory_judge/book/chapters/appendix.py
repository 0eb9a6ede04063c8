"""Helpers of the appendix (``notebooks/appendix.md``): tools, strata, the generator's and the
checker's parameters, rules, the injector's edits, per-type intervals, localisation and cost tables,
and the organic agent's settings.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from trajectory_judge.analysis.core.cost import total_hours  # noqa: F401  (re-exported: the appendix chapter imports it from here)
from trajectory_judge.analysis.core.report import Report
from trajectory_judge.book.chapters.judges import run_decoding, setting_text
from trajectory_judge.book.render.style import (
    _missing,
    format_interval,
    format_number,
    judge_name,
    label,
    model_name,
    with_source,
)
from trajectory_judge.models import TESTBED_FAILURE_TYPES as FAILURE_TYPES  # the injector's types
from trajectory_judge.provenance.computed import computes
from trajectory_judge.testbed.agent import MAX_STEPS
from trajectory_judge.testbed.checker import AMOUNT_TOLERANCE_EUR, GROUNDING_TOLERANCE, RULES, TRACED_ARGS
from trajectory_judge.testbed.env import (
    DECOY_ID_BASE,
    ESCALATION_STRATA,
    EXPIRED_BY_DAYS,
    ORDER_ID_BASE,
    OUTCOME_TOLERANCE_EUR,
    RESTOCKING_FEES_PCT,
    SKU_POOL,
    STRATA,
    TOOLS,
    TOTAL_RANGE_EUR,
    WINDOWS_DAYS,
    Instance,
    SupportDesk,
    generate_instances,
)
from trajectory_judge.testbed.inject import ANCHORS, can_host, mutate_calls
from trajectory_judge.testbed.oracle import oracle_calls


# --- appendix tables ----------------------------------------------------------------------------
@computes
def tools_table() -> pd.DataFrame:
    """The seven tools: what each does (its docstring) and the arguments the checker traces."""
    rows = []
    for tool in TOOLS:
        doc = (inspect.getdoc(getattr(SupportDesk, tool)) or "").splitlines()[0]
        rows.append((tool, ", ".join(TRACED_ARGS.get(tool, ())) or "(prose, not traced)", doc))
    return pd.DataFrame(rows, columns=["tool", "grounded arguments", "behaviour"]).set_index("tool")


@computes
def env_strata_table(n: int = 60, seed: int = 7) -> pd.DataFrame:
    """The instance strata: expected action, and how many of the first ``n`` seeded instances fall in each."""
    counts = Counter(i.stratum for i in generate_instances(n, seed))
    rows = [(s, "escalate" if s in ESCALATION_STRATA else "refund", counts[s]) for s in STRATA]
    return pd.DataFrame(rows, columns=["instance stratum", "expected action", f"of first {n} instances"]).set_index(
        "instance stratum"
    )


@computes
def rules_table() -> pd.DataFrame:
    """The checker's rules: priority and the failure type each evidences."""
    rows = [
        (r.split("_", 1)[0], r.split("_", 1)[1].replace("_", " "), prio, ftype) for r, (prio, ftype) in RULES.items()
    ]
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


@computes
def injector_table(seed: int = 7) -> pd.DataFrame:
    """Per failure type: labelled step, the edit (computed on the first instance that hosts it), and who can host it."""
    instances = generate_instances(len(STRATA), seed)
    rows = []
    for ftype in FAILURE_TYPES:
        hosts = [i for i in instances if can_host(i, ftype)]
        before = oracle_calls(hosts[0])
        after, answer = mutate_calls(hosts[0], ftype, seed)
        rows.append((ftype, ANCHORS[ftype], _describe_edit(before, after, answer), ", ".join(i.stratum for i in hosts)))
    return pd.DataFrame(rows, columns=["failure type", "labelled step", "edit", "host instance strata"]).set_index(
        "failure type"
    )


@computes
def per_type_intervals_frame(rep) -> pd.DataFrame:
    """Long frame: judge, failure type, recall, interval and method (Appendix E, Table 6)."""
    rows = []
    for j, jr in rep.judges.items():
        for t in rep.types:  # the folder's failure types
            v, iv = jr.per_type_recall.get(t), jr.per_type_intervals.get(t)
            if v is not None:
                rows.append((j, t, v, iv.low if iv else np.nan, iv.high if iv else np.nan, iv.method if iv else ""))
    return pd.DataFrame(rows, columns=["judge", "failure type", "recall", "low", "high", "method"])


@computes
def localisation_frame(rep) -> pd.DataFrame:
    """Per judge: exact and within-one-step localisation with the scored cases, and the Brier score."""
    cols = ["step_exact", "step_within_one", "step_exact_n", "brier"]
    return rep.metrics_table()[cols].astype({"step_exact_n": int})


@computes
def cost_frame(rep) -> pd.DataFrame:
    """Per judge: seconds and tokens per trajectory, and total hours of judge time."""
    df = rep.metrics_table()[["s_per_traj", "prompt_tokens_mean", "completion_tokens_mean"]].copy()
    df["hours"] = [jr.metrics["s_per_traj"] * jr.n / 3600 for jr in rep.judges.values()]
    return df.astype(float)


# --- the appendix's tables as a reader sees them -------------------------------------------------
def _by_source(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Frames of each source (``release``, ``edition``) stacked under a ``Source`` level."""
    return pd.concat([with_source(f, s) for s, f in frames.items()])


@computes
def localisation_table(reports: dict[str, Report]) -> pd.DataFrame:
    """:func:`localisation_frame` of every report, grouped by source (the paper's judges first)."""
    return _by_source({s: localisation_frame(r) for s, r in reports.items()})


def _small(x: float, decimals: int = 3) -> str:
    """A positive value too small for ``decimals`` as ``< 0.001``; any other as fixed decimals."""
    floor = 10.0**-decimals
    return f"< {floor:.{decimals}f}" if 0 < x < floor / 2 else format_number(x, decimals)


@computes
def cost_table(reports: dict[str, Report]) -> pd.DataFrame:
    """:func:`cost_frame` of every report, grouped by source, seconds and hours as text (a rule
    engine's microseconds read ``< 0.001``, not ``0.000``), tokens with one decimal."""
    frame = _by_source({s: cost_frame(r) for s, r in reports.items()})
    out = frame.copy().astype(object)
    for col in ("s_per_traj", "hours"):
        out[col] = [_small(float(x)) for x in frame[col]]
    for col in ("prompt_tokens_mean", "completion_tokens_mean"):
        out[col] = [format_number(float(x), 1) for x in frame[col]]
    return out.rename(columns={"hours": "Hours"})


@computes
def delta_table(rep: Report) -> pd.DataFrame:
    """Every paired delta ``b − a`` of ``rep``: one row per pair and metric, the delta with its
    interval on one line, and whether the interval excludes zero."""
    d = rep.deltas_frame()
    pair = [f"{judge_name(b)} \u2212 {judge_name(a)}" for a, b in zip(d["a"], d["b"])]
    cells = [true_minus(format_interval(v, lo, hi, "bootstrap")) for v, lo, hi in zip(d["value"], d["low"], d["high"])]
    excludes = ["yes" if lo > 0 or hi < 0 else "no" for lo, hi in zip(d["low"], d["high"])]
    index = pd.MultiIndex.from_arrays([pair, list(d["metric"])], names=["pair (b \u2212 a)", "metric"])
    return pd.DataFrame({"\u0394 (95% interval)": cells, "Interval excludes 0": excludes}, index=index)


def true_minus(text: str) -> str:
    """``text`` with every hyphen-minus that signs a number (``-0.600‡``, ``(-0.3``) written as a true
    minus sign, so a table never mixes the two."""
    return re.sub(r"(^|[\s(])-(?=\d)", "\\1\u2212", text)


# --- rerunning the book -------------------------------------------------------------------------
RERUN_TIMES = "book/rerun-times.json"
"""Measured times in seconds: the rerun checks and the clean build of ``.ci/run``, run with
``TJ_RERUN_TIMES=FILE`` outside the repository and the file copied here."""


def rerun_durations(root=None) -> dict[str, str]:
    """The committed rerun times as a reader says them ("49 seconds", "1.5 minutes"), by step
    (``binder_install``, ``binder_nbval``, ``colab_results``, ``book_build``)."""
    import json

    from trajectory_judge.book.paths import repo_root

    seconds = json.loads((repo_root(root) / RERUN_TIMES).read_text(encoding="utf-8"))
    return {step.removesuffix("_s"): duration_text(value) for step, value in sorted(seconds.items())}


def duration_text(seconds: float) -> str:
    """``seconds`` in words: whole seconds under a minute and a half, else minutes to one decimal."""
    return f"{round(seconds)} seconds" if seconds < 90 else f"{seconds / 60:.1f} minutes"


# --- the guide's benchmarks page ----------------------------------------------------------------
BENCHMARKS = "book/benchmarks.json"
"""The speed figures ``tests/benchmarks/bench_speed.py --write book/benchmarks.json`` measured."""

BENCHMARK_FIGURES: dict[str, str] = {
    "report": "The report command on the published release's verdicts",
    "build": "A clean build of the book with warnings as errors, the release present",
    "rebuild": "The same build again over the finished one, nothing changed",
    "tests": "README's test command on a fresh clone, the release present",
}
"""The figures the benchmarks page shows, in its order, each with what it times."""


def benchmark_sentences(root=None) -> dict[str, str]:
    """One sentence per figure of :data:`BENCHMARK_FIGURES`: its medians as :data:`BENCHMARKS`
    records them, or, for a figure the file lacks (or with no file), a sentence saying it was not measured."""
    import json

    from trajectory_judge.book.paths import repo_root

    path = repo_root(root) / BENCHMARKS
    figures = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {name: benchmark_sentence(name, figures.get(name)) for name in BENCHMARK_FIGURES}


def benchmark_sentence(name: str, figure: dict | None) -> str:
    """The sentence of one figure (``None``: not measured)."""
    what = BENCHMARK_FIGURES[name]
    if figure is None:
        return f"{what}: not measured yet ({BENCHMARKS} has no {name!r} figure; the command below measures it)."
    wall, cpu = figure["wall_s"], figure["cpu_s"]
    runs = "one run" if figure["runs"] == 1 else f"the median of {figure['runs']} runs"
    return (
        f"{what}: {seconds_text(wall['median'])} wall ({seconds_text(wall['min'], unit=False)}"
        f"\u2013{seconds_text(wall['max'])}) and {seconds_text(cpu['median'])} of CPU, {runs} on "
        f"{figure['cpus']} CPUs with trajectory-judge {figure['version']} (target: {figure['target']})."
    )


def scale_sentences(root=None) -> dict[str, str]:
    """Two sentences on the ``scale`` figures of :data:`BENCHMARKS` (``tests/benchmarks/bench_scale.py
    --write``): ``report`` at each size (CPU time, per trajectory, peak memory, and the revision it was
    paired with) and the runner's time per verdict; each says it was not measured when the file lacks them."""
    import json

    from trajectory_judge.book.paths import repo_root

    path = repo_root(root) / BENCHMARKS
    fig = (json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}).get("scale")
    if not fig:
        missing = f"not measured yet ({BENCHMARKS} has no 'scale' figure; the command below measures it)."
        return {
            "scale": f"The report command at scale: {missing}",
            "runner": f"The runner at scale: {missing}",
            "distinct": f"The report command with a confidence per verdict: {missing}",
        }
    parts = []
    label = fig.get("before_label") or "an earlier version"  # a date, never the revision's hash
    for row in fig["sizes"]:
        text = (
            f"{row['n']:,} trajectories, {seconds_text(row['cpu_s'])} of CPU "
            f"({row['cpu_s'] / row['n'] * 1e3:.2f} ms per trajectory) and {row['rss_mb']:,} MB at most"
        )
        before = row.get("before")
        if fig.get("before"):
            text += (
                f" ({label}: {seconds_text(before['cpu_s'])} and {before['rss_mb']:,} MB"
                + (", the same output)" if before["same_output"] else ", a different output)")
                if before
                else f" ({label} not run at this size)"
            )
            label = "that version"  # named once
        parts.append(text)
    head = (
        f"The report command with the judge statistics, {fig['sizes'][0]['judges']} Python judges and "
        f"B = {fig['resamples']:,}, one run each on "
        f"{fig['cpus']} CPUs with trajectory-judge {fig['version']} (target: at most 1 GB and, per trajectory, "
        f"at most 1.5 times the time at the smallest size): "
    )
    runner = "; ".join(
        f"{row['runner_ms_per_verdict']:.2f} ms at {row['n'] * row['judges']:,} verdicts" for row in fig["sizes"]
    )
    distinct = "; ".join(
        f"{row['n']:,} trajectories, {seconds_text(row['cpu_s'])} of CPU "
        f"({row['cpu_s'] / row['n'] * 1e3:.2f} ms per trajectory) and {row['rss_mb']:,} MB at most"
        for row in fig.get("distinct", [])
    )
    return {
        "scale": head + "; ".join(parts) + ".",
        "runner": f"The runner's time per trivial Python verdict, the same runs (target: at most 1.3 times the smallest's): {runner}.",
        "distinct": (
            "The report command when every verdict states a confidence of its own (the same judges and B; "
            f"target: at most 1 GB at 100,000 trajectories and a time per trajectory that does not grow): {distinct}."
            if distinct
            else f"The report command with a confidence per verdict: not measured yet ({BENCHMARKS} has no "
            "'distinct' figures under 'scale'; the command below measures them)."
        ),
    }


def seconds_text(seconds: float, unit: bool = True) -> str:
    """``seconds`` to two decimals under ten seconds, to one above, with `` s`` unless ``unit`` is false."""
    text = f"{seconds:.2f}" if seconds < 10 else f"{seconds:.1f}"
    return f"{text} s" if unit else text


# --- Appendices A, B and G: the parameters, read from the code ----------------------------------
def _eur(x: float) -> str:
    return f"EUR {x:.2f}"


def _listed(values, unit: str = "") -> str:
    return ", ".join(f"{v:g}" for v in values) + unit


@computes
def instance_parameters_table() -> pd.DataFrame:
    """Appendix A: what the instance generator draws, read from the testbed's constants."""
    lo, hi = TOTAL_RANGE_EUR
    late_lo, late_hi = EXPIRED_BY_DAYS
    only = {s: label(s).lower() for s in STRATA}
    rows = [
        ("item (SKU)", f"one of {len(SKU_POOL)}: {', '.join(SKU_POOL)}", "all"),
        ("order total", f"uniform from {_eur(lo)} to {_eur(hi)}, rounded to the cent", "all"),
        ("refund window", _listed(WINDOWS_DAYS, " days"), "all"),
        ("days since purchase", "1 to the window", f"all but {only['expired']}"),
        ("days since purchase, expired", f"the window plus {late_lo} to {late_hi}", only["expired"]),
        ("restocking fee", _listed(RESTOCKING_FEES_PCT, " % of the total"), f"{only['restocking']} (0 elsewhere)"),
        ("refundable item", "no", f"{only['non_refundable']} (yes elsewhere)"),
        ("order status", "refunded", f"{only['already_refunded']} (delivered elsewhere)"),
        ("decoy customer", f"a second customer, CUS-{DECOY_ID_BASE} + index, with an email of its own", "all"),
        ("order owner", "the decoy customer", f"{only['wrong_customer']} (the requester elsewhere)"),
        ("instance stratum", "round-robin over the instance index", "all"),
    ]
    return pd.DataFrame(rows, columns=["parameter", "value", "instance strata"]).set_index("parameter")


@computes
def sku_table(instances: Sequence[Instance]) -> pd.DataFrame:
    """Appendix A: per SKU of the pool, how many of ``instances`` order it and their order totals."""
    rows = []
    for sku in SKU_POOL:
        totals = sorted(i.order.total_eur for i in instances if i.order.sku == sku)
        rows.append(
            (
                sku,
                len(totals),
                min(totals, default=np.nan),
                float(np.median(totals)) if totals else np.nan,
                max(totals, default=np.nan),
            )
        )
    return pd.DataFrame(
        rows, columns=["SKU", "instances", "lowest total (EUR)", "median total (EUR)", "highest total (EUR)"]
    ).set_index("SKU")


@computes
def policy_table(instances: Sequence[Instance]) -> pd.DataFrame:
    """Appendix A: per instance stratum of ``instances``, the windows, fees and owners they hold."""
    rows = []
    for s in STRATA:
        ins = [i for i in instances if i.stratum == s]
        windows = sorted({i.policy.refund_window_days for i in ins})
        fees = sorted({i.policy.restocking_fee_pct for i in ins})
        decoy = sum(i.order.customer_id == i.decoy.customer_id for i in ins)
        rows.append((s, len(ins), _listed(windows), _listed(fees), decoy))
    return pd.DataFrame(
        rows, columns=["instance stratum", "instances", "windows (days)", "fees (%)", "owned by the decoy"]
    ).set_index("instance stratum")


@computes
def checker_parameters_table() -> pd.DataFrame:
    """Appendix B: the checker's thresholds and what seeds its grounding pool, read from the code."""
    rows = [
        (
            "grounding pool, at the start",
            f"the email address and the identifiers (such as ORD-{ORDER_ID_BASE}) in the goal",
        ),
        ("grounding pool, after each step", "every scalar of a successful observation; a failed call adds nothing"),
        ("a number is grounded", f"when it lies within {GROUNDING_TOLERANCE:g} of a number in the pool"),
        ("amount mismatch (R4)", f"a refund {AMOUNT_TOLERANCE_EUR:g} EUR or more away from the authorised maximum"),
        ("reply placement (R7)", "exactly one reply, and it is the last step"),
        (
            "outcome survived",
            f"refunded amount within {OUTCOME_TOLERANCE_EUR:g} EUR of the expected one, "
            "escalated and replied as expected",
        ),
    ]
    return pd.DataFrame(rows, columns=["setting", "value"]).set_index("setting")


ORGANIC_SETTINGS: tuple[tuple[str, str], ...] = (
    ("agent model", "model"),
    ("episodes", "episodes"),
    ("instance seed", "instance_seed"),
    ("temperature", "temperature"),
    ("seed", "seed"),
    ("step limit", "step_limit"),
    ("output tokens per step", "max_tokens"),
    ("context window (tokens)", "num_ctx"),
)
"""Appendix G's rows: the label a reader sees and the key of the setting."""


@computes
def organic_settings_table(records: Sequence[dict], published_model: str, published_episodes: int) -> pd.DataFrame:
    """Appendix G: the organic agent's settings, the paper's (what §8 and Appendix G state) beside each model of ours.

    ``records`` are the ``organic`` run records of ``runs.jsonl``; a model's column reads its last
    record that wrote an episode. The step limit is the agent's own (:data:`MAX_STEPS`), not recorded.
    """
    from trajectory_judge.analysis.paper.published import PUBLISHED_ORGANIC_SETTINGS

    paper = {k: c.value for k, c in PUBLISHED_ORGANIC_SETTINGS.items()}
    cols = {"Paper (§8, Appendix G)": {"model": model_name(published_model), "episodes": published_episodes, **paper}}
    for rec in records:
        if rec.get("kind") == "organic" and rec.get("written"):
            dec = rec.get("decoding") or {}
            temperature, seed = run_decoding(rec)  # the record the audit's set-up table reads too
            cols[f"This edition ({model_name(rec['agent_model'])})"] = {
                "model": model_name(rec["agent_model"]),
                "episodes": rec.get("episodes"),
                "instance_seed": rec.get("instance_seed"),
                "step_limit": MAX_STEPS,
                "temperature": temperature,
                "seed": seed,
                **{k: dec.get(k) for k in ("max_tokens", "num_ctx")},
            }
    frame = pd.DataFrame(
        {c: [v.get(k) for _, k in ORGANIC_SETTINGS] for c, v in cols.items()},
        index=pd.Index([lab for lab, _ in ORGANIC_SETTINGS], name="setting"),
    )
    return frame.astype(object).map(lambda v: setting_text(None if _missing(v) else v))
