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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trajectory_judge.backends.clients import OpenAIClient
from trajectory_judge.backends.transport import openai_fault
from trajectory_judge.judges.base import Judge
from trajectory_judge.judges.blind import Blinder
from trajectory_judge.judges.custom import PromptTemplate, check_template
from trajectory_judge.judges.selfcons import SEEDS, TEMPERATURE
from trajectory_judge.models import DataError, Trajectory
from trajectory_judge.run.batch_format import BatchResult, read_lines
from trajectory_judge.run.runner import RunResult
from trajectory_judge.run.task import judge_task

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


def judges_with_clients(settings: Settings, make_client: Any) -> list[tuple[Judge, Any]]:
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


def refuse_overwriting_inputs(out: Path, inputs: Sequence[Path]) -> None:
    """Refuse (ValueError, one line) an output path that is one of ``inputs``."""
    for p in inputs:
        if out.resolve() == p.resolve():
            raise ValueError(f"--out {out} is an input of this command; outputs never overwrite inputs")


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
        judges_with_clients(settings, settings.capture),
        judges_with_clients(
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
