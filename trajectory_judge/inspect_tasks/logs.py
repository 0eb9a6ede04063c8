"""Eval logs read back as verdicts: ``trajectory-judge import-inspect LOG... --data DIR``.

Each sample of a log written by one of :mod:`.tasks` becomes the verdict our runner would have
written from the same answer: the model's text coerced by :func:`~trajectory_judge.judges.coerce.coerce`
(so an unparseable answer votes clean at 0.5), validated against its trajectory, with the sample's
tokens and working time as its cost. A view task's verdicts are ``VIEW:MODEL``; the ensemble's
epochs are its members (``step@T0.7/seed7:MODEL``, in ``members.jsonl``) and their strict-majority
aggregate is ``selfcons3:MODEL``; a task run with ``-T prompt=FILE`` gives ``VIEW+NAME:MODEL``. MODEL is the
name the server was sent, as ``trajectory-judge run --model`` takes it (the log's ``openai/gpt-4o-mini``
gives ``gpt-4o-mini``, ``openai-api/SERVICE/m`` gives ``m``: the same judge gets the same id by either
path) unless ``--judge-model-name`` says otherwise. A verdict's latency is the seconds of its model calls
that answered (each model event's working time), what ``run`` measures of a request.

Importing is idempotent: a (trajectory, judge) already on disk is skipped, and one run record per
log (its ``eval_id``) is appended to ``runs.jsonl``. The transcript (log file, sample id, epochs) of
each verdict the import writes goes to ``transcripts.jsonl``, which ``misses`` reads to say where
``inspect view`` shows it; a verdict skipped because it was already on disk (``run`` wrote it, or an
earlier import) keeps whatever link it had, so a link always names the log its verdict came from.
A sample that errored in the log is not a verdict: it is counted, and ``inspect eval-retry`` redoes it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from trajectory_judge.analysis.core.misses import TRANSCRIPTS, read_transcripts
from trajectory_judge.inspect_tasks.samples import sample_prompt
from trajectory_judge.inspect_tasks.scoring import TRUNCATED, judge_model_name as default_model_name
from trajectory_judge.judges.coerce import coerce
from trajectory_judge.judges.custom import PromptTemplate, check_template
from trajectory_judge.judges.prompts import prompt_digests, prompt_sha256
from trajectory_judge.judges.schema import response_schema
from trajectory_judge.judges.selfcons import aggregate
from trajectory_judge.models import (
    ENSEMBLE_FAMILY,
    ENSEMBLE_VIEW,
    LLM_VIEWS,
    DataError,
    Fingerprint,
    JudgeSpec,
    Trajectory,
    Verdict,
    check_verdict_step,
    load_trajectories,
)
from trajectory_judge.models.fingerprint import json_digest
from trajectory_judge.run.fingerprints import check_fingerprints, on_record, record_lines
from trajectory_judge.run.record import LATENCY_MEANING, base_record, now, per_judge_costs
from trajectory_judge.run.store import (
    MEMBERS,
    RUNS,
    TRAJECTORIES,
    VERDICTS,
    VerdictWriter,
    append_run_record,
    data_dir_lock,
    keys_on_disk,
)

TASK_KEY = "trajectory_judge"
"""The key of a task's metadata (``{"view": ...}``) that marks a log as one of ours."""


@dataclass
class LogVerdicts:
    """What one log holds, as this project's records."""

    log: str
    """The log file."""
    view: str
    """``outcome``, ``step``, ``reply`` or ``selfcons``."""
    verdicts: list[Verdict] = field(default_factory=list)
    """Single-pass or ensemble verdicts (for ``verdicts.jsonl``)."""
    members: list[Verdict] = field(default_factory=list)
    """Ensemble members (for ``members.jsonl``)."""
    transcripts: list[dict[str, Any]] = field(default_factory=list)
    """Where each verdict's transcript is: log, sample id, epochs."""
    errored: int = 0
    """Samples that ended in an error (no answer, no verdict)."""
    template: PromptTemplate | None = None
    """The prompt of one's own the task judged with, if any."""
    judge_id: str = ""
    """The judge id of the log's verdicts (the ensemble's, for the ensemble)."""
    fingerprint: Fingerprint | None = None
    """What the judge is beyond its id (:func:`log_fingerprint`)."""


def task_metadata(log: EvalLog) -> dict[str, Any]:
    """What the task of ``log`` recorded under :data:`TASK_KEY` (its view, data, and the ensemble's decoding)."""
    return (log.eval.metadata or {}).get(TASK_KEY) or {}


def model_call_seconds(sample: EvalSample) -> float:
    """Seconds of the sample's model calls that answered (each model event's ``working_time``: the try that
    succeeded, retries and waits for a connection excluded), as ``trajectory-judge run`` measures a request;
    the sample's working time when the log holds no model events."""
    calls = [e.working_time for e in sample.events or [] if isinstance(e, ModelEvent)]
    if calls and all(t is not None for t in calls):
        return round(float(sum(t for t in calls if t is not None)), 6)
    return round(float(sample.working_time or 0.0), 6)


def log_template(log: EvalLog) -> PromptTemplate | None:
    """The prompt of one's own a log's task judged with (its metadata holds the template), checked again."""
    rec = task_metadata(log).get("prompt")
    if rec is None:
        return None
    where = f"{log.location}: the task's prompt ({TASK_KEY}.prompt)"
    if not isinstance(rec, dict) or not all(isinstance(rec.get(k), str) for k in ("name", "text", "sha256")):
        raise DataError(f"{where} holds no name, text and sha256")
    template = PromptTemplate(name=rec["name"], text=rec["text"], file=str(rec.get("file", "")))
    if template.sha256 != rec["sha256"]:
        raise DataError(f"{where}: its text does not have the SHA-256 the log records")
    check_template(template.text, where)
    return template


def generate_config(log: EvalLog) -> Any:
    """The generation settings the log's samples were answered under (the task's, with the eval's on top)."""
    return log.plan.config.merge(log.eval.model_generate_config) if log.plan else log.eval.model_generate_config


def log_fingerprint(log: EvalLog, view: str, template: PromptTemplate | None = None) -> Fingerprint:
    """The fingerprint of a log's judge, as ``run`` computes it for the same judge: the model the server was
    sent, the prompt's and schema's digests, the decoding (the ensemble's temperature and seeds from the task)."""
    cfg = generate_config(log)
    ensemble = view == ENSEMBLE_FAMILY
    meta = task_metadata(log)
    shown = "step" if ensemble else view  # the ensemble samples the step prompt
    return Fingerprint(
        model=default_model_name(log.eval.model),
        prompt_sha256=template.sha256 if template else prompt_sha256(shown),
        schema_sha256=json_digest(response_schema(shown)),
        temperature=meta.get("temperature") if ensemble else cfg.temperature,
        max_tokens=cfg.max_tokens,
        seed=None if ensemble else cfg.seed,
        seeds=tuple(meta.get("seeds") or ()) if ensemble else None,
        top_p=cfg.top_p,
    )


def _tokens(sample: EvalSample) -> tuple[int, int]:
    usage = list((sample.model_usage or {}).values())
    return sum(u.input_tokens or 0 for u in usage), sum(u.output_tokens or 0 for u in usage)


def sample_verdict(
    sample: EvalSample,
    traj: Trajectory,
    view: str,
    judge_id: str,
    where: str,
    template: PromptTemplate | None = None,
) -> Verdict:
    """The verdict of one sample on ``traj``, validated; DataError naming the sample when it is not that trajectory's."""
    if isinstance(sample.input, str) and sample.input != sample_prompt(view, traj, template):
        raise DataError(
            f"{where}: the prompt in the log is not trajectory {traj.trajectory_id!r} of this folder "
            "as the task renders it (another data folder, or another version of the prompts)"
        )
    prompt, completion = _tokens(sample)
    note = TRUNCATED if sample.output.stop_reason == "max_tokens" else None
    v = coerce(
        sample.output.completion,
        trajectory_id=traj.trajectory_id,
        judge_id=judge_id,
        step_indices=[s.index for s in traj.steps],
        latency_s=model_call_seconds(sample),
        prompt_tokens=prompt,
        completion_tokens=completion,
        note=note,
    )
    check_verdict_step(v, traj)
    return v


def _judge_ids(
    log: EvalLog, view: str, model_name: str, template: PromptTemplate | None = None
) -> tuple[str, list[tuple[float, int]]]:
    """The log's judge id and, for the ensemble, its members' (temperature, seed)."""
    meta = task_metadata(log)
    if view != ENSEMBLE_FAMILY:
        return JudgeSpec.llm(view, model_name, template.name if template else None).judge_id, []
    seeds = [int(s) for s in meta.get("seeds") or []]
    temp = meta.get("temperature")
    if not isinstance(temp, (int, float)) or isinstance(temp, bool):
        raise DataError(f"{log.location}: the selfcons task's metadata ({TASK_KEY}.temperature) holds no temperature")
    name = template.name if template else None
    return JudgeSpec.self_consistency(len(seeds), model_name, name).judge_id, [(float(temp), s) for s in seeds]


SKIPPED_FIELDS = frozenset({"events", "messages", "attachments", "store"})
"""Fields of a sample the import does not read (the transcript stays in the log); an ``.eval`` log is read without them."""


def log_verdicts(log: EvalLog, trajectories: dict[str, Trajectory], model_name: str) -> LogVerdicts:
    """Every verdict (and member) the samples of ``log`` give, in the folder's trajectory order."""
    where = str(log.location)
    view = task_metadata(log).get("view")
    if view not in (*LLM_VIEWS, ENSEMBLE_FAMILY):
        raise DataError(
            f"{where}: task {log.eval.task!r} is not one of trajectory_judge's tasks "
            "(outcome_judge, step_judge, reply_judge, selfcons_judge)"
        )
    template = log_template(log)
    judge_id, sampling = _judge_ids(log, view, model_name, template)
    out = LogVerdicts(
        log=where, view=view, template=template, judge_id=judge_id, fingerprint=log_fingerprint(log, view, template)
    )
    by_traj: dict[str, dict[int, Verdict]] = defaultdict(dict)
    sids: dict[str, str] = {}
    for s in log.samples or []:
        tid = (s.metadata or {}).get("trajectory_id")
        at = f"{where}: sample {s.id} (epoch {s.epoch})"
        if tid not in trajectories:
            raise DataError(f"{at}: trajectory {tid!r} is not in this folder's {TRAJECTORIES}")
        if s.error is not None or s.output is None or not s.output.choices:
            out.errored += 1
            continue
        if sampling:
            temp, seed = (
                float(s.metadata.get("temperature", sampling[0][0])),
                int(s.metadata.get("seed", sampling[s.epoch - 1][1])),
            )
            jid = JudgeSpec.member(ENSEMBLE_VIEW, temp, seed, model_name, template.name if template else None).judge_id
        else:
            jid = judge_id
        by_traj[tid][s.epoch] = sample_verdict(
            s, trajectories[tid], JudgeSpec.parse(jid).rendered_view, jid, at, template
        )
        sids[tid] = str(s.id)
    for tid in (t for t in trajectories if t in by_traj):
        epochs = sorted(by_traj[tid])
        got = [by_traj[tid][e] for e in epochs]
        link = {"trajectory_id": tid, "log": str(Path(where).resolve()), "sample_id": sids[tid]}
        out.transcripts += [{**link, "judge_id": v.judge_id, "epochs": [e]} for e, v in zip(epochs, got)]
        if not sampling:
            out.verdicts += got
            continue
        out.members += got
        if len(got) == len(sampling):  # an ensemble verdict needs every member
            out.verdicts.append(aggregate(got, trajectory_id=tid, judge_id=judge_id))
            out.transcripts.append({**link, "judge_id": judge_id, "epochs": epochs})
    return out


@dataclass
class ImportResult:
    """What importing one log did."""

    log: str
    """The log file."""
    written: int = 0
    """Verdicts and members written."""
    skipped: int = 0
    """Verdicts and members already on disk."""
    errored: int = 0
    """Samples that errored in the log."""
    unparseable: int = 0
    """Written verdicts whose answer did not parse."""
    recorded: bool = False
    """Whether a run record was appended (once per log)."""


def _recorded_evals(data: Path) -> set[str]:
    records = record_lines(data / RUNS)
    return {str(rec["inspect"].get("eval_id")) for _, rec in records if isinstance(rec.get("inspect"), dict)}


def _seconds(start: str | None, end: str | None) -> float | None:
    try:
        return round((datetime.fromisoformat(str(end)) - datetime.fromisoformat(str(start))).total_seconds(), 3)
    except ValueError:
        return None


def run_record(
    log: EvalLog, got: LogVerdicts, result: ImportResult, model_name: str, written: Sequence[Verdict]
) -> dict[str, Any]:
    """The run record of one imported log: model, provider, decoding, tokens, times, the log's ids."""
    ensemble = [v.judge_id for v in got.verdicts[:1] if JudgeSpec.parse(v.judge_id).kind == "ensemble"]
    members = sorted({m.judge_id for m in got.members})
    ids = sorted({v.judge_id for v in got.verdicts}) or ensemble
    rec = base_record(ids, {e: members for e in ensemble}, concurrency=1)
    cfg = generate_config(log)
    meta = task_metadata(log)
    usage = {m: u.model_dump(exclude_none=True) for m, u in (log.stats.model_usage or {}).items()}
    rec.update(
        {
            "backend": "inspect_ai",
            "concurrency": cfg.max_connections,  # None: inspect's default for the provider
            "provider": log.eval.model.split("/", 1)[0],
            "model": log.eval.model,
            "judge_model_name": model_name,
            "base_url": log.eval.model_base_url,
            "limit": log.eval.config.limit or (log.eval.task_args or {}).get("limit"),
            "decoding": {
                "temperature": cfg.temperature,
                "seed": cfg.seed,
                "max_tokens": cfg.max_tokens,
                "selfcons": {"temperature": meta.get("temperature"), "seeds": meta.get("seeds")} if ensemble else None,
            },
            "server": {
                "server": f"inspect_ai {log.eval.packages.get('inspect_ai', '')} ({log.eval.model.split('/', 1)[0]})".strip()
            },
            "prompt_sha256": prompt_digests(),
            "prompts": {i: got.template.record() for i in ids} if got.template else None,
            "fingerprints": {got.judge_id: got.fingerprint.record()} if got.fingerprint else None,
            "latency": LATENCY_MEANING,
            "started": log.stats.started_at or rec["started"],
            "ended": log.stats.completed_at or now(),
            "wall_s": _seconds(log.stats.started_at, log.stats.completed_at),
            "model_usage": usage,
            "inspect": {
                "log": got.log,
                "eval_id": log.eval.eval_id,
                "run_id": log.eval.run_id,
                "task": log.eval.task,
                "task_args": log.eval.task_args,
                "status": log.status,
            },
            "status": "ok" if log.status == "success" else str(log.status),
            "written": result.written,
            "skipped": result.skipped,
            "errored": result.errored,
            "unparseable": result.unparseable,
            "per_judge": per_judge_costs(written),
        }
    )
    return rec


def _append_new(path: Path, records: Sequence[Verdict], done: set[tuple[str, str]]) -> list[Verdict]:
    new = [v for v in records if (v.trajectory_id, v.judge_id) not in done]
    if new:
        with VerdictWriter(path) as writer:
            for v in new:
                writer.write(v)
                done.add((v.trajectory_id, v.judge_id))
    return new


def _append_transcripts(data: Path, links: Sequence[dict[str, Any]]) -> None:
    have = read_transcripts(data)
    new = [ln for ln in links if (ln["trajectory_id"], ln["judge_id"]) not in have]
    if new:
        with open(data / TRANSCRIPTS, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(ln, sort_keys=True) + "\n" for ln in new))


@dataclass
class ReadLog:
    """One log read and turned into records, not yet written."""

    path: str
    """The log file, as given."""
    log: EvalLog
    """The log (without the transcripts' events and messages)."""
    got: LogVerdicts
    """Its verdicts, members and transcript links."""
    model_name: str
    """MODEL in its judge ids."""


def read_log(log_path: str | Path, data: str | Path, *, judge_model_name: str | None = None) -> ReadLog:
    """Read one eval log into the records it gives ``data``'s trajectories; nothing is written."""
    trajs = {t.trajectory_id: t for t in load_trajectories(Path(data) / TRAJECTORIES)}
    try:
        log = read_eval_log(str(log_path), exclude_fields=set(SKIPPED_FIELDS))
    except Exception as exc:  # noqa: BLE001 - inspect raises many kinds for a file that is not a log
        raise DataError(
            f"{log_path}: not an inspect eval log ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"
        ) from None
    model_name = judge_model_name or default_model_name(log.eval.model)
    return ReadLog(str(log_path), log, log_verdicts(log, trajs, model_name), model_name)


def check_logs(logs: Sequence[ReadLog], data: str | Path) -> None:
    """Refuse, before anything is written, a log whose judge has another fingerprint than its id has on record in
    ``data`` or in a log before it (:mod:`trajectory_judge.run.fingerprints`)."""
    from trajectory_judge.models import OnRecord

    known = on_record(data)
    for r in logs:
        if r.got.fingerprint is None:
            continue
        new = {r.got.judge_id: r.got.fingerprint}
        check_fingerprints(data, new, what=f"the log {r.path}", prompt_option="-T prompt", recorded=known)
        seen = known.setdefault(r.got.judge_id, [])
        if all(o.fingerprint != r.got.fingerprint for o in seen):
            seen.append(OnRecord(r.got.fingerprint, f"the log {r.path}"))


def write_log(r: ReadLog, data: str | Path) -> ImportResult:
    """Write what one read log adds to ``data`` (holding its lock): new verdicts, members, transcripts, one run
    record."""
    data = Path(data)
    log, got = r.log, r.got
    result = ImportResult(log=r.path, errored=got.errored)
    with data_dir_lock(data):
        done = keys_on_disk(data / VERDICTS) | keys_on_disk(data / MEMBERS)
        written = _append_new(data / MEMBERS, got.members, done) + _append_new(data / VERDICTS, got.verdicts, done)
        result.written = len(written)
        result.skipped = len(got.members) + len(got.verdicts) - len(written)
        result.unparseable = sum(v.unparseable for v in written)
        made = {(v.trajectory_id, v.judge_id) for v in written}  # a verdict `run` wrote has no transcript here
        _append_transcripts(data, [ln for ln in got.transcripts if (ln["trajectory_id"], ln["judge_id"]) in made])
        if written or log.eval.eval_id not in _recorded_evals(data):
            append_run_record(data, run_record(log, got, result, r.model_name, written))
            result.recorded = True
    return result
