"""The executed notebooks the download button offers carry the committed notebooks' cell ids.

myst-nb writes each chapter's executed notebook to ``_sources/`` with cell ids drawn at random on
every read, so two builds of the same book differed there and only there. At the end of the build
each ``_sources/**/*.ipynb`` gets the ids of :func:`trajectory_judge.book.building.execute_notebooks.stable_cell_ids`
(the ids of ``notebooks/*.ipynb``), written atomically; nothing else in the file changes.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajectory_judge.book.building.execute_notebooks import stable_cell_ids
from trajectory_judge.fileio import atomic_write_text


def stabilise(path: Path) -> bool:
    """Rewrite the cell ids of the notebook at ``path``; whether anything changed."""
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    stable_cell_ids(nb.get("cells", []))
    new = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True)  # as myst-nb (nbformat) writes it
    if new == text:
        return False
    atomic_write_text(path, new)
    return True


def _build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        for path in sorted((Path(app.outdir) / "_sources").rglob("*.ipynb")):
            stabilise(path)


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
