"""``export-requests``, ``run-requests`` and ``import-results``: judge through the OpenAI Batch API's format.

The requests are written and their answers read back by :mod:`trajectory_judge.run.batch`, and answered on
endpoints by :mod:`trajectory_judge.run.engines`; this module declares the three verbs.
"""

from __future__ import annotations

import argparse
import sys

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import Verbs, check_judge_options, declare, judge_options

QUIET = "no summary line"


def add_export(sub: Verbs) -> None:
    """Declare ``trajectory-judge export-requests``."""
    p = sub.add_parser("export-requests", help="write the LLM judges' requests in the OpenAI Batch API's input format")
    declare(
        p,
        "--data",
        "--judges",
        "--prompt",
        "--view",
        "--model",
        "--judge-model-name",
        "--limit",
        "--num-ctx",
        data="folder with trajectories.jsonl (required)",
        prompt="a prompt template of your own over --view, as `run --prompt` takes it (judge id VIEW+NAME:MODEL)",
        view="what of each trajectory --prompt's {view} shows, and its response schema (default step)",
        model="model name the requests name; several, comma-separated (a,b), each under its own judge ids",
        judge_model_name="model name used in judge ids (default --model; with several models, as many names, "
        "comma-separated)",
        limit="only the first N trajectories",
        num_ctx="context window (default 8192)",
    )
    judge_options(p, seed="single-pass seed (default 7)")
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="the requests file (required); its settings file is FILE.settings.json beside it",
    )
    declare(p, "--quiet", quiet=QUIET)
    p.set_defaults(func=export_requests, check_args=check_export_args)


def check_export_args(args: argparse.Namespace) -> None:
    """``--data`` and ``--out`` given, then the judges' options (:func:`~trajectory_judge.cli.options.check_judge_options`)."""
    if args.data is None or args.out is None:
        raise ValueError("--data DIR and --out FILE are required")
    check_judge_options(args)


def export_requests(args: argparse.Namespace) -> int:
    from trajectory_judge.run.batch import cli_export_requests

    return cli_export_requests(args)


def add_run_requests(sub: Verbs) -> None:
    """Declare ``trajectory-judge run-requests``."""
    p = sub.add_parser("run-requests", help="answer exported requests on one or more endpoints (threads or Ray)")
    p.add_argument("requests", metavar="REQUESTS", help="a requests file of `trajectory-judge export-requests`")
    p.add_argument(
        "--endpoint",
        type=A.url,
        action="append",
        default=None,
        metavar="URL",
        help="an OpenAI base URL (requests go to URL/chat/completions); give it once per endpoint (required)",
    )
    p.add_argument("--out", default=None, metavar="FILE", help="the results file, appended to (required)")
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local (threads in this process) or ray (Ray Data: the scale extra; RAY_ADDRESS names a cluster)",
    )
    p.add_argument("--concurrency", type=A.positive_int, default=4, help="requests in flight per endpoint (default 4)")
    declare(
        p,
        "--api-key-env",
        "--timeout",
        "--retries",
        "--retry-budget",
        "--quiet",
        api_key_env="send the API key held in environment variable NAME to every endpoint",
        retries="retries of a failed request (default 3)",
        retry_budget="seconds one request may wait on backoff and rate limits before its endpoint is given up "
        "(default 600)",
        quiet=QUIET,
    )
    p.set_defaults(func=run_requests)


def run_requests(args: argparse.Namespace) -> int:
    """``trajectory-judge run-requests``: exit 0 when every request is settled, 75 when an endpoint was given up."""
    import threading
    from pathlib import Path

    from trajectory_judge.run.batch_format import read_requests
    from trajectory_judge.run.engines import (
        ENGINES,
        EX_TEMPFAIL,
        RAY_MISSING,
        Endpoint,
        ray_available,
        settled,
        summary,
    )
    from trajectory_judge.run.settings import api_key
    from trajectory_judge.run.store import VerdictWriter, repair_torn_tail

    if not args.endpoint or args.out is None:
        raise ValueError("--endpoint URL (at least one) and --out FILE are required")
    if args.engine == "ray" and not ray_available():
        raise ValueError(RAY_MISSING)
    requests, out = Path(args.requests), Path(args.out)
    if out.resolve() == requests.resolve():
        raise ValueError(f"--out {out} is the requests file; outputs never overwrite inputs")
    key = api_key(args.api_key_env)
    endpoints = [
        Endpoint(u, args.concurrency, args.timeout, args.retries, args.retry_budget, key) for u in args.endpoint
    ]
    reqs = read_requests(requests)
    if msg := repair_torn_tail(out, None):
        print(f"trajectory-judge: {msg}", file=sys.stderr)
    done = settled(out)
    pending = [r for c, r in reqs.items() if c not in done]
    writer = VerdictWriter(out)
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            writer.write_line(line)

    try:
        tallies = ENGINES[args.engine](pending, endpoints, write)
    finally:
        writer.close()
    answered, refused = sum(t.answered for t in tallies), sum(t.refused for t in tallies)
    left = len(pending) - answered - refused
    if not args.quiet or left or any(t.given_up for t in tallies):
        print(summary(len(reqs) - len(pending), answered, refused, left, out), file=sys.stderr)
        for t in tallies:
            print(f"trajectory-judge: endpoint {t.summary()}", file=sys.stderr)
    return EX_TEMPFAIL if left else 0


def add_import(sub: Verbs) -> None:
    """Declare ``trajectory-judge import-results``."""
    p = sub.add_parser("import-results", help="turn Batch API results of exported requests into verdicts")
    p.add_argument("results", metavar="RESULTS", help="a Batch API output file (JSONL) answering the requests")
    declare(p, "--data", data="the folder the requests were exported from (required)")
    p.add_argument(
        "--requests", default=None, metavar="FILE", help="the requests file (its settings file beside it) (required)"
    )
    p.add_argument(
        "--missing", default=None, metavar="FILE", help="write the custom_id of every unanswered request here"
    )
    declare(p, "--force")
    p.set_defaults(func=import_results)


def import_results(args: argparse.Namespace) -> int:
    from trajectory_judge.run.batch import cli_import_results

    return cli_import_results(args)
