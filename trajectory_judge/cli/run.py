"""``trajectory-judge run``: the judges named on the command line against a model server.

Builds the client and the judges from the arguments, runs them through
:func:`trajectory_judge.run.runner.run_judges`, and appends the run record (settings, server
build, prompt digests, commit, wall and CPU time, how it ended) to ``DATA/runs.jsonl``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Any

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import Verbs, check_judge_options, declare, judge_options

if TYPE_CHECKING:
    from pathlib import Path

    from trajectory_judge.judges.base import Judge
    from trajectory_judge.run.runner import RunResult

EX_TEMPFAIL = 75
"""Exit code when the server kept failing or rate-limiting past the retry budget (sysexits' EX_TEMPFAIL)."""


def add(sub: Verbs) -> None:
    """Declare ``trajectory-judge run``."""
    p = sub.add_parser("run", help="run LLM judges against a model server, resumably")
    declare(
        p,
        "--data",
        "--force",
        "--judges",
        "--prompt",
        "--view",
        "--backend",
        "--base-url",
        "--api-key-env",
        data="folder with trajectories.jsonl; verdicts.jsonl and runs.jsonl are appended there (required)",
        prompt="judge with a prompt template of your own over --view: str.format text holding {view}, and "
        "optionally {goal}, {reply}, {procedure}; the judge id is VIEW+NAME:MODEL, NAME the file's name "
        "without its suffix",
        view="what of each trajectory --prompt's {view} shows, rendered as the built-in prompts render it, "
        "and which response schema the judge answers in (default step)",
        backend="ollama (native /api/generate) or openai (BASE/chat/completions: llama-server, vLLM, hosted APIs)",
        base_url="the server's URL; for openai the OpenAI base URL, as the OpenAI SDK takes it (requests go to "
        "BASE/chat/completions; a URL with no path gets /v1 only if the server answers there) "
        "(default http://127.0.0.1:8080)",
        api_key_env="send the API key held in environment variable NAME as a Bearer token (never written or printed)",
    )
    p.add_argument(
        "--llama-cpp",
        action="store_true",
        help="the openai server is llama.cpp's llama-server: send its own fields (cache_prompt, /tokenize); "
        "detected through its /props when not given",
    )
    declare(
        p,
        "--model",
        "--judge-model-name",
        "--limit",
        model="model name sent to the server; several, comma-separated (a,b), are judged one after another, "
        "each under its own judge ids and run record",
        judge_model_name="model name used in judge ids, spelled as Ollama would (e.g. qwen2.5-coder:1.5b); default "
        "--model (with several models, as many names, comma-separated)",
        limit="judge only the first N trajectories (a stratified prefix)",
    )
    p.add_argument("--concurrency", type=A.positive_int, default=1, help="requests in flight (default 1)")
    declare(p, "--num-ctx", num_ctx="context window, always explicit (default 8192)")
    judge_options(p, seed="single-pass seed (default 7)")
    declare(
        p,
        "--timeout",
        "--retries",
        "--retry-budget",
        retries="retries of a request that failed (connection, timeout, HTTP 5xx), with jittered backoff (default 3)",
        retry_budget="seconds one request may spend waiting on backoff and rate limits (HTTP 429/503, Retry-After "
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
    declare(p, "--quiet", quiet="no progress output")
    p.set_defaults(func=cli_run, check_args=check_run_args)


def check_run_args(args: argparse.Namespace) -> None:
    """Checks between arguments that argparse cannot make one at a time; :class:`ValueError` says which."""
    if args.cache_prompt == "prefix" and args.backend == "openai" and args.concurrency != 1:
        raise ValueError("--cache-prompt prefix restores one slot before each request; it needs --concurrency 1")
    if args.prompt is not None and args.cache_prompt == "prefix":
        raise ValueError(
            "--cache-prompt prefix saves the built-in prompts' shared prefixes; with --prompt use off, on or unset"
        )
    check_judge_options(args)


def run_record(
    args: argparse.Namespace, judges: Sequence[Judge], client: Any, names: Sequence[str], model_name: str
) -> dict[str, Any]:
    """The settings half of a run record: judges, server, decoding, prompt digests, code version."""
    from trajectory_judge.judges.prompts import prompt_digests
    from trajectory_judge.run.llm_paths import read_launch_info
    from trajectory_judge.run.record import LATENCY_MEANING
    from trajectory_judge.run.settings import selfcons_settings

    selfcons_temperature, selfcons_seeds = selfcons_settings(args)
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
            "selfcons": {"temperature": selfcons_temperature, "seeds": list(selfcons_seeds)}
            if "selfcons" in names
            else None,
            "retries": args.retries,
            "retry_budget_s": args.retry_budget,
        },
        "api_key_env": args.api_key_env,
        "retry_unparseable": args.retry_unparseable,
        "prompt_sha256": prompt_digests(),
        "prompts": {j.judge_id: t.record() for j in judges if (t := getattr(j, "template", None))} or None,
        "latency": LATENCY_MEANING,
    }
    record["server"] = client.server_info()
    record["server_launch"] = read_launch_info(args.base_url, record["server"].get("model_path"))
    return record


def cli_run(args: argparse.Namespace) -> int:
    """``trajectory-judge run``: judge, append, record.

    Exit 0; 75 (EX_TEMPFAIL) when the server kept failing or rate-limiting past ``--retries`` or
    ``--retry-budget`` (rerun later to resume); 1 on another client failure or a full disk; 2 if
    another process writes the directory, or ``--data`` is missing or pinned by ``SHA256SUMS``
    without ``--force`` (then nothing is written); 130 after Ctrl-C and 143 after SIGTERM (the run
    record is appended either way).
    """
    from trajectory_judge.cli.locked import while_holding
    from trajectory_judge.judges.custom import load_template
    from trajectory_judge.models import load_trajectories
    from trajectory_judge.provenance.pins import writable_folder
    from trajectory_judge.run.settings import judge_names, make_client, make_judges, selfcons_settings, split_models
    from trajectory_judge.run.store import TRAJECTORIES

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
    template = load_template(args.prompt) if args.prompt else None  # refused before any request
    selfcons_temperature, selfcons_seeds = selfcons_settings(args)
    try:
        client = make_client(args)
        judges = make_judges(
            names,
            client,
            model_name,
            temperature=args.temperature,
            seed=args.seed,
            template=template,
            view=args.view,
            selfcons_temperature=selfcons_temperature,
            selfcons_seeds=selfcons_seeds,
        )
    except ValueError as exc:
        print(f"trajectory-judge: error: {exc}", file=sys.stderr)
        return 2
    with closing(client):
        return while_holding(
            data, "verdicts", lambda: _judge_and_record(args, data, trajs, judges, client, names, model_name, known)
        )


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
    from trajectory_judge.run.runner import RunResult, run_judges
    from trajectory_judge.run.stopping import Interrupted, exit_code, is_disk_full
    from trajectory_judge.run.store import MEMBERS, VERDICTS

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
            retry_unparseable=args.retry_unparseable,
            run_record=record,
            known_ids=known,
            force=args.force,
        )
    except BaseException as exc:
        result = getattr(exc, "run_result", result)
        kept = f"{result.written} verdicts written by this run are kept"
        if isinstance(exc, RetryBudgetExhausted):  # the server is busy or down: one line, a code a script can wait on
            code, said = EX_TEMPFAIL, f"error: {exc}; {kept}, rerun the same command later to resume."
        elif isinstance(exc, JudgeClientError):
            code, said = 1, f"error: {exc}\n  {kept}; rerun the same command to resume."
        elif isinstance(exc, (KeyboardInterrupt, Interrupted)):
            code = exit_code(exc)
            said = f"interrupted ({exc}); {result.written} verdicts written are kept; rerun the same command to resume."
        elif isinstance(exc, Exception):
            result.status, result.message = "failed", f"{type(exc).__name__}: {exc}"
            if not is_disk_full(exc):
                raise
            code = 1
            said = f"error: {data}: no space left on the device; {result.written} verdicts kept; "
            said += "free space and rerun to resume."
        else:
            raise
        print(f"trajectory-judge: {said}", file=sys.stderr)
    if code == 0:
        slowed = client.gate.summary() if hasattr(client, "gate") else None
        print(summary_line(result) + (f"; {slowed}" if slowed else ""), file=sys.stderr)
    return code


def summary_line(result: RunResult) -> str:
    """What a finished run did, in one line (with each judge's seconds per verdict)."""
    from trajectory_judge.run.store import RETRIED

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
