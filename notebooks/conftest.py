"""nbval collection for the book's notebooks: the audit chapter needs the published release.

``audit.ipynb`` recomputes the published numbers from the release (``TJ_RELEASE_DIR``, or the
cache of ``trajectory-judge fetch-release``). Where no verified release is present its cells are
skipped with the reason, instead of failing; CI sets ``TJ_RELEASE_DIR``, so there it runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

NEEDS_RELEASE = {"audit.ipynb"}


def pytest_collection_modifyitems(config, items):
    from trajectory_judge.provenance.release import default_dir, verified

    if verified(default_dir()):
        return
    skip = pytest.mark.skip(
        reason=f"published release not found in {default_dir()}: set TJ_RELEASE_DIR or run `trajectory-judge fetch-release`"
    )
    for item in items:
        if Path(str(item.fspath)).name in NEEDS_RELEASE:
            item.add_marker(skip)
