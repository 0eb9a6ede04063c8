"""Helpers of the chapter "Where the fault sits" (``notebooks/position.md``): recall by the fault's step and the
trajectory's length on the judged set, the counterfactual set that moves one fault over every step, and
what a judge's flag rate says about the fault rate of unlabelled traces (``prevalence``).

Every helper takes the typed records of :mod:`trajectory_judge.analysis.statistics.position` and
:mod:`trajectory_judge.analysis.statistics.prevalence` and returns a table, a figure or a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from trajectory_judge.analysis.statistics.position import (
    POWER_ASSUMPTION,
    Counterfactual,
    GroupRecall,
    PositionPower,
    PositionStudy,
)
from trajectory_judge.analysis.statistics.prevalence import (
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
    plural,
    source_name,
)
from trajectory_judge.models import JudgeSpec
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
    """One column per judge; a row per position (recall), then false alarms, the spread and its permutation test,
    the paired difference of the last and first steps, Cochran's Q, and what the design detects at the judge's
    number of complete instances."""
    cols = {}
    for c in cfs:
        col = {f"Fault at step {p}": _cell(e) for p, e in zip(c.positions, c.recall)}
        col["Clean runs flagged"] = _cell(c.false_alarm)
        col["Largest − smallest recall (spread)"] = f"{c.spread:.3f}"
        col["Spread, permutation p-value"] = _p(c.spread_p)
        col["Spread by chance (95th percentile)"] = f"{c.spread_null95:.3f}"
        col[f"Step {c.positions[-1]} − step {c.positions[0]}"] = _cell(c.last_minus_first)
        col["Cochran's Q p-value"] = "–" if c.cochran_p == 1.0 and c.cochran_q != c.cochran_q else _p(c.cochran_p)
        col["Instances judged completely"] = str(c.instances)
        col[f"Detectable difference, two steps (power {c.power.target:g})"] = _detectable(c.power.pair_detectable)
        cols[judge_name(c.judge)] = col
    return pd.DataFrame(cols).rename_axis("Measure")


def _p(p: float) -> str:
    """A p-value as the book prints one: three decimals, ``< 0.001`` below that."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _p_is(p: float) -> str:
    """``p = 0.504`` or ``p < 0.001``."""
    return f"p {_p(p)}" if p < 0.001 else f"p = {_p(p)}"


def _detectable(d: float) -> str:
    return "none up to 1" if d != d else f"{d:.3f}"


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


def _is_control(judge: str) -> bool:
    """A judge that cannot prefer a step by construction: a Python judge (the package's coin-flip mock)."""
    return JudgeSpec.parse(judge).kind == "python"


def _instances_text(c: Counterfactual, total: int) -> str:
    return (
        f"all {total} instances"
        if c.instances == total
        else f"the {c.instances} of {total} instances it judged completely"
    )


def design_sentence(power: PositionPower, permutations: int, seed: int) -> str:
    """The method and what it can detect, from the set's size alone, before any result: the permutation test
    of the spread, Cochran's Q, the detectable difference of two steps and the power against a linear rise."""
    from trajectory_judge.book.render.claim_text import number_word

    n, k = power.instances, power.positions
    pairs = k * (k - 1) // 2
    if power.pair_detectable != power.pair_detectable:
        pair = f"no difference up to 1 between two steps' recalls is detected with power {power.target:g}"
    else:
        pair = (
            f"a paired test of two steps chosen in advance (two-sided, level {power.alpha:g}) detects a difference "
            f"of {power.pair_detectable:.3f} in recall with power {power.target:g}, and one of "
            f"{_detectable(power.any_pair_detectable)} when the level is split over all {pairs} pairs of steps"
        )
    rise = (
        f"Cochran's Q reaches power {power.target:g} at a rise of {power.rise_detectable:.3f}"
        if power.rise_detectable == power.rise_detectable
        else f"no rise up to 1 gives Cochran's Q power {power.target:g}"
    )
    return (
        "Whether a judge's recall depends on the step is tested by permutation. If the step does not matter to a "
        "judge, its flags on an instance's mutants are exchangeable, so shuffling each instance's flags over its "
        f"steps ({permutations:,} shuffles, seed {seed}) gives the spread (the largest minus the smallest of the "
        f"{number_word(k)} recalls) that a judge blind to the step shows on the same instances by chance; the p-value is the "
        "number of shuffles at least as spread as the judge, plus one, over the number of shuffles plus one. "
        "Cochran's Q is the omnibus test beside it. The spread has no bootstrap interval: a maximum minus a "
        "minimum is biased upward, and where the recalls are equal nearly every resample's spread is above "
        "zero, so its interval would exclude the very value under test. What the set can detect follows from "
        f"its size alone: with {plural(n, 'instance')}, {pair}, assuming {POWER_ASSUMPTION}. Against recall rising "
        f"linearly by {power.rise:g} from the first step to the last, Cochran's Q has power "
        f"{power.cochran_power:.3f} and the permutation test {power.permutation_power:.3f} "
        f"({power.simulations:,} simulated judges, seed {power.seed}), and {rise}. A judge blind to the step, at "
        f"recall 0.5 with independent flags, keeps its spread at or below {power.blind_spread95:.3f} in 95% of sets "
        "of this size."
    )


def readers_sentence(cfs: Sequence[Counterfactual], total: int) -> str:
    """Which judges have read the set, and on how many of its instances completely."""
    from trajectory_judge.book.render.claim_text import number_word

    parts = []
    for c in cfs:
        if c.judge == "programmatic":
            parts.append(f"the rule engine, on {_instances_text(c, total)}")
        elif _is_control(c.judge):
            parts.append(
                f"as a control, the package's deterministic mock judge ({c.judge}), which flips a coin seeded by what "
                f"it is shown and so cannot prefer a step, on {_instances_text(c, total)}"
            )
        else:
            parts.append(f"{judge_name(c.judge)}, on {_instances_text(c, total)}")
    head = number_word(len(cfs)).capitalize()
    return f"{head} {'judge has' if len(cfs) == 1 else 'judges have'} read the set: {'; '.join(parts)}."


def _span(c: Counterfactual) -> tuple[float, float]:
    return min(e.value for e in c.recall), max(e.value for e in c.recall)


def _beyond_chance(c: Counterfactual) -> str:
    return "beyond what chance gives" if c.spread_p <= c.power.alpha else "within what chance gives"


def counterfactual_sentence(cfs: Sequence[Counterfactual]) -> str:
    """What the counterfactual set shows, judge by judge: recall over the steps, the spread and its permutation
    test, Cochran's Q and the paired difference of the last and first steps."""
    parts = []
    for c in cfs:
        lo, hi = _span(c)
        if lo == hi:
            parts.append(
                f"{judge_name(c.judge)}: the same recall, {lo:.3f}, at every step, a spread of 0 that no shuffle "
                f"moves ({_p_is(c.spread_p)})"
            )
            continue
        parts.append(
            f"{judge_name(c.judge)}: recall from {lo:.3f} to {hi:.3f}, a spread of {c.spread:.3f}, {_beyond_chance(c)} "
            f"(permutation {_p_is(c.spread_p)}, where 95% of shuffles give at most {c.spread_null95:.3f}; Cochran's "
            f"Q {_p_is(c.cochran_p)}; step {c.positions[-1]} minus step "
            f"{c.positions[0]}: {_cell(c.last_minus_first)})"
        )
    return "; ".join(parts) + "."


def control_sentence(cfs: Sequence[Counterfactual]) -> str:
    """What the permutation test says of the coin-flip control: its spread is what chance gives (or is not)."""
    controls = [c for c in cfs if _is_control(c.judge)]
    if not controls:
        return "No control judge has read the set."
    parts = []
    for c in controls:
        if c.spread_p > c.power.alpha:
            parts.append(
                f"The control's spread of {c.spread:.3f} is what chance gives: shuffling its own flags over the steps "
                f"gives one at least as large with {_p_is(c.spread_p)}, and 95% of shuffles give up to "
                f"{c.spread_null95:.3f}, so a range of recalls above zero is no sign of a position effect by itself"
            )
        else:
            parts.append(
                f"The control's spread of {c.spread:.3f} is more than shuffling its own flags over the steps gives "
                f"({_p_is(c.spread_p)}; 95% of shuffles give at most {c.spread_null95:.3f}), which a coin that cannot "
                f"see the step does by chance in a share {c.power.alpha:g} of sets"
            )
    return ". ".join(parts) + "."


def _llm(cfs: Sequence[Counterfactual]) -> list[Counterfactual]:
    return [c for c in cfs if JudgeSpec.parse(c.judge).is_llm]


def _power_text(c: Counterfactual) -> str:
    pw = c.power
    detect = (
        f"detects a difference of {pw.pair_detectable:.3f} between two steps chosen in advance and Cochran's Q a "
        f"linear rise of {_detectable(pw.rise_detectable)} with power {pw.target:g}"
        if pw.pair_detectable == pw.pair_detectable
        else f"detects no difference up to 1 with power {pw.target:g}"
    )
    return (
        f"at {plural(c.instances, 'instance')} the design {detect} (power {pw.cochran_power:.3f} for Q and "
        f"{pw.permutation_power:.3f} for the permutation test against a rise of {pw.rise:g})"
    )


def llm_sentence(cfs: Sequence[Counterfactual], total: int) -> str:
    """The finding when an LLM judge has read the set (with the power at the instances it completed), the method
    framing when none has."""
    llms = _llm(cfs)
    if not llms:
        return (
            "No LLM judge's verdicts on the set are committed, so this section shows the method and what it can "
            "detect, not a finding about LLM judges."
        )
    parts = []
    for c in llms:
        lo, hi = _span(c)
        recall = f"the same recall, {lo:.3f}, at every step" if lo == hi else f"recall from {lo:.3f} to {hi:.3f}"
        if c.spread_p <= c.power.alpha:
            verdict = "so its recall depends on where the fault sits"
        elif c.power.pair_detectable != c.power.pair_detectable:
            verdict = "and at this size the set could not have found an effect of the step on it"
        else:
            verdict = (
                "so the set finds no effect of the step on it, and an effect smaller than the design detects may remain"
            )
        parts.append(
            f"{judge_name(c.judge)} has read the set: on {_instances_text(c, total)}, {recall}, a spread of {c.spread:.3f}, "
            f"{_beyond_chance(c)} (permutation {_p_is(c.spread_p)}, Cochran's Q {_p_is(c.cochran_p)}), {verdict}; "
            f"{_power_text(c)}"
        )
    return ". ".join(parts) + "."


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
        lo, hi = _span(c)
        if lo == hi:
            return f"{judge_name(c.judge)} has recall {lo:.3f} at every step"
        return (
            f"{judge_name(c.judge)} ranges from {lo:.3f} to {hi:.3f} on {plural(c.instances, 'instance')}, a spread "
            f"{_beyond_chance(c)} (permutation {_p_is(c.spread_p)})"
        )

    llms = _llm(cfs)
    tests = "; ".join(span(c) for c in cfs)
    ppi = f", and PPI++ from {p.labelled} labels gives {_rate_cell(p.ppi)}" if p.ppi else ""
    rg = p.rogan_gladen
    if rg.status == UNINFORMATIVE:
        corrected = "say nothing beyond [0, 1] (the judge may be uninformative)"
    elif rg.status == TRANSFER_FAILS:
        corrected = f"give {_signed(rg.raw)}, outside [0, 1] beyond sampling error, so the correction does not transfer"
    else:
        corrected = f"give {_rate_cell(rg)}" + (f" ({clipping_text(rg)})" if rg.clipped else "")
    if llms:  # an LLM judge's verdicts are the finding, each with what the design detects at its instances
        others = [c for c in cfs if c not in llms]
        beside = f"; beside it, {'; '.join(span(c) for c in others)}" if others else ""
        found = "; ".join(f"{span(c)}, where {_power_text(c)}" for c in llms)
        lead = f"On the counterfactual set, {found}{beside}."
    else:  # the rule engine and a control: the set's design shown as a method, not a finding about judges
        lead = (
            "No LLM judge has read the counterfactual set yet, so the chapter shows its design as a method, "
            f"on the rule engine and a control that cannot prefer a step: {tests}."
        )
    return (
        f"{lead} On the organic episodes, whose labels give "
        f"{true_rate:.3f}, the rule engine's flags corrected by its accuracy on the planted set {corrected}" + ppi + "."
    )


def position_values(study: PositionStudy) -> dict[str, str]:
    """The sentences glued into the chapter's prose, by name: the confound of the judged set, the counterfactual
    set's size, its method and what its size can detect (``cf_design``, before any result), who read it
    (``cf_readers``), the results (``cf_text``), the control (``cf_control``), the LLM judge's finding or the
    method framing (``cf_llm``), the prevalence section's sentences and the headline."""
    cfs, prev, total = study.counterfactual, study.prevalence, study.power.instances
    steps = study.types["position"]
    return {
        "confound": "each failure type sits at one step ("
        + "; ".join(f"step {s}: {list_text(list(ts))}" for s, ts in steps.items())
        + "), so a difference between steps is a difference between types",
        "n_cf": str(study.trajectories),
        "n_cf_instances": str(study.instances),
        "cf_design": design_sentence(study.power, study.permutations, study.power.seed),
        "cf_readers": readers_sentence(cfs, total),
        "cf_text": counterfactual_sentence(cfs),
        "cf_control": control_sentence(cfs),
        "cf_llm": llm_sentence(cfs, total),
        **prevalence_sentences(prev, study.true_rate),
        "n_labelled": str(prev.labelled),
        "organic_caught": f"{study.caught} of the {study.faulty} faulty episodes",
        "headline": headline_sentence(cfs, prev, study.true_rate),
    }
