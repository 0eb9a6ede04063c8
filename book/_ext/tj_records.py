"""The build's records directory: where each executing chapter leaves what the pages need.

Sets ``TJ_BUILD_RECORDS`` (:data:`trajectory_judge.book.records.RECORDS_ENV`) to
``<build>/.tj-records`` before any notebook executes, so every kernel myst-nb starts inherits it;
a chapter's records land in ``.tj-records/<chapter>/`` (:func:`trajectory_judge.book.records.write_record`).
Extensions that render provenance lines, downloads or the execution page read them from
:func:`records_root`.
"""

from __future__ import annotations

import os
from pathlib import Path

from trajectory_judge.book.records import RECORDS_ENV


def records_root(app) -> Path:
    """The records directory of this build (beside the HTML output, inside the build folder)."""
    return Path(app.outdir).parent / ".tj-records"


def _set_env(app, config) -> None:
    root = records_root(app)
    root.mkdir(parents=True, exist_ok=True)
    os.environ[RECORDS_ENV] = str(root)


def setup(app):
    app.connect("config-inited", _set_env)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
