"""``trajectory-judge run-requests``: answer an exported requests file on one or more endpoints.

The requests (:mod:`.batch_format`, the OpenAI Batch API's input format, exported by :mod:`.batch`) are spread over every
``--endpoint`` (an OpenAI base URL, as ``run --base-url`` takes it), each with ``--concurrency``
requests in flight. Every request goes through
:meth:`~trajectory_judge.backends.clients.OpenAIClient.post_chat`, so retries, backoff, rate-limit
pauses and the retry budget are those of ``run``. Answers are appended to ``--out`` in the Batch
API's output format, one whole line each (fsynced); a torn last line left by a kill is set aside
first (``OUT.torn-N``), and a rerun skips every request already answered (HTTP 200).

Two engines:

- ``local``: threads in this process; all endpoints take requests from one queue, so a faster
  endpoint answers more;
- ``ray``: Ray Data (the ``scale`` extra). The requests are split over the endpoints in turn, one
  dataset per endpoint (``ray.data.from_items``), each mapped by one actor per endpoint
  (``map_batches`` with a callable class and ``ActorPoolStrategy(size=1)``) that keeps ``--concurrency``
  requests in flight; the datasets are united and their answers stream back to this process,
  which writes them. ``ray.init`` joins the cluster of ``RAY_ADDRESS`` when it is set, else starts
  a local one.

Both engines read and write the lines through :mod:`.batch_format`, and treat a failing endpoint
alike. A request the server refuses (HTTP 4xx) is written as an error line (``response.status_code``
the server's, its message in ``response.body.error``) and not asked again. An endpoint that keeps
failing past ``--retries`` or ``--retry-budget`` (a refused connection, a server that died) is given
up: what it has in flight is cut off, and every request it did not answer is put back for the
endpoints still live (the local engine's threads take them from the queue; the Ray engine sends
them in a next round over the others). Only when no endpoint is left do requests stay unanswered;
the exit status is then 75 (rerun later to resume). The summary says, per endpoint, what it
answered, refused and failed, and how often it rate-limited.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajectory_judge.backends.errors import JudgeClientError, ServerRejectedError
from trajectory_judge.run.batch_format import BatchRequest, BatchResult, read_lines

EX_TEMPFAIL = 75


@dataclass(frozen=True)
class Endpoint:
    """How to reach one endpoint."""

    url: str
    concurrency: int
    timeout: float
    retries: int
    retry_budget: float
    api_key: str | None


def client_for(ep: Endpoint) -> Any:
    """The OpenAI-compatible client of ``ep`` (it never asks the server for anything but completions)."""
    from trajectory_judge.backends.clients import OpenAIClient

    return OpenAIClient(
        ep.url,
        "",
        timeout=ep.timeout,
        retries=ep.retries,
        retry_budget_s=ep.retry_budget,
        concurrency=ep.concurrency,
        api_key=ep.api_key,
        llama_cpp=False,
    )


def answer(client: Any, n: int, req: BatchRequest) -> tuple[str, bool]:
    """One request -> ``(output line, answered)``; a refused request is an error line, a failing server raises."""
    try:
        resp, _latency = client.post_chat(req.body)
        status = 200
    except ServerRejectedError as exc:
        resp, status = {"error": {"message": str(exc)[:500]}}, exc.status or 400
    return BatchResult.of(n, req.custom_id, status, resp).line(), status == 200


def settled(path: Path) -> set[str]:
    """The ``custom_id`` values ``path`` already holds an answer for (HTTP 200) or a refusal (4xx)."""
    if not path.exists():
        return set()
    return {res.custom_id for _lineno, res in read_lines(path, BatchResult) if res.settled}


# --- what each endpoint did ------------------------------------------------------------------------
@dataclass
class Tally:
    """What one endpoint did in one ``run-requests``."""

    url: str
    """The endpoint, as ``--endpoint`` named it."""
    answered: int = 0
    """Requests it answered (HTTP 200)."""
    refused: int = 0
    """Requests it refused (an HTTP client error, written as an error line)."""
    failed: int = 0
    """Requests it was given and did not answer once it failed (past the retries or the retry budget): put back for the others."""
    rate_limited: int = 0
    """Times it answered with a rate limit (HTTP 429 or 503), waited out or not."""
    given_up: str | None = None
    """Why it was given up, when it was; it is sent nothing more."""

    def add(self, other: Tally) -> None:
        """Count ``other`` (the same endpoint, in another round) in this one."""
        for count in ("answered", "refused", "failed", "rate_limited"):
            setattr(self, count, getattr(self, count) + getattr(other, count))
        self.given_up = self.given_up or other.given_up

    def summary(self) -> str:
        """One clause for the summary: what it answered, refused and failed."""
        text = f"{self.url}: {self.answered} answered, {self.refused} refused"
        if self.rate_limited:
            text += f", rate limited {self.rate_limited} time{'s' if self.rate_limited != 1 else ''}"
        if self.given_up:
            text += f"; given up after {self.failed} failed request{'s' if self.failed != 1 else ''}, "
            text += f"put back for the other endpoints: {self.given_up}"
        return text


Write = Callable[[str], None]
"""Appends one result line to the results file (from any thread)."""


# --- the local engine ------------------------------------------------------------------------------
class _LocalPool:
    """Threads taking requests from one queue: ``concurrency`` per endpoint, each endpoint with its client.

    A thread finding the queue empty waits while requests are still in flight elsewhere, since an
    endpoint that fails puts its requests back; it stops once every request is settled, the run
    stops, or its endpoint is given up.
    """

    def __init__(self, pending: Sequence[BatchRequest], write: Write) -> None:
        self.work: queue.Queue[tuple[int, BatchRequest]] = queue.Queue()
        for n, req in enumerate(pending):
            self.work.put((n, req))
        self.write = write
        self.outstanding = len(pending)
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def worker(self, client: Any, tally: Tally, dead: threading.Event) -> None:
        """Answer requests until none is outstanding, the run stops or this endpoint is given up."""
        while not dead.is_set() and not self.stop.is_set():
            try:
                n, req = self.work.get(timeout=0.05)
            except queue.Empty:
                with self.lock:
                    if self.outstanding == 0:
                        return
                continue
            try:
                line, ok = answer(client, n, req)
            except JudgeClientError as exc:  # the endpoint keeps failing: another one may still answer it
                self.work.put((n, req))
                with self.lock:
                    tally.failed += 1
                    first = not dead.is_set()
                    dead.set()
                if first and not self.stop.is_set():
                    tally.given_up = str(exc)
                    client.abort()  # what it still has in flight is put back at once, not after its retries
                return
            self.write(line)
            with self.lock:
                self.outstanding -= 1
                tally.answered += ok
                tally.refused += not ok


def run_local(pending: Sequence[BatchRequest], endpoints: Sequence[Endpoint], write: Write) -> list[Tally]:
    """Answer ``pending`` on ``endpoints`` with threads; returns what each endpoint did."""
    pool = _LocalPool(pending, write)
    clients = [client_for(ep) for ep in endpoints]
    tallies = [Tally(ep.url) for ep in endpoints]
    threads = [
        threading.Thread(target=pool.worker, args=(client, tally, dead), daemon=True)
        for client, tally, ep, dead in zip(clients, tallies, endpoints, [threading.Event() for _ in endpoints])
        for _ in range(ep.concurrency)
    ]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.5)
    except BaseException:  # Ctrl-C: cut off what is in flight; what was written stays
        pool.stop.set()
        for c in clients:
            c.abort()
        for t in threads:
            t.join(timeout=5)
        raise
    finally:
        for c in clients:
            c.close()
    for client, tally in zip(clients, tallies):
        tally.rate_limited = client.gate.rate_limited
    return tallies


# --- the Ray engine ----------------------------------------------------------------------------------
class EndpointCaller:
    """A Ray Data callable class: one actor per endpoint, answering each batch ``concurrency`` at a time.

    Once its endpoint fails past the retries, the actor aborts what it has in flight and hands every
    request it is given back unanswered, with the reason, for the next round to send elsewhere.
    """

    def __init__(self, endpoint: Endpoint) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.client = client_for(endpoint)
        self.pool = ThreadPoolExecutor(max_workers=endpoint.concurrency)
        self.failure: str | None = None
        self.lock = threading.Lock()

    def _one(self, n: int, cid: str, body: str) -> tuple[str, str]:
        if self.failure is not None:
            return "", self.failure
        try:
            line, _ok = answer(self.client, n, BatchRequest(custom_id=cid, body=json.loads(body)))
            return line, ""
        except JudgeClientError as exc:
            with self.lock:
                first, self.failure = self.failure is None, self.failure or str(exc)
            if first:
                self.client.abort()
            return "", self.failure or str(exc)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        done = list(self.pool.map(self._one, batch["n"], batch["custom_id"], batch["body"]))
        return {
            "n": batch["n"],
            "endpoint": batch["endpoint"],
            "line": np.array([d[0] for d in done], dtype=object),
            "failure": np.array([d[1] for d in done], dtype=object),
            "rate_limited": np.full(len(done), self.client.gate.rate_limited),
        }


RAY_MISSING = "--engine ray needs Ray Data (ray is not installed): pip install 'trajectory-judge[scale]'"


def run_ray(pending: Sequence[BatchRequest], endpoints: Sequence[Endpoint], write: Write) -> list[Tally]:
    """Answer ``pending`` through Ray Data, in rounds; returns what each endpoint did.

    Each round splits what is left over the endpoints still live, one dataset and one actor per
    endpoint. What an endpoint that failed did not answer goes into the next round, over the
    others; the rounds end when every request is settled or no endpoint is left.
    """
    import ray  # checked by the caller

    if not ray.is_initialized():
        ray.init(log_to_driver=False)  # joins RAY_ADDRESS when it is set
    ray.data.DataContext.get_current().enable_progress_bars = False
    tallies = [Tally(ep.url) for ep in endpoints]
    left = dict(enumerate(pending))
    while left and (live := [i for i, t in enumerate(tallies) if t.given_up is None]):
        for i, t in _ray_round(ray, left, endpoints, live, write).items():
            tallies[i].add(t)
    return tallies


def _ray_round(
    ray: Any, left: dict[int, BatchRequest], endpoints: Sequence[Endpoint], live: Sequence[int], write: Write
) -> dict[int, Tally]:
    """One round: ``left`` split over the endpoints ``live`` in turn; what is answered is taken out of ``left``."""
    shards: dict[int, list[dict[str, Any]]] = {i: [] for i in live}
    for k, (n, req) in enumerate(left.items()):
        i = live[k % len(live)]
        body = json.dumps(req.body, ensure_ascii=False)
        shards[i].append({"n": n, "endpoint": i, "custom_id": req.custom_id, "body": body})
    datasets = [
        ray.data.from_items(shard).map_batches(
            EndpointCaller,
            fn_constructor_kwargs={"endpoint": endpoints[i]},
            batch_size=max(1, 4 * endpoints[i].concurrency),
            compute=ray.data.ActorPoolStrategy(size=1),
            num_cpus=0.25,
        )
        for i, shard in shards.items()
        if shard
    ]
    ds = datasets[0].union(*datasets[1:]) if len(datasets) > 1 else datasets[0]
    tallies = {i: Tally(endpoints[i].url) for i in live}
    for row in ds.iter_rows():
        t = tallies[int(row["endpoint"])]
        t.rate_limited = max(t.rate_limited, int(row["rate_limited"]))  # the actor's count so far
        if row["line"]:
            write(row["line"])
            ok = BatchResult.model_validate_json(row["line"]).status == 200
            t.answered += ok
            t.refused += not ok
            del left[int(row["n"])]
        else:
            t.failed += 1
            t.given_up = t.given_up or row["failure"]
    return tallies


ENGINES: dict[str, Callable[..., list[Tally]]] = {"local": run_local, "ray": run_ray}


def ray_available() -> bool:
    """Whether Ray Data can be imported."""
    try:
        import ray.data  # noqa: F401
    except ImportError:
        return False
    return True


def summary(skipped: int, answered: int, refused: int, left: int, out: Path) -> str:
    """The summary line of ``run-requests``: what was answered, refused, already there and left."""
    tail = f"; {left} unanswered, rerun the same command to resume" if left else ""
    return f"trajectory-judge: {answered} answered, {refused} refused by the server, {skipped} already in {out}{tail}"
