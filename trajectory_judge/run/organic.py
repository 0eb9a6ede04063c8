"""Organic runs: let a model play the support desk for many instances, resumably (``trajectory-judge agent``).

The agent itself (prompt, action schema, one episode) lives in :mod:`trajectory_judge.testbed.agent`;
this module plays episodes against a model server, appends them durably to ``DIR/organic.jsonl``
(an episode already on disk is skipped) and appends the run's metadata to ``DIR/runs.jsonl``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from trajectory_judge.backends.clients import ModelClient
from trajectory_judge.models import Episode, dumps, parse_jsonl
from trajectory_judge.testbed.agent import AGENT_SEED, AGENT_TEMPERATURE, play
from trajectory_judge.testbed.env import Instance


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
