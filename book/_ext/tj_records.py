"""The build's records directory: where each chapter's records are for the pages that need them.

Each executed notebook carries its chapter's records (tables as CSV and JSON, what each table and
figure was computed from, its kernel's record); ``tj_notebook_cache`` unpacks them into
``<build>/.tj-records/<data digest>/<chapter>/`` before the chapters are read, so a build on other
data never reads this data's records. Extensions that render provenance lines, downloads or the
execution page read them from :func:`records_root`. ``TJ_BUILD_RECORDS``
(:data:`trajectory_judge.book.building.records.RECORDS_ENV`) names the same folder, so that a chapter
myst-nb would execute itself leaves its records there too.
"""

from __future__ import annotations

import os
from pathlib import Path

from trajectory_judge.book.building.records import RECORDS_ENV

DIGEST_DIGITS = 16
"""How many hex digits of the data digest name the records folder."""


def records_root(app) -> Path:
    """The records directory of this build's data (beside the HTML output, inside the build folder)."""
    digest = getattr(app.config, "tj_data_digest", "") or "no-digest"
    return Path(app.outdir).parent / ".tj-records" / digest[:DIGEST_DIGITS]


def _set_env(app, config) -> None:
    root = records_root(app)
    root.mkdir(parents=True, exist_ok=True)
    os.environ[RECORDS_ENV] = str(root)


def setup(app):
    app.connect("config-inited", _set_env, priority=900)  # after tj_notebook_cache has named the data's digest
    return {"parallel_read_safe": True, "parallel_write_safe": True}
