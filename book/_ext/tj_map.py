"""Sphinx extension of the book: the landing page's map, ``{{ book_map }}`` (a MyST substitution), computed from
``_toc.yml`` by :func:`trajectory_judge.book.render.book_map.book_map`, so it names every part and chapter the book
holds."""

from __future__ import annotations

from trajectory_judge.book.render.book_map import book_map


def _substitution(app, config) -> None:
    subs = dict(config.myst_substitutions or {})
    subs["book_map"] = book_map(app.srcdir)
    config.myst_substitutions = subs


def setup(app):
    app.connect("config-inited", _substitution)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
