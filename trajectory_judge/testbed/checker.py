"""The rule checker: one left-to-right pass with a grounding pool, eight rules.

The pool starts with the identifiers in the goal (email addresses and order ids) and grows
with every scalar of every *successful* observation. Prose arguments (``escalate.reason``,
``reply.text``) are never traced and never ground anything: identifiers ground, sentences do not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from trajectory_judge.models import OUTCOME_ONLY, Trajectory, type_order

TRACED_ARGS: dict[str, tuple[str, ...]] = {
    "get_customer": ("email",),
    "lookup_order": ("order_id",),
    "get_policy": ("sku",),
    "check_eligibility": ("order_id",),
    "issue_refund": ("order_id", "amount_eur"),
    "escalate": (),
    "reply": (),
}
"""The arguments the checker traces back to the goal or an earlier observation."""


RULES: dict[str, tuple[int, str]] = {
    "R1_ungrounded_argument": (1, "hallucinated_argument"),
    "R2_eligibility_without_lookup": (2, "skipped_precondition"),
    "R3_refund_without_eligibility": (3, "skipped_precondition"),
    "R4_amount_mismatch": (4, "ignored_observation"),
    "R5_identity_mismatch": (5, "ignored_observation"),
    "R6_already_refunded": (6, "ignored_observation"),
    "R7_reply_placement": (7, "premature_stop"),
    "R8_no_terminal_action": (8, "premature_stop"),
}
"""Rule id -> (priority, failure type it evidences)."""


AMOUNT_TOLERANCE_EUR = 0.01
"""R4 fires when a refund differs from the authorised maximum by at least this much."""


GROUNDING_TOLERANCE = 0.005
"""A number grounds when it is within this of a number already in the pool."""


_GOAL_FACTS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[A-Z]{2,5}-\d+\b")


@dataclass(frozen=True, order=True)
class Violation:
    """One rule broken at one step."""

    step: int
    priority: int
    rule: str
    failure_type: str
    detail: str


def _scalars(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _scalars(v)
    elif value is not None:
        yield value


class _Pool:
    def __init__(self) -> None:
        self.strings: set[str] = set()
        self.numbers: list[float] = []

    def add(self, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.numbers.append(float(value))
        self.strings.add(str(value))

    def grounds(self, value: Any) -> bool:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return any(abs(float(value) - n) < GROUNDING_TOLERANCE for n in self.numbers)
        return str(value) in self.strings


def _violation(step: int, rule: str, detail: str) -> Violation:
    priority, ftype = RULES[rule]
    return Violation(step, priority, rule, ftype, detail)


def check(traj: Trajectory) -> list[Violation]:
    """All violations of ``traj``, ordered by (step, rule priority)."""
    pool = _Pool()
    for fact in _GOAL_FACTS.findall(traj.goal):
        pool.add(fact)
    found: list[Violation] = []
    verified: str | None = None  # customer id of the verified requester
    looked_up: dict[str, dict[str, Any]] = {}  # order id -> lookup data
    authorised: dict[str, float] = {}  # order id -> max refund of a passing check
    refunded: set[str] = set()
    for s in traj.steps:
        tool, args, obs = s.call.tool, s.call.args, s.observation
        order_id = str(args.get("order_id", ""))
        found.extend(_call_violations(s.index, tool, args, order_id, pool, looked_up))
        if tool == "issue_refund":
            found.extend(_refund_violations(s.index, args, order_id, verified, looked_up, authorised, refunded))
        if obs.ok:
            for v in _scalars(obs.data):
                pool.add(v)
            if tool == "get_customer":
                verified = obs.data.get("customer_id", verified)
            elif tool == "lookup_order":
                looked_up[order_id] = dict(obs.data)
            elif tool == "check_eligibility" and obs.data.get("eligible") is True:
                authorised[order_id] = float(obs.data.get("max_refund_eur", 0.0))
            elif tool == "issue_refund":
                refunded.add(order_id)
    found.extend(_ending_violations(traj))
    return sorted(found)


def _call_violations(
    index: int, tool: str, args: dict[str, Any], order_id: str, pool: _Pool, looked_up: dict[str, dict[str, Any]]
) -> list[Violation]:
    """What a call gets wrong by what it asks: arguments nothing seen so far grounds (R1), an eligibility
    check on an order not looked up (R2)."""
    out: list[Violation] = []
    for name in TRACED_ARGS.get(tool, ()):
        if name in args and not pool.grounds(args[name]):
            detail = f"{tool}.{name}={args[name]!r} appears neither in the goal nor in an earlier observation"
            out.append(_violation(index, "R1_ungrounded_argument", detail))
    if tool == "check_eligibility" and order_id not in looked_up:
        detail = f"eligibility checked on {order_id!r} before looking the order up"
        out.append(_violation(index, "R2_eligibility_without_lookup", detail))
    return out


def _refund_violations(
    index: int,
    args: dict[str, Any],
    order_id: str,
    verified: str | None,
    looked_up: dict[str, dict[str, Any]],
    authorised: dict[str, float],
    refunded: set[str],
) -> list[Violation]:
    out: list[Violation] = []
    if order_id not in authorised:
        detail = f"refund on {order_id!r} with no passing eligibility check on record"
        out.append(_violation(index, "R3_refund_without_eligibility", detail))
    else:
        amount = args.get("amount_eur")
        if not isinstance(amount, (int, float)) or abs(float(amount) - authorised[order_id]) >= AMOUNT_TOLERANCE_EUR:
            detail = f"refund of {amount!r} but the check authorised {authorised[order_id]:.2f}"
            out.append(_violation(index, "R4_amount_mismatch", detail))
    owner = looked_up.get(order_id, {}).get("customer_id")
    if owner is not None and verified is not None and owner != verified:
        detail = f"order {order_id!r} belongs to {owner}, not the verified {verified}"
        out.append(_violation(index, "R5_identity_mismatch", detail))
    if order_id in refunded or looked_up.get(order_id, {}).get("status") == "refunded":
        out.append(_violation(index, "R6_already_refunded", f"order {order_id!r} was already refunded"))
    return out


def _ending_violations(traj: Trajectory) -> list[Violation]:
    if not traj.steps:
        return [
            _violation(0, "R7_reply_placement", "no steps at all, so no reply"),
            _violation(0, "R8_no_terminal_action", "no steps at all"),
        ]
    last = traj.steps[-1].index
    replies = [s.index for s in traj.steps if s.call.tool == "reply"]
    out: list[Violation] = []
    if not replies:
        out.append(_violation(last, "R7_reply_placement", "the trajectory never replies to the customer"))
    elif len(replies) > 1:
        detail = f"{len(replies)} replies where exactly one is expected"
        out.append(_violation(replies[1], "R7_reply_placement", detail))
    elif replies[0] != last:
        out.append(_violation(replies[0], "R7_reply_placement", "the reply is not the last step"))
    if not any(s.call.tool in ("issue_refund", "escalate") for s in traj.steps):
        out.append(_violation(last, "R8_no_terminal_action", "neither refunds nor escalates"))
    return out


def checker_table(trajectories: list[Trajectory]) -> list[tuple[str, int, int, int]]:
    """Per design type: (type, n, flagged, flagged with the right type)."""
    rows: Counter[tuple[str, str]] = Counter()
    for t in trajectories:
        kind = "clean" if t.label is None or not t.label.faulty else t.label.failure_type or OUTCOME_ONLY
        if t.label is None:
            kind = "unlabelled"
        v = check(t)
        rows[(kind, "n")] += 1
        rows[(kind, "flagged")] += bool(v)
        rows[(kind, "typed")] += bool(v) and t.label is not None and v[0].failure_type == t.label.failure_type
    types = type_order(k for k, _ in rows if k not in ("clean", OUTCOME_ONLY, "unlabelled"))
    kinds = [k for k in ("clean", *types, OUTCOME_ONLY, "unlabelled") if rows[(k, "n")]]
    return [(k, rows[(k, "n")], rows[(k, "flagged")], rows[(k, "typed")]) for k in kinds]
