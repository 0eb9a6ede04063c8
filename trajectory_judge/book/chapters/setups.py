"""Our edition beside the release (the audit's last section): judges family by family, and the set-ups
behind both sets of verdicts, read from their run records."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from trajectory_judge.analysis.core.cost import read_run_records
from trajectory_judge.book.chapters.judges import judge_decoding, run_decoding, setting_text
from trajectory_judge.book.render.style import (
    FAMILIES,
    FAMILY_NAMES,
    judge_name,
    model_name,
    source_name,
)
from trajectory_judge.models import ENSEMBLE_FAMILY, RULES_ID, JudgeSpec
from trajectory_judge.provenance.computed import computes

COMPARE_METRICS = ("f1", "silent_recall", "loud_recall", "false_alarm_rate", "type_macro_f1", "ece", "s_per_traj")
"""The metrics :func:`comparison_frame` sets side by side."""


@computes
def comparison_frame(ours, release) -> pd.DataFrame:
    """Judge by judge, family by family: our judges' metrics beside the release's, with their n."""
    rows = []
    for source, rep in (("edition", ours), ("release", release)):
        for j, jr in rep.judges.items():
            family = JudgeSpec.parse(j).family  # selfcons3: selfcons; a Python judge: python
            metrics = {m: jr.metrics.get(m) for m in COMPARE_METRICS}
            rows.append({"family": family, "source": source, "judge": j, "n": jr.n, **metrics})
    df = pd.DataFrame(rows)
    rank = {f: i for i, f in enumerate(FAMILIES)}
    df["_r"] = df["family"].map(lambda f: rank.get(f, len(rank)))
    df = df.sort_values(["_r", "source", "judge"], kind="stable").drop(columns="_r")
    df["source"] = df["source"].map(source_name)
    df["family"] = df["family"].map(lambda f: FAMILY_NAMES.get(f, f))
    return df.set_index(["family", "source", "judge"]).astype({m: float for m in COMPARE_METRICS})


def read_runs(directory: str | Path) -> list[dict[str, Any]]:
    """Run records of a data directory: ``runs.jsonl`` (ours) or ``run.json`` (the release); [] when absent."""
    d = Path(directory)
    if (d / "runs.jsonl").exists():
        return read_run_records(d)
    if (d / "run-settings.jsonl").exists():  # the projection of the release's run.json
        return [
            json.loads(ln) for ln in (d / "run-settings.jsonl").read_text(encoding="utf-8").splitlines() if ln.strip()
        ]
    if (d / "run.json").exists():
        return list(json.loads((d / "run.json").read_text(encoding="utf-8")).get("runs", []))
    return []


@computes
def setup_frame(
    runs: Sequence[Mapping[str, Any]], source: str, stated: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """One row per distinct set-up in run records: judges (in words), model, server, decoding.

    Temperature and seed are each judge's own (:func:`~trajectory_judge.book.chapters.judges.judge_decoding`):
    an ensemble shows its sampling temperature and all its seeds, not the record's greedy defaults.
    A setting the record does not state is taken from ``stated`` (the paper's text,
    :data:`~trajectory_judge.book.chapters.judges.PAPER_DECODING`) and marked so (§), else shown as "–" (not recorded).
    """
    rows = []
    for r in runs:
        server, dec, kind = r.get("server") or {}, r.get("decoding") or {}, r.get("kind", "judges")
        judges = r.get("judges")
        ids = judges if isinstance(judges, list) else [_release_id(j, r) for j in str(judges or "").split(",") if j]
        ids = ids if kind == "judges" else []
        decoding = {
            judge_decoding(j, dec) if dec else _stated(j, r, stated) for j in ids if JudgeSpec.parse(j).kind != "rules"
        }
        if kind != "judges" and dec:  # the agent's runs and the organic episodes: the agent model's own decoding
            decoding = {run_decoding(r)}
        temps = sorted({setting_text(t) for t, _ in decoding}) or [NOT_RECORDED]
        seeds = sorted({setting_text(s) for _, s in decoding}) or [NOT_RECORDED]
        ctx = dec.get("num_ctx", server.get("n_ctx"))
        if ctx is None and stated and ids:
            ctx = f"{stated['num_ctx']}{STATED}"
        rows.append(
            {
                "source": source,
                "judges": ", ".join(_run_judge_name(j) for j in ids) or KIND_NAMES.get(kind, kind),
                "model": model_name(r["model"]) if r.get("model") else NOT_RECORDED,
                "server": server.get("server") or ("Ollama (per README)" if not dec else NOT_RECORDED),
                "context": setting_text(ctx),
                "temperature": "; ".join(temps),
                "seed": "; ".join(seeds),
            }
        )
    cols = ["source", "judges", "model", "server", "context", "temperature", "seed"]
    return pd.DataFrame(rows, columns=cols).drop_duplicates().reset_index(drop=True)


STATED = " \u00a7"
"""Marks (§) a setting taken from the paper's text because the release's run record does not keep it."""

KIND_NAMES: dict[str, str] = {"agent": "agent runs (no judge)", "organic": "organic episodes (no judge)"}
"""How a run that judged nothing is named in the judges column."""


def _release_id(family: str, record: Mapping[str, Any]) -> str:
    """A judge id from the release's run record (``selfcons`` with ``k`` samples as ``selfcons3:model``)."""
    if family == RULES_ID:
        return JudgeSpec.rules().judge_id
    if family == ENSEMBLE_FAMILY:
        return JudgeSpec.self_consistency(int(record.get("k") or 0), str(record.get("model"))).judge_id
    return JudgeSpec.llm(family, str(record.get("model"))).judge_id


def _stated(judge: str, record: Mapping[str, Any], stated: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """(temperature, seed) of a release judge: the record's seed, the paper's text for the rest (marked)."""
    if not stated:
        return None, record.get("seed")
    if JudgeSpec.parse(judge).ensemble > 1:
        seeds = stated["selfcons_seeds"]
        if record.get("seed") != seeds[0] or record.get("k") != len(seeds):
            raise ValueError(
                f"release run settings: seed {record.get('seed')}, k {record.get('k')} differ from the paper's text"
            )
        return f"{stated['selfcons_temperature']:g}{STATED}", ",".join(map(str, seeds)) + STATED
    return f"{stated['temperature']:g}{STATED}", record.get("seed")


NOT_RECORDED = "\u2013"
"""A setting the run record does not state."""


def _run_judge_name(judge: str) -> str:
    """A judge of a run record in words, without the model (the table has a model column)."""
    try:
        return judge_name(judge).split(" \u00b7 ")[0]
    except ValueError:
        return judge
