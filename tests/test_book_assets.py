"""The book's script filter (``book/_ext/tj_assets.py``): MathJax only on a page with maths of its own.

Fed docutils doctrees directly, as ``html-page-context`` hands them over; the browser tier
(``test_browser.py``) checks the same on the built site.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes
from docutils.utils import new_document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from tj_assets import _page_scripts, has_own_maths

MATHJAX = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"
APP = SimpleNamespace(config=SimpleNamespace(mathjax_path=MATHJAX))


def _js(filename: str, body: str = "") -> SimpleNamespace:
    return SimpleNamespace(filename=filename, attributes={"body": body} if body else {})


def _page(*children: nodes.Node) -> nodes.document:
    doc = new_document("<page>")
    section = nodes.section()
    section += list(children)
    doc += section
    return doc


def _scripts_kept(doctree) -> list[str]:
    context = {
        "script_files": [
            _js("thebe.js"),
            _js("", "const THEBE_JS_URL = 1"),
            _js("", "const THEBE_JS_URL = 1"),
            _js("", "window.MathJax = {}"),
            _js(MATHJAX),
        ]
    }
    _page_scripts(APP, "page", "page.html", context, doctree)
    return [js.filename or js.attributes["body"] for js in context["script_files"]]


@pytest.mark.parametrize("maths", [nodes.math("x", "x"), nodes.math_block("x = 1", "x = 1")], ids=["inline", "display"])
def test_a_page_with_maths_of_its_own_keeps_mathjax_once(maths):
    doc = _page(nodes.paragraph("", "", nodes.Text("see "), maths))
    assert has_own_maths(doc)
    assert _scripts_kept(doc) == ["thebe.js", "const THEBE_JS_URL = 1", "window.MathJax = {}", MATHJAX]


def test_a_page_whose_toctree_links_to_maths_or_made_from_a_template_loads_no_mathjax():
    links = nodes.bullet_list("", nodes.list_item("", nodes.paragraph("", "", nodes.reference("", "Metrics"))))
    for doctree in (_page(nodes.paragraph("", "No maths here."), links), None):
        assert not has_own_maths(doctree)
        assert _scripts_kept(doctree) == ["thebe.js", "const THEBE_JS_URL = 1"]
