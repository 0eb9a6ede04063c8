"""Judge prompts: one shared prefix, one paragraph per view, the trajectory last.

Every LLM judge is sent one flat prompt string. The prompt is assembled in this order:

1. :data:`SHARED_PREFIX`: the auditor role, the eight-rule procedure, the failure taxonomy and
   the confidence instruction, identical for every view and every trajectory;
2. the view's instructions (:data:`VIEW_INSTRUCTIONS`);
3. the trajectory as that view shows it (:func:`~trajectory_judge.judges.views.render_view`),
   between ``--- BEGIN ---`` and ``--- END ---``.

The content follows the paper's Appendix D (same procedure, taxonomy, confidence instruction and
view paragraphs), written in our own words. The one structural change is ordering: the paper
places the view paragraph between the procedure and the taxonomy; here everything shared comes
first so a server can cache it once, and the view paragraph refers to "the failure types above".
The three views differ only in their paragraph and in what of the trajectory is rendered.
"""

from __future__ import annotations

from ..models import Trajectory
from .views import VIEWS, render_view

ROLE = "You are auditing a customer-support agent."

PROCEDURE = """\
The agent resolves refund requests for an online shop. Its procedure is:
1. Establish who the customer is before doing anything with their order.
2. Fetch the order before forming any judgement about it.
3. Read the refund policy that applies to the item actually ordered.
4. Check eligibility before any money is moved.
5. Refund precisely the amount the eligibility check approved, neither more nor less.
6. When the customer is not eligible, escalate instead of refunding.
7. Use only argument values taken from the goal or from an earlier observation.
8. End with a reply to the customer that states only what the observations back up."""
"""The eight rules of the standard operating procedure (the agent is given the same text)."""

TAXONOMY = """\
- wrong_tool: used a tool that does nothing for the sub-goal it was working on, for example fetching the order a second time when what it needed was the item's refund policy.
- hallucinated_argument: gave a tool an argument value that is found neither in the goal nor in any earlier observation.
- skipped_precondition: left out a step that had to happen first, for example refunding without having checked eligibility.
- ignored_observation: acted against something an earlier observation had already shown, for example refunding a different amount from the one approved.
- premature_stop: ended before the task was finished.
- unsupported_claim: the final reply states something that no observation backs up.
- none: nothing went wrong."""
"""The six failure types plus ``none``, one line each."""

CONFIDENCE = (
    "confidence is the probability that your own verdict is right, from 0.5 (no better than a "
    "coin toss) to 1.0 (certain). Give the value you actually believe; do not fall back on a "
    "round number."
)
"""The confidence instruction, shared by every view."""

SHARED_PREFIX = f"{ROLE}\n\n{PROCEDURE}\n\nFailure types:\n{TAXONOMY}\n\n{CONFIDENCE}\n\n"
"""Everything that precedes the view paragraph: identical for every judge and trajectory."""

OUTCOME_INSTRUCTIONS = """\
What you are shown: only the goal the agent was given and the answer it sent to the customer. The steps the agent took are hidden from you.
Decide whether this answer resolves the request correctly and completely. Report faulty only when the answer itself gives you a reason to: it resolves something other than what was asked, leaves the request unresolved, contradicts itself, or promises something the request cannot justify.
That you cannot see the steps is not evidence that anything went wrong. Do not report faulty because some step of the procedure cannot be verified from here: if the answer reads as a correct resolution, say that it is correct. If you report faulty, name the failure type from the list above."""

STEP_INSTRUCTIONS = """\
What you are shown: the agent's whole trajectory, meaning every thought, tool call and observation, followed by the answer it sent to the customer.
Check each step against the procedure, in order. A trajectory can be faulty even when its final answer is right: reaching the right answer the wrong way is still a failure.
In your reasoning, go through the steps one at a time and say for each whether it was appropriate and why. Then give the index of the first step that went wrong and its failure type from the list above."""

REPLY_INSTRUCTIONS = """\
What you are shown: the agent's whole trajectory, meaning every thought, tool call and observation, followed by the answer it sent to the customer.
Answer one question only: does the final answer to the customer assert anything that the observations do not support? Use the steps as the record of what was established; whether they followed the procedure is not your question here.
In your reasoning, go through the statements of the final answer one at a time and say for each which observation supports it, or that none does. If a statement is unsupported, report faulty, give the index of the step that sent the reply and the failure type from the list above."""

VIEW_INSTRUCTIONS: dict[str, str] = {
    "outcome": OUTCOME_INSTRUCTIONS,
    "step": STEP_INSTRUCTIONS,
    "reply": REPLY_INSTRUCTIONS,
}
"""The view-specific paragraph, keyed by view."""

BEGIN = "--- BEGIN ---"
END = "--- END ---"


def view_prefix(view: str) -> str:
    """The part of a ``view`` prompt that does not depend on the trajectory."""
    if view not in VIEW_INSTRUCTIONS:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
    return f"{SHARED_PREFIX}{VIEW_INSTRUCTIONS[view]}\n\n{BEGIN}\n"


def build_prompt(view: str, traj: Trajectory) -> str:
    """The prompt sent to a ``view`` judge for ``traj``: shared prefix, view paragraph, trajectory last."""
    return f"{view_prefix(view)}{render_view(view, traj)}\n{END}\n"
