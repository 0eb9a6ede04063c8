"""Shared fixtures: the repository root, the published release (skipped when absent), and the book built on a
reader's folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from reader_book import reader_book_at

ROOT = Path(__file__).resolve().parents[1]

if str(ROOT) not in sys.path:  # the operator tools beside the package, imported as `tools.serve`
    sys.path.insert(0, str(ROOT))


def release_dir() -> Path | None:
    """The published release: ``TJ_RELEASE_DIR`` or ``../shared/upstream-release`` beside the repo."""
    env = os.environ.get("TJ_RELEASE_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared" / "upstream-release")
    for c in candidates:
        if (c / "trajectories.jsonl").exists() and (c / "verdicts.jsonl").exists():
            return c
    return None


@pytest.fixture(scope="session")
def release() -> Path:
    """Path to the published release, or skip with the reason."""
    d = release_dir()
    if d is None:
        pytest.skip(
            "published release not found: set TJ_RELEASE_DIR or place it at ../shared/upstream-release "
            "(run `trajectory-judge fetch-release`)"
        )
    return d


@pytest.fixture(scope="session")
def dataset():
    """Our 400 trajectories, built in memory."""
    from trajectory_judge.testbed.dataset import build_dataset

    return build_dataset(400, 7)


@pytest.fixture(scope="session")
def release_report(release):
    """``report``'s record of the published release, at the book's B = 10,000 and seed 7, computed once."""
    from trajectory_judge.analysis.core.loading import load_data
    from trajectory_judge.analysis.core.report import build_report

    data = load_data(release)
    return build_report(data.trajectories, data.verdicts, resamples=10_000, seed=7)


@pytest.fixture(scope="session")
def paper_report():
    """The same record of the paper's data set (data/release's verdicts on our trajectories), computed once."""
    from trajectory_judge.analysis.core.loading import load_paper_data
    from trajectory_judge.analysis.core.report import build_report

    data = load_paper_data(ROOT / "data" / "release", ROOT / "data")
    return build_report(data.trajectories, data.verdicts, resamples=10_000, seed=7)


@pytest.fixture(scope="session")
def paper_data():
    """The paper's data set: data/release's verdicts on our trajectories."""
    from trajectory_judge.analysis.core.loading import load_paper_data

    return load_paper_data(ROOT / "data" / "release", ROOT / "data")


@pytest.fixture(scope="session")
def paper_claims(paper_report, paper_data):
    """The claims register on the paper's verdicts at the book's B = 10,000 and seed, as its chapters read it (its
    robustness across seeds is computed once, by the first test that reads it)."""
    from trajectory_judge.book.render.claim_text import paper_claims

    return paper_claims(paper_report, paper_data)


def pytest_addoption(parser):
    parser.addoption(
        "--snapshot-update",
        action="store_true",
        default=False,
        help="rewrite the chapters' prose snapshots in tests/snapshots/ (tests/test_prose.py) for review in the diff",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    from tier_collection import COLLECTED

    config.stash[COLLECTED] = list(items)


@pytest.fixture(scope="session")
def reader_book(tmp_path_factory):
    """The whole book built once with ``-W`` on one reader's merged folder (``tests/reader_book.py``).

    Under pytest-xdist every worker reads the one build the first worker to ask for it made.
    """
    import fcntl

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return reader_book_at(tmp_path_factory.mktemp("reader-book"))
    shared = tmp_path_factory.getbasetemp().parent / "reader-book"  # the session's folder, above every worker's
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes: the others then read the finished build
        return reader_book_at(shared)
