"""Helpers of the chapter "Where the fault sits" (``notebooks/position.md``): recall by the fault's step and the
trajectory's length on the judged set, the counterfactual set that moves one fault over every step, and
what a judge's flag rate says about the fault rate of unlabelled traces (``prevalence``).

Every helper takes the typed records of :mod:`trajectory_judge.analysis.position` and
:mod:`trajectory_judge.analysis.prevalence` and returns a table, a figure or a sentence.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from trajectory_judge.analysis.position import Counterfactual, GroupRecall
from trajectory_judge.analysis.prevalence import (
    ASSUMPTION,
    PPI_ASSUMPTION,
    TRANSFER_FAILS,
    UNINFORMATIVE,
    Corrected,
    Prevalence,
    clipping_text,
)
from trajectory_judge.book.render.style import (
    MISSING,
    format_interval,
    judge_name,
    list_text,
    parse_judge_id,
    source_name,
)
from trajectory_judge.provenance.computed import computes

AXIS_HEAD = {"position": "Step", "length": "Steps"}
"""Column heads of the two splits: the fault's step, the trajectory's number of steps."""


def _cell(e) -> str:
    return format_interval(e.value, e.low, e.high, e.method)


@computes
def types_table(types: Mapping[str, Mapping[int, Sequence[str]]]) -> pd.DataFrame:
    """Which failure types each group holds, for both splits: what a split by step or by length also splits by."""
    rows = []
    for axis, groups in types.items():
        for g, ts in groups.items():
            rows.append(
                {
                    "Split": "Fault's step" if axis == "position" else "Trajectory's steps",
                    "Group": g,
                    "Failure types": list_text(list(ts)),
                }
            )
    return pd.DataFrame(rows).set_index(["Split", "Group"])


@computes
def recall_table(recalls: Mapping[str, Sequence[GroupRecall]], axis: str) -> pd.DataFrame:
    """One row per judge (the paper's first, then this edition's), one column per group: recall (95% interval)."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for source, rs in recalls.items():
        for r in rs:
            if r.axis == axis:
                rows.setdefault((source_name(source), judge_name(r.judge)), {})[f"{AXIS_HEAD[axis]} {r.group}"] = _cell(
                    r.recall
                )
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["Verdicts", "Judge"])
    return frame[sorted(frame.columns, key=lambda c: int(c.split()[-1]))]


@computes
def counterfactual_table(cfs: Sequence[Counterfactual]) -> pd.DataFrame:
    """One column per judge; a row per position (recall), then false alarms and the paired spreads."""
    cols = {}
    for c in cfs:
        col = {f"Fault at step {p}": _cell(e) for p, e in zip(c.positions, c.recall)}
        col["Clean runs flagged"] = _cell(c.false_alarm)
        col["Largest − smallest recall"] = _cell(c.spread)
        col[f"Step {c.positions[-1]} − step {c.positions[0]}"] = _cell(c.last_minus_first)
        col["Cochran's Q p-value"] = "–" if c.cochran_p == 1.0 and c.cochran_q != c.cochran_q else f"{c.cochran_p:.3f}"
        col["Instances"] = str(c.instances)
        cols[judge_name(c.judge)] = col
    return pd.DataFrame(cols).rename_axis("Measure")


@computes
def localisation_table(cfs: Sequence[Counterfactual]) -> pd.DataFrame:
    """Share of the instances whose fault each judge flags at the planted step, per position."""
    return pd.DataFrame(
        {judge_name(c.judge): {f"Step {p}": _cell(e) for p, e in zip(c.positions, c.exact_step)} for c in cfs}
    ).rename_axis("Fault at")


@computes
def counterfactual_figure(cfs: Sequence[Counterfactual]) -> Any:
    """Recall against the fault's step, one line per judge in its colour and marker, with 95% intervals."""
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import PHONE_WIDTH_IN, judge_style

    fig, ax = plt.subplots(figsize=(PHONE_WIDTH_IN, 3.2))
    width = 0.25 / max(1, len(cfs) - 1)
    for k, c in enumerate(cfs):
        style = judge_style(c.judge)
        x = [p - 0.125 + k * width if len(cfs) > 1 else p for p in c.positions]
        y = [e.value for e in c.recall]
        lo = [max(0.0, e.value - e.low) for e in c.recall]
        hi = [max(0.0, e.high - e.value) for e in c.recall]
        ax.errorbar(
            x,
            y,
            yerr=[lo, hi],
            color=style["color"],
            marker=style["marker"],
            capsize=2,
            lw=1.2,
            markeredgecolor="black",
            markeredgewidth=0.5,
            label=f"{judge_name(c.judge)} ({c.instances} instances)",
        )
    ax.set(ylim=(-0.03, 1.05), xlabel="Step the fault is planted at", ylabel="Recall")
    ax.set_xticks(list(cfs[0].positions))
    ax.grid(axis="y", color="#dddddd", lw=0.6)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncol=1)
    return fig


def counterfactual_sentence(cfs: Sequence[Counterfactual]) -> str:
    """What the counterfactual set shows, judge by judge, from Cochran's Q and the paired difference."""
    parts = []
    for c in cfs:
        lo, hi = min(e.value for e in c.recall), max(e.value for e in c.recall)
        if lo == hi:
            parts.append(f"{judge_name(c.judge)}: the same recall, {lo:.3f}, at every step")
            continue
        verdict = "differs between steps" if c.cochran_p < 0.05 else "does not differ between steps beyond chance"
        parts.append(
            f"{judge_name(c.judge)}: recall from {lo:.3f} to {hi:.3f}, which {verdict} (Cochran's Q p = "
            f"{c.cochran_p:.3f}; step {c.positions[-1]} minus step {c.positions[0]}: {_cell(c.last_minus_first)})"
        )
    return "; ".join(parts) + "."


@computes
def prevalence_table(p: Prevalence, true_rate: float | None = None, true_n: int | None = None) -> pd.DataFrame:
    """The inputs and the estimates of ``prevalence``, each value with its interval and what it counts; a
    Rogan–Gladen estimate without an interval (or without a point) says why in its counts."""
    rg = p.rogan_gladen
    if rg.status == UNINFORMATIVE:
        rg_row = ("[0, 1]", "uninformative: sensitivity + specificity − 1 may be 0")
    elif rg.status == TRANSFER_FAILS:
        rg_row = (MISSING, f"no interval: the transfer fails ({_signed(rg.raw)}, its whole interval beyond [0, 1])")
    else:
        rg_row = (_rate_cell(rg), clipping_text(rg))
    rows = {
        "Flag rate on the episodes": (_rate_cell(p.flag_rate), f"{p.flag_rate.successes} of {p.flag_rate.n}"),
        "Sensitivity on the planted set": (
            _rate_cell(p.sensitivity),
            f"{p.sensitivity.successes} of {p.sensitivity.n}",
        ),
        "Specificity on the planted set": (
            _rate_cell(p.specificity),
            f"{p.specificity.successes} of {p.specificity.n}",
        ),
        "Sensitivity + specificity − 1": (_rate_cell(p.informedness), "what the correction divides by"),
        "Fault rate, Rogan–Gladen": rg_row,
    }
    if p.ppi is not None and p.classical is not None:
        rows["Fault rate, PPI++"] = (
            _rate_cell(p.ppi),
            f"{p.labelled} labelled episodes, flags weighted {p.ppi_lambda:.2f}",
        )
        rows["Fault rate, the labelled episodes alone"] = (_rate_cell(p.classical), f"{p.labelled} labelled episodes")
    if true_rate is not None:
        rows["Labelled fault rate (checker or outcome)"] = (f"{true_rate:.3f}", f"of {true_n}")
    return pd.DataFrame(rows, index=["Value (95% interval)", "Counts"]).T.rename_axis("Quantity")


def _rate_cell(r: Any) -> str:
    return format_interval(r.estimate, r.low, r.high, r.method)


def _signed(x: float | None, decimals: int = 3) -> str:
    """A value (three decimals) or a bound (two) with a true minus sign, as the book writes them."""
    return MISSING if x is None else f"{x:.{decimals}f}".replace("-", "\u2212")


def sample_labels(faulty: Sequence[bool], k: int, seed: int = 7) -> list[bool | None]:
    """``k`` of the labels kept at random (seeded), the rest hidden: a user who labelled a few traces."""
    keep = set(random.Random(f"labels-{seed}").sample(range(len(faulty)), k))
    return [bool(f) if i in keep else None for i, f in enumerate(faulty)]


def _rg_sentence(rg: Corrected) -> str:
    """What the Rogan–Gladen correction gives, in words: its interval, or why there is none."""
    if rg.status == UNINFORMATIVE:
        return (
            "Its sensitivity plus specificity is not above 1 at 95% confidence, so its flags may carry nothing to "
            "invert: the correction says only that the rate is somewhere in [0, 1]."
        )
    if rg.status == TRANSFER_FAILS and rg.raw is not None and rg.raw_low is not None and rg.raw_high is not None:
        side = "above 1, more than every episode being faulty" if rg.raw > 1 else "below 0, fewer than none"
        return (
            f"The correction gives {_signed(rg.raw)}, and its whole 95% interval before clipping "
            f"({_signed(rg.raw_low, 2)} to {_signed(rg.raw_high, 2)}) lies {side}: no fault rate is consistent with "
            "these flags and the planted set's error rates, so the judge's error rates there do not hold on the "
            "episodes, and no interval is given."
        )
    clip = f" ({clipping_text(rg)})" if rg.clipped else ""
    return f"The correction gives {_rate_cell(rg)}{clip}."


def prevalence_sentences(p: Prevalence, true_rate: float) -> dict[str, str]:
    """The prose of the prevalence section, from its numbers."""
    out = {
        "prev_rg": (
            f"The rule engine flags {p.flag_rate.successes} of the {p.flag_rate.n} organic episodes. On the planted "
            f"set it catches {p.sensitivity.successes} of {p.sensitivity.n} faults (sensitivity "
            f"{_rate_cell(p.sensitivity)}) and flags {p.specificity.n - p.specificity.successes} of "
            f"{p.specificity.n} clean runs (specificity {_rate_cell(p.specificity)}). {_rg_sentence(p.rogan_gladen)} "
            f"The episodes' own labels give {true_rate:.3f}."
        ),
        "prev_assumption": f"It assumes what the command prints: {ASSUMPTION}.",
    }
    if p.ppi is not None and p.classical is not None:
        lam = p.ppi_lambda or 0.0
        weight = (
            "gives the flags no weight, as they do not covary with the labels there, so it is the labels' own estimate"
            if lam == 0
            else f"gives the flags a weight of {lam:.2f}"
        )
        out["prev_ppi"] = (
            f"With {p.labelled} of the episodes labelled at random, power-tuned prediction-powered inference (PPI++) "
            f"gives {_rate_cell(p.ppi)}; it {weight} (the labels alone: {_rate_cell(p.classical)}), and it assumes "
            f"only that {PPI_ASSUMPTION}."
        )
    return out


def headline_sentence(cfs: Sequence[Counterfactual], p: Prevalence, true_rate: float) -> str:
    """The chapter's finding in its numbers, for its first screen."""

    def span(c: Counterfactual) -> str:
        lo, hi = min(e.value for e in c.recall), max(e.value for e in c.recall)
        if lo == hi:
            return f"{judge_name(c.judge)} has recall {lo:.3f} at every step"
        return f"{judge_name(c.judge)} ranges from {lo:.3f} to {hi:.3f} (Cochran's Q p = {c.cochran_p:.3f})"

    tests = "; ".join(span(c) for c in cfs)
    ppi = f", and PPI++ from {p.labelled} labels gives {_rate_cell(p.ppi)}" if p.ppi else ""
    rg = p.rogan_gladen
    if rg.status == UNINFORMATIVE:
        corrected = "say nothing beyond [0, 1] (the judge may be uninformative)"
    elif rg.status == TRANSFER_FAILS:
        corrected = f"give {_signed(rg.raw)}, outside [0, 1] beyond sampling error, so the correction does not transfer"
    else:
        corrected = f"give {_rate_cell(rg)}" + (f" ({clipping_text(rg)})" if rg.clipped else "")
    if any(parse_judge_id(c.judge).kind in ("llm", "ensemble") for c in cfs):
        lead = f"On the counterfactual set, {tests}."
    else:  # the rule engine and a control: the set's design shown as a method, not a finding about judges
        lead = (
            "No LLM judge has read the counterfactual set yet, so the chapter shows its design as a method, "
            f"on the rule engine and a control that cannot prefer a step: {tests}."
        )
    return (
        f"{lead} On the organic episodes, whose labels give "
        f"{true_rate:.3f}, the rule engine's flags corrected by its accuracy on the planted set {corrected}" + ppi + "."
    )


@dataclass(frozen=True)
class PositionChapter:
    """Everything the chapter shows, computed once: the records and the sentences glued into its prose."""

    types: dict[str, dict[int, tuple[str, ...]]]
    """Per split, the failure types of each group (judged set)."""
    recalls: dict[str, list[GroupRecall]]
    """Recall per judge and group, for the paper's verdicts (``release``) and this edition's (``edition``)."""
    counterfactual: list[Counterfactual]
    """Per judge, the counterfactual set's records."""
    prevalence: Prevalence
    """``prevalence`` on the organic episodes, the rule engine as the judge."""
    true_rate: float
    """The organic episodes' labelled fault rate."""
    n_episodes: int
    """Organic episodes."""
    values: dict[str, str]
    """The glued sentences, by name."""


def position_chapter(
    paper, ours, cf, episodes, *, resamples: int, seed: int, labelled: int, calibration=None
) -> PositionChapter:
    """The chapter's records on the paper's and this edition's data, the counterfactual set and the organic
    episodes (the rule engine judges them, ``labelled`` of them labelled at random for PPI). ``calibration``
    is the labelled folder whose rule-engine verdicts calibrate ``prevalence`` (``ours`` by default; the
    book passes its own planted set, which holds the rule engine's verdicts whatever folder it is built on)."""
    from trajectory_judge.analysis.position import AXES, counterfactual_recall, recall_by, types_by
    from trajectory_judge.analysis.prevalence import prevalence_from_data
    from trajectory_judge.judges.programmatic import ProgrammaticJudge

    types = {axis: types_by(ours.trajectories, axis) for axis in AXES}
    recalls = {
        source: [
            r for axis in AXES for r in recall_by(d.trajectories, d.verdicts, axis, resamples=resamples, seed=seed)
        ]
        for source, d in (("release", paper), ("edition", ours))
    }
    cfs = counterfactual_recall(cf.trajectories, cf.verdicts, resamples=resamples, seed=seed)
    rules = ProgrammaticJudge()
    organic = [e.trajectory for e in episodes]
    user = [rules.judge(t) for t in organic]
    faulty = [bool(t.label and t.label.faulty) for t in organic]
    prev = prevalence_from_data(
        ours if calibration is None else calibration,
        "programmatic",
        user,
        labels=sample_labels(faulty, labelled, seed),
        resamples=resamples,
        seed=seed,
    )
    true_rate = sum(faulty) / len(faulty)
    caught = sum(v.faulty and f for v, f in zip(user, faulty))
    steps = types["position"]
    values = {
        "confound": "each failure type sits at one step ("
        + "; ".join(f"step {s}: {list_text(list(ts))}" for s, ts in steps.items())
        + "), so a difference between steps is a difference between types",
        "n_cf": str(len(cf.trajectories)),
        "n_cf_instances": str(len({t.instance_id for t in cf.trajectories})),
        "cf_text": counterfactual_sentence(cfs),
        **prevalence_sentences(prev, true_rate),
        "n_labelled": str(prev.labelled),
        "organic_caught": f"{caught} of the {sum(faulty)} faulty episodes",
        "headline": headline_sentence(cfs, prev, true_rate),
    }
    return PositionChapter(types, recalls, cfs, prev, true_rate, len(organic), values)
