"""Figures as the book shows them: SVG, legible, one colour and marker per judge, real alt text.

Colours come from the Okabe–Ito palette (distinguishable with every common colour-vision
deficiency). A judge's colour is fixed by its family (what it reads) and its marker by its model,
so the same judge looks the same in every figure of every chapter; black is kept for false alarms.
:func:`show` renders a figure to deterministic SVG with its alt text (the book's extension puts that
text in the image's ``alt``), and :func:`setup_figures` sets the options every notebook shares.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trajectory_judge.book.building.provenance_lines import record_figure
from trajectory_judge.book.render.style import RULES, judge_name
from trajectory_judge.models import JudgeSpec

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

OKABE_ITO: dict[str, str] = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
}
"""The Okabe–Ito colour-blind-safe palette."""

FAMILY_COLOURS: dict[str, str] = {
    RULES: OKABE_ITO["bluish green"],
    "outcome": OKABE_ITO["orange"],
    "step": OKABE_ITO["blue"],
    "reply": OKABE_ITO["reddish purple"],
    "selfcons": OKABE_ITO["sky blue"],
}
"""One colour per judge family; any other family is drawn in vermillion."""

MODEL_MARKERS: dict[str | None, str] = {
    None: "s",
    "qwen2.5:14b": "o",
    "llama3.1:8b": "D",
    "qwen2.5-coder:1.5b": "^",
    "qwen2.5-coder:0.5b": "v",
}
"""One marker per model (the rule engine, model None, is a square); others get a pentagon."""

MODEL_LINESTYLES: dict[str | None, Any] = {
    None: "-",
    "qwen2.5:14b": "-",
    "llama3.1:8b": (0, (6, 2)),
    "qwen2.5-coder:1.5b": (0, (3, 1.5)),
    "qwen2.5-coder:0.5b": (0, (1, 1.2)),
}
"""One line style per model, beside its marker, so two judges of one family differ in more than a marker
where lines are drawn; other models get dash-dot."""

FALSE_ALARM: dict[str, Any] = {"color": OKABE_ITO["black"], "marker": "x", "label": "False-alarm rate"}
"""How a false-alarm rate is drawn in every figure: a black cross."""

MIN_FONT_PT = 10
"""No text in a figure is smaller than this at the size it is drawn."""

PHONE_COLUMN_PX = 340
"""The width a figure is shown at on a 390 px phone, in CSS pixels (the figure is scaled to fit it)."""

PHONE_WIDTH_IN = 4.0
"""The widest a figure is drawn, in inches: at this width :data:`MIN_FONT_PT` text, scaled into
:data:`PHONE_COLUMN_PX`, still renders at 11 CSS pixels or more, so one SVG serves the
desktop and the phone."""

SVG_SALT = "trajectory-judge"
"""The fixed salt of matplotlib's SVG ids, so a figure's SVG is the same bytes on every run."""

SVG_METADATA: dict[str, Any] = {"Date": None}
"""SVG metadata without the creation date (deterministic output)."""


def judge_style(judge_id: str) -> dict[str, Any]:
    """``color``, ``marker``, ``linestyle`` and ``label`` of a judge, the same in every figure."""
    spec = JudgeSpec.parse(judge_id)
    return {
        "color": FAMILY_COLOURS.get(spec.family, OKABE_ITO["vermillion"]),
        "marker": MODEL_MARKERS.get(spec.model, "p"),
        "linestyle": MODEL_LINESTYLES.get(spec.model, "-."),
        "label": judge_name(judge_id),
    }


def two_line_name(judge_id: str) -> str:
    """A judge's name on two lines, family then model (``Step\nQwen2.5-Coder 1.5B``): a panel's title or a
    direct label that fits a phone's column."""
    head, _, tail = judge_name(judge_id).partition(" \u00b7 ")
    return f"{head}\n{tail}" if tail else head


def rc_params() -> dict[RcKeyType, Any]:
    """matplotlib settings of the book: sizes that stay legible in the text column at any width."""
    return {
        "figure.figsize": (PHONE_WIDTH_IN, 3.6),
        "figure.constrained_layout.use": True,
        "figure.dpi": 100,
        "savefig.bbox": "tight",
        "font.size": 10.5,
        "axes.titlesize": 11,
        "axes.labelsize": 10.5,
        "legend.fontsize": MIN_FONT_PT,
        "xtick.labelsize": MIN_FONT_PT,
        "ytick.labelsize": MIN_FONT_PT,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "legend.frameon": False,
        "svg.hashsalt": SVG_SALT,
        "svg.fonttype": "path",
    }


def setup_figures() -> None:
    """Inline figures as deterministic SVG with the book's sizes."""
    import matplotlib.pyplot as plt
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    plt.rcParams.update(rc_params())
    set_matplotlib_formats("svg", metadata=SVG_METADATA)


def direct_labels(
    ax: Any,
    points: Sequence[tuple[float, float, str]],
    *,
    avoid: Sequence[tuple[float, float, float]] = (),
    avoid_text: Sequence[Any] = (),
    gap_pt: float = 6.0,
    **text: Any,
) -> list[Any]:
    """Write each ``(x, y, text)`` beside its point instead of a legend: to its right, left, above or below,
    or further out with a thin leader line, the first place inside the axes that overlaps no label placed
    before it, no point and no vertical segment of ``avoid`` (``(x, y0, y1)``, an interval bar) and no text of ``avoid_text``; with no free
    place, where it overlaps least. Points are labelled in the order given, so put the ones that matter most first.
    The labels take no part in the layout (they are placed once the layout is settled)."""
    from matplotlib.transforms import Bbox

    text.setdefault("bbox", {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    fig = ax.figure
    fig.canvas.draw()  # the layout settles here: display coordinates are final from now on
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    px = fig.dpi / 72.0
    r = 4.0 * px  # half a marker
    data = ax.transData
    taken = [Bbox.from_extents(X - r, Y - r, X + r, Y + r) for X, Y in (data.transform((x, y)) for x, y, _ in points)]
    for x, y0, y1 in avoid:
        (X0, Y0), (_, Y1) = data.transform((x, y0)), data.transform((x, y1))
        taken.append(Bbox.from_extents(X0 - 1.5 * px, min(Y0, Y1), X0 + 1.5 * px, max(Y0, Y1)))
    taken += [t.get_window_extent(renderer) for t in avoid_text]
    g = gap_pt
    near = [(g, 0.0, "left", "center"), (-g, 0.0, "right", "center"), (0.0, g, "center", "bottom"),
            (0.0, -g, "center", "top")]  # fmt: skip
    far = [(sx * g, sy * k * 1.6 * g, "left" if sx > 0 else "right", "center")
           for k in (1, 2, 3, 4, 5, 6) for sy in (1, -1) for sx in (1, -1)]  # fmt: skip

    def clash(box: Any, others: list[Any]) -> float:
        """How badly a label's box sits: the area it shares with what is taken, plus all of it when it leaves
        the axes."""
        shared = sum(max(0.0, min(box.x1, b.x1) - max(box.x0, b.x0)) * max(0.0, min(box.y1, b.y1) - max(box.y0, b.y0))
                     for b in others)  # fmt: skip
        inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        return shared + (0.0 if inside else box.width * box.height)

    placed = []
    for i, (x, y, label) in enumerate(points):
        others = [b for j, b in enumerate(taken) if j != i]
        best: tuple[float, int] | None = None
        for n, (dx, dy, ha, va) in enumerate(near + far):
            t = ax.annotate(label, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, **text)
            cost = clash(t.get_window_extent(renderer), others)
            t.remove()
            if best is None or cost < best[0]:
                best = (cost, n)
            if cost == 0.0:
                break
        assert best is not None
        dx, dy, ha, va = (near + far)[best[1]]
        leader = {"arrowprops": {"arrowstyle": "-", "color": "#777777", "lw": 0.6}} if best[1] >= len(near) else {}
        t = ax.annotate(label, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, **leader, **text)
        t.set_in_layout(False)
        placed.append(t)
        taken.append(t.get_window_extent(renderer))
    return placed


class BookFigure:
    """A figure rendered to SVG with its alt text; shown as SVG, its text form is the alt text."""

    def __init__(self, svg: str, alt: str) -> None:
        self.svg, self.alt = svg, alt

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"Figure: {self.alt}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def show(fig: Any, alt: str) -> BookFigure:
    """``fig`` as deterministic SVG whose ``<title>`` is ``alt`` (what the figure shows, for a reader
    who cannot see it); the figure is closed so it is not displayed twice."""
    import matplotlib.pyplot as plt

    if not alt.strip():
        raise ValueError("a figure needs alt text that says what it shows")
    record_figure(fig, alt)
    buf = io.StringIO()
    with plt.rc_context({"svg.hashsalt": SVG_SALT}):
        fig.savefig(buf, format="svg", metadata=SVG_METADATA)
    plt.close(fig)
    svg = stable_clip_ids(buf.getvalue())
    svg = re.sub(r"(<svg\b[^>]*>)", lambda m: f"{m.group(1)}\n <title>{_escape(alt)}</title>", svg, count=1)
    return BookFigure(svg, alt)


_CLIP = re.compile(r'<clipPath id="(?P<id>[^"]+)">\s*(?P<body><(?:rect|path)\b[^>]*/>)')


def stable_clip_ids(svg: str) -> str:
    """``svg`` with each clip path named after the shape it clips to, as the SVG prints it.

    matplotlib names a clip rectangle by a hash of its coordinates at full precision, and constrained
    layout can move the last bit of a coordinate from one run to the next, so the same drawing would get
    new names. A name made from the printed shape is the same whenever the drawing is; figures inlined
    in one page that clip to the same shape share a name for an identical definition."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for match in _CLIP.finditer(svg):
        base = "c" + hashlib.sha256(f"{SVG_SALT}|{match['body']}".encode()).hexdigest()[:10]
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        names[match["id"]] = name
    if not names:
        return svg
    old = re.compile(r'(id="|url\(#)(' + "|".join(map(re.escape, names)) + r')(?=[")])')
    return old.sub(lambda m: m.group(1) + names[m.group(2)], svg)


class HtmlFigure:
    """A :class:`BookFigure` as inline HTML (``<svg>`` in a ``div`` labelled with its alt text), for
    pasting into a prose page: myst-nb's cross-document glue carries ``text/html`` but not SVG."""

    def __init__(self, figure: BookFigure) -> None:
        svg = figure.svg[figure.svg.index("<svg") :]
        self.html = f'<div class="tj-figure" role="img" aria-label="{_escape(figure.alt)}">{svg}</div>'
        self.alt = figure.alt

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"Figure: {self.alt}"
