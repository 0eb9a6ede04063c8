"""Organic runs: let a model play the support desk for many instances, resumably (``trajectory-judge agent``).

The agent itself (prompt, action schema, one episode) lives in :mod:`trajectory_judge.testbed.agent`;
this module plays episodes against a model server, appends them durably to ``DIR/organic.jsonl``
(an episode already on disk is skipped) and appends the run's metadata to ``DIR/runs.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trajectory_judge.backends.clients import ModelClient
from trajectory_judge.models import DataError, Episode, dumps, parse_jsonl
from trajectory_judge.run import argtypes as A
from trajectory_judge.run.meter import CpuMeter
from trajectory_judge.testbed.agent import AGENT_SEED, AGENT_TEMPERATURE, ORGANIC, play, summarise
from trajectory_judge.testbed.env import Instance, generate_instances


def run_episodes(
    instances: Sequence[Instance],
    client: ModelClient,
    out_path: str | Path,
    *,
    agent_model: str,
    temperature: float = AGENT_TEMPERATURE,
    seed: int = AGENT_SEED,
    progress: bool = True,
) -> list[Episode]:
    """Play every instance this model has not played yet in ``out_path``; append each episode as it finishes.

    Episodes are keyed by (instance, agent model) from their fields, so episodes written under the
    older id scheme (without the model) count as done, and another model plays its own.
    """
    from trajectory_judge.run.progress import Progress
    from trajectory_judge.run.store import append_line, repair_torn_tail

    out_path = Path(out_path)
    msg = repair_torn_tail(out_path, Episode)
    if msg:
        print(f"trajectory-judge: {msg}", file=sys.stderr)
    done = (
        {(e.trajectory.instance_id, e.agent_model) for e in parse_jsonl(out_path, Episode)}
        if out_path.exists()
        else set()
    )
    todo = [i for i in instances if (i.instance_id, agent_model) not in done]
    bar = Progress(len(todo), desc=f"organic:{agent_model}", enabled=progress, unit="episode")
    new: list[Episode] = []
    fd = os.open(out_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        for inst in todo:
            ep = play(inst, client, agent_model=agent_model, temperature=temperature, seed=seed)
            append_line(fd, (dumps(ep) + "\n").encode("utf-8"))
            os.fsync(fd)
            new.append(ep)
            bar.update(f"{ep.episode_id} {len(ep.trajectory.steps)} steps {ep.latency_s:.0f}s")
    except BaseException as exc:
        exc.episodes_written = len(new)  # type: ignore[attr-defined]
        raise
    finally:
        os.close(fd)
        bar.close()
    return new


def add_agent_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``trajectory-judge agent``."""
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="output folder: organic.jsonl and runs.jsonl are appended there, and it is created if need be (required)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into --data even if SHA256SUMS pins it (then re-pin it with `trajectory-judge manifest`)",
    )
    p.add_argument(
        "--episodes", type=A.positive_int, default=60, help="number of episodes, the first N instances (default 60)"
    )
    p.add_argument("--instance-seed", type=A.nonnegative_int, default=7, help="instance generation seed (default 7)")
    p.add_argument("--backend", choices=["ollama", "openai"], default="openai")
    p.add_argument("--base-url", type=A.url, default="http://127.0.0.1:8080")
    p.add_argument("--model", type=A.model_name, required=True, help="model name sent to the server")
    p.add_argument(
        "--agent-model-name", type=A.model_name, default=None, help="model name recorded in episodes (default --model)"
    )
    p.add_argument("--num-ctx", type=A.positive_int, default=8192)
    p.add_argument("--max-tokens", type=A.positive_int, default=512)
    p.add_argument("--temperature", type=A.nonnegative_float, default=AGENT_TEMPERATURE)
    p.add_argument("--seed", type=A.nonnegative_int, default=AGENT_SEED)
    p.add_argument("--timeout", type=A.positive_float, default=600.0)
    p.add_argument("--retries", type=A.nonnegative_int, default=3)
    p.add_argument("--cache-prompt", choices=["off", "on", "unset"], default="off")
    p.add_argument("--quiet", action="store_true")


def cli_agent(args: argparse.Namespace) -> int:
    """``trajectory-judge agent``: play organic episodes, append them, print the summary.

    Exit codes as for ``run``: 1 on a client failure or a full disk, 2 if another process writes
    the directory or ``--data`` is missing or pinned without ``--force`` (then nothing is written),
    130 after Ctrl-C, 143 after SIGTERM; the run record is appended either way.
    """
    from trajectory_judge.provenance.pins import broken_pins_note, writable_folder
    from trajectory_judge.run.cli_run import make_client
    from trajectory_judge.run.stopping import Interrupted, exit_code, stop_on_signals
    from trajectory_judge.run.store import data_dir_lock

    args.concurrency = 1
    data = writable_folder(args.data, what="episodes and a run record", force=args.force)
    if data.exists() and not data.is_dir():
        raise DataError(f"{data}: --data names a folder, and {data} is a file; nothing was written")
    data.mkdir(parents=True, exist_ok=True)
    name = args.agent_model_name or args.model
    client = make_client(args)
    try:
        with data_dir_lock(data), stop_on_signals():
            code = _play_and_record(args, data, client, name)
    except Interrupted as exc:  # before playing began, or a second signal while recording
        print(f"trajectory-judge: interrupted ({exc}); episodes already on disk are kept.", file=sys.stderr)
        return exit_code(exc)
    finally:
        client.close()
        if note := broken_pins_note(data):
            print(note, file=sys.stderr)
    if code == 0:
        keys = {(i.instance_id, name) for i in generate_instances(args.episodes, args.instance_seed)}
        eps = parse_jsonl(data / ORGANIC, Episode)
        print(json.dumps(summarise(e for e in eps if (e.trajectory.instance_id, e.agent_model) in keys), indent=2))
    return code


def _play_and_record(args: argparse.Namespace, data: Path, client: ModelClient, name: str) -> int:
    """Play the episodes (holding the directory's lock) and append the run record however it ends."""
    from importlib.metadata import version as _dist_version

    from trajectory_judge.run.cli_run import launch_record
    from trajectory_judge.run.record import git_commit, now as _now
    from trajectory_judge.run.store import append_run_record

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
    record["server_launch"] = launch_record(args.base_url, record["server"])
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
        try:
            append_run_record(data, record)
        except OSError as exc:
            print(f"trajectory-judge: warning: could not append to {data / 'runs.jsonl'}: {exc}", file=sys.stderr)
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
