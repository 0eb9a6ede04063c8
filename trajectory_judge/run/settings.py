"""The judges, the client and the models that ``run`` and the batch verbs build from their options.

Each function reads the options it needs from the parsed arguments (``args``, any object with those
attributes) and refuses a combination it cannot honour with a :class:`ValueError` in one line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.selfcons import SEEDS, TEMPERATURE, SelfConsistencyJudge, check_seeds
from trajectory_judge.models import ENSEMBLE_FAMILY, ENSEMBLE_VIEW, LLM_VIEWS
from trajectory_judge.run.progress import say

JUDGE_FAMILIES: tuple[str, ...] = (*LLM_VIEWS, ENSEMBLE_FAMILY)
"""What ``--judges`` names: the three views' judges and the self-consistency ensemble."""


def selfcons_settings(args: Any) -> tuple[float, tuple[int, ...]]:
    """The ensemble's temperature and seeds of ``args`` (the defaults where the options are absent), the seeds
    checked (:func:`trajectory_judge.judges.selfcons.check_seeds`; a ValueError in one line)."""
    seeds = check_seeds(getattr(args, "selfcons_seeds", None) or SEEDS, "--selfcons-seeds")
    return float(getattr(args, "selfcons_temperature", TEMPERATURE)), seeds


def check_prompt_view(names: Sequence[str], view: str | None) -> None:
    """Refuse (ValueError, one line) ``--judges selfcons`` beside ``--prompt`` over a view other than step: the
    ensemble samples the step view, under the built-in prompt or the template alike."""
    if ENSEMBLE_FAMILY in names and view not in (None, ENSEMBLE_VIEW):
        raise ValueError(
            f"--judges {ENSEMBLE_FAMILY} with --prompt samples the template over the {ENSEMBLE_VIEW} view, as the "
            f"built-in ensemble samples the {ENSEMBLE_VIEW} prompt; drop --view {view} (or give --view "
            f"{ENSEMBLE_VIEW}), or run the {view} judge of the template without {ENSEMBLE_FAMILY}"
        )


def check_judge_options(args: Any) -> None:
    """Refuse (ValueError, one line) ``--view`` without ``--prompt``, ``selfcons`` beside ``--prompt`` over another
    view than step, and self-consistency seeds that make no ensemble."""
    if args.view is not None and args.prompt is None:
        raise ValueError("--view chooses what --prompt's template shows; give --prompt FILE with it")
    if args.prompt is not None:
        check_prompt_view(judge_names(args), args.view)
    selfcons_settings(args)


def make_judges(
    names: Sequence[str],
    client: Any,
    model_name: str,
    *,
    temperature: float,
    seed: int,
    template: Any = None,
    view: str | None = None,
    selfcons_temperature: float = TEMPERATURE,
    selfcons_seeds: Sequence[int] = SEEDS,
) -> list[Judge]:
    """The judges named by ``--judges``, then the judge of ``--prompt`` (``template``) over ``view``.

    With ``template``, ``selfcons`` is the ensemble sampling the template over the step view
    (``selfconsK+NAME:MODEL``) rather than the built-in step prompt; it needs ``view`` step (or None).
    """
    from trajectory_judge.judges.llm import LLMJudge

    if template is not None:
        check_prompt_view(names, view)
    out: list[Judge] = []
    for name in names:
        if name in ("outcome", "step", "reply"):
            out.append(LLMJudge(name, client, model_name, temperature=temperature, seed=seed))
        elif name == "selfcons":
            seeds = check_seeds(selfcons_seeds, "--selfcons-seeds")
            out.append(
                SelfConsistencyJudge(
                    client, model_name, temperature=selfcons_temperature, seeds=seeds, template=template
                )
            )
        else:
            raise ValueError(f"unknown judge {name!r}; expected some of {', '.join(JUDGE_FAMILIES)}")
    if template is not None:
        out.append(
            LLMJudge(view or DEFAULT_VIEW, client, model_name, temperature=temperature, seed=seed, template=template)
        )
    return out


DEFAULT_VIEW = "step"
"""The view of ``--prompt`` when ``--view`` is not given."""


def judge_names(args: Any) -> list[str]:
    """The built-in judges of ``--judges``: by default outcome, step and reply, or none beside ``--prompt``."""
    given = args.judges if args.judges is not None else ("" if getattr(args, "prompt", None) else "outcome,step,reply")
    return [n.strip() for n in given.split(",") if n.strip()]


def make_client(args: Any) -> Any:
    """The model client of ``--backend``."""
    from trajectory_judge.backends.clients import OllamaClient, OpenAIClient

    common = dict(
        num_ctx=args.num_ctx,
        max_tokens=args.max_tokens,
        timeout=args.timeout,
        retries=args.retries,
        retry_budget_s=getattr(args, "retry_budget", 600.0),
        concurrency=getattr(args, "concurrency", 1),
        api_key=api_key(getattr(args, "api_key_env", None)),
        on_event=None if getattr(args, "quiet", False) else say,
    )
    if args.backend == "ollama":
        return OllamaClient(args.base_url, args.model, **common)
    common["llama_cpp"] = True if getattr(args, "llama_cpp", False) else None
    if args.cache_prompt == "prefix":
        from trajectory_judge.judges.prompts import view_prefix
        from trajectory_judge.judges.views import VIEWS

        if args.concurrency != 1:
            raise ValueError("--cache-prompt prefix restores one slot before each request; it needs --concurrency 1")
        return OpenAIClient(args.base_url, args.model, prefix_slots=[view_prefix(v) for v in VIEWS], **common)
    cache = {"on": True, "off": False, "unset": None}[args.cache_prompt]
    return OpenAIClient(args.base_url, args.model, cache_prompt=cache, **common)


def api_key(env_name: str | None) -> str | None:
    """The API key held in environment variable ``env_name`` (None without one); unset or empty is a ValueError."""
    if env_name is None:
        return None
    key = os.environ.get(env_name, "").strip()
    if not key:
        raise ValueError(f"--api-key-env {env_name}: the environment variable {env_name} is not set or empty")
    return key


def split_models(model: str, judge_model_name: str | None) -> list[tuple[str, str | None]]:
    """``--model a,b`` and ``--judge-model-name`` as (model, name in judge ids) pairs; :class:`ValueError` if they
    do not pair up or a model repeats."""
    models = [m.strip() for m in model.split(",")]
    names: list[str | None] = (
        [n.strip() for n in judge_model_name.split(",")] if judge_model_name else [None] * len(models)
    )
    if any(not m for m in models) or any(n is not None and not n for n in names):
        raise ValueError(f"--model {model!r}: an empty name between commas")
    if len(names) != len(models):
        raise ValueError(
            f"--judge-model-name names {len(names)} models and --model {len(models)}; give one name per model"
        )
    ids = [n or m for m, n in zip(models, names)]
    if len(set(ids)) != len(ids):
        raise ValueError(f"--model {model!r}: a model repeats, so two runs would write the same judge ids")
    return list(zip(models, names))
