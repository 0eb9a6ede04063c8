"""Writers never write into a folder by accident: each needs its folder named, and a folder pinned by
``SHA256SUMS`` is refused, before anything at all is written, unless ``--force``; with it, the writer
says afterwards which pins no longer hold and how to refresh them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_server import FakeModelServer
from repo_tree import tree_files

from trajectory_judge.cli import main

ROOT = Path(__file__).resolve().parents[1]


def tree(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file and folder under ``root``: its bytes (None for a folder) and its mtime in ns.

    A folder's mtime moves when an entry is created or removed in it, so a file made and deleted
    again (a lock, a temporary file) shows too.
    """
    out: dict[str, tuple[bytes | None, int]] = {".": (None, root.stat().st_mtime_ns)}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (None if p.is_dir() else p.read_bytes(), st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory) -> Path:
    """The repository's tracked files, as a fresh clone has them (data/ pinned by its SHA256SUMS)."""
    dst = tmp_path_factory.mktemp("clone") / "trajectory-judge"
    for name in tree_files(ROOT):
        (dst / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dst / name)
    assert (dst / "data" / "SHA256SUMS").is_file()
    return dst


def small_pinned(tmp_path: Path, n: int = 16) -> Path:
    """A folder of ``n`` trajectories whose manifest pins them."""
    d = tmp_path / "pinned"
    assert main(["build-dataset", "--n", str(n), "--out", str(d)]) == 0
    assert main(["manifest", "--data", str(d)]) == 0
    return d


SERVER = ["--backend", "openai", "--base-url", "http://127.0.0.1:9", "--model", "m", "--retries", "0", "--quiet"]

WITHOUT_A_FOLDER = [
    # (verb, argv with no folder, the option the message names)
    ("run", ["run", "--judges", "step", *SERVER], "--data DIR is required"),
    ("agent", ["agent", "--episodes", "1", *SERVER], "--data DIR is required"),
    ("import-inspect", ["import-inspect", "logs/some.eval"], "--data DIR is required"),
    ("build-dataset", ["build-dataset", "--n", "16"], "--out DIR is required"),
]


@pytest.mark.parametrize("verb, argv, words", WITHOUT_A_FOLDER, ids=[c[0] for c in WITHOUT_A_FOLDER])
def test_a_writer_without_its_folder_on_a_fresh_copy_writes_nothing_and_says_why(
    repo_copy, monkeypatch, capsys, verb, argv, words
):
    if verb == "import-inspect":
        pytest.importorskip("inspect_ai", reason="needs the inspect extra")
    monkeypatch.chdir(repo_copy)
    before = tree(repo_copy)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"trajectory-judge {verb}: error: {words}") and "nothing was written" in err
    assert tree(repo_copy) == before  # every file's bytes and mtime, and no new file (no .lock) or folder


@pytest.mark.slow  # the command line in a subprocess, started in the copy as a reader starts it
def test_run_without_data_in_a_fresh_copy_of_the_repository_writes_nothing_and_exits_2(repo_copy):
    before = tree(repo_copy)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(repo_copy)}
    p = subprocess.run(
        [sys.executable, "-m", "trajectory_judge.cli", "run", "--model", "m"],
        check=False,
        cwd=repo_copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [p.stderr.strip()] and "--data DIR is required" in p.stderr
    assert "Traceback" not in p.stderr
    assert tree(repo_copy) == before


PINNED = [
    ("run", ["run", "--data", "data/", "--judges", "step", *SERVER]),
    ("agent", ["agent", "--data", "data/", "--episodes", "1", *SERVER]),
    ("import-inspect", ["import-inspect", "logs/some.eval", "--data", "data/"]),
    ("forget", ["forget", "--data", "data/", "--judge", "programmatic"]),
    ("build-dataset", ["build-dataset", "--n", "16", "--out", "data/release"]),
]


@pytest.mark.parametrize("verb, argv", PINNED, ids=[c[0] for c in PINNED])
def test_a_pinned_folder_is_refused_in_one_line_naming_force_before_anything_is_written(
    repo_copy, monkeypatch, capsys, verb, argv
):
    if verb == "import-inspect":
        pytest.importorskip("inspect_ai", reason="needs the inspect extra")
    monkeypatch.chdir(repo_copy)
    before = tree(repo_copy)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"trajectory-judge {verb}: error: data")
    assert "is pinned by data" in err and "SHA256SUMS" in err and "nothing was written" in err
    assert "--force" in err and "`trajectory-judge manifest --data data" in err
    assert tree(repo_copy) == before


def test_a_forced_run_writes_into_a_pinned_folder_and_says_which_pins_no_longer_hold(tmp_path, capsys):
    d = small_pinned(tmp_path)
    with FakeModelServer(["ok"]) as srv:
        argv = ["run", "--data", str(d), "--force", "--judges", "step", "--limit", "2"]
        argv += ["--backend", "openai", "--base-url", srv.url, "--model", "m", "--judge-model-name", "fake:1b"]
        assert main([*argv, "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"{d / 'SHA256SUMS'} no longer pins verdicts.jsonl, runs.jsonl" in err
    assert f"pin them again with `trajectory-judge manifest --data {d}`" in err
    assert (d / "verdicts.jsonl").read_text().count("\n") == 2
    assert main(["report", "--data", str(d), "--resamples", "20"]) == 2  # the pins broke, as the note says
    assert f"`trajectory-judge manifest --data {d}`" in capsys.readouterr().err
    assert main(["manifest", "--data", str(d)]) == 0  # the command the note names
    assert main(["manifest", "--check", "--data", str(d)]) == 0


def test_a_forced_run_that_judged_nothing_still_names_the_files_it_touched(tmp_path, capsys):
    d = small_pinned(tmp_path)
    capsys.readouterr()
    assert main(["run", "--data", str(d), "--force", "--judges", "step", *SERVER]) == 75  # no server: nothing judged
    err = capsys.readouterr().err  # the run record is appended however a run ends, and an empty verdicts file made
    assert f"{d / 'SHA256SUMS'} no longer pins verdicts.jsonl, runs.jsonl" in err


def test_build_dataset_rebuilds_the_bytes_a_folder_pins_and_refuses_others_without_force(tmp_path, capsys):
    d = small_pinned(tmp_path)
    pinned = (d / "trajectories.jsonl").read_bytes()
    assert main(["build-dataset", "--n", "16", "--out", str(d)]) == 0  # the same bytes: the pins hold
    assert "no longer pins" not in capsys.readouterr().err
    assert main(["manifest", "--check", "--data", str(d)]) == 0
    before = tree(d)
    assert main(["build-dataset", "--n", "24", "--out", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pinned by" in err and "--force" in err
    assert tree(d) == before
    assert main(["build-dataset", "--n", "24", "--out", str(d), "--force"]) == 0
    assert (d / "trajectories.jsonl").read_bytes() != pinned
    assert "no longer pins trajectories.jsonl" in capsys.readouterr().err
