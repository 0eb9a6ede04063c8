"""When and how long a client waits before it asks again: retry policy, ``Retry-After``, and the rate gate.

- :class:`RetryPolicy`: how many retries a failed request gets (connection, timeout, HTTP 5xx)
  and how many seconds of waiting one request may spend in all (``--retry-budget``). A rate
  limit (HTTP 429, or 503 "overloaded") is waited out within the budget, however many attempts
  that takes; a fault also stops after ``retries`` retries.
- :func:`retry_after`: the server's own wait from ``Retry-After`` (seconds or an HTTP date) or
  ``retry-after-ms``.
- :func:`backoff_delay`: exponential backoff with bounded jitter, so parallel workers that failed
  together do not all come back at the same instant.
- :class:`RateGate`: shared by every thread of one client. A rate limit pauses *all* requests
  until the wait is over and halves the number allowed in flight; successes raise it again one
  at a time (additive increase, multiplicative decrease). Each change is announced through
  ``on_event`` so the terminal says why the run slowed down.
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

RATE_LIMIT_STATUS = (429, 503)
"""HTTP statuses that mean "slow down": waited out within the budget, and they lower concurrency."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries one request."""

    retries: int = 3
    """Retries after a fault (connection refused, timeout, HTTP 5xx other than 503, a broken body)."""
    budget_s: float = 600.0
    """Seconds one request may spend waiting (backoff, ``Retry-After``, pauses) before the client gives up."""
    backoff_s: float = 2.0
    """The first backoff; it doubles with each attempt."""
    backoff_max_s: float = 60.0
    """The longest single backoff (a ``Retry-After`` may ask for more, within the budget)."""
    jitter: float = 0.5
    """Fraction of each backoff drawn at random: a wait lies in ``[(1 - jitter) * d, d]``."""


def retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date); None if it does not say."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    text = headers.get("retry-after")
    if text is None:
        return None
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        now = now or datetime.now(UTC)
        return max(0.0, (when - now).total_seconds())
    return value if math.isfinite(value) and value >= 0 else None


def backoff_delay(policy: RetryPolicy, attempt: int, rng: random.Random) -> float:
    """The wait before retry number ``attempt`` (1, 2, ...): ``min(max, base * 2**(attempt-1))``, less up to ``jitter`` of it."""
    d = min(policy.backoff_max_s, policy.backoff_s * 2 ** (attempt - 1))
    return d * (1.0 - policy.jitter * rng.random())


class GateClosed(Exception):
    """Raised inside :meth:`RateGate.slot` once another request gave up: the run is stopping."""


class RateGate:
    """Limits one client's requests in flight, and pauses them all while the server rate-limits.

    ``limit`` starts at ``concurrency``; a rate limit halves it (once per round of requests sent
    at the same limit) and pauses every request until ``now + wait``; ``limit`` consecutive
    successes raise it by one, up to ``concurrency``.

    ``on_event`` hears one line per change of state, not one per refused request: when the rate
    limiting starts, when the wait it asks for changes materially (by half or double of the last
    one said), when requests in flight are back to ``concurrency``, and when it is over
    (:data:`OVER_AFTER` answers in a row without one), with how many requests it refused meanwhile.
    """

    OVER_AFTER = 10
    """Successes in a row after which a spell of rate limiting is said to be over."""

    def __init__(
        self,
        concurrency: int = 1,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] = time.sleep,
        on_event: Callable[[str], Any] | None = None,
    ) -> None:
        self.concurrency = max(1, int(concurrency))
        self.limit = self.concurrency
        self.lowest = self.concurrency
        self.in_flight = 0
        self.max_in_flight = 0
        self.pause_until = -math.inf
        self.epoch = 0
        self.rate_limited = 0
        self.paused_s = 0.0
        self.closed: str | None = None
        self._ok_streak = 0
        self._spell: tuple[int, float] | None = None  # while rate-limited: (refusals, paused s) when it began
        self._said_wait = 0.0
        self._clear_streak = 0
        self._clock, self._sleep = clock, sleep
        self.on_event = on_event
        self._cond = threading.Condition()

    def _say(self, message: str) -> None:
        if self.on_event is not None:
            self.on_event(message)

    def remaining_pause(self) -> float:
        """Seconds until the current pause ends (0 when not paused)."""
        return max(0.0, self.pause_until - self._clock())

    @contextmanager
    def slot(self, budget_left: float = math.inf) -> Iterator[tuple[int, float]]:
        """Wait for the pause to end and a free slot; yields ``(epoch, seconds waited in pauses)``.

        :class:`GateClosed` if the gate closed, :class:`TimeoutError` if the pause outlasts ``budget_left``.
        """
        waited, served = 0.0, -math.inf  # served: the end of the last pause this request slept through
        while True:
            with self._cond:
                if self.closed:
                    raise GateClosed(self.closed)
                pause = self.remaining_pause() if self.pause_until > served else 0.0
                target = self.pause_until
                if pause <= 0 and self.in_flight < self.limit:
                    self.in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self.in_flight)
                    epoch = self.epoch
                    break
                if pause <= 0:
                    self._cond.wait(timeout=1.0)  # a slot frees up when a request ends
                    continue
            if waited + pause > budget_left:
                raise TimeoutError(pause)
            self._sleep(pause)
            waited, served = waited + pause, target
        try:
            yield epoch, waited
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def slowed(self, wait: float, epoch: int, why: str) -> None:
        """A request sent at ``epoch`` was rate-limited: pause everyone ``wait`` s; halve the limit once per epoch."""
        with self._cond:
            self.rate_limited += 1
            self._ok_streak = self._clear_streak = 0
            paused_before = self.paused_s
            until = self._clock() + wait
            longer = until > self.pause_until
            if longer:
                self.paused_s += wait if self.pause_until < self._clock() else until - self.pause_until
                self.pause_until = until
            old = self.limit
            if epoch == self.epoch:  # else sent before the last decrease: that decrease already answered it
                self.epoch += 1
                self.limit = max(1, self.limit // 2)
                self.lowest = min(self.lowest, self.limit)
            new, starts = self.limit, self._spell is None
            changed = not starts and not (self._said_wait / 2 < wait < self._said_wait * 2)
            if starts:
                self._spell = (self.rate_limited - 1, paused_before)
            if starts or changed:
                self._said_wait = wait
        lowered = f"; requests in flight {old} -> {new} of {self.concurrency}" if new != old else ""
        if starts:
            self._say(f"rate limited ({why}): every request paused {wait:.0f} s{lowered}")
        elif changed:
            self._say(f"rate limit wait now {wait:.0f} s ({why}){lowered}")

    def succeeded(self) -> None:
        """A request got its answer: after ``limit`` successes in a row, allow one more in flight."""
        over = self._spell_over()
        if over:
            self._say(over)
        with self._cond:
            if self.limit >= self.concurrency:
                return
            self._ok_streak += 1
            if self._ok_streak < self.limit:
                return
            self._ok_streak = 0
            self.limit += 1
            self.epoch += 1
            self._cond.notify_all()
            limit = self.limit
        if limit == self.concurrency:
            self._say(f"rate limit eased: requests in flight back up to {limit} of {self.concurrency}")

    def _spell_over(self) -> str | None:
        """The line saying a spell of rate limiting is over, once :data:`OVER_AFTER` answers came in a row."""
        with self._cond:
            if self._spell is None:
                return None
            self._clear_streak += 1
            if self._clear_streak < self.OVER_AFTER:
                return None
            (refused0, paused0), self._spell = self._spell, None
            refused, paused = self.rate_limited - refused0, self.paused_s - paused0
        return (
            f"rate limit over: {refused} request{'s' if refused != 1 else ''} refused meanwhile, "
            f"every request paused {paused:.0f} s in all; requests in flight {self.limit} of {self.concurrency}"
        )

    def close(self, message: str) -> None:
        """Stop every request waiting here (one gave up, or the run is aborting)."""
        with self._cond:
            self.closed = self.closed or message
            self._cond.notify_all()

    def summary(self) -> str | None:
        """One clause for the run's summary line, or None when the server never rate-limited."""
        if not self.rate_limited:
            return None
        low = f", in flight lowered to {self.lowest} of {self.concurrency}" if self.lowest < self.concurrency else ""
        return f"rate limited {self.rate_limited} time{'s' if self.rate_limited != 1 else ''} (paused {self.paused_s:.0f} s{low})"
