"""Plumbing under the model clients: requests that can be aborted, and token counts that are checked.

- :class:`AbortableTransport` is the clients' httpx transport: an httpcore connection pool whose
  network backend is an :class:`AbortableBackend`, which remembers every socket it opens.
  :meth:`~AbortableTransport.abort` shuts them down, so a request blocked on a hung server (in any
  thread) fails at once instead of waiting for its timeout. Ctrl-C and SIGTERM use it to stop a run
  at any concurrency within a second or two. Built from the public APIs of both libraries
  (``httpx.BaseTransport``, ``httpcore.ConnectionPool(network_backend=...)``), it sends as
  ``httpx.HTTPTransport`` does: the same limits, certificates and proxies from the environment.
- :func:`token_count` reads a server's token count: a missing count is 0, a malformed one
  (text, a negative or fractional number) is ``None`` and the caller treats it as a server fault.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import urllib.request
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)
"""The pool limits of an ``httpx.Client`` built without any."""


class AbortableBackend(httpcore.NetworkBackend):
    """An httpcore network backend that can shut down every socket it opened."""

    def __init__(self, inner: httpcore.NetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.SyncBackend()
        self._socks: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.aborted = False

    def _track(self, stream: httpcore.NetworkStream) -> httpcore.NetworkStream:
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._socks.add(sock)
                aborted = self.aborted
            if aborted:  # opened while aborting: shut it down as well
                _shutdown(sock)
        return stream

    def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        if self.aborted:
            raise httpcore.ConnectError("the client was aborted")
        return self._track(self._inner.connect_tcp(*args, **kwargs))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:  # pragma: no cover
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


# httpcore's errors as httpx's, most specific first: the clients catch httpx's
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _ERRORS:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise


class _Body(httpx.SyncByteStream):
    """A response body read from httpcore, its errors raised as httpx's."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


def _core_url(url: httpx.URL) -> httpcore.URL:
    return httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path)


class AbortableTransport(httpx.BaseTransport):
    """An httpx transport whose requests :meth:`abort` cuts off, from any thread.

    Requests go direct, or through the proxy the environment names for their scheme
    (``HTTPS_PROXY``, ``ALL_PROXY``, ... unless ``NO_PROXY`` exempts the host) when ``trust_env``.
    Every pool shares one :class:`AbortableBackend`.
    """

    def __init__(
        self, *, verify: bool | str = True, trust_env: bool = True, limits: httpx.Limits = DEFAULT_LIMITS
    ) -> None:
        self.backend = AbortableBackend()
        self._trust_env = trust_env
        self._pool_kw: dict[str, Any] = {
            "ssl_context": httpx.create_ssl_context(verify=verify, trust_env=trust_env),
            "max_connections": limits.max_connections,
            "max_keepalive_connections": limits.max_keepalive_connections,
            "keepalive_expiry": limits.keepalive_expiry,
            "network_backend": self.backend,
        }
        self._direct = httpcore.ConnectionPool(**self._pool_kw)
        self._proxied: dict[str, httpcore.ConnectionPool | httpcore.HTTPProxy | httpcore.SOCKSProxy] = {}
        self._lock = threading.Lock()

    def _pool_for(self, url: httpx.URL) -> Any:
        proxies = urllib.request.getproxies() if self._trust_env else {}
        where = proxies.get(url.scheme) or proxies.get("all")
        if not where or urllib.request.proxy_bypass(url.host):
            return self._direct
        where = where if "://" in where else f"http://{where}"
        with self._lock:
            if where not in self._proxied:
                self._proxied[where] = self._proxy_pool(httpx.Proxy(where))
            return self._proxied[where]

    def _proxy_pool(self, proxy: httpx.Proxy) -> Any:
        if proxy.url.scheme in ("socks5", "socks5h"):
            return httpcore.SOCKSProxy(proxy_url=_core_url(proxy.url), proxy_auth=proxy.raw_auth, **self._pool_kw)
        if proxy.url.scheme not in ("http", "https"):
            raise httpx.ProxyError(f"a proxy must be http, https, socks5 or socks5h, not {str(proxy.url)!r}")
        return httpcore.HTTPProxy(
            proxy_url=_core_url(proxy.url),
            proxy_auth=proxy.raw_auth,
            proxy_headers=proxy.headers.raw,
            proxy_ssl_context=proxy.ssl_context,
            **self._pool_kw,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        req = httpcore.Request(
            method=request.method,
            url=_core_url(request.url),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            resp = self._pool_for(request.url).handle_request(req)
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_Body(resp.stream),
            extensions=resp.extensions,
        )

    def abort(self) -> None:
        """Shut down every socket the transport opened; later connections are refused."""
        self.backend.abort()

    def close(self) -> None:
        with self._lock:
            pools = [self._direct, *self._proxied.values()]
        for pool in pools:
            pool.close()


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
