"""The size figure text is shown at: what the tests hold the book's SVG figures to on a phone."""

from __future__ import annotations

import re

from trajectory_judge.book.render.figures import PHONE_COLUMN_PX

MIN_PHONE_TEXT_PX = 11.0
"""The smallest figure text a phone may show, in CSS pixels."""

_GLYPH_SCALE = re.compile(r"scale\(([\d.]+) -[\d.]+\)")
_TEXT_SIZE = re.compile(r"font(?:-size)?:[^;\"]*?([\d.]+)px")
_VIEW_WIDTH = re.compile(r'viewBox="[\d.\-]+ [\d.\-]+ ([\d.]+) [\d.]+"')


def smallest_text_px(svg: str, column_px: float = PHONE_COLUMN_PX) -> float | None:
    """The smallest text of a matplotlib SVG as rendered in a text column ``column_px`` wide, in CSS
    pixels: font size (glyph groups drawn as ``scale(s -s)`` with s = size / 100, or ``<text>`` with a
    size) times the displayed scale (the figure's own width, at most the column). None without text."""
    sizes = [float(m) * 100 for m in _GLYPH_SCALE.findall(svg)] + [float(m) for m in _TEXT_SIZE.findall(svg)]
    view = _VIEW_WIDTH.search(svg)
    if not sizes or view is None:
        return None
    width = float(view.group(1))
    shown = min(column_px, width * 4 / 3)  # SVG width in pt; shown at its size, or shrunk to the column
    return min(sizes) * shown / width
