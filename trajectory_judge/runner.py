"""The crash-safe, resumable runner: judges x trajectories -> ``DIR/verdicts.jsonl``.

- Verdicts are appended one JSON line at a time, each flushed and fsynced, keyed by
  ``(trajectory_id, judge_id)``. A rerun skips every key already on disk, so an interrupted run
  is resumed by running the same command again.
- A crash mid-write can leave a torn last line (no newline, not parseable). On resume it is
  detected, reported and truncated away; every complete line before it is kept.
- ``--limit N`` judges the first N trajectories only. The dataset's order is a deterministic
  shuffle under which any prefix is a stratified sample, so raising the limit in rounds keeps
  partial data balanced.
- Client failures (transport faults after retries, a prompt too long for the context, a
  rejected request) stop the run with a clear message and a non-zero exit code. They are never
  written as verdicts; the verdicts already written are kept.
- Every invocation appends one metadata record to ``DIR/runs.jsonl``: judges, backend, model,
  the server's build and model hash, decoding parameters, package version, git commit, start
  and end time, counts, seconds per verdict, and how it ended.

Any object with a ``judge_id`` and ``judge(traj) -> Verdict`` (:class:`~.judges.base.Judge`)
can be run with :func:`run_judges`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from pydantic import BaseModel

from . import __version__
from .cost import CpuMeter
from .judges.base import Judge
from .models import Trajectory, Verdict, dumps, load_trajectories, parse_jsonl

TRAJECTORIES = "trajectories.jsonl"
VERDICTS = "verdicts.jsonl"
MEMBERS = "members.jsonl"
"""The member verdicts of ensemble judges (self-consistency), one line per (trajectory, member id)."""
RUNS = "runs.jsonl"
JUDGE_FAMILIES: tuple[str, ...] = ("outcome", "step", "reply", "selfcons")


# --- the verdict file ------------------------------------------------------------------
def repair_torn_tail(path: str | Path, model: type[BaseModel] = Verdict) -> str | None:
    """Make ``path`` end with a complete line; return a message if something was repaired.

    A last line without a newline is either a complete record (a newline is added) or torn
    by a crash mid-write (it is truncated away).
    """
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return None
    with open(path, "rb+") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return None
        # find the start of the last line
        pos, chunk = size, 1 << 16
        start = 0
        while pos > 0:
            lo = max(0, pos - chunk)
            fh.seek(lo)
            buf = fh.read(pos - lo)
            i = buf.rfind(b"\n")
            if i >= 0:
                start = lo + i + 1
                break
            pos = lo
        fh.seek(start)
        tail = fh.read()
        try:
            model.model_validate_json(tail)
        except ValueError:
            fh.truncate(start)
            fh.flush()
            os.fsync(fh.fileno())
            return f"{path}: repaired a torn last line ({len(tail)} bytes, a crash mid-write) by truncating it"
        fh.write(b"\n")
        fh.flush()
        os.fsync(fh.fileno())
        return f"{path}: the last line lacked its newline; added it"


def keys_on_disk(path: str | Path) -> set[tuple[str, str]]:
    """The ``(trajectory_id, judge_id)`` keys already in a verdict file (empty if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return set()
    return {(v.trajectory_id, v.judge_id) for v in parse_jsonl(path, Verdict)}


class VerdictWriter:
    """Append-only verdict file: every line is flushed as it is written and then fsynced.

    ``write`` hands each complete line to the operating system at once (a crash of this process
    loses nothing written). The fsync that makes it durable against a machine crash is issued by
    a background thread right after every write, so a slow disk (about 4 ms per fsync here) does
    not slow the loop; one fsync covers every line written before it, and :meth:`close` waits for
    the last one. With ``background_sync=False`` each ``write`` fsyncs before returning. Either
    way, a verdict lost to a machine crash is simply not on disk, and a rerun judges it again.
    """

    def __init__(self, path: str | Path, *, background_sync: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8", newline="\n")
        self._background = background_sync
        self._dirty = threading.Event()
        self._closing = False
        self._sync_error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if background_sync:
            self._thread = threading.Thread(target=self._syncer, name="verdict-fsync", daemon=True)
            self._thread.start()

    def _syncer(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._closing:
                return
            try:
                os.fsync(self._fh.fileno())
            except ValueError:  # pragma: no cover - the file was just swapped by _reopen_if_replaced
                continue
            except OSError as exc:  # pragma: no cover - disk failure
                self._sync_error = exc
                return

    def write(self, verdict: Verdict) -> None:
        """Append one verdict: written and flushed now, fsynced now or by the background syncer."""
        if self._sync_error is not None:  # pragma: no cover
            raise OSError(f"{self.path}: fsync failed: {self._sync_error}")
        self._reopen_if_replaced()
        self._fh.write(dumps(verdict) + "\n")
        self._fh.flush()
        if self._background:
            self._dirty.set()
        else:
            os.fsync(self._fh.fileno())

    def _reopen_if_replaced(self) -> None:
        # another process may have replaced the file (an atomic rewrite): keep appending to the
        # file at the path, not to the orphaned one, and say so
        try:
            replaced = os.stat(self.path).st_ino != os.fstat(self._fh.fileno()).st_ino
        except FileNotFoundError:
            replaced = True
        if replaced:
            print(f"trajectory-judge: warning: {self.path} was replaced or removed by another process "
                  "while this run appended to it; reopening it (check that no verdicts were lost)",
                  file=sys.stderr)
            old = self._fh
            self._fh = open(self.path, "a", encoding="utf-8", newline="\n")
            old.flush()
            os.fsync(old.fileno())
            old.close()

    def close(self) -> None:
        """Wait for the syncer, fsync once more, close."""
        if self._fh.closed:
            return
        if self._thread is not None:
            self._closing = True
            self._dirty.set()
            self._thread.join()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()

    def __enter__(self) -> "VerdictWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


# --- running -------------------------------------------------------------------------------
@dataclass
class RunResult:
    """What one invocation did."""

    planned: int = 0
    """(trajectory, judge) pairs in scope."""
    skipped: int = 0
    """Pairs already on disk, not judged again."""
    written: int = 0
    """Verdicts written by this invocation."""
    unparseable: int = 0
    """Written verdicts that record an unparseable response (voting clean at 0.5)."""
    status: str = "ok"
    """``ok``, ``failed`` (a client failure stopped it) or ``interrupted``."""
    message: str | None = None
    """The failure or interruption message."""
    repaired: str | None = None
    """The torn-tail repair message, if a repair happened."""
    per_judge: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per judge (and ensemble member): verdicts written, mean latency (s/verdict), mean prompt and completion tokens."""
    rechecked: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per ensemble judge: recomputed verdicts that are the ``same`` as, or ``different`` from, the one on disk."""


class Interrupted(Exception):
    """SIGTERM or Ctrl-C: stop after the verdicts in flight."""


def member_ids(judge: Judge) -> tuple[str, ...]:
    """The member judge ids of an ensemble judge (one with ``member_ids`` and ``judge_members``), else ()."""
    if hasattr(judge, "judge_members") and hasattr(judge, "aggregate"):
        return tuple(getattr(judge, "member_ids", ()))
    return ()


def _judge_task(judge: Judge, traj: Trajectory) -> list[Verdict]:
    """A plain judge's verdict, or an ensemble's members followed by their aggregate."""
    if member_ids(judge):
        members = judge.judge_members(traj)  # type: ignore[attr-defined]
        return [*members, judge.aggregate(members)]  # type: ignore[attr-defined]
    return [judge.judge(traj)]


def _check_verdicts(vs: Sequence[Verdict], traj: Trajectory, judge: Judge) -> list[Verdict]:
    expected = [*member_ids(judge), judge.judge_id]
    for v in vs:
        if not isinstance(v, Verdict):
            raise TypeError(f"judge {judge.judge_id!r} returned {type(v).__name__}, not a Verdict")
    got = [v.judge_id for v in vs]
    if got != expected or any(v.trajectory_id != traj.trajectory_id for v in vs):
        raise ValueError(
            f"judge {judge.judge_id!r} returned verdicts keyed {[(v.trajectory_id, v.judge_id) for v in vs]} "
            f"for trajectory {traj.trajectory_id!r} (expected judge ids {expected})"
        )
    return list(vs)


def same_verdict(a: Verdict, b: Verdict) -> bool:
    """Two verdicts agree on everything a judge decides and spends (all fields but latency)."""
    return a.model_dump(exclude={"latency_s"}) == b.model_dump(exclude={"latency_s"})


def _plan(trajectories: Sequence[Trajectory], judges: Sequence[Judge], done: set[tuple[str, str]],
          result: RunResult) -> list[tuple[Trajectory, Judge]]:
    tasks: list[tuple[Trajectory, Judge]] = []
    for t in trajectories:
        for j in judges:
            result.planned += 1
            keys = [(t.trajectory_id, k) for k in (j.judge_id, *member_ids(j))]
            if all(k in done for k in keys):
                result.skipped += 1
            else:
                tasks.append((t, j))
    return tasks


def run_judges(
    trajectories: Sequence[Trajectory],
    judges: Sequence[Judge],
    verdicts_path: str | Path,
    *,
    members_path: str | Path | None = None,
    concurrency: int = 1,
    progress: bool = True,
) -> RunResult:
    """Judge every trajectory with every judge, skipping keys on disk; append verdicts durably.

    Pairs are visited trajectory by trajectory (all judges of one trajectory before the next), so
    an interrupted multi-judge run leaves balanced partial data. A judge's exception stops the
    run after the requests in flight finish (their verdicts are written) and is re-raised.

    An ensemble judge's member verdicts go to ``members_path`` (default ``members.jsonl`` beside
    the verdicts). A trajectory whose ensemble verdict is on disk but whose members are not is
    judged again for its members; the recomputed ensemble verdict is then compared with the one on
    disk (``RunResult.rechecked``) and not written twice.
    """
    path = Path(verdicts_path)
    mpath = Path(members_path) if members_path is not None else path.with_name(MEMBERS)
    result = RunResult()
    ensembles = any(member_ids(j) for j in judges)
    repairs = [repair_torn_tail(path), repair_torn_tail(mpath) if ensembles else None]
    result.repaired = "; ".join(r for r in repairs if r) or None
    if result.repaired:
        print(f"trajectory-judge: {result.repaired}", file=sys.stderr)
    ids = [j.judge_id for j in judges]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate judge ids: {ids}")
    on_disk = {(v.trajectory_id, v.judge_id): v for v in parse_jsonl(path, Verdict)} if path.exists() else {}
    done = set(on_disk) | (keys_on_disk(mpath) if ensembles else set())
    tasks = _plan(trajectories, judges, done, result)
    stats: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])
    bar = Progress(len(tasks), desc=",".join(ids), enabled=progress)
    all_members = {m for j in judges for m in member_ids(j)}

    def record(vs: list[Verdict]) -> None:
        for v in vs:
            key = (v.trajectory_id, v.judge_id)
            if key in done:
                if key in on_disk:  # an ensemble verdict recomputed with its members: compare
                    tally = result.rechecked.setdefault(v.judge_id, {"same": 0, "different": 0})
                    tally["same" if same_verdict(v, on_disk[key]) else "different"] += 1
                continue
            (mwriter if v.judge_id in all_members else writer).write(v)
            done.add(key)
            result.written += 1
            result.unparseable += v.error is not None and v.error.startswith("unparseable")
            s = stats[v.judge_id]
            s[0] += 1
            s[1] += v.latency_s
            s[2] += v.prompt_tokens
            s[3] += v.completion_tokens
        bar.update(f"last {vs[-1].judge_id} {sum(v.latency_s for v in vs):.1f}s")

    error: BaseException | None = None
    mwriter: VerdictWriter | None = None
    try:
        with VerdictWriter(path) as writer:
            if all_members:
                mwriter = VerdictWriter(mpath)
            if concurrency <= 1:
                try:
                    for t, j in tasks:
                        record(_check_verdicts(_judge_task(j, t), t, j))
                except BaseException as exc:  # noqa: BLE001 - re-raised below after bookkeeping
                    error = exc
            else:
                error = _run_pool(tasks, concurrency, record)
    finally:
        if mwriter is not None:
            mwriter.close()
        bar.close()
        result.per_judge = {
            jid: {"verdicts": n, "s_per_verdict": lat / n, "prompt_tokens": pt / n, "completion_tokens": ct / n}
            for jid, (n, lat, pt, ct) in stats.items()
        }
    if error is not None:
        result.status = "interrupted" if isinstance(error, (KeyboardInterrupt, Interrupted)) else "failed"
        result.message = f"{type(error).__name__}: {error}"
        error.run_result = result  # type: ignore[attr-defined]
        raise error
    return result


def _run_pool(tasks: list[tuple[Trajectory, Judge]], concurrency: int, record) -> BaseException | None:
    it: Iterable[tuple[Trajectory, Judge]] = iter(tasks)
    error: BaseException | None = None
    pending: dict[Future, tuple[Trajectory, Judge]] = {}
    with ThreadPoolExecutor(max_workers=concurrency) as ex:
        def fill() -> None:
            while error is None and len(pending) < concurrency:
                try:
                    t, j = next(it)  # type: ignore[call-overload]
                except StopIteration:
                    return
                pending[ex.submit(_judge_task, j, t)] = (t, j)

        try:
            fill()
            while pending:
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for f in finished:
                    t, j = pending.pop(f)
                    try:
                        record(_check_verdicts(f.result(), t, j))
                    except BaseException as exc:  # noqa: BLE001
                        error = error or exc
                fill()
        except BaseException as exc:  # noqa: BLE001 - Ctrl-C while waiting: drain what is in flight
            error = error or exc
            for f in list(pending):
                t, j = pending.pop(f)
                try:
                    record(_check_verdicts(f.result(), t, j))
                except BaseException:  # noqa: BLE001
                    pass
    return error


# --- metadata --------------------------------------------------------------------------------
def git_commit() -> str | None:
    """The package checkout's commit (with ``-dirty`` if it has uncommitted changes), if any."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        if not head:
            return None
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def append_run_record(data_dir: str | Path, record: dict[str, Any]) -> None:
    """Append one metadata line to ``DATA_DIR/runs.jsonl`` (flushed and fsynced)."""
    path = Path(data_dir) / RUNS
    repair_runs = path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n")
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        if repair_runs:
            fh.write("\n")
        fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def launch_record(base_url: str, server: dict[str, Any]) -> dict[str, Any] | None:
    """The local server's launch record (build, argv, binary hash) when it matches ``server``."""
    from .serve import read_launch_info

    return read_launch_info(base_url, server.get("model_path"))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- the command line ------------------------------------------------------------------------
def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``trajectory-judge run``."""
    p.add_argument("--data", default="data/", help="directory with trajectories.jsonl; verdicts.jsonl and runs.jsonl are appended there")
    p.add_argument("--judges", default="outcome,step,reply",
                   help=f"comma-separated, from {','.join(JUDGE_FAMILIES)} (default outcome,step,reply)")
    p.add_argument("--backend", choices=["ollama", "openai"], default="openai",
                   help="ollama (native /api/generate) or openai (/v1/chat/completions, e.g. llama-server)")
    p.add_argument("--base-url", default="http://127.0.0.1:8080", help="server URL (default http://127.0.0.1:8080)")
    p.add_argument("--model", required=True, help="model name sent to the server")
    p.add_argument("--judge-model-name", default=None,
                   help="model name used in judge ids, spelled as Ollama would (e.g. qwen2.5-coder:1.5b); default --model")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N trajectories (a stratified prefix)")
    p.add_argument("--concurrency", type=int, default=1, help="requests in flight (default 1)")
    p.add_argument("--num-ctx", type=int, default=8192, help="context window, always explicit (default 8192)")
    p.add_argument("--max-tokens", type=int, default=512, help="output budget per request (default 512)")
    p.add_argument("--temperature", type=float, default=0.0, help="single-pass temperature (default 0)")
    p.add_argument("--seed", type=int, default=7, help="single-pass seed (default 7)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per request (default 600)")
    p.add_argument("--retries", type=int, default=3, help="retries on transport faults, with backoff (default 3)")
    p.add_argument("--cache-prompt", choices=["off", "prefix", "on", "unset"], default="off",
                   help="llama-server prompt caching, the same for every request: 'off' recomputes every prompt; "
                        "'prefix' restores the saved shared prefix of the prompt's view before each request "
                        "(needs --slot-save-path and --concurrency 1); 'on' reuses whatever the previous request "
                        "left (fast, but verdicts then depend on request order); 'unset' sends nothing (default off)")
    p.add_argument("--quiet", action="store_true", help="no progress output")


def make_judges(names: Sequence[str], client: Any, model_name: str, *, temperature: float, seed: int) -> list[Judge]:
    """The judges named by ``--judges``."""
    from .judges.llm import LLMJudge
    from .judges.selfcons import SelfConsistencyJudge

    out: list[Judge] = []
    for name in names:
        if name in ("outcome", "step", "reply"):
            out.append(LLMJudge(name, client, model_name, temperature=temperature, seed=seed))
        elif name == "selfcons":
            out.append(SelfConsistencyJudge(client, model_name))
        else:
            raise ValueError(f"unknown judge {name!r}; expected some of {', '.join(JUDGE_FAMILIES)}")
    return out


def make_client(args: argparse.Namespace) -> Any:
    """The model client of ``--backend``."""
    from .judges.clients import OllamaClient, OpenAIClient

    common = dict(num_ctx=args.num_ctx, max_tokens=args.max_tokens, timeout=args.timeout, retries=args.retries)
    if args.backend == "ollama":
        return OllamaClient(args.base_url, args.model, **common)
    if args.cache_prompt == "prefix":
        from .judges.prompts import view_prefix
        from .judges.views import VIEWS

        if args.concurrency != 1:
            raise ValueError("--cache-prompt prefix restores one slot before each request; it needs --concurrency 1")
        return OpenAIClient(args.base_url, args.model, prefix_slots=[view_prefix(v) for v in VIEWS], **common)
    cache = {"on": True, "off": False, "unset": None}[args.cache_prompt]
    return OpenAIClient(args.base_url, args.model, cache_prompt=cache, **common)


def cli_run(args: argparse.Namespace) -> int:
    """``trajectory-judge run``: judge, append, record; exit 0, or 1 on a client failure, 130 on interrupt."""
    from .judges.clients import JudgeClientError
    from .judges.prompts import prompt_digests

    data = Path(args.data)
    trajs = load_trajectories(data / TRAJECTORIES)
    if args.limit is not None:
        trajs = trajs[: args.limit]
    names = [n.strip() for n in args.judges.split(",") if n.strip()]
    model_name = args.judge_model_name or args.model
    try:
        client = make_client(args)
        judges = make_judges(names, client, model_name, temperature=args.temperature, seed=args.seed)
    except ValueError as exc:
        print(f"trajectory-judge: error: {exc}", file=sys.stderr)
        return 2
    record: dict[str, Any] = {
        "started": _now(),
        "argv": sys.argv[1:],
        "judges": [j.judge_id for j in judges],
        "members": {j.judge_id: list(member_ids(j)) for j in judges if member_ids(j)} or None,
        "backend": args.backend,
        "base_url": args.base_url,
        "model": args.model,
        "judge_model_name": model_name,
        "limit": args.limit,
        "concurrency": args.concurrency,
        "decoding": {
            **client.decoding(),
            "temperature": args.temperature,
            "seed": args.seed,
            "selfcons": {"temperature": 0.7, "seeds": [7, 8, 9]} if "selfcons" in names else None,
            "retries": args.retries,
        },
        "prompt_sha256": prompt_digests(),
        "package_version": __version__,
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "host": os.uname().nodename,
    }
    record["server"] = client.server_info()
    record["server_launch"] = launch_record(args.base_url, record["server"])
    meter = CpuMeter(record["server_launch"])

    def on_term(signum: int, frame: Any) -> None:
        raise Interrupted(f"signal {signum}")

    old = signal.signal(signal.SIGTERM, on_term)
    t0 = time.monotonic()
    code = 0
    result = RunResult()
    try:
        result = run_judges(trajs, judges, data / VERDICTS, members_path=data / MEMBERS,
                            concurrency=args.concurrency, progress=not args.quiet)
    except JudgeClientError as exc:
        result = getattr(exc, "run_result", result)
        print(f"trajectory-judge: error: {exc}\n  {result.written} verdicts written by this run are kept; "
              f"rerun the same command to resume.", file=sys.stderr)
        code = 1
    except (KeyboardInterrupt, Interrupted) as exc:
        result = getattr(exc, "run_result", result)
        print(f"trajectory-judge: interrupted ({exc}); {result.written} verdicts written are kept; "
              f"rerun the same command to resume.", file=sys.stderr)
        code = 130
    except Exception as exc:
        result = getattr(exc, "run_result", result)
        result.status, result.message = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        signal.signal(signal.SIGTERM, old)
        client.close()
        record.update(asdict(result))
        record["ended"] = _now()
        record["wall_s"] = round(time.monotonic() - t0, 3)
        record["cpu_s"] = meter.read()
        try:
            append_run_record(data, record)
        except OSError as exc:  # pragma: no cover - the verdicts matter more than the log line
            print(f"trajectory-judge: warning: could not append to {data / RUNS}: {exc}", file=sys.stderr)
    if code == 0:
        per = ", ".join(f"{k} {v['s_per_verdict']:.2f} s/verdict" for k, v in result.per_judge.items())
        print(f"trajectory-judge: {result.written} written, {result.skipped} already on disk, "
              f"{result.unparseable} unparseable{'; ' + per if per else ''}", file=sys.stderr)
    return code
