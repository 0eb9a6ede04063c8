"""What every part of the claims register shares: how a claim record is written, the numbers the text prints
(:mod:`trajectory_judge.analysis.paper.published`) read at their printed form, and two quantities several parts check
(a cost ratio on the report's replicates, a judge's flagged count).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from trajectory_judge.analysis.core.report import Report
from trajectory_judge.analysis.paper import estimates as E, published as P
from trajectory_judge.analysis.paper.claims import Claim, Counted, Estimate, Stated, Test, Variant
from trajectory_judge.analysis.paper.estimates import QUOTED_MISS_PROMISE  # noqa: F401  (re-exported: the register names it)

O, S, S8, SC, R = P.OUTCOME, P.STEP, P.STEP8, P.SELFCONS, P.RULES
"""The paper's five judges: outcome, step (14B), step (8B), self-consistency ensemble, rule engine."""


ORGANIC_WHY = "the release holds no organic episodes, only the verdicts on the 400 injected trajectories"
REPLY_WHY = "the release holds no reply-only judge's verdicts"

PCT, DP3, DP2 = 0.01, 0.001, 0.01
"""One unit of the last printed digit of a percentage, of three decimals and of two decimals."""


def record(
    group: str,
    where: str,
    key: str,
    says: str,
    stated: Stated,
    quantity: str,
    estimate: Estimate | None,
    why_not: str = "",
    variants: Iterable[Variant] = (),
) -> Claim:
    """A claim record (positional, so the lists read as tables); each part of the register binds its ``group``
    (``partial(record, "results")``), and its ``where`` too when all its claims share it."""
    return Claim(key, group, where, says, stated, quantity, estimate, why_not, tuple(variants))


def text_value(key: str) -> float:
    """A number printed in the text (:data:`~.published.PUBLISHED_TEXT`)."""
    return float(P.PUBLISHED_TEXT[key].value)


def count_value(key: str) -> float:
    """A count printed in the text (:data:`~.published.PUBLISHED_COUNTS`)."""
    return float(P.PUBLISHED_COUNTS[key].value)


def paired_value(key: str) -> float:
    """A number of the camera-ready abstract (:data:`~.published.PUBLISHED_PAIRED`)."""
    return float(P.PUBLISHED_PAIRED[key].value)


def pct_text(x: float) -> str:
    """``84%``."""
    return f"{x:g}%"


def stated_pct(key: str) -> Stated:
    """A percentage the text prints (:func:`text_value` ``key``), stated as printed (``84%``) at its precision."""
    v = text_value(key)
    return Stated.number(pct_text(v), v / 100, PCT)


def stated_signed(x: float) -> Stated:
    """A signed difference stated at three decimals, written with its sign (``+0.314``)."""
    return Stated.number(signed_text(x), x, DP3)


def stated_decimals(x: float, unit: float = DP3) -> Stated:
    """A number stated at a printed precision of ``unit`` (:data:`DP2`, :data:`DP3`), written at it (``0.18``)."""
    return Stated.number(f"{x:.{round(-math.log10(unit))}f}", x, unit)


def signed_text(x: float, digits: int = 3) -> str:
    """``+0.314``, with a true minus sign."""
    return f"{x:+.{digits}f}".replace("-", "\u2212")


def cost_ratio(rep: Report, num: str, den: str) -> Estimate:
    """The ratio of two judges' seconds per trajectory, on every replicate of the report's bootstrap."""
    return E.replicate_function(
        rep,
        [f"{num}|s_per_traj", f"{den}|s_per_traj"],
        lambda a, b: a / b,
        f"{rep.judges[num].metrics['s_per_traj']:.1f} against {rep.judges[den].metrics['s_per_traj']:.1f} "
        "seconds per trajectory",
        rep.n_trajectories,
    )


def flagged_count(rep: Report, judge: str) -> int:
    """Trajectories a judge flagged."""
    jr = rep.judges[judge]
    if jr.metrics["recall"] is None or jr.metrics["false_alarm_rate"] is None:
        raise ValueError(f"{judge}: no recall or false-alarm rate to count its flags from")
    return E.flagged(jr)


def published_main(judge: str, m: str) -> float:
    """A cell of the paper's main table (:data:`~.published.PUBLISHED_MAIN`)."""
    return float(P.PUBLISHED_MAIN[judge][m])  # type: ignore[arg-type]


def axes_count(
    rep: Report, a: str, b: str, test: str = "excludes", of: Sequence[str] = E.QUALITY_AXES, qualifier: str = ""
) -> Estimate:
    """How many quality axes ``of`` have a paired difference ``b - a`` whose interval passes ``test`` (``excludes``
    zero, or ``better``: lies on the side where ``b`` is better), counted from the differences themselves, so the
    rule's alternatives count them again (:meth:`~trajectory_judge.analysis.paper.claims.Estimate.recount`)."""

    def side(m: str) -> Test:
        if test == "excludes":
            return "excludes"
        return "below" if m in E.LOWER_IS_BETTER else "above"

    parts = [Counted(m, E.delta(rep, a, b, m), side(m)) for m in of]
    return Estimate.count_of(parts, lambda hits: E.axes_detail(hits, of, qualifier))
