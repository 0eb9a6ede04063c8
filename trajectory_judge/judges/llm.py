"""The single-pass LLM judge: one view, one model, one greedy decode under the view's schema."""

from __future__ import annotations

from typing import Any

from trajectory_judge.backends.clients import Completion, ModelClient
from trajectory_judge.judges.coerce import coerce
from trajectory_judge.judges.custom import PromptTemplate
from trajectory_judge.judges.prompts import build_prompt, prompt_sha256
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.judges.views import VIEWS
from trajectory_judge.models import Fingerprint, JudgeSpec, Trajectory, Verdict
from trajectory_judge.models.fingerprint import json_digest

DEFAULT_TEMPERATURE = 0.0


DEFAULT_SEED = 7


def completion_verdict(c: Completion, *, trajectory_id: str, judge_id: str, traj: Trajectory) -> Verdict:
    """Coerce one completion into a verdict; an output cut at ``max_tokens`` is noted in ``error``."""
    note = "output truncated at max_tokens" if c.finish_reason == "length" else None
    return coerce(
        c.text,
        trajectory_id=trajectory_id,
        judge_id=judge_id,
        step_indices=[s.index for s in traj.steps],
        latency_s=c.latency_s,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        note=note,
    )


class PromptedJudge:
    """What every judge that sends a model one prompt over a view shares: the prompt (a template of one's own
    over the view, or the view's prompt) and the part of the fingerprint that names the model, the prompt, the
    schema and the decoding."""

    view: str
    client: ModelClient
    temperature: float
    template: PromptTemplate | None
    schema: dict[str, Any]

    def prompt(self, traj: Trajectory) -> str:
        """The prompt sent for ``traj`` (the label-free copy the runner hands a judge)."""
        return self.template.render(self.view, traj) if self.template else build_prompt(self.view, traj)

    def prompted_fingerprint(self, **sampling: Any) -> Fingerprint:
        """The fingerprint of the model sent, the prompt's and schema's digests, the temperature, the output
        budget and ``sampling`` (the seed, or an ensemble's seeds)."""
        return Fingerprint(
            model=getattr(self.client, "model", None),
            prompt_sha256=self.template.sha256 if self.template else prompt_sha256(self.view),
            schema_sha256=json_digest(self.schema),
            temperature=self.temperature,
            max_tokens=getattr(self.client, "max_tokens", None),
            **sampling,
        )


class LLMJudge(PromptedJudge):
    """An LLM judge reading one view (``outcome``, ``step`` or ``reply``); id ``f"{view}:{model_name}"``.

    ``model_name`` names the model in verdict ids (spelled as Ollama would, e.g.
    ``qwen2.5-coder:1.5b``) independently of what the server calls it. With ``template`` (a prompt of
    one's own, :mod:`~trajectory_judge.judges.custom`) the prompt is the template over the view, the
    id ``f"{view}+{template.name}:{model_name}"``; the response schema and the parser stay the view's.
    """

    def __init__(
        self,
        view: str,
        client: ModelClient,
        model_name: str,
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        seed: int = DEFAULT_SEED,
        template: PromptTemplate | None = None,
    ) -> None:
        if view not in VIEWS:
            raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
        self.view = view
        self.client = client
        self.model_name = model_name
        self.temperature = temperature
        self.seed = seed
        self.template = template
        self.judge_id = JudgeSpec.llm(view, model_name, template.name if template else None).judge_id
        self.schema = response_schema(view)

    def fingerprint(self) -> Fingerprint:
        """What this judge is beyond its id: the model sent, the prompt's and schema's digests, the decoding."""
        return self.prompted_fingerprint(seed=self.seed)

    def judge(self, traj: Trajectory) -> Verdict:
        """One request, one verdict (client failures propagate; they are never verdicts)."""
        c = self.client.complete(self.prompt(traj), self.schema, temperature=self.temperature, seed=self.seed)
        return completion_verdict(c, trajectory_id=traj.trajectory_id, judge_id=self.judge_id, traj=traj)
