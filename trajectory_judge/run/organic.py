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
from pathlib import Path
from typing import Any, Sequence

from trajectory_judge.backends.clients import ModelClient
from trajectory_judge.models import Episode, dumps, parse_jsonl
from trajectory_judge.run import argtypes as A
from trajectory_judge.run.meter import CpuMeter
from trajectory_judge.testbed.agent import ORGANIC, play, summarise
from trajectory_judge.testbed.env import Instance, generate_instances


def run_episodes(instances: Sequence[Instance], client: ModelClient, out_path: str | Path, *, agent_model: str,
                 temperature: float = 0.0, seed: int = 7, progress: bool = True) -> list[Episode]:
    """Play every instance not yet in ``out_path``; append each episode durably as it finishes."""
    from trajectory_judge.run.progress import Progress
    from trajectory_judge.run.store import repair_torn_tail

    out_path = Path(out_path)
    msg = repair_torn_tail(out_path, Episode)
    if msg:
        print(f"trajectory-judge: {msg}", file=sys.stderr)
    done = {e.episode_id for e in parse_jsonl(out_path, Episode)} if out_path.exists() else set()
    todo = [i for i in instances if f"{i.instance_id}-organic" not in done]
    bar = Progress(len(todo), desc=f"organic:{agent_model}", enabled=progress, unit="episode")
    new: list[Episode] = []
    with open(out_path, "a", encoding="utf-8", newline="\n") as fh:
        for inst in todo:
            ep = play(inst, client, agent_model=agent_model, temperature=temperature, seed=seed)
            fh.write(dumps(ep) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            new.append(ep)
            bar.update(f"{ep.episode_id} {len(ep.trajectory.steps)} steps {ep.latency_s:.0f}s")
    bar.close()
    return new


def add_agent_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``trajectory-judge agent``."""
    p.add_argument("--data", default="data/", help="output directory: organic.jsonl and runs.jsonl (default data/)")
    p.add_argument("--episodes", type=A.positive_int, default=60, help="number of episodes, the first N instances (default 60)")
    p.add_argument("--instance-seed", type=A.nonnegative_int, default=7, help="instance generation seed (default 7)")
    p.add_argument("--backend", choices=["ollama", "openai"], default="openai")
    p.add_argument("--base-url", type=A.url, default="http://127.0.0.1:8080")
    p.add_argument("--model", type=A.model_name, required=True, help="model name sent to the server")
    p.add_argument("--agent-model-name", type=A.model_name, default=None, help="model name recorded in episodes (default --model)")
    p.add_argument("--num-ctx", type=A.positive_int, default=8192)
    p.add_argument("--max-tokens", type=A.positive_int, default=512)
    p.add_argument("--temperature", type=A.nonnegative_float, default=0.0)
    p.add_argument("--seed", type=A.nonnegative_int, default=7)
    p.add_argument("--timeout", type=A.positive_float, default=600.0)
    p.add_argument("--retries", type=A.nonnegative_int, default=3)
    p.add_argument("--cache-prompt", choices=["off", "on", "unset"], default="off")
    p.add_argument("--quiet", action="store_true")


def cli_agent(args: argparse.Namespace) -> int:
    """``trajectory-judge agent``: play organic episodes, append them, print the summary."""
    from importlib.metadata import version as _dist_version
    __version__ = _dist_version("trajectory-judge")
    from trajectory_judge.backends.clients import JudgeClientError
    from trajectory_judge.run.cli_run import (
        _now,
        git_commit,
        launch_record,
        make_client,
    )
    from trajectory_judge.run.store import append_run_record

    args.concurrency = 1
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    name = args.agent_model_name or args.model
    client = make_client(args)
    record: dict[str, Any] = {
        "started": _now(), "argv": sys.argv[1:], "kind": "organic", "agent_model": name, "backend": args.backend,
        "base_url": args.base_url, "model": args.model, "episodes": args.episodes, "instance_seed": args.instance_seed,
        "decoding": {**client.decoding(), "temperature": args.temperature, "seed": args.seed},
        "package_version": __version__, "git_commit": git_commit(), "server": client.server_info(),
    }
    record["server_launch"] = launch_record(args.base_url, record["server"])
    meter = CpuMeter(record["server_launch"])
    t0 = time.monotonic()
    code, status, message, new = 0, "ok", None, []
    instances = generate_instances(args.episodes, args.instance_seed)
    try:
        new = run_episodes(instances, client, data / ORGANIC, agent_model=name, temperature=args.temperature,
                           seed=args.seed, progress=not args.quiet)
    except JudgeClientError as exc:
        code, status, message = 1, "failed", f"{type(exc).__name__}: {exc}"
        print(f"trajectory-judge: error: {exc}\n  episodes already written are kept; rerun to resume.", file=sys.stderr)
    except KeyboardInterrupt:
        code, status, message = 130, "interrupted", "KeyboardInterrupt"
    finally:
        client.close()
        record.update(status=status, message=message, written=len(new), ended=_now(),
                      wall_s=round(time.monotonic() - t0, 3), cpu_s=meter.read())
        append_run_record(data, record)
    if code == 0:
        eps = parse_jsonl(data / ORGANIC, Episode)
        ids = {f"{i.instance_id}-organic" for i in instances}
        print(json.dumps(summarise(e for e in eps if e.episode_id in ids), indent=2))
    return code
