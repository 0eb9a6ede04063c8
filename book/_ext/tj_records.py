"""The build's records directory: where each executing chapter leaves what the pages need.

Sets ``TJ_BUILD_RECORDS`` (:data:`trajectory_judge.book.build.records.RECORDS_ENV`) to
``<build>/.tj-records`` before any notebook executes, so every kernel myst-nb starts inherits it
(with ``TJ_BUILD_ID``, :data:`trajectory_judge.book.build.records.BUILD_ENV`, naming this build);
a chapter's records land in ``.tj-records/<chapter>/`` (:func:`trajectory_judge.book.build.records.write_record`).
Extensions that render provenance lines, downloads or the execution page read them from
:func:`records_root`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from trajectory_judge.book.build.records import BUILD_ENV, RECORDS_ENV


def records_root(app) -> Path:
    """The records directory of this build (beside the HTML output, inside the build folder)."""
    return Path(app.outdir).parent / ".tj-records"


def _set_env(app, config) -> None:
    root = records_root(app)
    root.mkdir(parents=True, exist_ok=True)
    os.environ[RECORDS_ENV] = str(root)
    app.tj_build_started = time.time()  # a notebook whose myst-nb exec data is older did not execute in this build
    os.environ[BUILD_ENV] = f"{app.tj_build_started:.6f}-{os.getpid()}"


def setup(app):
    app.connect("config-inited", _set_env)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
