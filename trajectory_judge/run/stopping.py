"""How a writing verb stops: on Ctrl-C or SIGTERM promptly, on a full disk with a plain message.

:func:`stop_on_signals` turns SIGINT and SIGTERM into :class:`Interrupted` in the main thread
(which then cuts off the requests in flight) and :func:`exit_code` maps the way a run ended to
its exit status: 130 after SIGINT, 143 after SIGTERM (128 + the signal, as a shell reports it).
"""

from __future__ import annotations

import errno
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Interrupted(Exception):
    """SIGTERM or Ctrl-C: stop now; requests in flight are cut off and judged again on resume."""

    def __init__(self, message: str, signum: int | None = None) -> None:
        super().__init__(message)
        self.signum = signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted` (the previous handlers come back after)."""

    def handler(signum: int, frame: Any) -> None:
        raise Interrupted(signal.Signals(signum).name, signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def exit_code(exc: BaseException) -> int:
    """128 + the signal that interrupted (130 for Ctrl-C, 143 for SIGTERM)."""
    signum = getattr(exc, "signum", None)
    return 128 + int(signum if signum is not None else signal.SIGINT)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is the operating system saying the disk (or the quota) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
