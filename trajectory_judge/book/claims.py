"""The paper's claims, read out and checked against its own verdicts (landing page, results,
analysis and audit).

Each :class:`Claim` holds what the paper says (in this book's words, with the number as printed
and where), the value the released verdicts give, its 95% interval where one exists, and whether
the verdicts bear the claim out. :func:`paper_claims` builds them from the report of the paper's
verdicts; each reads itself out with :meth:`Claim.sentence`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from trajectory_judge.analysis import published as P
from trajectory_judge.analysis.bootstrap import clopper_pearson
from trajectory_judge.analysis.report import Report
from trajectory_judge.book.style import format_interval, format_number, label

QUALITY_AXES: tuple[str, ...] = (
    "f1", "silent_recall", "loud_recall", "false_alarm_rate", "step_exact", "type_macro_f1", "ece", "brier",
)  # fmt: skip
"""The quality axes on which the ensemble is compared with one greedy pass."""


_DELTAS = frozenset({"view_silent_delta", "outcome_gap", "selfcons_ece", "selfcons_within_noise", "rules_type_best",
                     "table9_only_calibration"})
"""Claims whose value is a difference, written with its sign."""


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and what its verdicts give."""

    key: str
    """Short stable name (used for glue keys and tests)."""
    group: str
    """``headline`` (the abstract), ``results`` (§6 and its tables) or ``analysis`` (§7)."""
    where: str
    """Where the paper makes it (``abstract``, ``§6``, ``Table 4 caption``...)."""
    says: str
    """What the paper says, in this book's words, with its number as printed."""
    value: float
    """The value recomputed from the paper's verdicts."""
    low: float | None
    """Lower 95% bound (None when the quantity has no interval)."""
    high: float | None
    """Upper 95% bound."""
    method: str | None
    """How the interval was obtained (``bootstrap``, ``clopper-pearson``), None without one."""
    detail: str
    """What the value counts, in words (``47 of 50 faults``); may be empty."""
    holds: bool
    """True when the verdicts bear the claim out."""
    verdict: str
    """The finding in words when the claim does not hold (empty when it does)."""

    def value_text(self) -> str:
        """The value with its interval, in the book's one format (a ratio as ``2.91 times``)."""
        if self.key.endswith("_cost"):
            return f"{self.value:.2f} times"
        text = format_interval(self.value, self.low, self.high, self.method)
        return "+" + text if self.key in _DELTAS and self.value > 0 else text

    def sentence(self) -> str:
        """``The paper says X (where); its verdicts give Y (interval)`` and, when it fails, why."""
        got = self.value_text() + (f", {self.detail}" if self.detail else "")
        head = f"The paper says {self.says} ({self.where}); its verdicts give {got}"
        return head + (f": {self.verdict}." if not self.holds else ".")


@dataclass(frozen=True)
class Claims:
    """The paper's claims in reading order."""

    items: tuple[Claim, ...]
    """Every claim, headline first."""

    def __getitem__(self, key: str) -> Claim:
        for c in self.items:
            if c.key == key:
                return c
        raise KeyError(f"no claim {key!r}")

    def group(self, group: str) -> list[Claim]:
        """The claims of one group, in order."""
        return [c for c in self.items if c.group == group]

    def contradicted(self) -> list[Claim]:
        """The claims the verdicts do not bear out."""
        return [c for c in self.items if not c.holds]

    def to_frame(self) -> pd.DataFrame:
        """One row per claim: group, where, says, value, low, high, detail, holds, verdict."""
        cols = ["key", "group", "where", "says", "value", "low", "high", "detail", "holds", "verdict"]
        return pd.DataFrame([{c: getattr(x, c) for c in cols} for x in self.items], columns=cols).set_index("key")



def _metric(rep: Report, judge: str, metric: str) -> tuple[float, float | None, float | None, str | None]:
    jr = rep.judges[judge]
    iv = jr.intervals.get(metric)
    v = float(jr.metrics[metric])  # type: ignore[arg-type]
    return (v, iv.low, iv.high, iv.method) if iv else (v, None, None, None)


def _count(rate: float, n: int) -> int:
    return int(round(rate * n))


def _pct_claim(key, group, where, says, printed_pct, rep, judge, metric, n_key) -> Claim:
    v, lo, hi, how = _metric(rep, judge, metric)
    n = rep.judges[judge].strata[n_key]
    holds = round(100 * v) == printed_pct
    return Claim(key, group, where, says, v, lo, hi, how, f"{_count(v, n)} of {n}", holds,
                 "" if holds else f"that is {100 * v:.0f}%, not {printed_pct}%")  # fmt: skip


def _headline(rep: Report) -> list[Claim]:
    out, step = rep.judges[P.OUTCOME], rep.judges[P.STEP]
    t = {k: int(v.value) for k, v in P.PUBLISHED_TEXT.items() if k.startswith("abstract_")}
    claims = [
        _pct_claim("outcome_loud", "headline", "abstract", f"the outcome-only judge catches {t['abstract_outcome_loud_pct']}% of loud faults",
                   t["abstract_outcome_loud_pct"], rep, P.OUTCOME, "loud_recall", "loud"),
        _pct_claim("outcome_silent", "headline", "abstract", f"the outcome-only judge catches only {t['abstract_outcome_silent_pct']}% of silent faults",
                   t["abstract_outcome_silent_pct"], rep, P.OUTCOME, "silent_recall", "silent"),
        _pct_claim("outcome_false_alarms", "headline", "abstract",
                   f"the outcome-only judge flags {t['abstract_outcome_far_pct']}% of the correct trajectories",
                   t["abstract_outcome_far_pct"], rep, P.OUTCOME, "false_alarm_rate", "clean"),
        _pct_claim("step_silent", "headline", "abstract", f"the step-rubric judge, same model, reaches {t['abstract_step_silent_pct']}% silent recall",
                   t["abstract_step_silent_pct"], rep, P.STEP, "silent_recall", "silent"),
    ]  # fmt: skip
    v, lo, hi, how = _metric(rep, P.STEP, "false_alarm_rate")
    n = step.strata["clean"]
    claims.append(Claim("step_zero_false_alarms", "headline", "abstract", "the step-rubric judge raises no false alarm", v, lo, hi, how,
                        "none of the " + f"{n} clean runs flagged" if v == 0 else f"{_count(v, n)} of {n} clean runs flagged", v == 0, "" if v == 0 else "it flags some clean runs"))
    ratio = step.metrics["s_per_traj"] / out.metrics["s_per_traj"]
    ok = round(ratio) == t["abstract_step_cost_ratio"]
    claims.append(Claim("step_cost", "headline", "abstract", f"the step-rubric judge costs {t['abstract_step_cost_ratio']} times as much as the outcome-only one", ratio,
                        None, None, None, f"{format_number(step.metrics['s_per_traj'], 1)} against "
                        f"{format_number(out.metrics['s_per_traj'], 1)} seconds per trajectory, timed once",
                        ok, "" if ok else "the ratio rounds to another number"))  # fmt: skip
    r = step.per_type_recall["unsupported_claim"]
    iv = step.per_type_intervals["unsupported_claim"]
    n = int(rep.claim_table(P.STEP)["n"].sum())
    miss = 1 - float(r)  # type: ignore[arg-type]
    ok = round(100 * miss) == t["abstract_claim_evades_step_pct"]
    claims.append(Claim("claim_evades_step", "headline", "abstract",
                        f"an invented promise evades the step judge {t['abstract_claim_evades_step_pct']}% of the time",
                        miss, 1 - iv.high, 1 - iv.low, iv.method, f"{_count(miss, n)} of {n} unsupported-claim faults missed",
                        ok, "" if ok else f"that is {100 * miss:.0f}%"))  # fmt: skip
    sc = rep.judges[P.SELFCONS]
    ratio = sc.metrics["s_per_traj"] / step.metrics["s_per_traj"]
    better = _improvements(rep)
    ok = round(ratio) == t["abstract_selfcons_cost_ratio"] and not better
    claims.append(Claim("selfcons_cost", "headline", "abstract",
                        f"a self-consistency ensemble of the step judge costs {t['abstract_selfcons_cost_ratio']} times as much and improves nothing", ratio,
                        None, None, None, "no quality axis improves beyond its interval"
                        if not better else "", ok, "" if ok else f"it improves {', '.join(better)}"))  # fmt: skip
    return claims


def _excluding_zero(rep: Report, a: str, b: str) -> list[tuple[str, float, float, float]]:
    """(axis, delta, low, high) of the quality deltas ``b - a`` whose interval excludes zero."""
    out = []
    for m in QUALITY_AXES:
        d = rep.delta(a, b, m)
        if d.low > 0 or d.high < 0:
            out.append((m, d.value, d.low, d.high))
    return out


_LOWER_IS_BETTER = frozenset({"false_alarm_rate", "ece", "brier"})


def _improvements(rep: Report) -> list[str]:
    """Quality axes on which the ensemble is better than one greedy pass beyond its interval."""
    return [label(m) for m, v, _, _ in _excluding_zero(rep, P.STEP, P.SELFCONS) if (v < 0) == (m in _LOWER_IS_BETTER)]


def _results(rep: Report) -> list[Claim]:
    claims = []
    step8 = rep.judges[P.STEP8]
    cells = {**step8.per_type_recall, "false_alarm_rate": step8.metrics["false_alarm_rate"]}
    below = {t: float(x) for t, x in cells.items() if x is not None and x < 1}  # type: ignore[operator]
    t_worst = min(below, key=below.get) if below else "false_alarm_rate"
    v = below.get(t_worst, 1.0)
    n = 50 if t_worst != "false_alarm_rate" else step8.strata["clean"]
    k = _count(v, n)
    lo, hi = clopper_pearson(k, n)
    claims.append(Claim("step8_uniform", "results", "Table 4 caption",
                        "the 8B column is uniformly 1.00, the false-alarm row included", v, lo, hi, "clopper-pearson",
                        f"{label(t_worst).lower()}, {k} of {n} faults flagged", not below,
                        f"{number_word(len(below))} of its {number_word(len(cells))} cells {'is' if len(below) == 1 else 'are'} below 1.00"))  # fmt: skip
    noisy = _excluding_zero(rep, P.STEP, P.SELFCONS)
    if noisy:
        m, d, lo, hi = max(noisy, key=lambda x: abs(x[1]))
    else:
        m, d, lo, hi = "ece", *(lambda x: (x.value, x.low, x.high))(rep.delta(P.STEP, P.SELFCONS, "ece"))
    claims.append(Claim("selfcons_within_noise", "results", "§6",
                        "the ensemble lands within noise of one greedy pass on every quality axis", d, lo, hi, "bootstrap",
                        f"the paired {label(m)} difference, ensemble minus greedy step judge", not noisy,
                        f"the interval of the {label(m)} difference excludes zero (the ensemble is worse calibrated), as §7.4 itself reports"))  # fmt: skip
    only = [x[0] for x in noisy]
    ece = rep.delta(P.STEP, P.SELFCONS, "ece")
    ok = only == ["ece"] and ece.value > 0
    claims.append(Claim("table9_only_calibration", "results", "Table 9 caption",
                        "the ensemble's quality differences from one greedy pass straddle zero on every axis except calibration, "
                        "where the ensemble is worse", ece.value, ece.low, ece.high, "bootstrap",
                        f"the ECE difference; {number_word(len(only))} of {number_word(len(QUALITY_AXES))} axes "
                        f"{'excludes' if len(only) == 1 else 'exclude'} zero",
                        ok, "other axes exclude zero too" if not ok else ""))  # fmt: skip
    st, pub = rep.judges[P.STEP], P.PUBLISHED_MAIN[P.STEP]
    v, lo, hi, how = _metric(rep, P.STEP, "step_exact")
    n_loc, n_pub = int(st.metrics["step_exact_n"] or 0), int(P.PUBLISHED_COUNTS["step_exact_n"].value)
    ok = round(v, 3) == pub["step_exact"] and n_loc == n_pub
    claims.append(Claim("step_localisation", "results", "§6", f"the step judge localises nearly exactly, "
                        f"{format_number(pub['step_exact'])} over its {n_pub} scored cases", v, lo, hi, how,
                        f"over {n_loc} scored cases", ok, "the value or its denominator differs"))  # fmt: skip
    v, lo, hi, how = _metric(rep, P.STEP, "ece")
    o = _metric(rep, P.OUTCOME, "ece")
    ok = round(v, 3) == pub["ece"] and round(o[0], 3) == P.PUBLISHED_MAIN[P.OUTCOME]["ece"] and hi < o[1]  # type: ignore[operator]
    claims.append(Claim("step_calibration", "results", "§6", f"the step judge's stated confidence is nearly honest, ECE "
                        f"{format_number(pub['ece'])} against the outcome judge's {format_number(P.PUBLISHED_MAIN[P.OUTCOME]['ece'])}",
                        v, lo, hi, how, f"against {format_interval(*o)}", ok, "the ECEs differ from the printed ones or overlap"))  # fmt: skip
    rs = float(rep.judges[P.RULES].metrics["silent_recall"])  # type: ignore[arg-type]
    claims.append(Claim("rules_silent", "results", "§6", "the rule engine still misses more than half of the silent faults",
                        rs, None, None, "structural", "its silent recall, fixed by the design", rs < 0.5, "it catches half or more"))
    rules = float(rep.judges[P.RULES].metrics["type_macro_f1"])  # type: ignore[arg-type]
    best = max((j for j in rep.judges if j != P.RULES), key=lambda j: rep.judges[j].metrics["type_macro_f1"] or 0)
    b = float(rep.judges[best].metrics["type_macro_f1"])  # type: ignore[arg-type]
    d = rep.delta(best, P.RULES, "type_macro_f1")
    claims.append(Claim("rules_type_best", "results", "§6", "the rule engine types faults better than any model, at a macro-F1 of "
                        f"{format_number(P.PUBLISHED_MAIN[P.RULES]['type_macro_f1'])}",
                        d.value, d.low, d.high, "bootstrap", f"its margin over the best model's {format_number(b)}",
                        rules > b, "a model types better"))  # fmt: skip
    return claims


def _analysis(rep: Report) -> list[Claim]:
    conf = rep.confusion(P.STEP)
    flagged = int(conf.drop(columns="missed").to_numpy().sum())
    wrong = flagged - int(sum(conf.loc[t, t] for t in conf.index))
    share = wrong / flagged
    lo, hi = clopper_pearson(wrong, flagged)
    third = round(share, 2) == round(1 / 3, 2)
    pd_ = next(d for d in P.PUBLISHED_DELTAS if d.metric == "silent_recall" and d.a == P.OUTCOME)
    d = rep.delta(P.OUTCOME, P.STEP, "silent_recall")
    g_pub, g = P.PUBLISHED_GAPS[0], next(x for x in rep.gaps if x.judge == P.OUTCOME)
    pe = next(d for d in P.PUBLISHED_DELTAS if d.metric == "ece" and d.b == P.SELFCONS)
    e = rep.delta(P.STEP, P.SELFCONS, "ece")
    cr = rep.judges[P.STEP].per_type_recall["unsupported_claim"]
    ci = rep.judges[P.STEP].per_type_intervals["unsupported_claim"]
    s8 = rep.judges[P.STEP8]
    n8 = _count(s8.metrics["recall"] * (s8.strata["silent"] + s8.strata["loud"]) + s8.metrics["false_alarm_rate"] * s8.strata["clean"], 1)
    far8 = float(s8.metrics["false_alarm_rate"])  # type: ignore[arg-type]
    lo8, hi8 = clopper_pearson(_count(far8, s8.strata["clean"]), s8.strata["clean"])
    sign = lambda x: format_number(x).replace("-", "\u2212") if x < 0 else "+" + format_number(x)  # noqa: E731
    same = lambda a, b: round(a, 3) == round(b, 3)  # noqa: E731
    claims = [
        Claim("view_silent_delta", "analysis", "§7.1", f"showing the steps instead of the reply raises silent recall by {sign(pd_.value)}, "
              "same model and prompt otherwise", d.value, d.low, d.high, "bootstrap", "paired, step minus outcome view",
              same(d.value, pd_.value) and d.low > 0, "the difference is not the printed one"),
        Claim("outcome_gap", "analysis", "§7.1", f"the outcome-only judge's loud-minus-silent gap is {sign(g_pub.value)}",
              g.value, g.low, g.high, "bootstrap", "", same(g.value, g_pub.value) and g.low > 0, "the gap is not the printed one"),
        Claim("step_claim_recall", "analysis", "§7.2", "the step judge, shown the reply, catches only "
              f"{format_number(P.PUBLISHED_PER_TYPE[P.STEP]['unsupported_claim'], 2)} of the unsupported-claim faults",
              float(cr), ci.low, ci.high, ci.method, "", round(float(cr), 2) == P.PUBLISHED_PER_TYPE[P.STEP]["unsupported_claim"],  # type: ignore[arg-type]
              "the recall is not the printed one"),
        Claim("step8_floor", "analysis", "§7.3", f"the 8B step judge flags {int(P.PUBLISHED_COUNTS['step8_flagged'].value)} of "
              f"{int(P.PUBLISHED_TEXT['design_trajectories'].value)} trajectories, every clean run included", far8, lo8, hi8,
              "clopper-pearson", f"its false-alarm rate; {n8} of {s8.n} trajectories flagged", far8 == 1 and n8 == P.PUBLISHED_COUNTS["step8_flagged"].value,
              "it leaves some clean runs alone"),
        Claim("selfcons_ece", "analysis", "§7.4", f"voting makes calibration worse: the ensemble's ECE is {sign(pe.value)} above one greedy pass",
              e.value, e.low, e.high, "bootstrap", "paired, ensemble minus step judge", same(e.value, pe.value) and e.low > 0,
              "the difference is not the printed one"),
    ]  # fmt: skip
    f1 = float(s8.metrics["f1"])  # type: ignore[arg-type]
    faults = s8.strata["silent"] + s8.strata["loud"]
    base = faults / s8.n
    claims.append(Claim("step8_f1_base_rate", "analysis", "§7.3",
                        f"the 8B step judge's F1 of {format_number(P.PUBLISHED_MAIN[P.STEP8]['f1'])} is the base rate of faults in the set",
                        base, None, None, None, f"the base rate, {faults} faults in {s8.n} trajectories, against an F1 of {format_number(f1)}",
                        round(f1, 2) == round(base, 2),
                        f"the base rate is what its precision ({format_number(float(s8.metrics['precision']))}) approaches; its F1 "
                        f"is near what flagging everything gives, 2p/(1 + p) = {format_number(2 * base / (1 + base))}"))  # fmt: skip
    return claims + [Claim("step_misattributes_third", "analysis", "§7.5; Figure 4 caption",
                  "the 14B step judge misattributes a third of the faults it detects", share, lo, hi, "clopper-pearson",
                  f"{wrong} of the {flagged} faults it flagged named with another type or none", third,
                  f"that is {share:.2f}, not 0.33; the interval reaches a third, the point value does not")]  # fmt: skip


def paper_claims(rep: Report) -> Claims:
    """The paper's claims, checked on the report of its own verdicts (the five published judges)."""
    return Claims(tuple(_headline(rep) + _results(rep) + _analysis(rep)))


def edition_headline(rep: Report) -> str:
    """This edition's counterpart of the headline, for the first model with both an outcome and a step judge."""
    from trajectory_judge.book.style import family_pairs, judge_name, model_name, parse_judge_id

    pairs = family_pairs(list(rep.judges), [("outcome", "step")])
    if not pairs:
        return "This edition's data holds no outcome-only and step-rubric judge of the same model, so it has no counterpart of the headline"
    o, st = pairs[0]
    f = lambda j, m: format_interval(*_metric(rep, j, m))  # noqa: E731
    model = model_name(parse_judge_id(o).model or "")
    n_o, n_s = rep.judges[o].n, rep.judges[st].n
    scope = f"on all {n_o} trajectories" if n_o == n_s == rep.n_trajectories else f"on {n_o} and {n_s} trajectories"
    return (f"This edition's outcome-only judge ({model}, {scope}) catches {f(o, 'loud_recall')} of loud faults and "
            f"{f(o, 'silent_recall')} of silent ones while flagging {f(o, 'false_alarm_rate')} of clean runs; the "
            f"{judge_name(st).split(' · ')[0].lower()}-rubric judge of the same model reaches {f(st, 'silent_recall')} silent recall "
            f"at a false-alarm rate of {f(st, 'false_alarm_rate')}")


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def number_word(n: int) -> str:
    """``one`` ... ``ten`` for small counts, digits beyond."""
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def holds_sentence(claims: list[Claim]) -> str:
    """How many of ``claims`` the verdicts bear out, in words (``all three``, ``two of the three``)."""
    n, k = len(claims), sum(c.holds for c in claims)
    if n == 0:
        return "There is no claim to check"
    if k == n:
        return f"The verdicts bear out {'the claim' if n == 1 else 'all ' + number_word(n)}"
    if k == 0:
        return f"The verdicts bear out {'neither' if n == 2 else 'none'} of {'them' if n > 1 else 'it'}"
    wrong = n - k
    return (f"The verdicts bear out {number_word(k)} of the {number_word(n)} and contradict "
            f"{'the other' if wrong == 1 else 'the other ' + number_word(wrong)}")


def scope_phrase(counts: list[int], total: int) -> str:
    """How many trajectories a set of judges was scored on: ``all 400 trajectories``, ``between 40 and 400 trajectories``."""
    lo, hi = min(counts), max(counts)
    if lo == hi == total:
        return f"all {total} trajectories" if len(counts) > 1 else f"all {total} trajectories"
    if lo == hi:
        return f"the same {lo} trajectories" if len(counts) > 1 else f"{lo} trajectories"
    return f"between {lo} and {hi} trajectories"


def contradicted_sentence(claims: Claims) -> str:
    """Which statements of the paper's text its verdicts contradict, in one sentence."""
    from trajectory_judge.book.style import list_text

    bad = claims.contradicted()
    if not bad:
        return "No statement of the paper's text that this book checks is contradicted by its verdicts"
    places = [c.where.split(";")[0] for c in bad]
    named = [f"the {p}" if p[:1].isupper() else f"a sentence of its {p}" for p in places]
    lead = "One statement" if len(bad) == 1 else f"{number_word(len(bad)).capitalize()} statements"
    verb = "contradict" if len(bad) > 1 else "contradicts"
    return f"{lead} elsewhere in its text {'is' if len(bad) == 1 else 'are'} not borne out: the verdicts {verb} {list_text(named)}"


def signal_phrase(n_llm: int, n_signal: int) -> str:
    """``of its five LLM judges, one has silent recall above its false-alarm rate`` (number-aware)."""
    if n_llm == 0:
        return "it holds no LLM judge"
    if n_llm == 1:
        return f"its one LLM judge {'has' if n_signal else 'does not have'} silent recall above its false-alarm rate"
    who = ("none" if n_signal == 0 else "all " + number_word(n_llm) if n_signal == n_llm else number_word(n_signal))
    verb = "has" if n_signal in (0, 1) and n_signal != n_llm else "have"
    their = "its" if n_signal in (0, 1) else "their"
    return f"of its {number_word(n_llm)} LLM judges, {who} {verb} silent recall above {their} false-alarm rate"


def claims_markdown(claims: list[Claim]) -> str:
    """A group of claims as a Markdown list, one sentence per claim; a claim its verdicts contradict is marked."""
    return "\n".join(f"- {'' if c.holds else '**Not borne out.** '}{c.sentence()}" for c in claims) + "\n"
