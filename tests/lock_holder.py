"""Another process that holds a data folder's writer lock for as long as a test needs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOLD = (
    "import sys\n"
    "from trajectory_judge.run.store import data_dir_lock\n"
    "with data_dir_lock(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.readline()\n"
)


@contextmanager
def held_by_another_process(folder: str | Path) -> Iterator[int]:
    """Hold ``folder``'s lock in a child process (its pid yielded) until the block ends."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child.pid
    finally:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(timeout=30)
