"""The one POST every client sends: retried on faults, paused under rate limits, within a budget.

Mixed into :class:`~.clients.ModelClient`, which holds the settings it reads: ``policy``
(:class:`~.retry.RetryPolicy`), ``gate`` (:class:`~.retry.RateGate`), ``_http``, ``_auth``,
``_sleep``, ``_rng``, ``_aborted``, ``name`` and ``base_url``.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from trajectory_judge.backends.errors import Aborted, RetryBudgetExhausted, ServerRejectedError
from trajectory_judge.backends.retry import (
    RATE_LIMIT_STATUS,
    GateClosed,
    RateGate,
    RetryPolicy,
    backoff_delay,
    retry_after,
)

MIN_RATE_WAIT_S = 1.0
"""The shortest wait after a rate limit, whatever ``Retry-After`` says."""


class RetryingPost:
    """``_post``: the retry loop shared by the model clients."""

    name: str
    base_url: str
    policy: RetryPolicy
    gate: RateGate
    _http: httpx.Client
    _auth: dict[str, str]
    _sleep: Callable[[float], Any]
    _rng: random.Random
    _aborted: threading.Event

    def _raise_for_client_error(self, r: httpx.Response) -> None:  # pragma: no cover - defined by the client
        raise ServerRejectedError(f"HTTP {r.status_code}", r.status_code)

    def _where(self, url: str) -> str:
        return url if "://" in url else f"{self.base_url}{url}"

    def _give_up(self, url: str, st: _Tries, over_budget: str | None = None) -> RetryBudgetExhausted:
        """The error of a request given up: past its retries, or (``over_budget``: what more to say) past its budget."""
        budget = f" and {st.waited:.0f} s of waiting" if st.waited >= 1 else ""
        why = f" (--retry-budget {self.policy.budget_s:.0f} s{over_budget})" if over_budget is not None else ""
        msg = f"{self.name} at {self._where(url)}: gave up after {st.attempts} attempt{'s' if st.attempts != 1 else ''}{budget}{why}; last error: {st.last}"
        self.gate.close(msg)
        return RetryBudgetExhausted(msg)

    def _post(
        self,
        url: str,
        payload: dict[str, Any],
        fault: Callable[[Any], str | None] = lambda body: None,
        *,
        auth: bool = False,
    ) -> tuple[dict[str, Any], float]:
        """POST with retries; returns the JSON body and the latency of the good try.

        A fault (connection, timeout, HTTP 5xx, a 200 whose body ``fault(body)`` calls unusable) is
        retried ``policy.retries`` times with jittered exponential backoff; a rate limit (429, 503)
        pauses every request of this client for ``Retry-After`` (or a backoff) and lowers its
        concurrency. Either way one request waits at most ``policy.budget_s`` seconds in all.
        ``auth`` sends the API key (generation endpoints only).
        """
        p = self.policy
        st = _Tries()
        delay = 0.0
        while True:
            if delay:
                if st.waited + delay > p.budget_s:
                    raise self._give_up(url, st, over_budget="")
                self._sleep(delay)
                st.waited, delay = st.waited + delay, 0.0
            r, latency, epoch = self._attempt(url, payload, auth, st)
            asked = retry_after(r.headers) if r is not None else None
            if r is not None and r.status_code in RATE_LIMIT_STATUS:
                self._rate_limited(url, r, asked, epoch, st)
                continue
            if r is not None and (r.status_code >= 500 or r.status_code == 408):
                st.last = f"HTTP {r.status_code}: {r.text[:300]}"
            elif r is not None and r.status_code >= 400:
                self._raise_for_client_error(r)
            elif r is not None:
                body = _read_body(r, fault, st)
                if not st.last:
                    self.gate.succeeded()
                    return body, latency
            st.faults += 1
            if st.faults > p.retries:
                raise self._give_up(url, st)
            delay = max(backoff_delay(p, st.faults, self._rng), asked or 0.0)

    def _attempt(
        self, url: str, payload: dict[str, Any], auth: bool, st: _Tries
    ) -> tuple[httpx.Response | None, float, int]:
        """One request, sent once the gate lets it: (response or None on a transport fault, latency, epoch)."""
        self._check_aborted(url)
        try:
            with self.gate.slot(self.policy.budget_s - st.waited) as (epoch, paused):
                st.waited += paused
                self._check_aborted(url)
                st.attempts += 1
                t0 = time.perf_counter()
                try:
                    r: httpx.Response | None = self._http.post(url, json=payload, headers=self._auth if auth else None)
                except (httpx.TransportError, httpx.TimeoutException) as exc:
                    r, st.last = None, f"{type(exc).__name__}: {exc}"
                return r, time.perf_counter() - t0, epoch
        except GateClosed as exc:
            self._check_aborted(url)
            raise RetryBudgetExhausted(f"{self.name}: stopped waiting because another request gave up: {exc}") from None
        except TimeoutError as exc:
            raise self._give_up(url, st, over_budget=f"; every request is paused {exc.args[0]:.0f} s more") from None

    def _rate_limited(self, url: str, r: httpx.Response, asked: float | None, epoch: int, st: _Tries) -> None:
        """A 429 or 503: pause every request (or give up past the budget, or at once on a used-up quota)."""
        st.last = f"HTTP {r.status_code}: {r.text[:200]}"
        if "insufficient_quota" in r.text:
            raise ServerRejectedError(
                f"{self.name}: HTTP {r.status_code} from {r.request.url}: the account's quota "
                f"is used up, waiting will not help: {r.text[:300]}",
                r.status_code,
            )
        st.limited += 1
        # a Retry-After of 0 (or a few ms) repeated would spin: one second at least, so the budget bounds it
        wait = max(MIN_RATE_WAIT_S, asked) if asked is not None else backoff_delay(self.policy, st.limited, self._rng)
        if st.waited + wait > self.policy.budget_s:
            ask = f"; the server asks to wait {asked:.0f} s" if asked is not None else ""
            raise self._give_up(url, st, over_budget=ask)
        ra = f", Retry-After {asked:.0f} s" if asked is not None else ""
        self.gate.slowed(wait, epoch, f"HTTP {r.status_code}{ra}")

    def _check_aborted(self, url: str) -> None:
        if self._aborted.is_set():
            raise Aborted(f"{self.name} at {self._where(url)}: request cut off, the run is stopping")


@dataclass
class _Tries:
    """What one request has been through so far."""

    waited: float = 0.0
    attempts: int = 0
    faults: int = 0
    limited: int = 0
    last: str = ""


def _read_body(r: httpx.Response, fault: Callable[[Any], str | None], st: _Tries) -> Any:
    """The JSON body of a response under 400; ``st.last`` says what makes it unusable, empty if nothing does."""
    try:
        body = r.json()
    except ValueError:
        st.last = f"HTTP {r.status_code} with a body that is not JSON: {r.text[:200]!r}"
        return None
    st.last = fault(body) or ""
    return body
