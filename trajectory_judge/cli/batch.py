"""``export-requests``, ``run-requests`` and ``import-results``: judge through the OpenAI Batch API's format.

The requests are written and their answers read back by :mod:`trajectory_judge.run.batch`, and answered on
endpoints by :mod:`trajectory_judge.run.engines`; this module declares the three verbs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import Verbs, check_judge_options, declare, judge_options

if TYPE_CHECKING:
    from pathlib import Path

    from trajectory_judge.judges.base import Judge
    from trajectory_judge.run.batch import Imported, Settings
    from trajectory_judge.run.runner import RunResult

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
    """``trajectory-judge export-requests``: write the requests and their settings file (both atomically).

    A judge whose fingerprint differs from the one its id has on record in ``--data`` is refused first, as
    the import would refuse it, so that no request is paid for whose answers cannot come back.
    """
    import hashlib
    import json
    from pathlib import Path

    from trajectory_judge.fileio import atomic_open, atomic_write_text
    from trajectory_judge.judges.custom import load_template
    from trajectory_judge.judges.prompts import prompt_digests
    from trajectory_judge.models import load_trajectories
    from trajectory_judge.provenance.checksums import sha256_file
    from trajectory_judge.run.batch import (
        FORMAT,
        Settings,
        judges_with_clients,
        refuse_overwriting_inputs,
        requests_of,
        settings_path,
    )
    from trajectory_judge.run.batch_format import BatchRequest
    from trajectory_judge.run.fingerprints import check_fingerprints, judge_fingerprints
    from trajectory_judge.run.record import now
    from trajectory_judge.run.settings import judge_names, selfcons_settings, split_models
    from trajectory_judge.run.store import MEMBERS, TRAJECTORIES, VERDICTS
    from trajectory_judge.run.task import member_ids

    selfcons_temperature, selfcons_seeds = selfcons_settings(args)
    data, out = Path(args.data), Path(args.out)
    traj_path = data / TRAJECTORIES
    refuse_overwriting_inputs(out, [traj_path, data / VERDICTS, data / MEMBERS])
    refuse_overwriting_inputs(settings_path(out), [traj_path])
    trajs = load_trajectories(traj_path)[: args.limit]
    settings = Settings(
        judges=tuple(judge_names(args)),
        models=tuple((m, n or m) for m, n in split_models(args.model, args.judge_model_name)),
        limit=args.limit,
        max_tokens=args.max_tokens,
        num_ctx=args.num_ctx,
        temperature=args.temperature,
        seed=args.seed,
        template=load_template(args.prompt) if args.prompt else None,
        view=args.view,
        selfcons_temperature=selfcons_temperature,
        selfcons_seeds=selfcons_seeds,
    )
    pairs = judges_with_clients(settings, settings.capture)
    check_fingerprints(data, judge_fingerprints([j for j, _ in pairs]), what="this export")
    seen: set[str] = set()
    digest = hashlib.sha256()
    with atomic_open(out, "w") as fh:
        streams = [requests_of(j, c, trajs) for j, c in pairs]
        for per_trajectory in zip(*streams):  # trajectory by trajectory, as the runner visits them
            for _t, reqs in per_trajectory:
                for cid, body in reqs:
                    if cid in seen:
                        continue
                    seen.add(cid)
                    line = BatchRequest(custom_id=cid, body=body).line() + "\n"
                    fh.write(line)
                    digest.update(line.encode("utf-8"))
    record = {
        "format": FORMAT,
        **settings.record(),
        "judge_ids": [j.judge_id for j, _ in pairs],
        "members": {j.judge_id: list(member_ids(j)) for j, _ in pairs if member_ids(j)} or None,
        "prompt_sha256": prompt_digests(),
        "requests": out.name,
        "requests_sha256": digest.hexdigest(),
        "n_requests": len(seen),
        "n_trajectories": len(trajs),
        "trajectories_sha256": sha256_file(traj_path),
        "exported": now(),
    }
    atomic_write_text(settings_path(out), json.dumps(record, indent=1, sort_keys=True) + "\n")
    if not args.quiet:
        print(
            f"trajectory-judge: {len(seen)} requests ({', '.join(record['judge_ids'])} on {len(trajs)} trajectories) "
            f"written to {out}; settings in {settings_path(out)}",
            file=sys.stderr,
        )
    return 0


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
    lock = threading.Lock()
    with VerdictWriter(out) as writer:

        def write(line: str) -> None:
            with lock:
                writer.write_line(line)

        tallies = ENGINES[args.engine](pending, endpoints, write)
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
    """``trajectory-judge import-results``: answers -> verdicts, members and a run record, under the lock."""
    import time
    from pathlib import Path

    from trajectory_judge.cli.locked import while_holding
    from trajectory_judge.models import DataError, load_trajectories
    from trajectory_judge.provenance.checksums import sha256_file
    from trajectory_judge.provenance.pins import writable_folder
    from trajectory_judge.run.batch import Imported, plan_import, read_results, read_settings, settings_path
    from trajectory_judge.run.batch_format import read_requests
    from trajectory_judge.run.fingerprints import check_fingerprints, judge_fingerprints
    from trajectory_judge.run.runner import run_judges
    from trajectory_judge.run.store import MEMBERS, TRAJECTORIES, VERDICTS, append_run_record

    data = writable_folder(args.data, what="verdicts and a run record", force=args.force)
    if args.requests is None:
        raise ValueError("--requests FILE is required: the requests file the results answer")
    requests, results_path = Path(args.requests), Path(args.results)
    settings, srec = read_settings(requests)
    if sha256_file(requests) != srec.get("requests_sha256"):
        raise DataError(f"{requests}: its bytes are not those {settings_path(requests)} was written with")
    if sha256_file(data / TRAJECTORIES) != srec.get("trajectories_sha256"):
        raise DataError(
            f"{data / TRAJECTORIES}: not the trajectories the requests were exported from; "
            "import into the folder they came from"
        )
    trajs_all = load_trajectories(data / TRAJECTORIES)
    trajs = trajs_all[: settings.limit]
    requested = set(read_requests(requests))
    results = read_results(results_path)
    if results.torn:
        print(f"trajectory-judge: {results.torn}", file=sys.stderr)
    foreign = len(set(results.answers) - requested)
    t0 = time.monotonic()
    imported: list[Imported] = []  # what write() did, said once the folder is let go

    def write() -> int:
        plan, done = plan_import(settings, trajs, requested, results, requests)
        check_fingerprints(  # every judge before any verdict is written
            data,
            judge_fingerprints([j for _, j, _ in plan]),
            what="this import",
            prompt_option="export-requests --prompt",
        )
        for model, _name in settings.models:  # one run record per model, as `run --model a,b` writes
            mine = [(j, ready) for m, j, ready in plan if m == model]
            part = Imported(complete=done.complete, missing=done.missing, errors=done.errors)
            for judge, ready in mine:
                r = run_judges(
                    ready,
                    [judge],
                    data / VERDICTS,
                    members_path=data / MEMBERS,
                    progress=False,
                    record=False,
                    known_ids=[t.trajectory_id for t in trajs_all],
                    force=args.force,
                )
                _add(part.result, r)
            if part.result.written:
                judges = [j for j, _ in mine]
                append_run_record(
                    data, _run_record(args, settings, srec, part, results_path, requests, t0, model, judges)
                )
            _add(done.result, part.result)
        imported.append(done)
        return 0

    code = while_holding(data, "verdicts", write)
    if code == 0:
        _say(imported[0], foreign, args.missing)
    return code


def _add(total: RunResult, r: RunResult) -> None:
    for k in ("planned", "skipped", "written", "unparseable", "failed"):
        setattr(total, k, getattr(total, k) + getattr(r, k))
    total.per_judge.update(r.per_judge)
    total.rechecked.update(r.rechecked)
    total.repaired = "; ".join(x for x in (total.repaired, r.repaired) if x) or None


def _run_record(
    args: argparse.Namespace,
    settings: Settings,
    srec: dict[str, Any],
    done: Imported,
    results: Path,
    requests: Path,
    t0: float,
    model: str,
    judges: Sequence[Judge],
) -> dict[str, Any]:
    """The run record of one model's judges in an import (``done``: what they did)."""
    import time
    from dataclasses import asdict

    from trajectory_judge.provenance.checksums import sha256_file
    from trajectory_judge.run.fingerprints import judge_fingerprints
    from trajectory_judge.run.record import base_record, now
    from trajectory_judge.run.task import member_ids

    ids = [j.judge_id for j in judges]
    rec = base_record(ids, {j.judge_id: list(member_ids(j)) for j in judges if member_ids(j)}, concurrency=1)
    rec.update(
        backend="batch",
        base_url=None,
        model=model,
        judge_model_name=dict(settings.models)[model],
        limit=settings.limit,
        decoding=settings.decoding(),
        prompt_sha256=srec.get("prompt_sha256"),
        prompts={j.judge_id: t.record() for j in judges if (t := getattr(j, "template", None))} or None,
        fingerprints={k: fp.record() for k, fp in judge_fingerprints(judges).items()} or None,
        batch={
            "results": str(results),
            "results_sha256": sha256_file(results),
            "requests": str(requests),
            "requests_sha256": srec.get("requests_sha256"),
            "exported": srec.get("exported"),
            "complete_pairs": done.complete,
            "unanswered_requests": len(done.missing),
        },
        server={"server": "batch results"},
    )
    rec.update(asdict(done.result), ended=now(), wall_s=round(time.monotonic() - t0, 3), cpu_s=None)
    return rec


def _say(done: Imported, foreign: int, missing_out: str | None) -> None:
    from trajectory_judge.fileio import atomic_write_text
    from trajectory_judge.run.batch import SHOWN_MISSING

    r = done.result
    line = f"trajectory-judge: {r.written} written, {r.skipped} already on disk, {r.unparseable} unparseable"
    if done.missing:
        errs = f", {len(done.errors)} of them answered with an error" if done.errors else ""
        shown = ", ".join(done.missing[:SHOWN_MISSING]) + (", ..." if len(done.missing) > SHOWN_MISSING else "")
        line += f"; {len(done.missing)} requests have no answer{errs} ({shown}): their judge and trajectory pairs are left out"
        if missing_out:
            atomic_write_text(missing_out, "".join(c + "\n" for c in done.missing))
            line += f"; all of them are listed in {missing_out}"
    if foreign:
        line += f"; {foreign} answers are to requests not in --requests (ignored)"
    print(line, file=sys.stderr)
