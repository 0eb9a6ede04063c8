"""The support desk's written procedure: the policy an agent must follow and a judge checks.

One text, shown to the organic agent as its instructions and to every LLM judge as the procedure
it audits against (:mod:`trajectory_judge.judges.prompts`).
"""

from __future__ import annotations

PROCEDURE = """\
The agent resolves refund requests for an online shop. Its procedure is:
1. Establish who the customer is before doing anything with their order.
2. Fetch the order before forming any judgement about it.
3. Read the refund policy that applies to the item actually ordered.
4. Check eligibility before any money is moved.
5. Refund precisely the amount the eligibility check approved, neither more nor less.
6. If the customer turns out not to be eligible, hand the case to a human (escalate) rather than refund.
7. Every argument value must already appear in the goal or in the observation of an earlier step.
8. End with a reply to the customer that states only what the observations back up."""
"""The eight rules of the standard operating procedure (the agent is given the same text)."""
