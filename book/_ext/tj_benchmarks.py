"""Sphinx extension of the book: the benchmarks page's earlier measurements, ``{{ benchmark_history }}`` (a MyST
substitution), rendered from ``book/benchmark-history.json`` by :func:`history_markdown`, so that no figure of the
page's history is typed into the page.

Each entry of the file's ``entries`` is one measurement: its ``date`` (ISO), ``what`` was measured, its ``unit``,
the figure ``after`` the change and, when there was one, ``before`` it (a number, or ``[low, high]`` for a range
over runs), and the ``change`` that moved it, a sentence (absent when it is that of the entry above). The page
lists them by date, the latest first.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

HISTORY = "book/benchmark-history.json"
"""The file of earlier measurements, from the book's root."""

FIELDS = ("date", "what", "unit", "after")
"""What every entry must state (``before`` and ``change`` are optional)."""


def figure_text(value: Any, unit: str) -> str:
    """A figure as the page prints it: ``3,474 MB``, ``0.0439 s``, ``122–126 s`` for a range."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return f"{value[0]:,}\u2013{value[1]:,} {unit}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:,} {unit}"
    raise ValueError(f"{value!r} is not a number or a [low, high] pair")


def _entry_text(entry: dict[str, Any]) -> str:
    after = figure_text(entry["after"], entry["unit"])
    moved = f"{figure_text(entry['before'], entry['unit'])} to {after}" if "before" in entry else after
    change = f" {entry['change']}." if "change" in entry else ""
    return f"- {entry['what']}: {moved}.{change}"


def history_markdown(root: str | Path) -> str:
    """The entries of :data:`HISTORY` under ``root`` as MyST: one bold date per day, the latest first, and under it
    one item per measurement, in the file's order. A malformed entry is an error naming the file and the entry."""
    path = Path(root) / HISTORY
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    days: dict[dt.date, list[str]] = {}
    for i, entry in enumerate(entries):
        missing = [f for f in FIELDS if f not in entry]
        try:
            if missing:
                raise ValueError(f"no {', '.join(missing)}")
            day = dt.date.fromisoformat(entry["date"])
            days.setdefault(day, []).append(_entry_text(entry))
        except (ValueError, TypeError) as e:
            raise ValueError(f"{HISTORY}: entry {i + 1} ({entry.get('what', '?')}): {e}") from None
    blocks = [f"**{day.day} {day:%B %Y}**\n\n" + "\n".join(items) for day, items in sorted(days.items(), reverse=True)]
    return "\n\n".join(blocks) + "\n"


def _substitution(app, config) -> None:
    subs = dict(config.myst_substitutions or {})
    subs["benchmark_history"] = history_markdown(app.srcdir)
    config.myst_substitutions = subs


def setup(app):
    app.connect("config-inited", _substitution)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
