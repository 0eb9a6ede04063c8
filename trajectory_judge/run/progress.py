"""Progress on stderr for long runs: rate, elapsed time and ETA, in the run's own unit.
"""

from __future__ import annotations

import sys
import time


# --- progress ----------------------------------------------------------------------------
class Progress:
    """Progress on stderr with rate and ETA: tqdm on a terminal when installed, else plain lines."""

    def __init__(self, total: int, *, desc: str = "verdicts", enabled: bool = True, every_s: float = 30.0,
                 unit: str = "verdict") -> None:
        self.total, self.n, self.desc, self.enabled, self.unit = total, 0, desc, enabled, unit
        self.every_s = every_s
        self.t0 = self._last = time.monotonic()
        self._bar = None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm

                self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
            except ImportError:
                pass

    def update(self, note: str = "") -> None:
        """Count one unit of work."""
        self.n += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(1)
            return
        now = time.monotonic()
        if now - self._last >= self.every_s or self.n == self.total or self.n == 1:
            self._last = now
            print(self.line(note), file=sys.stderr, flush=True)

    def line(self, note: str = "") -> str:
        """``desc n/total (pct) s/unit ETA``."""
        el = time.monotonic() - self.t0
        rate = el / self.n if self.n else float("nan")
        eta = rate * (self.total - self.n) if self.n else float("nan")
        pct = 100.0 * self.n / self.total if self.total else 100.0
        return (f"{self.desc} {self.n}/{self.total} ({pct:.0f}%) {rate:.2f} s/{self.unit} "
                f"elapsed {_hms(el)} ETA {_hms(eta)}{' ' + note if note else ''}")

    def close(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()


def _hms(s: float) -> str:
    if s != s:  # nan
        return "?"
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"
