"""``trajectory-judge run-requests``: answer an exported requests file on one or more endpoints.

The requests (:mod:`.batch`, the OpenAI Batch API's input format) are spread over every
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

A request the server refuses (HTTP 4xx) is written as an error line (``response.status_code``
the server's, its message in ``response.body.error``) and not asked again. An endpoint that keeps
failing past ``--retries`` or ``--retry-budget`` is given up; what it did not answer stays
unanswered, the others go on, and the exit status is 75 (rerun later to resume).
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajectory_judge.backends.errors import JudgeClientError, ServerRejectedError
from trajectory_judge.models import DataError
from trajectory_judge.run import argtypes as A
from trajectory_judge.run.store import VerdictWriter, repair_torn_tail

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


def answer(client: Any, cid: str, body: dict[str, Any], n: int) -> tuple[str, bool]:
    """One request -> ``(output line, answered)``; a refused request is an error line, a failing server raises."""
    try:
        resp, _latency = client.post_chat(body)
        status = 200
    except ServerRejectedError as exc:
        resp, status = {"error": {"message": str(exc)[:500]}}, exc.status or 400
    line = {
        "id": f"tj-batch-req-{n}",
        "custom_id": cid,
        "response": {"status_code": status, "request_id": cid, "body": resp},
        "error": None,
    }
    return json.dumps(line, ensure_ascii=False), status == 200


# --- reading the files ----------------------------------------------------------------------------
def read_requests(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(custom_id, body)`` of every request line (once each); a bad line is a DataError naming it."""
    out: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                cid, body = obj["custom_id"], obj["body"]
                if not isinstance(cid, str) or not isinstance(body, dict):
                    raise TypeError("'custom_id' is not text or 'body' not an object")
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(f"{path}:{lineno}: not a Batch API request line ({exc})") from None
            out.setdefault(cid, body)
    return list(out.items())


def settled(path: Path) -> set[str]:
    """The ``custom_id`` values ``path`` already holds an answer for (HTTP 200) or a refusal (4xx)."""
    done: set[str] = set()
    if not path.exists():
        return done
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                status = (obj.get("response") or {}).get("status_code")
                cid = obj["custom_id"]
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise DataError(f"{path}:{lineno}: not a Batch API result line ({exc})") from None
            if isinstance(status, int) and 200 <= status < 500 and status not in (408, 429):
                done.add(cid)
    return done


# --- the local engine ------------------------------------------------------------------------------
class _LocalPool:
    """Threads taking requests from one queue: ``concurrency`` per endpoint, each endpoint with its client."""

    def __init__(self, pending: Sequence[tuple[str, dict[str, Any]]], write: Callable[[str, bool], None]) -> None:
        self.work: queue.Queue[tuple[int, str, dict[str, Any]]] = queue.Queue()
        for n, (cid, body) in enumerate(pending):
            self.work.put((n, cid, body))
        self.write = write
        self.failures: list[str] = []
        self.stop = threading.Event()

    def worker(self, client: Any, dead: threading.Event) -> None:
        """Answer requests until the queue is empty, the run stops or this endpoint is given up."""
        while not dead.is_set() and not self.stop.is_set():
            try:
                n, cid, body = self.work.get_nowait()
            except queue.Empty:
                return
            try:
                line, ok = answer(client, cid, body, n)
            except JudgeClientError as exc:  # the endpoint keeps failing: another one may still answer it
                self.work.put((n, cid, body))
                if not dead.is_set():
                    dead.set()
                    self.failures.append(f"{client.base_url}: {exc}")
                return
            self.write(line, ok)


def run_local(
    pending: Sequence[tuple[str, dict[str, Any]]], endpoints: Sequence[Endpoint], write: Callable[[str, bool], None]
) -> list[str]:
    """Answer ``pending`` on ``endpoints`` with threads; returns why each given-up endpoint was given up."""
    pool = _LocalPool(pending, write)
    clients = [client_for(ep) for ep in endpoints]
    threads = [
        threading.Thread(target=pool.worker, args=(client, dead), daemon=True)
        for client, ep, dead in zip(clients, endpoints, [threading.Event() for _ in endpoints])
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
    return pool.failures


# --- the Ray engine ----------------------------------------------------------------------------------
class EndpointCaller:
    """A Ray Data callable class: one actor per endpoint, answering each batch ``concurrency`` at a time."""

    def __init__(self, endpoint: Endpoint) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.client = client_for(endpoint)
        self.pool = ThreadPoolExecutor(max_workers=endpoint.concurrency)
        self.failure: str | None = None

    def _one(self, n: int, cid: str, body: str) -> tuple[str, str]:
        if self.failure is not None:
            return "", self.failure
        try:
            line, _ok = answer(self.client, cid, json.loads(body), n)
            return line, ""
        except JudgeClientError as exc:
            self.failure = self.failure or f"{self.client.base_url}: {exc}"
            return "", self.failure

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        done = list(self.pool.map(self._one, batch["n"], batch["custom_id"], batch["body"]))
        return {
            "custom_id": batch["custom_id"],
            "line": np.array([d[0] for d in done], dtype=object),
            "failure": np.array([d[1] for d in done], dtype=object),
        }


RAY_MISSING = "--engine ray needs Ray Data (ray is not installed): pip install 'trajectory-judge[scale]'"


def run_ray(
    pending: Sequence[tuple[str, dict[str, Any]]], endpoints: Sequence[Endpoint], write: Callable[[str, bool], None]
) -> list[str]:
    """Answer ``pending`` through Ray Data, one dataset and one actor per endpoint; returns the endpoints' failures."""
    import ray  # checked by the caller

    if not ray.is_initialized():
        ray.init(log_to_driver=False)  # joins RAY_ADDRESS when it is set
    ray.data.DataContext.get_current().enable_progress_bars = False
    shards: list[list[dict[str, Any]]] = [[] for _ in endpoints]
    for n, (cid, body) in enumerate(pending):
        shards[n % len(endpoints)].append({"n": n, "custom_id": cid, "body": json.dumps(body, ensure_ascii=False)})
    datasets = [
        ray.data.from_items(shard).map_batches(
            EndpointCaller,
            fn_constructor_kwargs={"endpoint": ep},
            batch_size=max(1, 4 * ep.concurrency),
            compute=ray.data.ActorPoolStrategy(size=1),
            num_cpus=0.25,
        )
        for shard, ep in zip(shards, endpoints)
        if shard
    ]
    if not datasets:
        return []
    ds = datasets[0].union(*datasets[1:]) if len(datasets) > 1 else datasets[0]
    failures: list[str] = []
    for row in ds.iter_rows():
        if row["line"]:
            write(row["line"], json.loads(row["line"])["response"]["status_code"] == 200)
        elif row["failure"] and row["failure"] not in failures:
            failures.append(row["failure"])
    return failures


ENGINES: dict[str, Callable[..., list[str]]] = {"local": run_local, "ray": run_ray}


def ray_available() -> bool:
    """Whether Ray Data can be imported."""
    try:
        import ray.data  # noqa: F401
    except ImportError:
        return False
    return True


# --- the command line -----------------------------------------------------------------------------
def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``trajectory-judge run-requests``."""
    p.add_argument("requests", metavar="REQUESTS", help="a requests file of `trajectory-judge export-requests`")
    p.add_argument(
        "--endpoint",
        type=A.url,
        action="append",
        default=None,
        metavar="URL",
        help="an OpenAI base URL (requests go to URL/chat/completions); give it once per endpoint (required)",
    )
    p.add_argument("--out", default=None, metavar="FILE", help="the results file, appended to (required)")
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local (threads in this process) or ray (Ray Data: the scale extra; RAY_ADDRESS names a cluster)",
    )
    p.add_argument("--concurrency", type=A.positive_int, default=4, help="requests in flight per endpoint (default 4)")
    p.add_argument(
        "--api-key-env",
        type=A.env_name,
        default=None,
        metavar="NAME",
        help="send the API key held in environment variable NAME to every endpoint",
    )
    p.add_argument("--timeout", type=A.positive_float, default=600.0, help="seconds per request (default 600)")
    p.add_argument("--retries", type=A.nonnegative_int, default=3, help="retries of a failed request (default 3)")
    p.add_argument(
        "--retry-budget",
        type=A.nonnegative_float,
        default=600.0,
        metavar="SECONDS",
        help="seconds one request may wait on backoff and rate limits before its endpoint is given up (default 600)",
    )
    p.add_argument("--quiet", action="store_true", help="no summary line")


def cli_run_requests(args: argparse.Namespace) -> int:
    """``trajectory-judge run-requests``: exit 0 when every request is settled, 75 when an endpoint was given up."""
    from trajectory_judge.run.cli_run import api_key

    if not args.endpoint or args.out is None:
        raise ValueError("--endpoint URL (at least one) and --out FILE are required")
    if args.engine == "ray" and not ray_available():
        raise ValueError(RAY_MISSING)
    requests, out = Path(args.requests), Path(args.out)
    if out.resolve() == requests.resolve():
        raise ValueError(f"--out {out} is the requests file; outputs never overwrite inputs")
    key = api_key(args.api_key_env)
    endpoints = [
        Endpoint(u, args.concurrency, args.timeout, args.retries, args.retry_budget, key) for u in args.endpoint
    ]
    reqs = read_requests(requests)
    if msg := repair_torn_tail(out, None):
        print(f"trajectory-judge: {msg}", file=sys.stderr)
    done = settled(out)
    pending = [(c, b) for c, b in reqs if c not in done]
    counts = {"answered": 0, "refused": 0}
    writer = VerdictWriter(out)
    lock = threading.Lock()

    def write(line: str, ok: bool) -> None:
        with lock:
            writer.write_line(line)
            counts["answered" if ok else "refused"] += 1

    try:
        failures = ENGINES[args.engine](pending, endpoints, write)
    finally:
        writer.close()
    left = len(pending) - counts["answered"] - counts["refused"]
    if not args.quiet or failures:
        print(_summary(len(reqs) - len(pending), counts, left, out), file=sys.stderr)
    for f in failures:
        print(f"trajectory-judge: error: endpoint given up: {f}", file=sys.stderr)
    return EX_TEMPFAIL if left else 0


def _summary(skipped: int, counts: dict[str, int], left: int, out: Path) -> str:
    tail = f"; {left} unanswered, rerun the same command to resume" if left else ""
    return (
        f"trajectory-judge: {counts['answered']} answered, {counts['refused']} refused by the server, "
        f"{skipped} already in {out}{tail}"
    )
