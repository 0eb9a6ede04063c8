"""Helpers of the chapter "Seed variance" (``notebooks/seeds.md``): the self-consistency members
scored one by one, their spread against one seed's interval, and their agreement.

Every helper takes the typed results of :mod:`trajectory_judge.analysis.statistics.seeds` and returns a
table or a sentence, so the chapter runs on any data that keeps ensemble members and says so
plainly on data that does not.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.registry import REGISTRY
from trajectory_judge.analysis.statistics.seeds import SEED_METRICS, EnsembleCheck, SeedVariance, parse_member_id
from trajectory_judge.book.render.style import format_interval, plural
from trajectory_judge.provenance.computed import computes

METRIC_LABELS: dict[str, str] = {**{m: REGISTRY[m].label for m in SEED_METRICS}, "s_per_traj": "Seconds per trajectory"}
"""Row labels of the seed table."""


def _seed_label(judge_id: str) -> str:
    return f"Seed {parse_member_id(judge_id).seed}"


def _computed(frame: pd.DataFrame | None, what: str) -> pd.DataFrame:
    """``frame`` of a seed variance or agreement (``None`` only when it was built without ``what``)."""
    if frame is None:
        raise ValueError(f"the seed variance was computed without its {what}")
    return frame


@computes
def seed_table(sv: SeedVariance) -> pd.DataFrame:
    """Metric by seed, with the spread between seeds beside the width of one seed's 95% interval."""
    f = sv.to_frame()
    out = f[list(sv.members)].rename(columns=_seed_label)
    out["Range (max − min)"] = f["range"]
    out["SD"] = f["sd"]
    out["One seed's 95% interval width"] = f["interval_width"]
    out["Range / width"] = f["range_over_width"]
    if sv.greedy is not None:
        out["Greedy step (T = 0)"] = f[sv.greedy]
    out.index = [METRIC_LABELS.get(m, m) for m in out.index]
    out.index.name = "Metric"
    return out


@computes
def kappa_table(sv: SeedVariance) -> pd.DataFrame:
    """Cohen's kappa of the flags for every pair of seeds."""
    rows = [
        {"Seeds": f"{_seed_label(a)} · {_seed_label(b)}", "Cohen's kappa": k}
        for (a, b), k in sv.agreement.cohen_kappa.items()
    ]
    return pd.DataFrame(rows).set_index("Seeds")


STRATUM_LABELS: dict[str, str] = {"clean": "Clean runs", "silent": "Silent faults", "loud": "Loud faults"}
"""Row labels of the votes table."""


@computes
def votes_table(sv: SeedVariance) -> pd.DataFrame:
    """Per stratum: how many trajectories no seed, some seeds, or every seed flags."""
    votes = _computed(sv.agreement.votes, "votes")
    k = len(sv.members)
    names = {0: "No seed", k: f"All {k} seeds", **{i: plural(i, "seed") for i in range(1, k)}}
    out = votes.rename(columns=names, index=STRATUM_LABELS)
    out.columns = [str(c) for c in out.columns]
    out["Trajectories"] = votes.sum(axis=1).to_numpy()
    out.index.name = "Stratum"
    return out


def votes_sentence(sv: SeedVariance) -> str:
    """What the votes table shows on clean runs and on faults, in one sentence."""
    v, k = _computed(sv.agreement.votes, "votes"), len(sv.members)
    clean, faults = v.loc["clean"], v.loc[["silent", "loud"]].sum()
    return (
        f"Of the {plural(int(clean.sum()), 'clean run')}, {int(clean[0])} are left alone by every seed and "
        f"{int(clean[k])} flagged by every seed; of the {plural(int(faults.sum()), 'fault')}, {int(faults[k])} are "
        f"caught by every seed, {int(faults[0])} by none, and the other {int(faults.sum() - faults[0] - faults[k])} "
        "are caught or missed depending on the seed."
    )


@computes
def seed_delta_table(sv: SeedVariance) -> pd.DataFrame:
    """Metric x pair of seeds: the paired difference with its 95% paired interval."""
    deltas = _computed(sv.deltas, "paired differences")
    d = deltas[deltas["metric"].isin(quality_metrics(sv).index)]
    d = d.assign(
        pair=[f"{_seed_label(b)} − {_seed_label(a)}" for a, b in zip(d["a"], d["b"])],
        text=[format_interval(v, lo, hi, "bootstrap") for v, lo, hi in zip(d["value"], d["low"], d["high"])],
    )
    out = d.pivot(index="metric", columns="pair", values="text")
    out = out.loc[[m for m in quality_metrics(sv).index if m in out.index]]
    out.index = [METRIC_LABELS.get(m, m) for m in out.index]
    out.index.name = "Metric"
    out.columns.name = None
    return out


def delta_sentence(sv: SeedVariance) -> str:
    """How many paired differences between seeds exclude zero, and where."""
    metrics = quality_metrics(sv).index
    deltas = _computed(sv.deltas, "paired differences")
    d, away = deltas[deltas["metric"].isin(metrics)], sv.differing(metrics)
    where = sorted({_in_sentence(METRIC_LABELS.get(m, m)) for m in away["metric"]})
    if away.empty:
        return (
            f"None of the {len(d)} paired differences between two seeds has a 95% paired interval that "
            "excludes zero: at this sample size, no metric tells one seed from another."
        )
    chance = 0.05 * len(d)
    return (
        f"{len(away)} of the {len(d)} paired differences between two seeds have a 95% paired interval that "
        f"excludes zero (on {', '.join(where)}), where chance alone would give about {chance:.1f} when seeds "
        "make no difference: there, which seed the judge samples with moves the measured value by more than "
        "resampling the trajectories explains."
    )


@computes
def quality_metrics(sv: SeedVariance) -> pd.DataFrame:
    """The seed table without cost: the rows where seed spread and interval width are comparable."""
    f = sv.to_frame().drop(index=["s_per_traj"], errors="ignore")
    return f.dropna(subset=["range", "interval_width"])


def determinism_sentence(check: EnsembleCheck) -> str:
    """What re-deriving the ensemble from its stored members, and sampling them again, showed."""
    checked = check.same + len(check.different)
    if checked == 0:
        return "No ensemble verdict on disk has all its members stored yet, so none could be re-derived."
    agree = (
        "every one of them is"
        if not check.different
        else f"{checked - len(check.different)} of them are, and {len(check.different)} are not,"
    )
    first = (
        f"The data holds {plural(checked, 'ensemble verdict')} with all members stored; {agree} "
        "identical to the strict majority of its members."
    )
    rerun = check.rerun_same + check.rerun_different
    if rerun == 0:
        return first + (
            " None was on disk before its members were sampled, so this data does not test determinism across sessions."
        )
    outcome = (
        "all of them came out identical"
        if not check.rerun_different
        else f"{check.rerun_same} came out identical and {check.rerun_different} did not"
    )
    return (
        first + f" For {plural(rerun, 'trajectory', 'trajectories')} the ensemble verdict was committed before its "
        f"members were kept, and the members were sampled again in a later run: {outcome} "
        "(the run records' re-check counts)."
    )


def _in_sentence(label: str) -> str:
    """A label inside a sentence: "Silent recall" → "silent recall", but "ECE" and "F1" stay."""
    return label[0].lower() + label[1:] if len(label) > 1 and label[1].islower() else label


def _narrower(q: pd.DataFrame) -> int:
    """Quality metrics on which the seeds' range is smaller than one seed's interval width."""
    return int((q["range"] < q["interval_width"]).sum())


def spread_sentence(sv: SeedVariance) -> str:
    """How the spread between seeds compares with one seed's interval, over the quality metrics."""
    q = quality_metrics(sv)
    narrower = _narrower(q)
    worst = q["range_over_width"].idxmax()
    return (
        f"On {narrower} of the {len(q)} quality metrics the seeds lie closer together than the width "
        f"of one seed's interval; the largest spread relative to that width is on "
        f"{_in_sentence(METRIC_LABELS.get(worst, worst))} ({q.loc[worst, 'range_over_width']:.2f} of the width)."
    )


def greedy_sentence(sv: SeedVariance) -> str:
    """How the greedy step judge of the same model sits against the seeds, over the quality metrics."""
    if sv.greedy is None:
        return _cannot(
            "the comparison of greedy decoding with sampling",
            "the folder holds no greedy step judge of the same model on these trajectories",
        )
    q = quality_metrics(sv)
    seeds, greedy = q[list(sv.members)], q[sv.greedy]
    outside = int(((greedy < seeds.min(axis=1)) | (greedy > seeds.max(axis=1))).sum())
    farther = int(((greedy - seeds.mean(axis=1)).abs() > q["range"]).sum())
    far = sv.values.loc["false_alarm_rate"]
    lo, hi = far[list(sv.members)].min(), far[list(sv.members)].max()
    verdict = (
        "so how the judge decodes moves these metrics more than which seed it samples with"
        if farther > len(q) / 2
        else "so decoding greedily or by sampling matters no more than the seed does"
    )
    return (
        f"The greedy step judge of the same model lies outside the seeds' range on {outside} of the {len(q)} "
        f"quality metrics, and farther from the seeds' mean than the seeds are from each other on {farther} "
        f"(its false-alarm rate is {far[sv.greedy]:.3f}, the seeds' {lo:.3f}–{hi:.3f}); {verdict}."
    )


def glue_values(sv: SeedVariance | None, checks: list[EnsembleCheck], n_trajectories: int) -> dict[str, str]:
    """Every value the chapter's prose quotes, as text ("–" where the data keeps no members)."""
    from trajectory_judge.judges.selfcons import SEEDS, TEMPERATURE

    out = {
        "n_trajectories": str(n_trajectories),
        "temperature": f"{TEMPERATURE:g}",
        "seeds": ", ".join(str(s) for s in SEEDS[:-1]) + f" and {SEEDS[-1]}",
        "n_members": str(len(SEEDS)),
    }
    check = checks[0] if checks else None
    out["determinism"] = determinism_sentence(check) if check else "This data directory keeps no ensemble members."
    out["n_complete"] = str(check.complete) if check else "–"
    out["intro_seeds"] = summary_sentence(sv)
    if sv is None:
        none = "the folder keeps no ensemble members (members.jsonl)"
        return {
            **out,
            "spread": _cannot("The spread between seeds", none),
            "greedy": "",
            "deltas": _cannot("The paired differences between seeds", none),
            "n_agree": "–",
            "n_seeds": "–",
            "all_agree_share": "–",
            "fleiss_kappa": "–",
        }
    return {
        **out,
        "spread": spread_sentence(sv),
        "greedy": greedy_sentence(sv),
        "deltas": delta_sentence(sv),
        "n_agree": str(sv.agreement.all_agree),
        "n_seeds": str(sv.n),
        "all_agree_share": f"{sv.agreement.all_agree_share:.3f}",
        "fleiss_kappa": f"{sv.agreement.fleiss_kappa:.3f}",
    }


def _cannot(what: str, why: str) -> str:
    """The book's one sentence for a quantity this folder cannot give (:func:`trajectory_judge.book.render.missing.cannot_compute`)."""
    from trajectory_judge.book.render.missing import Quantity, cannot_compute

    return cannot_compute({what: Quantity.missing(why)})


def summary_sentence(sv: SeedVariance | None) -> str:
    """The landing page's sentence on variance over seeds (it adds the reference to the chapter)."""
    if sv is None:
        return "This data keeps no self-consistency members, so variance over sampling seeds is not measured"
    q = quality_metrics(sv)
    narrower = _narrower(q)
    a = sv.agreement
    return (
        f"Sampled at {len(sv.members)} seeds, the self-consistency judge's members give the same flag on "
        f"{a.all_agree} of {plural(sv.n, 'trajectory', 'trajectories')} (Fleiss' kappa {a.fleiss_kappa:.2f}); "
        f"on {narrower} of the {len(q)} quality metrics the spread between seeds stays inside one seed's "
        "interval over trajectories"
    )


# --- how the chapter shows them ---------------------------------------------------------------
NO_MEMBERS = "No ensemble members (members.jsonl) in this data directory"
"""The one-line note that stands in for a table of this chapter on data without members."""


def note(missing: str) -> Any:
    """A one-line note, in italics, shown where the table of ``missing`` would be on data without members."""
    from IPython.display import Markdown

    return Markdown(f"*{NO_MEMBERS}: {missing}.*")


@computes
def seed_values_table(sv: SeedVariance) -> pd.DataFrame:
    """Metric by seed, and the greedy step judge of the same model beside them."""
    f = seed_table(sv)
    return f[[c for c in f.columns if c.startswith("Seed ") or c.startswith("Greedy")]]


@computes
def seed_spread_table(sv: SeedVariance) -> pd.DataFrame:
    """Per metric: the spread between seeds (range, SD) beside the width of one seed's 95% interval."""
    f = seed_table(sv)
    return f[["Range (max − min)", "SD", "One seed's 95% interval width", "Range / width"]]


@computes
def check_table(check: EnsembleCheck) -> pd.DataFrame:
    """The ensemble re-derived from its members: one column (the ensemble), one row per count, in words."""
    names = {
        "members": "Members",
        "complete": "Complete trajectories",
        "same": "Same verdict",
        "different": "Different verdict",
        "without ensemble": "Without ensemble",
        "rerun same": "Sampled again: same",
        "rerun different": "Sampled again: different",
    }
    f = check.to_frame().T.rename_axis("count")
    f.columns.name = None
    return f.rename(index=lambda k: names.get(k, k[:1].upper() + k[1:]))


def prose_values(sv: SeedVariance | None, checks: list[EnsembleCheck]) -> dict[str, str]:
    """The sentences of the chapter that only hold with members, or what to say instead."""
    if sv is None or not checks:
        return {
            "scored_text": "Without stored members there are no seeds to score on this data.",
            "agreement_text": "With no members stored, the seeds' agreement cannot be measured on this data.",
            "votes_text": _cannot(
                "How many seeds flag each trajectory", "the folder keeps no ensemble members (members.jsonl)"
            ),
        }
    a = sv.agreement
    return {
        "scored_text": (
            f"Each seed is scored on the {plural(checks[0].complete, 'trajectory', 'trajectories')} every seed "
            "judged, with the same report, bootstrap and seed as the main table; "
            + (
                "the greedy step judge of the same model is scored on the same trajectories for reference."
                if sv.greedy
                else "the data holds no greedy step judge of the same model on all of them, "
                "so none is shown for reference."
            )
        ),
        "agreement_text": (
            f"On {a.all_agree} of the {plural(sv.n, 'trajectory', 'trajectories')} every seed gives the "
            f"same flag (a share of {a.all_agree_share:.3f}). Fleiss' kappa of the flags, with the seeds "
            f"as raters, is {a.fleiss_kappa:.3f}; the first table below gives Cohen's kappa for each "
            "pair, the second how many seeds flag each trajectory, by stratum."
        ),
        "votes_text": votes_sentence(sv),
    }


# --- figure ----------------------------------------------------------------------------------
SEED_MARKERS: tuple[str, ...] = ("o", "s", "D", "P", "X")
"""One marker per sampling seed, in seed order; every seed in the self-consistency colour."""


@computes
def seed_figure(sv: SeedVariance) -> Any:
    """Each quality metric on one row: every seed's value with its 95% interval, in the
    self-consistency colour with one marker per seed, and the greedy step judge beside them."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import FAMILY_COLOURS, PHONE_WIDTH_IN, judge_style

    metrics = list(quality_metrics(sv).index)
    judges = [*sv.members, *([sv.greedy] if sv.greedy else [])]
    fig, ax = plt.subplots(figsize=(PHONE_WIDTH_IN, 0.75 * len(metrics) + 1.6))
    step = 0.8 / max(1, len(judges) - 1)
    lows, highs = _computed(sv.lows, "interval ends"), _computed(sv.highs, "interval ends")
    for k, j in enumerate(judges):
        style = (
            {
                "color": FAMILY_COLOURS["selfcons"],
                "marker": SEED_MARKERS[k % len(SEED_MARKERS)],
                "label": f"{_seed_label(j)} (T = {parse_member_id(j).temperature:g})",
            }
            if j in sv.members
            else {**judge_style(j), "label": "Greedy step (T = 0)"}
        )
        y = [i - 0.4 + k * step for i in range(len(metrics))]
        x, lo, hi = (sv.values[j].loc[metrics], lows[j].loc[metrics], highs[j].loc[metrics])
        ax.errorbar(
            x,
            y,
            xerr=[(x - lo).clip(lower=0).fillna(0), (hi - x).clip(lower=0).fillna(0)],
            fmt="none",
            ecolor=style["color"],
            elinewidth=1.2,
            capsize=2,
        )
        ax.scatter(
            x,
            y,
            color=style["color"],
            marker=style["marker"],
            s=36,
            zorder=3,
            edgecolor="black",
            linewidth=0.5,
            label=style["label"],
        )
    ax.set_yticks(range(len(metrics)), [METRIC_LABELS.get(m, m) for m in metrics])
    ax.invert_yaxis()
    ax.set(xlim=(0, 1))
    ax.set_xlabel("Value, with its 95% interval over trajectories", loc="right")  # spills left, not past the edge
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    for i in range(1, len(metrics)):
        ax.axhline(i - 0.5, color="#bbbbbb", lw=0.6)
    fig.legend(
        *ax.get_legend_handles_labels(), loc="outside upper center", ncol=2, columnspacing=0.8, handletextpad=0.3
    )  # above the data; fmt: skip
    return fig
