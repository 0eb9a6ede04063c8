"""Plumbing under the model clients: requests that can be aborted, and token counts that are checked.

- :class:`AbortableBackend` wraps httpcore's network backend and remembers every socket it
  opens; :meth:`~AbortableBackend.abort` shuts them down, so a request blocked on a hung server
  (in any thread) fails at once instead of waiting for its timeout. Ctrl-C and SIGTERM use it to
  stop a run at any concurrency within a second or two.
- :func:`token_count` reads a server's token count: a missing count is 0, a malformed one
  (text, a negative or fractional number) is ``None`` and the caller treats it as a server fault.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import weakref
from typing import Any

import httpx


class AbortableBackend:
    """An httpcore network backend that can shut down every socket it opened."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._socks: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.aborted = False

    def _track(self, stream: Any) -> Any:
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._socks.add(sock)
                aborted = self.aborted
            if aborted:  # opened while aborting: shut it down as well
                _shutdown(sock)
        return stream

    def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
        if self.aborted:
            import httpcore

            raise httpcore.ConnectError("the client was aborted")
        return self._track(self._inner.connect_tcp(*args, **kwargs))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not used here
        return self._track(self._inner.connect_unix_socket(*args, **kwargs))

    def sleep(self, seconds: float) -> None:  # pragma: no cover - httpcore's connect retries
        self._inner.sleep(seconds)

    def abort(self) -> None:
        """Shut down every open socket: blocked reads and writes fail at once."""
        with self._lock:
            self.aborted = True
            socks = list(self._socks)
        for s in socks:
            _shutdown(s)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def make_abortable(client: httpx.Client) -> AbortableBackend | None:
    """Route every connection pool of ``client`` through one :class:`AbortableBackend` (None if it has none)."""
    backend: AbortableBackend | None = None
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)
        inner = getattr(pool, "_network_backend", None)
        if inner is None:  # a mock or custom transport: nothing to abort
            continue
        if backend is None:
            backend = AbortableBackend(inner)
        pool._network_backend = backend  # type: ignore[union-attr]
    return backend


def token_count(value: Any) -> int | None:
    """A server's token count as an int: missing (None) is 0; text, negative or fractional values are None."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if value >= 0 else None


def ollama_fault(body: Any) -> str | None:
    """Why an HTTP 200 body from Ollama's ``/api/generate`` is a server fault, or None if it is usable."""
    if not isinstance(body, dict):
        return f"HTTP 200 with a JSON body that is not an object: {str(body)[:200]!r}"
    if not isinstance(body.get("response"), str):
        return f"HTTP 200 without a 'response' text: {str(body)[:200]!r}"
    return _counts_fault(body, ("prompt_eval_count", "eval_count"))


def openai_fault(body: Any) -> str | None:
    """Why an HTTP 200 body from ``chat/completions`` is a server fault (a missing answer is checked apart)."""
    if not isinstance(body, dict):
        return f"HTTP 200 with a JSON body that is not an object: {str(body)[:200]!r}"
    usage = body.get("usage")
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return f"HTTP 200 with a malformed 'usage': {str(usage)[:200]!r}"
    return _counts_fault(usage, ("prompt_tokens", "completion_tokens"))


def _counts_fault(obj: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for k in keys:
        if token_count(obj.get(k)) is None:
            return f"HTTP 200 with a malformed token count {k}={obj.get(k)!r}"
    return None
