"""Progress on stderr for long runs: rate, elapsed time and ETA, in the run's own unit.

On a terminal it is a tqdm bar; anywhere else (a log file, a pipe, CI) it is a plain line every
half minute. Either way the rate is the observed throughput (units done per second of wall time),
so the ETA already reflects the run's ``--concurrency``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


# --- progress ----------------------------------------------------------------------------
class Progress:
    """Progress on stderr with rate and ETA: a tqdm bar on a terminal, plain lines otherwise.

    ``total`` counts the units to do (for a judge run, verdicts to write, ensemble members
    included, so the bar and the run's ``written`` count agree); ``update(n=...)`` counts several.
    """

    def __init__(
        self,
        total: int,
        *,
        desc: str = "verdicts",
        enabled: bool = True,
        every_s: float = 30.0,
        unit: str = "verdict",
        concurrency: int = 1,
        stream: TextIO | None = None,
    ) -> None:
        self.total, self.n, self.desc, self.enabled, self.unit = total, 0, desc, enabled, unit
        self.every_s, self.concurrency = every_s, concurrency
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = self._last = time.monotonic()
        self._bar: Any = None
        if enabled and _is_tty(self.stream):
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=desc,
                unit=unit,
                file=self.stream,
                dynamic_ncols=True,
                postfix=f"concurrency {concurrency}" if concurrency > 1 else None,
            )

    def update(self, note: str = "", n: int = 1) -> None:
        """Count ``n`` units of work (``note`` goes on the plain line)."""
        self.n += n
        if not self.enabled or n <= 0:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last >= self.every_s or self.n >= self.total or self.n == n:
            self._last = now
            print(self.line(note), file=self.stream, flush=True)

    def line(self, note: str = "") -> str:
        """``desc n/total (pct) s/unit elapsed ETA``: the rate is wall time per unit done."""
        el = time.monotonic() - self.t0
        rate = el / self.n if self.n else float("nan")
        eta = rate * (self.total - self.n) if self.n else float("nan")
        pct = 100.0 * self.n / self.total if self.total else 100.0
        return (
            f"{self.desc} {self.n}/{self.total} ({pct:.0f}%) {rate:.2f} s/{self.unit} "
            f"elapsed {_hms(el)} ETA {_hms(eta)}{' ' + note if note else ''}"
        )

    def close(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()


def say(message: str) -> None:
    """One ``trajectory-judge: ...`` line on stderr, above a progress bar if one is drawn (tqdm keeps it intact)."""
    from tqdm import tqdm

    tqdm.write(f"trajectory-judge: {message}", file=sys.stderr)


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _hms(s: float) -> str:
    if s != s:  # nan
        return "?"
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"
