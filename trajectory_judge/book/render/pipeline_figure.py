"""The pipeline of the testbed drawn as an SVG (the counterpart of the paper's Figure 1), with the
counts of the judged set it is given; written as text, so it is drawn offline and byte-stable."""

from __future__ import annotations

from html import escape

from trajectory_judge.book.building.provenance_lines import record_figure
from trajectory_judge.provenance.computed import dotted_name

_BOX = '<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" stroke="#333" stroke-width="1.2"/>'
_TEXT = '<text x="{x}" y="{y}" text-anchor="middle" font-size="{size}" font-weight="{weight}" fill="#111">{t}</text>'
_ARROW = '<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#333" stroke-width="1.4" marker-end="url(#tj-arrow)"/>'


def _box(x: int, y: int, w: int, h: int, title: str, lines: tuple[str, ...], fill: str) -> str:
    parts = [
        _BOX.format(x=x, y=y, w=w, h=h, fill=fill),
        _TEXT.format(x=x + w // 2, y=y + 24, size=16, weight="bold", t=escape(title)),
    ]
    parts += [
        _TEXT.format(x=x + w // 2, y=y + 45 + 18 * i, size=14, weight="normal", t=escape(s))
        for i, s in enumerate(lines)
    ]
    return "\n".join(parts)


def pipeline_svg(n_clean: int, n_silent: int, n_loud: int, n_types: int, n_strata: int, n_judges: int) -> str:
    """The testbed's pipeline: instances, oracle, clean runs and injected faults split silent / loud, judges.

    Colours are the Okabe-Ito palette (colour-blind safe); every count is an argument, none is typed here.
    """
    w, h = 420, 380
    grey, blue, green, orange, purple = "#f2f2f2", "#cfe3f3", "#d4efe6", "#fbe3c8", "#eadcf0"
    body = [
        '<defs><marker id="tj-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>',
        _box(10, 10, 180, 70, "Instances", (f"{n_strata} strata, seeded",), grey),
        _box(230, 10, 180, 70, "Oracle", ("correct by construction",), blue),
        _ARROW.format(x1=190, y1=45, x2=228, y2=45),
        _TEXT.format(x=85, y=102, size=13, weight="normal", t=escape(f"fault injector: {n_types} types,")),
        _TEXT.format(x=85, y=118, size=13, weight="normal", t="one edit at a known step"),
        _box(10, 150, 125, 76, "Clean runs", (f"n = {n_clean}", "no fault"), green),
        _box(147, 150, 126, 76, "Silent faults", (f"n = {n_silent}", "outcome survived"), orange),
        _box(285, 150, 125, 76, "Loud faults", (f"n = {n_loud}", "outcome broken"), orange),
        *(_ARROW.format(x1=320, y1=80, x2=x, y2=148) for x in (72, 210, 347)),
        _box(
            10,
            270,
            400,
            100,
            "Judges",
            (f"{n_judges} designs, scored on detection,", "step, type, calibration and cost"),
            purple,
        ),
        *(_ARROW.format(x1=x, y1=226, x2=x, y2=268) for x in (72, 210, 347)),
    ]
    alt = _alt(n_clean, n_silent, n_loud)
    record_figure(None, alt, made_by=dotted_name(pipeline_svg))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" role="img" '
        f'font-family="sans-serif" style="max-width:{w}px">\n'
        + f"<title>{escape(alt)}</title>\n"
        + "\n".join(body)
        + "\n</svg>\n"
    )


def _alt(n_clean: int, n_silent: int, n_loud: int) -> str:
    return (
        f"Flow diagram: seeded instances go to the oracle; its runs are kept clean ({n_clean}) or given one injected "
        f"fault, silent ({n_silent}) or loud ({n_loud}); all go to the judges."
    )
