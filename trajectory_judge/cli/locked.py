"""Hold a data folder while a verb writes it: its lock, signals that stop the work, and the pins it broke."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def while_holding(data: Path, kept: str, work: Callable[[], int]) -> int:
    """Run ``work`` holding ``data``'s lock, with SIGINT and SIGTERM stopping it, and return its exit code.

    Interrupted before ``work`` began, or by a second signal while it records, says what of ``kept`` stays on
    disk and returns the signal's exit code. However it ends, a note names the ``SHA256SUMS`` pins it broke
    (only possible after ``--force``).
    """
    from trajectory_judge.provenance.pins import broken_pins_note
    from trajectory_judge.run.stopping import Interrupted, exit_code, stop_on_signals
    from trajectory_judge.run.store import data_dir_lock

    try:
        with data_dir_lock(data), stop_on_signals():
            return work()
    except Interrupted as exc:
        print(f"trajectory-judge: interrupted ({exc}); {kept} already on disk are kept.", file=sys.stderr)
        return exit_code(exc)
    finally:
        if note := broken_pins_note(data):
            print(note, file=sys.stderr)
