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

from trajectory_judge.judges.views import VIEWS, render_view
from trajectory_judge.models import Trajectory
from trajectory_judge.testbed.procedure import PROCEDURE

ROLE = "Your job is to audit the work of a customer-support agent."


TAXONOMY = """\
- wrong_tool: the tool chosen does not advance the sub-goal at hand (e.g. a second order lookup where the item's refund policy was needed).
- hallucinated_argument: a tool received an argument value with no source: it is in neither the goal nor any earlier observation.
- skipped_precondition: a required earlier step was never done (e.g. money refunded with no eligibility check).
- ignored_observation: an action contradicts what an earlier observation had shown (e.g. a refund amount different from the approved one).
- premature_stop: the agent quit with the task unfinished.
- unsupported_claim: the answer to the customer claims something that none of the observations backs up.
- none: nothing went wrong."""
"""The six failure types plus ``none``, one line each."""


CONFIDENCE = (
    "For confidence, give how likely you think it is that your verdict is right, anywhere from 0.5 "
    "(a pure guess) to 1.0 (no doubt at all). Use your actual estimate rather than a round number."
)
"""The confidence instruction, shared by every view."""


SHARED_PREFIX = f"{ROLE}\n\n{PROCEDURE}\n\nFailure types:\n{TAXONOMY}\n\n{CONFIDENCE}\n\n"
"""Everything that precedes the view paragraph: identical for every judge and trajectory."""


OUTCOME_INSTRUCTIONS = """\
What you are shown: the goal the agent received and the answer it sent to the customer, nothing else. The steps in between are hidden from you.
Judge whether this answer settles the request correctly and completely. Call it faulty only if the answer on its own gives grounds for that: it settles something other than what was asked, leaves the request open, contradicts itself, or promises what the request cannot justify.
Missing sight of the steps is not a sign of failure in itself. A procedure step you have no way to check from here is no reason to flag the answer; when the answer reads as a correct resolution, report it as correct. If you do call it faulty, pick the failure type from the list above."""


STEP_INSTRUCTIONS = """\
What you are shown: the complete trajectory, that is each thought, each tool call with its observation, and finally the answer sent to the customer.
Walk through the steps in order and hold every one of them against the procedure. A correct final answer does not make a trajectory correct: arriving at the right answer by the wrong route counts as a failure.
In your reasoning, take the steps one by one and state for each whether it was the right thing to do, with the reason. Then report the index of the earliest step that went wrong and its failure type from the list above."""


REPLY_INSTRUCTIONS = """\
What you are shown: the complete trajectory, that is each thought, each tool call with its observation, and finally the answer sent to the customer.
You have a single question to settle: does the final answer to the customer claim anything that the observations do not back up? Treat the steps as the record of what was established; whether they followed the procedure is outside this question.
In your reasoning, take the statements of the final answer one by one and name the observation that backs each of them, or say that none does. If any statement lacks support, call the trajectory faulty, report the index of the step that sent the reply and the failure type from the list above."""


VIEW_INSTRUCTIONS: dict[str, str] = {
    "outcome": OUTCOME_INSTRUCTIONS,
    "step": STEP_INSTRUCTIONS,
    "reply": REPLY_INSTRUCTIONS,
}
"""The view-specific paragraph, keyed by view."""


BEGIN = "--- BEGIN ---"


END = "--- END ---"


def prompt_digests() -> dict[str, str]:
    """SHA-256 (first 16 hex digits) of each view's fixed prompt text, for run metadata."""
    import hashlib

    return {v: hashlib.sha256(view_prefix(v).encode("utf-8")).hexdigest()[:16] for v in VIEW_INSTRUCTIONS}


def prompt_sha256(view: str) -> str:
    """SHA-256 (hex) of a ``view`` prompt's fixed text, written as a template (``{view}`` where the trajectory
    goes): what a judge's fingerprint holds for a built-in prompt, as it holds a template's digest for one's own."""
    from trajectory_judge.models.fingerprint import text_digest

    return text_digest(f"{view_prefix(view)}{{view}}\n{END}\n")


def view_prefix(view: str) -> str:
    """The part of a ``view`` prompt that does not depend on the trajectory."""
    if view not in VIEW_INSTRUCTIONS:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
    return f"{SHARED_PREFIX}{VIEW_INSTRUCTIONS[view]}\n\n{BEGIN}\n"


def build_prompt(view: str, traj: Trajectory) -> str:
    """The prompt sent to a ``view`` judge for ``traj``: shared prefix, view paragraph, trajectory last."""
    return f"{view_prefix(view)}{render_view(view, traj)}\n{END}\n"
