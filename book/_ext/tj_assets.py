"""Sphinx extension of the book: each page loads its scripts once, and MathJax only where there is maths.

* A script added twice with the same source and body (sphinx-thebe's ``const THEBE_JS_URL`` block,
  which jupyter-book registers twice) is written once, so no page logs a redeclaration error.
* Sphinx decides that a page needs MathJax when the page *or any page in its toctree* has maths, so
  the landing page (whose toctree holds every chapter) loaded 1.2 MB of MathJax for none. Here a
  page keeps MathJax only when it has maths of its own (the single-page build, which holds every
  page, when any page has).
* ``tj-phone.js`` (``book/_static``) fits wide tables to a phone; see its header.
"""

from __future__ import annotations

from typing import Any


def _key(js: Any) -> tuple[str, str]:
    attrs = getattr(js, "attributes", {}) or {}
    return str(getattr(js, "filename", js) or ""), str(attrs.get("body", ""))


def _is_mathjax(app, js: Any) -> bool:
    name, body = _key(js)
    return (bool(app.config.mathjax_path) and name.endswith(str(app.config.mathjax_path))) or body.startswith(
        "window.MathJax"
    )


def _page_scripts(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    math = app.env.get_domain("math")
    has = math.data.get("has_equations", {})
    # the single-page build (the PDF's source) holds every page, so it has maths when any page has
    own_maths = any(has.values()) if app.builder.name == "singlehtml" else bool(has.get(pagename, False))
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
    app.connect("html-page-context", _page_scripts, priority=900)  # after sphinx.ext.mathjax (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
