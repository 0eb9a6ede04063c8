"""Sphinx extension of the book: the landing page's "Cite" section, computed from ``CITATION.cff``.

MyST substitutions, each from :mod:`trajectory_judge.book.building.citation`: ``{{ cite_paper_bibtex }}`` and
``{{ cite_edition_bibtex }}`` (BibTeX blocks; the edition's year is the book's copyright year),
``{{ cite_links }}`` (the arXiv id and the DOIs as links), ``{{ cite_version }}`` and
``{{ citation_file }}`` (a link to ``CITATION.cff`` in the hosting repository).
"""

from __future__ import annotations

import re
from pathlib import Path

from trajectory_judge.book.building import citation as cite
from trajectory_judge.book.building.hosting import hosting


def _year(copyright: str) -> str:
    found = re.search(r"\b(\d{4})\b", copyright or "")
    if not found:
        raise ValueError(f"_config.yml: copyright {copyright!r} names no year for the edition's citation")
    return found[1]


def _substitutions(app, config) -> None:
    root = Path(app.srcdir)
    cff = cite.load_citation(root)
    where = hosting(root)
    subs = dict(config.myst_substitutions or {})
    subs["cite_paper_bibtex"] = f"```bibtex\n{cite.paper_bibtex(cff)}\n```"
    subs["cite_edition_bibtex"] = f"```bibtex\n{cite.edition_bibtex(cff, _year(config.copyright))}\n```"
    subs["cite_links"] = cite.cite_links(cff)
    subs["cite_version"] = str(cff["version"])
    subs["citation_file"] = f"[`{cite.CITATION_FILE}`]({where.url}/blob/{where.branch}/{cite.CITATION_FILE})"
    config.myst_substitutions = subs


def setup(app):
    app.connect("config-inited", _substitutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
