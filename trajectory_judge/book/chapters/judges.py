"""Helpers of the chapter "The judges" (``notebooks/judges.md``): the paper's judges, the judges
found in the verdicts, the prompts' parts, and each judge's own decoding settings (which
:mod:`trajectory_judge.book.chapters.runs` tabulates per run).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from trajectory_judge.book.render.style import PYTHON, number_word
from trajectory_judge.judges.prompts import SHARED_PREFIX, build_prompt, view_prefix
from trajectory_judge.models import JudgeSpec
from trajectory_judge.provenance.computed import computes


# --- prompts and run records -----------------------------------------------------------------
def prompt_parts(view: str, traj: Any) -> tuple[str, str]:
    """The prompt of ``view`` for ``traj`` as (shared prefix, the rest); the two add up to it."""
    prompt = build_prompt(view, traj)
    if not prompt.startswith(SHARED_PREFIX):
        raise ValueError(f"the {view} prompt does not start with the shared prefix")
    return SHARED_PREFIX, prompt[len(SHARED_PREFIX) :]


def view_paragraph(view: str) -> str:
    """The part of a ``view`` prompt between the shared prefix and the trajectory."""
    return view_prefix(view)[len(SHARED_PREFIX) :]


def judge_decoding(judge: str, decoding: dict[str, Any]) -> tuple[Any, Any]:
    """The (temperature, seed) ``judge`` decoded with, from its run record's ``decoding``.

    A single-pass judge has the record's own; an ensemble has its sampling temperature and all its
    seeds (``"7,8,9"``); a member (``step@T0.7/seed8:...``) has the sampling temperature and its own
    seed. A member whose id disagrees with the record's sampling settings raises ValueError.
    """
    sc = decoding.get("selfcons") or {}
    member = sample_settings(judge)
    if member is not None:
        temp, seed = member
        sampled = sc.get("temperature")
        if sc and (sampled is None or float(sampled) != temp or seed not in sc.get("seeds", [])):
            raise ValueError(
                f"run record: member {judge!r} is not one of the ensemble's samples "
                f"(temperature {sc.get('temperature')}, seeds {sc.get('seeds')})"
            )
        return temp, seed
    if JudgeSpec.parse(judge).ensemble > 1 and sc:
        return sc.get("temperature"), ",".join(map(str, sc.get("seeds", [])))
    return decoding.get("temperature"), decoding.get("seed")


def run_decoding(record: Mapping[str, Any]) -> tuple[Any, Any]:
    """The (temperature, seed) of a run that judged nothing (the agent's runs, the organic episodes), from its run
    record's ``decoding``: the one record of those settings that every table showing them reads."""
    decoding = record.get("decoding") or {}
    return decoding.get("temperature"), decoding.get("seed")


def setting_text(x: Any) -> str:
    """A recorded setting as every table prints it: ``0``, ``0.7``, ``7, 8, 9``, ``8192``; ``–`` when absent."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "\u2013"
    if isinstance(x, float):
        return f"{x:g}"
    return re.sub(r",\s*", ", ", str(x))


def sample_settings(judge: str) -> tuple[float, int] | None:
    """(temperature, seed) named by a member id (:class:`~trajectory_judge.models.JudgeSpec`), or None for
    any other judge id; a ValueError for an id outside the grammar."""
    spec = JudgeSpec.parse(judge)
    if spec.temperature is None or spec.seed is None:
        return None
    return spec.temperature, spec.seed


def holdings_sentence(
    judges: pd.DataFrame, llm: Sequence[str], n_trajectories: int, *, subject: str = "The data holds"
) -> str:
    """What kinds of judge a verdict set holds, in one sentence opening with ``subject`` (``judges``
    from :func:`~.style.judges_frame`)."""
    from trajectory_judge.book.render.style import RULES, list_text

    def count(n: int, noun: str) -> str:
        return f"{'one' if n == 1 else n} {noun}{'' if n == 1 else 's'}"

    n_models = judges.loc[list(llm), "model"].nunique()
    parts = (
        [f"{count(len(llm), 'LLM judge')} over {'one model' if n_models == 1 else f'{n_models} distinct models'}"]
        if llm
        else []
    )
    if (judges["family"] == RULES).any():
        parts.append("the rule engine")
    n_python = int((judges["family"] == PYTHON).sum())
    if n_python:
        parts.append(count(n_python, "Python judge"))
    return f"{subject} {count(len(judges), 'judge')} on a set of {n_trajectories} trajectories: {list_text(parts)}"


# --- how the chapter shows them ---------------------------------------------------------------
# --- the paper's judges, as the paper states them -----------------------------------------------
PAPER_DECODING: dict[str, Any] = {
    "temperature": 0.0,
    "seed": 7,
    "num_ctx": 8192,
    "timeout_s": 600,
    "retries": 0,
    "selfcons_temperature": 0.7,
    "selfcons_seeds": (7, 8, 9),
}
"""The paper's decoding settings as it states them in words (paper §4 and Appendix D): greedy, seed 7,
an explicit 8192-token context, a 600 s timeout and no retries; the ensemble samples at 0.7 with seeds
7, 8 and 9. The release's run record keeps only the seed and the ensemble size."""


@computes
def paper_judges_frame(verdicts: Sequence[Any], runs: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The paper's judges (counterpart of its Table 2): view, model, samples, trajectories judged, and
    the decoding the paper states for each, checked against what its run record keeps."""
    from trajectory_judge.book.render.style import judge_name

    for r in runs:  # the release keeps the seed and k; both must be the ones the paper states
        if r.get("seed") != PAPER_DECODING["seed"] or r.get("k") != len(PAPER_DECODING["selfcons_seeds"]):
            raise ValueError(f"release run settings: seed {r.get('seed')}, k {r.get('k')} differ from the paper's text")
    counts = Counter(v.judge_id for v in verdicts)
    rows = []
    for j, n in counts.items():
        s = JudgeSpec.parse(j)
        ens = s.ensemble > 1
        temp = PAPER_DECODING["selfcons_temperature"] if ens else (PAPER_DECODING["temperature"] if s.is_llm else None)
        seed = str(PAPER_DECODING["seed"]) if s.is_llm else None
        seeds = ", ".join(map(str, PAPER_DECODING["selfcons_seeds"])) if ens else seed
        rows.append(
            {
                "Judge": judge_name(j),
                "Reads": "every step, by rule" if not s.is_llm else _VIEW_WORDS.get(s.view, s.view),
                "Samples": s.ensemble,
                "Judged": n,
                "Temperature": temp,
                "Seed": seeds or "\u2013",
            }
        )
    return pd.DataFrame(rows).set_index("Judge")


_VIEW_WORDS = {"outcome": "goal and final reply", "step": "every step", "reply": "every step, asked about the reply"}


@computes
def found_judges(verdicts: Sequence[Any]) -> pd.DataFrame:
    """The judges of a verdict set parsed from their ids (:func:`~.style.judges_frame`, in report
    order), with the trajectories each judged and its verdicts from answers that did not parse."""
    from trajectory_judge.analysis.core.loading import judge_order, unparseable_counts
    from trajectory_judge.book.render.style import judges_frame

    ids = judge_order(verdicts)
    judged = Counter(v.judge_id for v in verdicts)
    unparseable = unparseable_counts(verdicts)
    frame = judges_frame(ids)
    frame["judged"] = [judged[j] for j in ids]
    frame["unparseable"] = [unparseable.get(j, 0) for j in ids]
    return frame


@computes
def judges_view(judges: pd.DataFrame) -> pd.DataFrame:
    """The parsed-ids table as shown: the judge's name (view and model in words), its id, samples and
    verdicts (and the unparseable ones, when counted)."""
    from trajectory_judge.book.render.style import judge_name

    out = pd.DataFrame(
        {
            "Judge": [judge_name(j) for j in judges.index],
            "Judge id": list(judges.index),
            "Samples": list(judges["ensemble"]),
            "Judged": list(judges["judged"]),
        }
    )
    if "unparseable" in judges:
        out["Unparseable"] = list(judges["unparseable"])
    return out.set_index("Judge")


# --- the prompt beside the paper's Appendix D ----------------------------------------------------
PAPER_PROMPT: dict[str, str] = {
    "form": "one flat string, no chat roles and no system message",
    "order": "role, procedure, view paragraph, taxonomy, confidence, then the trajectory",
    "role": "one sentence: the judge audits a support agent",
    "procedure": "eight numbered rules",
    "taxonomy": "six failure types and none, one line each, three with an example",
    "confidence": "the probability that the verdict is right, from 0.5 to 1.0, not a round number",
    "outcome view": "goal and reply only; judge the reply; hidden steps are no evidence of a fault",
    "step view": "every step; check each against the procedure; name the first wrong step and its type",
    "reply view": "none (the paper has two LLM views)",
    "rendering": "three lines a step: thought, call with keyword arguments, observation",
    "schemas": "reasoning first; the outcome schema has no failure step",
    "coercion": "confidence clamped to 0.5–1.0; a type kept only on a faulty verdict; a step out of range dropped",
}
"""The parts of the paper's judge prompt (its Appendix D), each described in our words, not quoted."""


def _numbered(text: str) -> int:
    return sum(1 for line in text.splitlines() if line[:1].isdigit())


@computes
def prompt_comparison_table(example: Any) -> pd.DataFrame:
    """Part by part: the paper's prompt (:data:`PAPER_PROMPT`, in our words) beside this edition's, whose
    column is read from the prompt code, rendering ``example`` where the part is the trajectory."""
    from trajectory_judge.judges.coerce import CONFIDENCE_MAX, CONFIDENCE_MIN
    from trajectory_judge.judges.prompts import CONFIDENCE, ROLE, TAXONOMY
    from trajectory_judge.judges.schema import response_schema
    from trajectory_judge.testbed.procedure import PROCEDURE

    step = build_prompt("step", example)
    first_lines = [line.split(":", 1)[0] for line in step.splitlines() if line.startswith("step 0 ")]
    n_types = sum(1 for line in TAXONOMY.splitlines() if line.startswith("- "))
    n_examples = sum(1 for line in TAXONOMY.splitlines() if "(e.g." in line)
    lo, hi = f"{CONFIDENCE_MIN:.1f}", f"{CONFIDENCE_MAX:.1f}"
    schema = list(response_schema("step")["properties"])
    no_step = "failure_step" not in response_schema("outcome")["properties"]
    assert SHARED_PREFIX.startswith(ROLE) and CONFIDENCE in SHARED_PREFIX
    ours = {
        "form": "one flat string, no chat roles",
        "order": "role, procedure, taxonomy, confidence, then view paragraph and trajectory",
        "role": f"{'one sentence' if ROLE.count('. ') == 0 else 'several sentences'}, in our words",
        "procedure": f"{number_word(_numbered(PROCEDURE), 12)} numbered rules, in our words",
        "taxonomy": f"{number_word(n_types - 1, 12)} failure types and none, one line each, {number_word(n_examples, 12)} with an example, in our words",
        "confidence": f"the same range, {lo} to {hi}, and the same request, in our words",
        "outcome view": "the same three points, in our words",
        "step view": "the same points, in our words",
        "reply view": "beyond the paper: every step, asked only whether the reply's claims are backed",
        "rendering": f"{number_word(len(first_lines), 12)} lines a step: {', '.join(w.removeprefix('step 0 ') for w in first_lines)}",
        "schemas": f"{schema[0]} first ({', '.join(schema)}); outcome {'without' if no_step else 'with'} failure_step",
        "coercion": f"the same three rules; confidence clamped to {lo}–{hi}",
    }
    same = {"order": "no", "reply view": "added"}
    rows = [(part, PAPER_PROMPT[part], ours[part], same.get(part, "yes")) for part in PAPER_PROMPT]
    return pd.DataFrame(rows, columns=["part", "paper (Appendix D)", "this edition", "same?"]).set_index("part")


def own_prompts(runs: Sequence[dict[str, Any]], judge_ids: Sequence[str]) -> dict[str, dict[str, str]]:
    """The prompts of one's own behind ``judge_ids`` (``VIEW+NAME:MODEL``), from the run records that
    keep them: judge id to its template's name, text and SHA-256 (the latest record for each)."""
    wanted = {j for j in judge_ids if JudgeSpec.parse(j).prompt}
    out: dict[str, dict[str, str]] = {}
    for rec in runs:
        for judge, prompt in (rec.get("prompts") or {}).items():
            if judge in wanted and isinstance(prompt, dict) and isinstance(prompt.get("text"), str):
                out[judge] = prompt
    return {j: out[j] for j in judge_ids if j in out}


def own_prompts_display(prompts: dict[str, dict[str, str]], example: Any) -> Any:
    """A paragraph and, per judge, its template and the example as that template renders it, folded;
    None when no judge uses a prompt of its own (the page then shows nothing here)."""
    import html

    from IPython.display import HTML

    from trajectory_judge.book.render.style import judge_name, list_text
    from trajectory_judge.judges.custom import PromptTemplate

    if not prompts:
        return None
    names = list_text([judge_name(j) for j in prompts])
    parts = [
        f"<p>Beside the built-in prompts, {html.escape(names)} "
        f"{'judges' if len(prompts) == 1 else 'judge'} with a prompt of its own over its view, "
        "under that view's response schema and parser; the template is kept in the folder's run record "
        "and shown here as it was sent, then the example as it renders it.</p>"
    ]
    for judge, rec in prompts.items():
        spec = JudgeSpec.parse(judge)
        template = PromptTemplate(name=str(spec.prompt), text=rec["text"], file=rec.get("file", ""))
        sha = str(rec.get("sha256", template.sha256))[:16]
        parts.append(folded(f"{judge}: its template ({spec.view} view, sha256 {sha})", rec["text"]).data)
        parts.append(folded(f"{judge}: the example as its prompt reads", template.render(spec.view, example)).data)
    return HTML("\n".join(parts))


def folded(summary: str, text: str) -> Any:
    """``text`` as preformatted lines inside a dropdown whose summary line is ``summary``."""
    import html

    from IPython.display import HTML

    return HTML(
        f'<details class="tj-folded"><summary>{html.escape(summary)}</summary>\n'
        f'<pre class="tj-folded-text" style="white-space: pre-wrap">{html.escape(text)}</pre></details>\n'
    )
