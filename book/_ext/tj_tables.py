"""Sphinx extension of the book: code-cell tables numbered as tables, and alt text for figures.

* A cell output made by ``trajectory_judge.book.render.tables.table`` (a ``div.tj-table-block`` carrying
  ``data-name`` and ``data-caption``) becomes a numbered table: "Table N", caption above, a target
  that ``{numref}`` finds. A myst-nb figure given the class ``numbered-table`` in the cell metadata
  (``mystnb: figure: {classes: numbered-table}``) is numbered as a table in the same way. Tables
  share one counter with MyST ``{table}`` directives; figures keep "Fig. N".
* An image without alt text gets the ``<title>`` of its SVG (``trajectory_judge.book.render.figures.show``
  writes it) or, failing that, the caption of the figure that holds it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.writers.html5 import HTML5Translator
from sphinx.writers.latex import LaTeXTranslator

_BLOCK = re.compile(r'^\s*<div class="tj-table-block" data-name="([^"]+)" data-caption="([^"]*)">')
_SVG_TITLE = re.compile(r"<svg\b[^>]*>\s*<title>(.*?)</title>", re.S)


class table_figure(nodes.figure):
    """A figure whose content is a table (the HTML output of a code cell), numbered as a table."""


class table_caption(nodes.caption):
    """The caption of a :class:`table_figure`, placed before the table."""


def _caption_first(fig: nodes.figure) -> None:
    for cap in [c for c in fig.children if isinstance(c, nodes.caption)]:
        fig.remove(cap)
        cap.__class__ = table_caption
        fig.insert(0, cap)


class NumberTables(SphinxTransform):
    """Turn table outputs into :class:`table_figure` nodes before numbering and labels are collected."""

    default_priority = 500  # myst-nb has rendered the cell outputs while parsing

    def apply(self, **kwargs) -> None:
        for fig in list(self.document.findall(nodes.figure)):
            if type(fig) is nodes.figure and "numbered-table" in fig["classes"]:
                fig.__class__ = table_figure
                _caption_first(fig)
        for raw in list(self.document.findall(nodes.raw)):
            m = _BLOCK.match(raw.astext())
            if m is None or isinstance(raw.parent, nodes.figure):
                continue
            name, caption = html.unescape(m.group(1)), html.unescape(m.group(2))
            fig = table_figure("", classes=["numbered-table"])
            fig += table_caption(caption, caption)
            raw.replace_self(fig)
            fig += raw
            fig["names"].append(nodes.fully_normalize_name(name))
            self.document.note_explicit_target(fig, fig)


class FigureAltText(SphinxTransform):
    """Give every image alt text: its SVG's title, else its figure's caption."""

    default_priority = 501

    def apply(self, **kwargs) -> None:
        for img in self.document.findall(nodes.image):
            if img.get("alt") and img["alt"] != img.get("uri"):
                continue
            alt = self._svg_title(img.get("uri", ""))
            fig = img.parent
            while fig is not None and not isinstance(fig, nodes.figure):
                fig = fig.parent  # myst-nb puts the output image in containers inside the figure
            if not alt and fig is not None:
                caps = [c for c in fig.children if isinstance(c, nodes.caption)]
                alt = caps[0].astext() if caps else ""
            if alt:
                img["alt"] = alt

    def _svg_title(self, uri: str) -> str:
        if not uri.endswith(".svg"):
            return ""
        path = Path(self.env.relfn2path(uri, self.env.docname)[1])
        if not path.is_file():
            return ""
        m = _SVG_TITLE.search(path.read_text(encoding="utf-8", errors="replace")[:4000])
        return html.unescape(m.group(1)).strip() if m else ""


def _visit_caption(self, node) -> None:
    HTML5Translator.visit_caption(self, node)  # <figcaption><p> and "Table N"


def _depart_caption(self, node) -> None:
    HTML5Translator.depart_caption(self, node)
    self.body.append("</figcaption>\n")  # close it here: the table follows the caption


def _depart_table_figure(self, node) -> None:
    self.body.append("</figure>\n")


def setup(app):
    app.add_enumerable_node(
        table_figure,
        "table",
        html=(HTML5Translator.visit_figure, _depart_table_figure),
        latex=(LaTeXTranslator.visit_figure, LaTeXTranslator.depart_figure),
    )
    app.add_node(
        table_caption,
        html=(_visit_caption, _depart_caption),
        latex=(LaTeXTranslator.visit_caption, LaTeXTranslator.depart_caption),
    )
    app.add_transform(NumberTables)
    app.add_transform(FigureAltText)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
