"""The sentences each chapter pastes into its prose, read from its committed, executed notebook.

What a chapter glues (every text value, by its glue name) and the Markdown two of its cells display (named after
the helper that writes it, ``NAME (displayed)``). README's test command executes every chapter under nbval against
these same outputs, so the text read here is the text the chapter's helpers compute on the committed data;
tests/test_prose.py snapshots it and checks its form, tests/test_claim_summary.py its counts of claims.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

Sentences = dict[str, str]

DISPLAYED: dict[str, tuple[str, ...]] = {"audit": ("register_markdown", "contradictions_markdown")}
"""Per chapter, the helpers whose Markdown a cell displays rather than glues."""

CHAPTERS: tuple[str, ...] = tuple(sorted(p.stem for p in NOTEBOOKS.glob("*.md")))
"""Every chapter, by its notebook's name."""


def _text(raw: object) -> str:
    return "".join(raw) if isinstance(raw, list) else str(raw)


def glued_text(notebook: Path) -> Sentences:
    """The text values a committed notebook glued, by name."""
    out = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook")
            if scrap is None:
                continue
            raw = output.get("data", {}).get(scrap.get("mime_prefix", "") + "text/plain")
            if raw is None:
                continue
            try:
                value = ast.literal_eval(_text(raw))
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str):
                out[scrap["name"]] = value
    return out


def displayed_text(notebook: Path, helpers: tuple[str, ...]) -> Sentences:
    """The Markdown each cell that calls one of ``helpers`` displays, under ``HELPER (displayed)``."""
    out = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        source = _text(cell.get("source", ""))
        for helper in helpers:
            if cell["cell_type"] == "code" and f"{helper}(" in source:
                shown = [
                    _text(o["data"]["text/markdown"])
                    for o in cell.get("outputs", [])
                    if "text/markdown" in o.get("data", {})
                ]
                if len(shown) != 1:
                    raise AssertionError(
                        f"{notebook.name}: the cell calling {helper} displays {len(shown)} Markdown outputs"
                    )
                out[f"{helper} (displayed)"] = shown[0]
    return out


def committed_sentences(chapter: str) -> Sentences:
    """A chapter's glued sentences, then the Markdown it displays, as its committed notebook holds them."""
    notebook = NOTEBOOKS / f"{chapter}.ipynb"
    out = glued_text(notebook)
    helpers = DISPLAYED.get(chapter, ())
    shown = displayed_text(notebook, helpers)
    missing = [h for h in helpers if f"{h} (displayed)" not in shown]
    if missing:
        raise AssertionError(f"{notebook.name}: no cell displays {missing}")
    return out | shown
