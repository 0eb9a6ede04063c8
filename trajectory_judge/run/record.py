"""The run record: what every invocation of the runner appends to ``DIR/runs.jsonl``.

:func:`base_record` holds what any run can say about itself (judges and their kinds, code version,
host, start time); ``trajectory-judge run`` adds its server and decoding settings on top. A
setting a backend does not report is simply absent, and readers say "not reported".
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import Any

from trajectory_judge.models import JudgeSpec, Verdict

LATENCY_MEANING = (
    "latency_s: seconds of the model call that answered, from sending the request to its full answer "
    "(the try that succeeded; backoff, rate-limit waits and queueing for a connection excluded); requests "
    "in flight at once (the record's concurrency) share the server, so each of them takes longer"
)
"""What a verdict's ``latency_s`` measures, as every run record (``run`` and ``import-inspect``) says it."""


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def git_commit() -> str | None:
    """The package checkout's commit (with ``-dirty`` if it has uncommitted changes), if any."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        if not head:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def base_record(judge_ids: Sequence[str], members: dict[str, list[str]], *, concurrency: int) -> dict[str, Any]:
    """The part of a run record every run has, whatever its judges are."""
    return {
        "started": now(),
        "argv": sys.argv[1:],
        "judges": list(judge_ids),
        "judge_kinds": {j: JudgeSpec.parse(j).kind for j in judge_ids},
        "members": members or None,
        "backend": "python",
        "concurrency": concurrency,
        "package_version": _dist_version("trajectory-judge"),
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "host": os.uname().nodename,
    }


def per_judge_costs(verdicts: Iterable[Verdict]) -> dict[str, dict[str, float]]:
    """Per judge id, in the order first met: verdicts, mean seconds per verdict, mean prompt and completion tokens."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])
    for v in verdicts:
        s = sums[v.judge_id]
        s[0], s[1], s[2], s[3] = s[0] + 1, s[1] + v.latency_s, s[2] + v.prompt_tokens, s[3] + v.completion_tokens
    return {
        j: {"verdicts": n, "s_per_verdict": lat / n, "prompt_tokens": pt / n, "completion_tokens": ct / n}
        for j, (n, lat, pt, ct) in sums.items()
    }
