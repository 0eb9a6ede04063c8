"""``trajectory-judge agent``: let a model play the support desk, and record the run.

The episodes are played and appended by :func:`trajectory_judge.run.organic.run_episodes`; this module declares
the verb, holds the folder's lock and appends the run record however the run ends.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import Verbs, declare

if TYPE_CHECKING:
    from trajectory_judge.backends.clients import ModelClient


def add(sub: Verbs) -> None:
    """Declare ``trajectory-judge agent`` (its decoding's defaults are the agent's, filled in by :func:`cli_agent`)."""
    p = sub.add_parser("agent", help="let an LLM drive the support desk; label episodes with the rule checker")
    declare(
        p,
        "--data",
        "--force",
        data="output folder: organic.jsonl and runs.jsonl are appended there, and it is created if need be (required)",
    )
    p.add_argument(
        "--episodes", type=A.positive_int, default=60, help="number of episodes, the first N instances (default 60)"
    )
    p.add_argument("--instance-seed", type=A.nonnegative_int, default=7, help="instance generation seed (default 7)")
    declare(p, "--backend", "--base-url", "--model", model="model name sent to the server")
    p.add_argument(
        "--agent-model-name", type=A.model_name, default=None, help="model name recorded in episodes (default --model)"
    )
    declare(p, "--num-ctx", "--max-tokens", "--temperature", "--seed", max_tokens=None, temperature=None)
    declare(p, "--timeout", "--retries", timeout=None)
    p.add_argument("--cache-prompt", choices=["off", "on", "unset"], default="off")
    declare(p, "--quiet")
    p.set_defaults(func=cli_agent, temperature=None, seed=None)


def cli_agent(args: argparse.Namespace) -> int:
    """``trajectory-judge agent``: play organic episodes, append them, print the summary.

    Exit codes as for ``run``: 1 on a client failure or a full disk, 2 if another process writes
    the directory or ``--data`` is missing or pinned without ``--force`` (then nothing is written),
    130 after Ctrl-C, 143 after SIGTERM; the run record is appended either way.
    """
    from trajectory_judge.cli.locked import while_holding
    from trajectory_judge.models import DataError, Episode, parse_jsonl
    from trajectory_judge.provenance.pins import writable_folder
    from trajectory_judge.run.settings import make_client
    from trajectory_judge.testbed.agent import AGENT_SEED, AGENT_TEMPERATURE, ORGANIC, summarise
    from trajectory_judge.testbed.env import generate_instances

    args.concurrency = 1
    args.temperature = AGENT_TEMPERATURE if args.temperature is None else args.temperature
    args.seed = AGENT_SEED if args.seed is None else args.seed
    data = writable_folder(args.data, what="episodes and a run record", force=args.force)
    if data.exists() and not data.is_dir():
        raise DataError(f"{data}: --data names a folder, and {data} is a file; nothing was written")
    data.mkdir(parents=True, exist_ok=True)
    name = args.agent_model_name or args.model
    client = make_client(args)
    with closing(client):
        code = while_holding(data, "episodes", lambda: _play_and_record(args, data, client, name))
    if code == 0:
        keys = {(i.instance_id, name) for i in generate_instances(args.episodes, args.instance_seed)}
        eps = parse_jsonl(data / ORGANIC, Episode)
        print(json.dumps(summarise(e for e in eps if (e.trajectory.instance_id, e.agent_model) in keys), indent=2))
    return code


def _play_and_record(args: argparse.Namespace, data: Path, client: ModelClient, name: str) -> int:
    """Play the episodes (holding the directory's lock) and append the run record however it ends."""
    from importlib.metadata import version as _dist_version

    from trajectory_judge.run.llm_paths import read_launch_info
    from trajectory_judge.run.meter import CpuMeter
    from trajectory_judge.run.organic import run_episodes
    from trajectory_judge.run.record import git_commit, now as _now
    from trajectory_judge.run.store import append_run_record_or_warn
    from trajectory_judge.testbed.agent import ORGANIC
    from trajectory_judge.testbed.env import generate_instances

    record: dict[str, Any] = {
        "started": _now(),
        "argv": sys.argv[1:],
        "kind": "organic",
        "agent_model": name,
        "backend": args.backend,
        "base_url": args.base_url,
        "model": args.model,
        "episodes": args.episodes,
        "instance_seed": args.instance_seed,
        "decoding": {**client.decoding(), "temperature": args.temperature, "seed": args.seed},
        "package_version": _dist_version("trajectory-judge"),
        "git_commit": git_commit(),
        "server": client.server_info(),
    }
    record["server_launch"] = read_launch_info(args.base_url, record["server"].get("model_path"))
    meter = CpuMeter(record["server_launch"])
    t0 = time.monotonic()
    code, status, message, written = 0, "ok", None, 0
    instances = generate_instances(args.episodes, args.instance_seed)
    try:
        written = len(
            run_episodes(
                instances,
                client,
                data / ORGANIC,
                agent_model=name,
                temperature=args.temperature,
                seed=args.seed,
                progress=not args.quiet,
            )
        )
    except BaseException as exc:
        written = getattr(exc, "episodes_written", 0)
        ended = _how_it_ended(exc, data, written)
        if ended is None:
            raise
        code, status, message = ended
    finally:
        record.update(
            status=status,
            message=message,
            written=written,
            ended=_now(),
            wall_s=round(time.monotonic() - t0, 3),
            cpu_s=meter.read(),
        )
        append_run_record_or_warn(data, record)
    return code


def _how_it_ended(exc: BaseException, data: Path, written: int) -> tuple[int, str, str] | None:
    """(exit code, status, message) for an expected end, said on stderr in one line; None to re-raise."""
    from trajectory_judge.backends.clients import JudgeClientError
    from trajectory_judge.run.stopping import Interrupted, exit_code, is_disk_full

    kept = f"{written} episodes written by this run are kept"
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, JudgeClientError):
        print(f"trajectory-judge: error: {exc}\n  {kept}; rerun to resume.", file=sys.stderr)
        return 1, "failed", message
    if isinstance(exc, (KeyboardInterrupt, Interrupted)):
        print(f"trajectory-judge: interrupted ({exc}); {kept}; rerun to resume.", file=sys.stderr)
        return exit_code(exc), "interrupted", message
    if is_disk_full(exc):
        print(
            f"trajectory-judge: error: {data}: no space left on the device; {kept}; free space and rerun to resume.",
            file=sys.stderr,
        )
        return 1, "failed", message
    return None
