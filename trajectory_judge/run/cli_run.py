"""``trajectory-judge run``: the judges named on the command line against a model server.

Builds the client and the judges from the arguments, runs them through
:func:`trajectory_judge.run.runner.run_judges`, and appends the run record (settings, server
build, prompt digests, commit, wall and CPU time, how it ended) to ``DATA/runs.jsonl``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.custom import load_template
from trajectory_judge.models import ENSEMBLE_FAMILY, ENSEMBLE_VIEW, LLM_VIEWS, load_trajectories
from trajectory_judge.provenance.pins import broken_pins_note, writable_folder
from trajectory_judge.run import argtypes as A
from trajectory_judge.run.progress import say
from trajectory_judge.run.record import LATENCY_MEANING
from trajectory_judge.run.runner import RunResult, run_judges
from trajectory_judge.run.stopping import Interrupted, exit_code, is_disk_full, stop_on_signals
from trajectory_judge.run.store import MEMBERS, RETRIED, TRAJECTORIES, VERDICTS, data_dir_lock

JUDGE_FAMILIES: tuple[str, ...] = (*LLM_VIEWS, ENSEMBLE_FAMILY)
EX_TEMPFAIL = 75
"""Exit code when the server kept failing or rate-limiting past the retry budget (sysexits' EX_TEMPFAIL)."""


# --- metadata --------------------------------------------------------------------------------
def launch_record(base_url: str, server: dict[str, Any]) -> dict[str, Any] | None:
    """The local server's launch record (build, argv, binary hash) when it matches ``server``."""
    from trajectory_judge.run.llm_paths import read_launch_info

    return read_launch_info(base_url, server.get("model_path"))


# --- the command line ------------------------------------------------------------------------
def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``trajectory-judge run``."""
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="folder with trajectories.jsonl; verdicts.jsonl and runs.jsonl are appended there (required)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into --data even if SHA256SUMS pins it (then re-pin it with `trajectory-judge manifest`)",
    )
    p.add_argument(
        "--judges",
        type=A.name_list(JUDGE_FAMILIES),
        default=None,
        help=f"comma-separated, from {','.join(JUDGE_FAMILIES)} (default outcome,step,reply; none with --prompt; "
        "selfcons with --prompt samples the template: selfconsK+NAME:MODEL)",
    )
    p.add_argument(
        "--prompt",
        default=None,
        metavar="FILE",
        help="judge with a prompt template of your own over --view: str.format text holding {view}, and "
        "optionally {goal}, {reply}, {procedure}; the judge id is VIEW+NAME:MODEL, NAME the file's name "
        "without its suffix",
    )
    p.add_argument(
        "--view",
        choices=list(LLM_VIEWS),
        default=None,
        help="what of each trajectory --prompt's {view} shows, rendered as the built-in prompts render it, "
        "and which response schema the judge answers in (default step)",
    )
    p.add_argument(
        "--backend",
        choices=["ollama", "openai"],
        default="openai",
        help="ollama (native /api/generate) or openai (BASE/chat/completions: llama-server, vLLM, hosted APIs)",
    )
    p.add_argument(
        "--base-url",
        type=A.url,
        default="http://127.0.0.1:8080",
        help="the server's URL; for openai the OpenAI base URL, as the OpenAI SDK takes it (requests go to "
        "BASE/chat/completions; a URL with no path gets /v1 only if the server answers there) "
        "(default http://127.0.0.1:8080)",
    )
    p.add_argument(
        "--api-key-env",
        type=A.env_name,
        default=None,
        metavar="NAME",
        help="send the API key held in environment variable NAME as a Bearer token (never written or printed)",
    )
    p.add_argument(
        "--llama-cpp",
        action="store_true",
        help="the openai server is llama.cpp's llama-server: send its own fields (cache_prompt, /tokenize); "
        "detected through its /props when not given",
    )
    p.add_argument(
        "--model",
        type=A.model_name,
        required=True,
        help="model name sent to the server; several, comma-separated (a,b), are judged one after another, "
        "each under its own judge ids and run record",
    )
    p.add_argument(
        "--judge-model-name",
        type=A.model_name,
        default=None,
        help="model name used in judge ids, spelled as Ollama would (e.g. qwen2.5-coder:1.5b); default --model "
        "(with several models, as many names, comma-separated)",
    )
    p.add_argument(
        "--limit", type=A.positive_int, default=None, help="judge only the first N trajectories (a stratified prefix)"
    )
    p.add_argument("--concurrency", type=A.positive_int, default=1, help="requests in flight (default 1)")
    p.add_argument(
        "--num-ctx", type=A.positive_int, default=8192, help="context window, always explicit (default 8192)"
    )
    p.add_argument("--max-tokens", type=A.positive_int, default=512, help="output budget per request (default 512)")
    p.add_argument("--temperature", type=A.nonnegative_float, default=0.0, help="single-pass temperature (default 0)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help="single-pass seed (default 7)")
    add_selfcons_arguments(p)
    p.add_argument("--timeout", type=A.positive_float, default=600.0, help="seconds per request (default 600)")
    p.add_argument(
        "--retries",
        type=A.nonnegative_int,
        default=3,
        help="retries of a request that failed (connection, timeout, HTTP 5xx), with jittered backoff (default 3)",
    )
    p.add_argument(
        "--retry-budget",
        type=A.nonnegative_float,
        default=600.0,
        metavar="SECONDS",
        help="seconds one request may spend waiting on backoff and rate limits (HTTP 429/503, Retry-After "
        "honoured) before the run stops, keeping what it wrote (default 600)",
    )
    p.add_argument(
        "--cache-prompt",
        choices=["off", "prefix", "on", "unset"],
        default="off",
        help="llama-server prompt caching, the same for every request: 'off' recomputes every prompt; "
        "'prefix' restores the saved shared prefix of the prompt's view before each request "
        "(needs --slot-save-path and --concurrency 1); 'on' reuses whatever the previous request "
        "left (fast, but verdicts then depend on request order); 'unset' sends nothing (default off)",
    )
    p.add_argument(
        "--retry-unparseable",
        action="store_true",
        help="judge again the verdicts of these judges stored as unparseable (moved to retried.jsonl first)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(check_args=check_run_args)


def add_selfcons_arguments(p: argparse.ArgumentParser) -> None:
    """Declare ``--selfcons-temperature`` and ``--selfcons-seeds`` (``run`` and ``export-requests``)."""
    p.add_argument(
        "--selfcons-temperature",
        type=A.nonnegative_float,
        default=SELFCONS_TEMPERATURE,
        metavar="T",
        help=f"the self-consistency members' temperature (default {SELFCONS_TEMPERATURE:g})",
    )
    p.add_argument(
        "--selfcons-seeds",
        type=A.int_list,
        default=SELFCONS_SEEDS,
        metavar="SEEDS",
        help="the self-consistency members' seeds, comma-separated, one member each: an odd number, 3 or more; "
        f"K in selfconsK is their count (default {','.join(map(str, SELFCONS_SEEDS))})",
    )


SELFCONS_TEMPERATURE, SELFCONS_SEEDS = 0.7, (7, 8, 9)
"""The self-consistency ensemble's defaults (:data:`trajectory_judge.judges.selfcons.TEMPERATURE` and
``SEEDS``, the paper's): written here so that reading the options does not import the judges."""


def selfcons_settings(args: argparse.Namespace) -> tuple[float, tuple[int, ...]]:
    """The ensemble's temperature and seeds of ``args`` (the defaults where the options are absent), the seeds
    checked (:func:`trajectory_judge.judges.selfcons.check_seeds`; a ValueError in one line)."""
    from trajectory_judge.judges.selfcons import check_seeds

    seeds = check_seeds(getattr(args, "selfcons_seeds", None) or SELFCONS_SEEDS, "--selfcons-seeds")
    return float(getattr(args, "selfcons_temperature", SELFCONS_TEMPERATURE)), seeds


def check_prompt_view(names: Sequence[str], view: str | None) -> None:
    """Refuse (ValueError, one line) ``--judges selfcons`` beside ``--prompt`` over a view other than step: the
    ensemble samples the step view, under the built-in prompt or the template alike."""
    if ENSEMBLE_FAMILY in names and view not in (None, ENSEMBLE_VIEW):
        raise ValueError(
            f"--judges {ENSEMBLE_FAMILY} with --prompt samples the template over the {ENSEMBLE_VIEW} view, as the "
            f"built-in ensemble samples the {ENSEMBLE_VIEW} prompt; drop --view {view} (or give --view "
            f"{ENSEMBLE_VIEW}), or run the {view} judge of the template without {ENSEMBLE_FAMILY}"
        )


def check_run_args(args: argparse.Namespace) -> None:
    """Checks between arguments that argparse cannot make one at a time; :class:`ValueError` says which."""
    if args.cache_prompt == "prefix" and args.backend == "openai" and args.concurrency != 1:
        raise ValueError("--cache-prompt prefix restores one slot before each request; it needs --concurrency 1")
    if getattr(args, "view", None) is not None and getattr(args, "prompt", None) is None:
        raise ValueError("--view chooses what --prompt's template shows; give --prompt FILE with it")
    if getattr(args, "prompt", None) is not None and args.cache_prompt == "prefix":
        raise ValueError(
            "--cache-prompt prefix saves the built-in prompts' shared prefixes; with --prompt use off, on or unset"
        )
    if getattr(args, "prompt", None) is not None:
        check_prompt_view(judge_names(args), getattr(args, "view", None))
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
    selfcons_temperature: float = SELFCONS_TEMPERATURE,
    selfcons_seeds: Sequence[int] = SELFCONS_SEEDS,
) -> list[Judge]:
    """The judges named by ``--judges``, then the judge of ``--prompt`` (``template``) over ``view``.

    With ``template``, ``selfcons`` is the ensemble sampling the template over the step view
    (``selfconsK+NAME:MODEL``) rather than the built-in step prompt; it needs ``view`` step (or None).
    """
    from trajectory_judge.judges.llm import LLMJudge
    from trajectory_judge.judges.selfcons import SelfConsistencyJudge, check_seeds

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


def judge_names(args: argparse.Namespace) -> list[str]:
    """The built-in judges of ``--judges``: by default outcome, step and reply, or none beside ``--prompt``."""
    given = args.judges if args.judges is not None else ("" if getattr(args, "prompt", None) else "outcome,step,reply")
    return [n.strip() for n in given.split(",") if n.strip()]


def make_client(args: argparse.Namespace) -> Any:
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


def selfcons_record(args: argparse.Namespace) -> dict[str, Any]:
    """The ensemble's decoding as a run record keeps it: ``{"temperature": 0.7, "seeds": [7, 8, 9]}``."""
    temperature, seeds = selfcons_settings(args)
    return {"temperature": temperature, "seeds": list(seeds)}


def api_key(env_name: str | None) -> str | None:
    """The API key held in environment variable ``env_name`` (None without one); unset or empty is a ValueError."""
    if env_name is None:
        return None
    key = os.environ.get(env_name, "").strip()
    if not key:
        raise ValueError(f"--api-key-env {env_name}: the environment variable {env_name} is not set or empty")
    return key


def run_record(
    args: argparse.Namespace, judges: Sequence[Judge], client: Any, names: Sequence[str], model_name: str
) -> dict[str, Any]:
    """The settings half of a run record: judges, server, decoding, prompt digests, code version."""
    from trajectory_judge.judges.prompts import prompt_digests

    record: dict[str, Any] = {
        "backend": args.backend,
        "base_url": args.base_url,
        "model": args.model,
        "judge_model_name": model_name,
        "limit": args.limit,
        "decoding": {
            **client.decoding(),
            "temperature": args.temperature,
            "seed": args.seed,
            "selfcons": selfcons_record(args) if "selfcons" in names else None,
            "retries": args.retries,
            "retry_budget_s": getattr(args, "retry_budget", None),
        },
        "api_key_env": getattr(args, "api_key_env", None),
        "retry_unparseable": bool(getattr(args, "retry_unparseable", False)),
        "prompt_sha256": prompt_digests(),
        "prompts": {j.judge_id: t.record() for j in judges if (t := getattr(j, "template", None))} or None,
        "latency": LATENCY_MEANING,
    }
    record["server"] = client.server_info()
    record["server_launch"] = launch_record(args.base_url, record["server"])
    return record


def cli_run(args: argparse.Namespace) -> int:
    """``trajectory-judge run``: judge, append, record.

    Exit 0; 75 (EX_TEMPFAIL) when the server kept failing or rate-limiting past ``--retries`` or
    ``--retry-budget`` (rerun later to resume); 1 on another client failure or a full disk; 2 if
    another process writes the directory, or ``--data`` is missing or pinned by ``SHA256SUMS``
    without ``--force`` (then nothing is written); 130 after Ctrl-C and 143 after SIGTERM (the run
    record is appended either way).
    """
    models = split_models(args.model, args.judge_model_name)
    if len(models) > 1:
        return run_models(args, models)
    data = writable_folder(args.data, what="verdicts and a run record", force=args.force)
    trajs = load_trajectories(data / TRAJECTORIES)
    known = [t.trajectory_id for t in trajs]  # a verdict on the disk naming any other is refused
    if args.limit is not None:
        if args.limit > len(trajs):
            print(
                f"--limit {args.limit}: {data / TRAJECTORIES} holds {len(trajs)} trajectories; judging all {len(trajs)}",
                file=sys.stderr,
            )
        trajs = trajs[: args.limit]
    names = judge_names(args)
    model_name = args.judge_model_name or args.model
    template = load_template(args.prompt) if getattr(args, "prompt", None) else None  # refused before any request
    try:
        client = make_client(args)
        judges = make_judges(
            names,
            client,
            model_name,
            temperature=args.temperature,
            seed=args.seed,
            template=template,
            view=getattr(args, "view", None),
            selfcons_temperature=selfcons_settings(args)[0],
            selfcons_seeds=selfcons_settings(args)[1],
        )
    except ValueError as exc:
        print(f"trajectory-judge: error: {exc}", file=sys.stderr)
        return 2
    try:
        with data_dir_lock(data), stop_on_signals():
            return _judge_and_record(args, data, trajs, judges, client, names, model_name, known)
    except Interrupted as exc:  # before judging began, or a second signal while recording
        print(f"trajectory-judge: interrupted ({exc}); verdicts already on disk are kept.", file=sys.stderr)
        return exit_code(exc)
    finally:
        client.close()
        if note := broken_pins_note(data):  # only after --force: say which pins this run broke
            print(note, file=sys.stderr)


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


def run_models(args: argparse.Namespace, models: Sequence[tuple[str, str | None]]) -> int:
    """``run --model a,b``: one run per model, one after another (each takes the folder's lock and appends its
    own run record); stops at the first that does not end cleanly and says which models were not run."""
    for i, (model, name) in enumerate(models):
        if not args.quiet:
            print(f"trajectory-judge: model {i + 1} of {len(models)}: {model}", file=sys.stderr)
        code = cli_run(argparse.Namespace(**{**vars(args), "model": model, "judge_model_name": name}))
        if code != 0:
            rest = [m for m, _ in models[i + 1 :]]
            if rest:
                print(
                    f"trajectory-judge: the run of {model} ended with status {code}; not run: {', '.join(rest)} "
                    "(the same command resumes every model)",
                    file=sys.stderr,
                )
            return code
    return 0


def _judge_and_record(
    args: argparse.Namespace,
    data: Path,
    trajs: Sequence[Any],
    judges: Sequence[Judge],
    client: Any,
    names: Sequence[str],
    model_name: str,
    known: Sequence[str] | None = None,
) -> int:
    """Run the judges (holding the directory's lock) and append the run record however they end."""
    from trajectory_judge.backends.clients import JudgeClientError, RetryBudgetExhausted

    record = run_record(args, judges, client, names, model_name)
    code = 0
    result = RunResult()
    try:
        result = run_judges(
            trajs,
            judges,
            data / VERDICTS,
            members_path=data / MEMBERS,
            concurrency=args.concurrency,
            progress=not args.quiet,
            abort=client.abort,
            retry_unparseable=getattr(args, "retry_unparseable", False),
            run_record=record,
            known_ids=known,
            force=args.force,
        )
    except RetryBudgetExhausted as exc:  # the server is busy or down: one line, a code a script can wait on
        result = getattr(exc, "run_result", result)
        print(
            f"trajectory-judge: error: {exc}; {result.written} verdicts written by this run are kept, "
            f"rerun the same command later to resume.",
            file=sys.stderr,
        )
        code = EX_TEMPFAIL
    except JudgeClientError as exc:
        result = getattr(exc, "run_result", result)
        print(
            f"trajectory-judge: error: {exc}\n  {result.written} verdicts written by this run are kept; "
            f"rerun the same command to resume.",
            file=sys.stderr,
        )
        code = 1
    except (KeyboardInterrupt, Interrupted) as exc:
        result = getattr(exc, "run_result", result)
        print(
            f"trajectory-judge: interrupted ({exc}); {result.written} verdicts written are kept; "
            f"rerun the same command to resume.",
            file=sys.stderr,
        )
        code = exit_code(exc)
    except Exception as exc:
        result = getattr(exc, "run_result", result)
        result.status, result.message = "failed", f"{type(exc).__name__}: {exc}"
        if not is_disk_full(exc):
            raise
        print(
            f"trajectory-judge: error: {data}: no space left on the device; {result.written} verdicts kept; "
            "free space and rerun to resume.",
            file=sys.stderr,
        )
        code = 1
    if code == 0:
        slowed = client.gate.summary() if hasattr(client, "gate") else None
        print(summary_line(result) + (f"; {slowed}" if slowed else ""), file=sys.stderr)
    return code


def summary_line(result: RunResult) -> str:
    """What a finished run did, in one line (with each judge's seconds per verdict)."""
    per = ", ".join(f"{k} {v['s_per_verdict']:.2f} s/verdict" for k, v in result.per_judge.items())
    rechecked = "".join(
        f"; {k} recomputed on disk: {v['same']} same, {v['different']} different" for k, v in result.rechecked.items()
    )
    retried = (
        f"{result.retried} unparseable verdict{'s' if result.retried != 1 else ''} judged again "
        f"(the old ones are in {RETRIED}); "
        if result.retried
        else ""
    )
    return (
        f"trajectory-judge: {retried}{result.written} written, {result.skipped} already on disk, "
        f"{result.unparseable} unparseable{'; ' + per if per else ''}{rechecked}"
    )
