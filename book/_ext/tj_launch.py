"""Sphinx extension of the book: launch badges whose addresses come from the repository setting.

``{{ binder_badge }}`` and ``{{ colab_badge }}`` (MyST substitutions) are the Binder and Colab
badges of the landing page, linking to the hosting repository named in ``_config.yml``
(:func:`trajectory_judge.book.building.hosting.hosting`), with the badge images served from the book itself.
"""

from __future__ import annotations

from pathlib import Path

from trajectory_judge.book.building.hosting import hosting


def _substitutions(app, config) -> None:
    where = hosting(Path(app.srcdir))
    subs = dict(config.myst_substitutions or {})
    subs["binder_badge"] = f"[![Launch on Binder](_static/binder-badge.svg)]({where.binder()})"
    subs["colab_badge"] = f"[![Open in Colab](_static/colab-badge.svg)]({where.colab()})"
    config.myst_substitutions = subs


def setup(app):
    app.connect("config-inited", _substitutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
