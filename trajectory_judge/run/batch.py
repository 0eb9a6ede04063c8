"""One request format for every engine: export the judges' requests, import their answers.

``trajectory-judge export-requests`` writes every request ``run`` would send to an
OpenAI-compatible server, one line per judge x trajectory x seed, in the OpenAI Batch API's input
format (``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``), which a
provider's batch API, ``vllm run-batch`` and ``trajectory-judge run-requests`` all read. The
requests are not written by code of their own: the judges of ``run`` are built as ``run`` builds
them and handed a client (:class:`CaptureClient`) that keeps each request body
:class:`~trajectory_judge.backends.clients.OpenAIClient` builds instead of sending it. A change to
a prompt or a payload therefore changes the exported requests alike.

``custom_id`` is ``tj-`` and 40 hex digits of the SHA-256 of the judge id and the request body
(the model, the prompt, which holds the prompt text and the trajectory as the judge sees it, the
response schema and the decoding): what determines the answer. Two requests with the same
``custom_id`` ask the same question, so each is written once. Beside the requests, a settings
file (``REQUESTS.settings.json``) keeps what the import needs to rebuild the judges: their names,
the model names, the decoding, the limit, the prompt digests and the digests of the requests and
of the trajectories they were made from.

``trajectory-judge import-results`` reads the Batch API's output format (``{"id", "custom_id",
"response": {"status_code", "body"}, "error"}``), which ``vllm run-batch`` and ``run-requests``
write too. It rebuilds the judges from the settings file and runs them through
:func:`~trajectory_judge.run.runner.run_judges` with a client (:class:`ReplayClient`) that answers
each request from the results, so the verdicts, the members and their checks are those of a direct
``run`` (apart from ``latency_s``, which a batch does not report: 0). A (trajectory, judge) pair is
imported only when every one of its requests has an answer; the rest are counted and named. The
import holds the folder's lock, refuses a pinned folder without ``--force``, skips what is on disk
(a re-import adds nothing, not even a run record) and appends one run record when it wrote verdicts.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from trajectory_judge.backends.clients import OpenAIClient
from trajectory_judge.backends.transport import openai_fault
from trajectory_judge.fileio import atomic_open, atomic_write_text
from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.blind import Blinder
from trajectory_judge.judges.custom import PromptTemplate, check_template
from trajectory_judge.judges.selfcons import SEEDS, TEMPERATURE
from trajectory_judge.models import DataError, Trajectory, load_trajectories
from trajectory_judge.provenance.pins import broken_pins_note, writable_folder
from trajectory_judge.run.batch_format import BatchRequest, BatchResult, read_lines, read_requests
from trajectory_judge.run.fingerprints import check_fingerprints, judge_fingerprints
from trajectory_judge.run.record import base_record, now
from trajectory_judge.run.runner import RunResult, run_judges
from trajectory_judge.run.stopping import Interrupted, exit_code, stop_on_signals
from trajectory_judge.run.store import MEMBERS, TRAJECTORIES, VERDICTS, append_run_record, data_dir_lock
from trajectory_judge.run.task import judge_task, member_ids

SETTINGS_SUFFIX = ".settings.json"
"""The settings file of ``REQUESTS`` is ``REQUESTS`` with this appended."""

FORMAT = "trajectory-judge batch requests 1"
"""The ``format`` of a settings file."""

SHOWN_MISSING = 5
"""How many unanswered ``custom_id`` values the import names on the terminal."""

_PLACEHOLDER = json.dumps({"reasoning": "", "faulty": False, "failure_type": "none", "confidence": 0.5})


def custom_id(judge_id: str, body: dict[str, Any]) -> str:
    """``tj-`` and 40 hex digits of the SHA-256 of ``judge_id`` and ``body`` (canonical JSON)."""
    text = json.dumps({"judge_id": judge_id, "body": body}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "tj-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def settings_path(requests: str | Path) -> Path:
    """Where the settings file of the requests file ``requests`` is."""
    p = Path(requests)
    return p.with_name(p.name + SETTINGS_SUFFIX)


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file's bytes, read in blocks (no cache file is written beside it)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- the clients: keep what would be sent, answer from what came back -----------------------
class CaptureClient(OpenAIClient):
    """An OpenAI-compatible client that sends nothing: it keeps every request body in ``sent``.

    Each request is answered with a neutral placeholder verdict, so that a judge runs to its end;
    that answer is thrown away. It never contacts a server (no ``/props``, no tokenizer): the
    requests are those a direct ``run`` sends to a server that is not llama-server.
    """

    def __init__(self, model: str, *, num_ctx: int, max_tokens: int) -> None:
        super().__init__("http://batch.invalid", model, num_ctx=num_ctx, max_tokens=max_tokens, llama_cpp=False)
        self.sent: list[dict[str, Any]] = []

    def _chat(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        self.sent.append(payload)
        return {"choices": [{"message": {"content": _PLACEHOLDER}, "finish_reason": "stop"}]}, 0.0


class ReplayClient(OpenAIClient):
    """An OpenAI-compatible client that answers each request with its imported response body.

    ``judge_id`` is the id of the judge it serves (part of each request's ``custom_id``).
    """

    def __init__(self, model: str, answers: dict[str, dict[str, Any]], *, num_ctx: int, max_tokens: int) -> None:
        super().__init__("http://batch.invalid", model, num_ctx=num_ctx, max_tokens=max_tokens, llama_cpp=False)
        self.answers = answers
        self.judge_id = ""

    def _chat(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        return self.answers[custom_id(self.judge_id, payload)], 0.0


# --- settings -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """What rebuilds the judges of an export (the settings file holds it, with digests)."""

    judges: tuple[str, ...]
    """The built-in judges (``--judges``)."""
    models: tuple[tuple[str, str], ...]
    """Each model as the requests name it, and as its judge ids name it (``--model``, ``--judge-model-name``)."""
    limit: int | None
    max_tokens: int
    num_ctx: int
    temperature: float
    seed: int
    template: PromptTemplate | None = None
    """The prompt of one's own (``--prompt``), judged over ``view``."""
    view: str | None = None
    """The view of ``template`` (``--view``; step when not given)."""
    selfcons_temperature: float = TEMPERATURE
    """The self-consistency members' temperature (``--selfcons-temperature``)."""
    selfcons_seeds: tuple[int, ...] = SEEDS
    """The self-consistency members' seeds (``--selfcons-seeds``)."""

    def make(self, client: OpenAIClient, model_name: str) -> list[Judge]:
        """The judges, built as ``run`` builds them, around ``client``, named for ``model_name``."""
        from trajectory_judge.run.settings import make_judges

        return make_judges(
            self.judges,
            client,
            model_name,
            temperature=self.temperature,
            seed=self.seed,
            template=self.template,
            view=self.view,
            selfcons_temperature=self.selfcons_temperature,
            selfcons_seeds=self.selfcons_seeds,
        )

    def capture(self, model: str) -> CaptureClient:
        return CaptureClient(model, num_ctx=self.num_ctx, max_tokens=self.max_tokens)

    def decoding(self) -> dict[str, Any]:
        """The decoding part of a run record, as ``run`` records it for a server that is not llama-server."""
        c = self.capture(self.models[0][0])
        return {
            **c.decoding(),
            "timeout_s": None,
            "temperature": self.temperature,
            "seed": self.seed,
            "selfcons": (
                {"temperature": self.selfcons_temperature, "seeds": list(self.selfcons_seeds)}
                if "selfcons" in self.judges
                else None
            ),
        }

    def record(self) -> dict[str, Any]:
        """The settings as the settings file keeps them."""
        return {
            "judges": list(self.judges),
            "models": [list(m) for m in self.models],
            "limit": self.limit,
            "max_tokens": self.max_tokens,
            "num_ctx": self.num_ctx,
            "temperature": self.temperature,
            "seed": self.seed,
            "prompt": self.template.record() if self.template else None,
            "view": self.view,
            "selfcons_temperature": self.selfcons_temperature,
            "selfcons_seeds": list(self.selfcons_seeds),
        }


def _template(rec: Any, where: str) -> PromptTemplate | None:
    """The prompt of one's own a settings file keeps, checked again (its text against its digest)."""
    if rec is None:
        return None
    if not isinstance(rec, dict) or not all(isinstance(rec.get(k), str) for k in ("name", "text", "sha256")):
        raise ValueError("its prompt holds no name, text and sha256")
    template = PromptTemplate(name=rec["name"], text=rec["text"], file=str(rec.get("file", "")))
    if template.sha256 != rec["sha256"]:
        raise ValueError("its prompt's text does not have the SHA-256 it records")
    check_template(template.text, f"{where}: its prompt")
    return template


def read_settings(requests: Path) -> tuple[Settings, dict[str, Any]]:
    """The settings of ``requests`` and the whole settings record; :class:`DataError` if absent or wrong."""
    path = settings_path(requests)
    if not path.exists():
        raise DataError(
            f"{path}: not found; it is written beside the requests by `trajectory-judge export-requests` "
            "and names the judges and decoding the import rebuilds"
        )
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
        if rec.get("format") != FORMAT:
            raise ValueError(f"format is {rec.get('format')!r}, not {FORMAT!r}")
        # a settings file of one model keeps it as `model` and `judge_model_name`
        models = rec["models"] if "models" in rec else [[rec["model"], rec["judge_model_name"]]]
        s = Settings(
            judges=tuple(rec["judges"]),
            models=tuple((str(m), str(n)) for m, n in models),
            limit=rec["limit"],
            max_tokens=int(rec["max_tokens"]),
            num_ctx=int(rec["num_ctx"]),
            temperature=float(rec["temperature"]),
            seed=int(rec["seed"]),
            template=_template(rec.get("prompt"), str(path)),
            view=rec.get("view"),
            # a settings file written before the ensemble's decoding was an option holds the defaults
            selfcons_temperature=float(rec.get("selfcons_temperature", TEMPERATURE)),
            selfcons_seeds=tuple(int(x) for x in rec.get("selfcons_seeds", SEEDS)),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path}: not a settings file of export-requests ({exc})") from None
    return s, rec


# --- export -------------------------------------------------------------------------------------
def requests_of(
    judge: Judge, client: CaptureClient, trajectories: Sequence[Trajectory]
) -> Iterator[tuple[Trajectory, list[tuple[str, dict[str, Any]]]]]:
    """For each trajectory, the requests ``judge`` sends for it: ``(custom_id, body)`` in the order sent."""
    blinder = Blinder()
    for t in trajectories:
        client.sent = []
        judge_task(judge, t, blinder)
        yield t, [(custom_id(judge.judge_id, body), body) for body in client.sent]


def _judges_with_clients(settings: Settings, make_client: Any) -> list[tuple[Judge, Any]]:
    """Per model, one judge per name and the judge of the prompt of one's own, each with a client of its own
    (``make_client(model)``; its judge id is part of its requests' ids), in the order ``run`` judges them."""
    out = []
    for model, model_name in settings.models:
        # a built-in judge alone; the ensemble keeps the template, which it then samples (selfconsK+NAME)
        one = [
            replace(settings, judges=(name,), template=settings.template if name == "selfcons" else None)
            for name in settings.judges
        ]
        if settings.template is not None:
            one.append(replace(settings, judges=()))
        for s in one:
            client = make_client(model)
            out.append((s.make(client, model_name)[0], client))
    return out


def _refuse_overwriting_inputs(out: Path, inputs: Sequence[Path]) -> None:
    for p in inputs:
        if out.resolve() == p.resolve():
            raise ValueError(f"--out {out} is an input of this command; outputs never overwrite inputs")


def cli_export_requests(args: Any) -> int:
    """``trajectory-judge export-requests``: write the requests and their settings file (both atomically).

    A judge whose fingerprint differs from the one its id has on record in ``--data`` is refused first, as
    the import would refuse it, so that no request is paid for whose answers cannot come back.
    """
    from trajectory_judge.judges.custom import load_template
    from trajectory_judge.run.settings import judge_names, selfcons_settings, split_models

    selfcons_temperature, selfcons_seeds = selfcons_settings(args)
    data, out = Path(args.data), Path(args.out)
    traj_path = data / TRAJECTORIES
    _refuse_overwriting_inputs(out, [traj_path, data / VERDICTS, data / MEMBERS])
    _refuse_overwriting_inputs(settings_path(out), [traj_path])
    trajs = load_trajectories(traj_path)[: args.limit]
    settings = Settings(
        judges=tuple(judge_names(args)),
        models=tuple((m, n or m) for m, n in split_models(args.model, args.judge_model_name)),
        limit=args.limit,
        max_tokens=args.max_tokens,
        num_ctx=args.num_ctx,
        temperature=args.temperature,
        seed=args.seed,
        template=load_template(args.prompt) if args.prompt else None,
        view=args.view,
        selfcons_temperature=selfcons_temperature,
        selfcons_seeds=selfcons_seeds,
    )
    pairs = _judges_with_clients(settings, settings.capture)
    check_fingerprints(data, judge_fingerprints([j for j, _ in pairs]), what="this export")
    seen: set[str] = set()
    digest = hashlib.sha256()
    with atomic_open(out, "w") as fh:
        streams = [requests_of(j, c, trajs) for j, c in pairs]
        for per_trajectory in zip(*streams):  # trajectory by trajectory, as the runner visits them
            for _t, reqs in per_trajectory:
                for cid, body in reqs:
                    if cid in seen:
                        continue
                    seen.add(cid)
                    line = BatchRequest(custom_id=cid, body=body).line() + "\n"
                    fh.write(line)
                    digest.update(line.encode("utf-8"))
    from trajectory_judge.judges.prompts import prompt_digests

    record = {
        "format": FORMAT,
        **settings.record(),
        "judge_ids": [j.judge_id for j, _ in pairs],
        "members": {j.judge_id: list(member_ids(j)) for j, _ in pairs if member_ids(j)} or None,
        "prompt_sha256": prompt_digests(),
        "requests": out.name,
        "requests_sha256": digest.hexdigest(),
        "n_requests": len(seen),
        "n_trajectories": len(trajs),
        "trajectories_sha256": sha256_of(traj_path),
        "exported": now(),
    }
    atomic_write_text(settings_path(out), json.dumps(record, indent=1, sort_keys=True) + "\n")
    if not args.quiet:
        print(
            f"trajectory-judge: {len(seen)} requests ({', '.join(record['judge_ids'])} on {len(trajs)} trajectories) "
            f"written to {out}; settings in {settings_path(out)}",
            file=sys.stderr,
        )
    return 0


# --- results ------------------------------------------------------------------------------------
@dataclass
class Results:
    """The usable answers of a results file, and what it says about the rest."""

    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Response body by ``custom_id``, for every request answered with HTTP 200 and a usable body."""
    errors: dict[str, str] = field(default_factory=dict)
    """Why, by ``custom_id``, for requests answered with an error (and never with a usable answer)."""
    torn: str | None = None
    """What was set aside: a last line without its newline that is not a whole result."""


def usable(body: Any) -> str | None:
    """Why a 200 response body cannot be read as an answer (None when it can)."""
    fault = openai_fault(body)
    if fault:
        return fault
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return "no choices[0].message.content"
    return None if isinstance(content, str) or content is None else "choices[0].message.content is not text"


def essential(body: dict[str, Any]) -> dict[str, Any]:
    """What the client reads of a response body (its answer, finish reason and token counts): kept in
    memory for each answer of a results file, so the import's memory grows with the answers, not their envelopes."""
    choice = body["choices"][0]
    return {
        "choices": [
            {"message": {"content": choice["message"]["content"]}, "finish_reason": choice.get("finish_reason")}
        ],
        "usage": body.get("usage"),
        "system_fingerprint": body.get("system_fingerprint"),
    }


def read_results(path: Path) -> Results:
    """Read a Batch API output file; a torn last line is left out and reported, any other bad line is a DataError."""
    out = Results()

    def torn(why: str) -> None:
        out.torn = why

    for _lineno, res in read_lines(path, BatchResult, on_torn=torn):
        cid = res.custom_id
        if cid in out.answers:
            continue
        body: Any = res.response.body if res.response is not None else None
        why = usable(body) if res.status == 200 else res.why_not()
        if why is None:
            out.answers[cid] = essential(body)
            out.errors.pop(cid, None)
        else:
            out.errors[cid] = why
    return out


# --- import -------------------------------------------------------------------------------------
@dataclass
class Imported:
    """What one import did."""

    result: RunResult = field(default_factory=RunResult)
    complete: int = 0
    """(trajectory, judge) pairs whose every request has an answer."""
    missing: list[str] = field(default_factory=list)
    """``custom_id`` of every request of the pairs left out that has no usable answer."""
    errors: dict[str, str] = field(default_factory=dict)
    """Of ``missing``, those answered with an error, and why."""


def plan_import(
    settings: Settings, trajs: Sequence[Trajectory], requested: set[str], results: Results, requests: Path
) -> tuple[list[tuple[str, Judge, list[Trajectory]]], Imported]:
    """Each judge (answered by its replay client), the model it names, and the trajectories whose requests are
    all answered."""
    done = Imported()
    plan = []
    for (judge, capture), (replayed, replay) in zip(
        _judges_with_clients(settings, settings.capture),
        _judges_with_clients(
            settings,
            lambda model: ReplayClient(
                model, results.answers, num_ctx=settings.num_ctx, max_tokens=settings.max_tokens
            ),
        ),
    ):
        replay.judge_id = judge.judge_id
        ready = []
        for t, reqs in requests_of(judge, capture, trajs):
            unknown = [cid for cid, _ in reqs if cid not in requested]
            if unknown:
                raise DataError(
                    f"{requests}: has no request {unknown[0]} that {judge.judge_id} sends for {t.trajectory_id}; "
                    "the trajectories or the code changed since the export: export again"
                )
            lacking = [cid for cid, _ in reqs if cid not in results.answers]
            if lacking:
                done.missing.extend(lacking)
                done.errors.update({c: results.errors[c] for c in lacking if c in results.errors})
            else:
                ready.append(t)
        done.complete += len(ready)
        plan.append((replay.model, replayed, ready))
    done.missing = list(dict.fromkeys(done.missing))
    return plan, done


def cli_import_results(args: Any) -> int:
    """``trajectory-judge import-results``: answers -> verdicts, members and a run record, under the lock."""
    data = writable_folder(args.data, what="verdicts and a run record", force=args.force)
    if args.requests is None:
        raise ValueError("--requests FILE is required: the requests file the results answer")
    requests, results_path = Path(args.requests), Path(args.results)
    settings, srec = read_settings(requests)
    if sha256_of(requests) != srec.get("requests_sha256"):
        raise DataError(f"{requests}: its bytes are not those {settings_path(requests)} was written with")
    if sha256_of(data / TRAJECTORIES) != srec.get("trajectories_sha256"):
        raise DataError(
            f"{data / TRAJECTORIES}: not the trajectories the requests were exported from; "
            "import into the folder they came from"
        )
    trajs_all = load_trajectories(data / TRAJECTORIES)
    trajs = trajs_all[: settings.limit]
    requested = set(read_requests(requests))
    results = read_results(results_path)
    if results.torn:
        print(f"trajectory-judge: {results.torn}", file=sys.stderr)
    foreign = len(set(results.answers) - requested)
    t0 = time.monotonic()
    try:
        with data_dir_lock(data), stop_on_signals():
            plan, done = plan_import(settings, trajs, requested, results, requests)
            check_fingerprints(  # every judge before any verdict is written
                data,
                judge_fingerprints([j for _, j, _ in plan]),
                what="this import",
                prompt_option="export-requests --prompt",
            )
            for model, _name in settings.models:  # one run record per model, as `run --model a,b` writes
                mine = [(j, ready) for m, j, ready in plan if m == model]
                part = Imported(complete=done.complete, missing=done.missing, errors=done.errors)
                for judge, ready in mine:
                    r = run_judges(
                        ready,
                        [judge],
                        data / VERDICTS,
                        members_path=data / MEMBERS,
                        progress=False,
                        record=False,
                        known_ids=[t.trajectory_id for t in trajs_all],
                        force=args.force,
                    )
                    _add(part.result, r)
                if part.result.written:
                    judges = [j for j, _ in mine]
                    append_run_record(
                        data, _run_record(args, settings, srec, part, results_path, requests, t0, model, judges)
                    )
                _add(done.result, part.result)
    except Interrupted as exc:
        print(f"trajectory-judge: interrupted ({exc}); verdicts already on disk are kept.", file=sys.stderr)
        return exit_code(exc)
    finally:
        if note := broken_pins_note(data):
            print(note, file=sys.stderr)
    _say(done, foreign, args.missing)
    return 0


def _add(total: RunResult, r: RunResult) -> None:
    for k in ("planned", "skipped", "written", "unparseable", "failed"):
        setattr(total, k, getattr(total, k) + getattr(r, k))
    total.per_judge.update(r.per_judge)
    total.rechecked.update(r.rechecked)
    total.repaired = "; ".join(x for x in (total.repaired, r.repaired) if x) or None


def _run_record(
    args: Any,
    settings: Settings,
    srec: dict[str, Any],
    done: Imported,
    results: Path,
    requests: Path,
    t0: float,
    model: str,
    judges: Sequence[Judge],
) -> dict[str, Any]:
    """The run record of one model's judges in an import (``done``: what they did)."""
    ids = [j.judge_id for j in judges]
    rec = base_record(ids, {j.judge_id: list(member_ids(j)) for j in judges if member_ids(j)}, concurrency=1)
    rec.update(
        backend="batch",
        base_url=None,
        model=model,
        judge_model_name=dict(settings.models)[model],
        limit=settings.limit,
        decoding=settings.decoding(),
        prompt_sha256=srec.get("prompt_sha256"),
        prompts={j.judge_id: t.record() for j in judges if (t := getattr(j, "template", None))} or None,
        fingerprints={k: fp.record() for k, fp in judge_fingerprints(judges).items()} or None,
        batch={
            "results": str(results),
            "results_sha256": sha256_of(results),
            "requests": str(requests),
            "requests_sha256": srec.get("requests_sha256"),
            "exported": srec.get("exported"),
            "complete_pairs": done.complete,
            "unanswered_requests": len(done.missing),
        },
        server={"server": "batch results"},
    )
    rec.update(asdict(done.result), ended=now(), wall_s=round(time.monotonic() - t0, 3), cpu_s=None)
    return rec


def _say(done: Imported, foreign: int, missing_out: str | None) -> None:
    r = done.result
    line = f"trajectory-judge: {r.written} written, {r.skipped} already on disk, {r.unparseable} unparseable"
    if done.missing:
        errs = f", {len(done.errors)} of them answered with an error" if done.errors else ""
        shown = ", ".join(done.missing[:SHOWN_MISSING]) + (", ..." if len(done.missing) > SHOWN_MISSING else "")
        line += f"; {len(done.missing)} requests have no answer{errs} ({shown}): their judge and trajectory pairs are left out"
        if missing_out:
            atomic_write_text(missing_out, "".join(c + "\n" for c in done.missing))
            line += f"; all of them are listed in {missing_out}"
    if foreign:
        line += f"; {foreign} answers are to requests not in --requests (ignored)"
    print(line, file=sys.stderr)
