"""The chapters of "The paper" (``_toc.yml``) are whole: every table that holds this edition's judges
also holds the paper's, and no sentence about the code's generality, or false for the paper's data,
comes back (issue 26, items 1 and 8).

Read from the executed notebooks (``notebooks/*.ipynb``), the outputs nbval pins, so the test sees
the tables and glued sentences a reader sees.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

PAPER_JUDGES = ("Qwen2.5 14B", "Llama 3.1 8B")
"""The models of the paper's judges as the book names them (release ``run-settings.jsonl``)."""

OUR_JUDGES = ("Qwen2.5-Coder",)
"""The model family of this edition's judges as the book names it."""

EDITION_ONLY: dict[str, str] = {
    "fig-confusion": "the paper's Figure 4 has its own counterpart, fig-confusion-paper, just above it",
}
"""Tables or figures of this edition's judges with a paper counterpart elsewhere on the page."""

CODE_SENTENCES: tuple[str, ...] = (
    "a judge on a prefix of the set",
    "runs on any subset",
    "whatever is on disk",
    "as it must be",
    "no column when there is no such pair",
    "the data supports",
    "the rule engine when the data holds no",
    "the one outcome-view judge in the data",
    "none flags every trajectory it judged",
    "a judge still running covers",
    "the data holds no llm judge",
)
"""Sentences about the code rather than the result, or false for the paper's data (its 8B step
judge flags 397 of 400 trajectories; both editions have an outcome judge)."""


def _paper_chapters() -> list[Path]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    part = next(p for p in toc["parts"] if p["caption"] == "The paper")
    return [ROOT / f"{c['file']}.ipynb" for c in part["chapters"] if c["file"].startswith("notebooks/")]


def _tables(nb: dict) -> dict[str, str]:
    """Name -> visible text of every book table in a notebook's outputs."""
    out = {}
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            h = "".join(o.get("data", {}).get("text/html", ""))
            m = re.search(r'class="tj-table-block" data-name="([^"]*)"', h)
            if m:
                out[m.group(1)] = html.unescape(re.sub(r"<[^>]+>", " ", h)).replace("\u00ad", "")
    return out


def _text(nb: dict) -> str:
    """The markdown cells and every text output (glued sentences included), lower-cased."""
    parts = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            for v in o.get("data", {}).values():
                parts.append(v if isinstance(v, str) else "".join(v) if isinstance(v, list) else "")
    return html.unescape(re.sub(r"\s+", " ", " ".join(parts))).lower()


CHAPTERS = _paper_chapters()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_table_of_our_judges_also_holds_the_papers(path):
    tables = _tables(json.loads(path.read_text()))
    ours_only = [
        name
        for name, text in tables.items()
        if any(o in text for o in OUR_JUDGES) and not any(p in text for p in PAPER_JUDGES) and name not in EDITION_ONLY
    ]
    assert not ours_only, f"{path.name}: tables of this edition's judges without the paper's: {ours_only}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_papers_judges_come_before_ours_in_every_table(path):
    for name, text in _tables(json.loads(path.read_text())).items():
        if "Paper (release)" in text and "This edition" in text:
            assert text.index("Paper (release)") < text.index("This edition"), f"{path.name}: {name}"


def test_the_analysis_tables_hold_the_papers_14b_outcome_step_comparison():
    # the paper's §7.1: outcome against step at 14B, in the table "for every model with more than one view"
    tables = _tables(json.loads((ROOT / "notebooks/analysis.ipynb").read_text()))
    deltas = tables["tbl-view-deltas"]
    assert "Paper (release): Qwen2.5 14B" in deltas and "Step \u2212 outcome" in deltas
    for name in ("tbl-hidden", "tbl-claims", "tbl-claim-summary", "tbl-floor", "tbl-selfcons", "tbl-naming"):
        assert "Qwen2.5 14B" in tables[name], name
    assert "Llama 3.1 8B" in tables["tbl-floor"] and "397" in tables["tbl-floor"]


@pytest.mark.parametrize("path", CHAPTERS + [ROOT / "notebooks/organic.ipynb"], ids=lambda p: p.stem)
def test_no_sentence_about_the_code_or_false_for_the_papers_data_comes_back(path):
    text = _text(json.loads(path.read_text()))
    found = [s for s in CODE_SENTENCES if s in text]
    assert not found, f"{path.name}: {found}"
