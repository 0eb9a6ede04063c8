import shutil
from pathlib import Path

import pytest

from trajectory_judge.cli import main
from trajectory_judge.models import DataError
from trajectory_judge.provenance.manifest import (
    read_manifest,
    verify_manifest,
    write_manifest,
)

ROOT = Path(__file__).resolve().parents[1]


def test_committed_data_matches_its_manifest():
    verify_manifest(ROOT / "data")
    listed = read_manifest(ROOT / "data")
    assert {"trajectories.jsonl", "verdicts.jsonl"} <= set(listed)


def test_a_changed_data_file_is_refused_with_a_clear_error(tmp_path):
    d = tmp_path / "data"
    shutil.copytree(ROOT / "data", d)
    with open(d / "verdicts.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")
    with pytest.raises(DataError, match=r"verdicts\.jsonl: checksum mismatch .*manifest"):
        verify_manifest(d)
    assert main(["manifest", "--data", str(d), "--check"]) == 2


def test_rewriting_the_manifest_accepts_the_new_data(tmp_path):
    d = tmp_path / "data"
    shutil.copytree(ROOT / "data", d)
    (d / "verdicts.jsonl").write_text("")
    write_manifest(d)
    verify_manifest(d)


def test_directory_without_manifest_is_accepted(tmp_path):
    verify_manifest(tmp_path)


def test_malformed_manifest_names_file_and_line(tmp_path):
    (tmp_path / "SHA256SUMS").write_text("abc trajectories.jsonl\n")
    with pytest.raises(DataError, match=r"SHA256SUMS:1: expected"):
        verify_manifest(tmp_path)


@pytest.mark.parametrize("name", ["runs.jsonl", "members.jsonl", "organic.jsonl"])
def test_report_verifies_every_pinned_file_so_a_duplicated_line_stops_it_naming_the_file(tmp_path, capsys, name):
    d = tmp_path / "data"
    shutil.copytree(ROOT / "data", d, ignore=shutil.ignore_patterns("release"))
    lines = (d / name).read_text().splitlines(keepends=True)
    (d / name).write_text("".join(lines + lines[-1:]))  # one line twice
    assert main(["manifest", "--data", str(d), "--check"]) == 2
    capsys.readouterr()
    assert main(["report", "--data", str(d), "--resamples", "50"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{name}: checksum mismatch" in err[0]
