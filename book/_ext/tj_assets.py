"""Sphinx extension of the book: each page loads its scripts once, and MathJax only where there is maths.

* A script added twice with the same source and body (sphinx-thebe's ``const THEBE_JS_URL`` block,
  which jupyter-book registers twice) is written once, so no page logs a redeclaration error.
* Sphinx decides that a page needs MathJax when the page *or any page in its toctree* has maths, so
  the landing page (whose toctree holds every chapter) loaded 1.2 MB of MathJax for none. Here a
  page keeps MathJax only when it has maths of its own: the doctree ``html-page-context`` hands
  over holds a ``math`` or ``math_block`` node (the page's own content; a toctree is only links).
* ``tj-phone.js`` (``book/_static``) fits wide tables to a phone; see its header.
* ``tj-target.js`` (``book/_static``) opens the dropdown that holds a linked table row; see its header.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes


def _key(js: Any) -> tuple[str, str]:
    attrs = getattr(js, "attributes", {}) or {}
    return str(getattr(js, "filename", js) or ""), str(attrs.get("body", ""))


def _is_mathjax(app, js: Any) -> bool:
    name, body = _key(js)
    return (bool(app.config.mathjax_path) and name.endswith(str(app.config.mathjax_path))) or body.startswith(
        "window.MathJax"
    )


def has_own_maths(doctree: nodes.Node | None) -> bool:
    """Whether a page's own doctree holds maths (inline or display); a page made from a template alone has none."""
    if doctree is None:
        return False
    return next(iter(doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block)))), None) is not None


def _page_scripts(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    own_maths = has_own_maths(doctree)
    seen, kept = set(), []
    for js in scripts:
        key = _key(js)
        if key in seen or (not own_maths and _is_mathjax(app, js)):
            continue
        seen.add(key)
        kept.append(js)
    context["script_files"] = kept  # a new list: the builder's own is restored after each page


def setup(app):
    app.add_js_file("tj-phone.js", defer="defer")
    app.add_js_file("tj-target.js", defer="defer")
    app.connect("html-page-context", _page_scripts, priority=900)  # after sphinx.ext.mathjax (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
