"""The committed projection of the published release (data/release/), and what it lets us check.

The projection is the release's verdicts without their rationale text. Our own trajectories stand
in for the release's (whose texts are the authors' prose): these tests pin that the substitution
changes no label, no paired classification and no number of the report.
"""

from __future__ import annotations

import json
import math
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from trajectory_judge.analysis.core.paired import clean_parents, reaches_input
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.cli import main
from trajectory_judge.judges.views import VIEWS
from trajectory_judge.models import DataError, load_trajectories, load_verdicts
from trajectory_judge.provenance.manifest import MANIFEST, read_manifest, verify_manifest, write_manifest
from trajectory_judge.provenance.projection import (
    COPYRIGHT,
    PROJECTED_FILES,
    WITHHELD_FIELDS,
    project_release,
    project_verdict_line,
    project_verdicts,
)
from trajectory_judge.provenance.release import RELEASE_COMMIT, RELEASE_SHA256, RELEASE_URL, ReleaseError

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "data" / "release"
OURS = ROOT / "data" / "trajectories.jsonl"


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").split("\n") if ln.strip()]


# --- the projection itself ----------------------------------------------------------------------
def test_projection_holds_no_release_sentence(release):
    src = [json.loads(ln) for ln in _lines(release / "verdicts.jsonl")]
    out = [json.loads(ln) for ln in _lines(COMMITTED / "verdicts.jsonl")]
    assert len(out) == len(src) == 2000
    for s, o in zip(src, out):
        assert list(o) == list(s)  # same fields, same order
        assert all(o[f] is None for f in WITHHELD_FIELDS)
        assert {k: v for k, v in o.items() if k not in WITHHELD_FIELDS} == {
            k: v for k, v in s.items() if k not in WITHHELD_FIELDS
        }
    # no rationale of the release appears anywhere in the committed directory
    committed = "".join(p.read_text(encoding="utf-8") for p in sorted(COMMITTED.iterdir()) if p.is_file())
    rationales = {s["rationale"] for s in src if s["rationale"]}
    assert len(rationales) > 100
    assert [r for r in rationales if r in committed] == []
    # the only strings left in the verdicts are ids, judge ids and failure types
    strings = {v for o in out for k, v in o.items() if isinstance(v, str)}
    assert strings <= {o["trajectory_id"] for o in out} | {o["judge_id"] for o in out} | {
        o["failure_type"] for o in out if o["failure_type"]
    }


def test_projected_line_is_the_source_line_with_the_rationale_nulled(release):
    """Byte level: numbers keep the source's spelling (e.g. ``8.750008419156075e-6``)."""
    for src, out in zip(_lines(release / "verdicts.jsonl"), _lines(COMMITTED / "verdicts.jsonl")):
        value = json.dumps(json.loads(src)["rationale"], ensure_ascii=False)
        assert src.replace(f'"rationale":{value}', '"rationale":null', 1) == out


def test_run_settings_are_projected_to_numbers_and_names_not_copied(release):
    import json

    assert not (COMMITTED / "run.json").exists()  # the release's file itself is never committed
    rows = [json.loads(ln) for ln in (COMMITTED / "run-settings.jsonl").read_text().splitlines()]
    source = json.loads((release / "run.json").read_text())["runs"]
    assert len(rows) == len(source)
    for row, run in zip(rows, source):
        assert all(isinstance(v, (int, float)) or k in ("model", "judges") for k, v in row.items())
        assert all(run[k] == v for k, v in row.items())


def test_projection_regenerates_byte_identically(release, tmp_path):
    out = project_release(release, tmp_path / "release")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([*PROJECTED_FILES, MANIFEST])
    for name in names:
        assert (out / name).read_bytes() == (COMMITTED / name).read_bytes(), name
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left
    # and a second run over the first changes nothing
    project_release(release, out)
    assert all((out / n).read_bytes() == (COMMITTED / n).read_bytes() for n in names)


def test_committed_projection_verifies_against_its_own_manifest(capsys):
    listed = read_manifest(COMMITTED)
    assert listed is not None and sorted(listed) == sorted(PROJECTED_FILES)
    verify_manifest(COMMITTED)
    assert main(["manifest", "--data", str(COMMITTED), "--check"]) == 0
    assert "all listed files verify" in capsys.readouterr().out


def test_rewriting_the_manifest_keeps_the_files_it_already_listed(tmp_path):
    d = tmp_path / "release"
    shutil.copytree(COMMITTED, d)
    before = (d / MANIFEST).read_bytes()
    write_manifest(d)  # what `trajectory-judge manifest --data data/release` does
    assert (d / MANIFEST).read_bytes() == before


def test_projected_verdicts_load_with_a_missing_rationale():
    verdicts = load_verdicts(COMMITTED / "verdicts.jsonl")
    assert len(verdicts) == 2000 and all(v.rationale is None for v in verdicts)


def test_readme_names_the_pinned_source_and_licence_holder():
    readme = (COMMITTED / "README.md").read_text(encoding="utf-8")
    assert f"{RELEASE_URL}/verdicts.jsonl" in readme and RELEASE_COMMIT in readme
    assert RELEASE_SHA256["verdicts.jsonl"] in readme
    assert "trajectory-judge fetch-release --project data/release" in readme
    licence = (COMMITTED / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith(f"MIT License\n\n{COPYRIGHT}\n")
    assert "Permission is hereby granted, free of charge" in licence


# --- errors --------------------------------------------------------------------------------------
def test_a_source_that_does_not_verify_is_refused_and_nothing_is_written(release, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    data = bytearray((bad / "verdicts.jsonl").read_bytes())
    data[100] ^= 1
    (bad / "verdicts.jsonl").write_bytes(bytes(data))
    with pytest.raises(ReleaseError, match=r"verdicts\.jsonl: sha256 .* is not the pinned"):
        project_release(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_missing_source_is_refused(tmp_path):
    with pytest.raises(ReleaseError, match=r"verdicts\.jsonl: not found; run `trajectory-judge fetch-release`"):
        project_release(tmp_path, tmp_path / "out")


def test_a_malformed_verdict_line_names_file_and_line():
    with pytest.raises(DataError, match=r"v\.jsonl:2: not valid JSON"):
        project_verdicts("\n{oops\n", "v.jsonl")  # blank lines count
    with pytest.raises(DataError, match=r"v\.jsonl:3: invalid Verdict: confidence: Field required"):
        project_verdict_line(
            '{"trajectory_id":"t","judge_id":"j","faulty":true,"rationale":"x","latency_s":1,'
            '"prompt_tokens":0,"completion_tokens":0}',
            "v.jsonl",
            3,
        )


def test_fetch_release_project_onto_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    target = tmp_path / "a-file"
    target.write_text("x")
    assert (
        main(
            [
                "fetch-release",
                "--project",
                str(target),
                "--dir",
                str(tmp_path / "cache"),
                "--base-url",
                "http://127.0.0.1:9/",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("trajectory-judge fetch-release: error: --project ") and "is not a directory" in err
    assert target.read_text() == "x"


def test_fetch_release_project_below_a_file_is_one_line_and_exit_2(release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TJ_RELEASE_DIR", str(release))
    (tmp_path / "a-file").write_text("x")
    assert main(["fetch-release", "--project", str(tmp_path / "a-file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("trajectory-judge fetch-release: error: ")


def test_fetch_release_project_writes_the_projection(release, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TJ_RELEASE_DIR", str(release))
    out = tmp_path / "release"
    assert main(["fetch-release", "--project", str(out)]) == 0
    assert "projection written to" in capsys.readouterr().out
    assert (out / "verdicts.jsonl").read_bytes() == (COMMITTED / "verdicts.jsonl").read_bytes()


# --- our trajectories in place of the release's -------------------------------------------------
@pytest.fixture(scope="module")
def both(release):
    """(ours, the release's) trajectories, ours put in the release's order."""
    theirs = load_trajectories(release / "trajectories.jsonl")
    ours = {t.trajectory_id: t for t in load_trajectories(OURS)}
    assert set(ours) == {t.trajectory_id for t in theirs}
    return [ours[t.trajectory_id] for t in theirs], theirs


def test_release_labels_match_our_dataset_by_id(both):
    ours, theirs = both
    assert len(ours) == len(theirs) == 400
    fields = ("faulty", "failure_step", "failure_type", "outcome_correct")
    same = 0
    for o, t in zip(ours, theirs):
        assert o.instance_id == t.instance_id, o.trajectory_id
        for f in fields:
            assert getattr(o.label, f) == getattr(t.label, f), (o.trajectory_id, f)
        same += 1
    assert same == 400


def _classify(trajectories) -> dict[tuple[str, str], str]:
    """(fault id, view) -> reaches_input / hidden_from_input / no_clean_parent, as paired.py decides it."""
    parents = clean_parents(trajectories)
    out = {}
    for t in trajectories:
        if not t.label.faulty:
            continue
        parent = parents.get(t.instance_id)
        for view in VIEWS:
            if parent is None:
                out[(t.trajectory_id, view)] = "no_clean_parent"
            else:
                out[(t.trajectory_id, view)] = (
                    "reaches_input" if reaches_input(f"{view}:any-model", t, parent) else "hidden_from_input"
                )
    return out


def test_paired_classification_is_the_same_from_either_trajectories(both):
    ours, theirs = _classify(both[0]), _classify(both[1])
    assert len(ours) == len(theirs) == 300 * len(VIEWS)
    assert ours == theirs
    # what it classifies (measured on both): 49 faults have no clean run of their instance in the
    # 400; of the 251 that do, every one reaches the step and reply views, 100 the outcome view
    counts = {
        (v, c): sum(1 for (_, vv), cc in ours.items() if (vv, cc) == (v, c))
        for v in VIEWS
        for c in ("reaches_input", "hidden_from_input", "no_clean_parent")
    }
    assert counts[("step", "reaches_input")] == counts[("reply", "reaches_input")] == 251
    assert counts[("outcome", "reaches_input")] == 100 and counts[("outcome", "hidden_from_input")] == 151


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a, b, equal_nan=True)


def test_every_report_number_is_the_same_from_our_trajectories_or_the_releases(release, both):
    ours, theirs = both
    a = build_report(ours, load_verdicts(COMMITTED / "verdicts.jsonl"), resamples=10_000, seed=7)
    b = build_report(theirs, load_verdicts(release / "verdicts.jsonl"), resamples=10_000, seed=7)
    assert a.to_json() == b.to_json()  # metrics, intervals, paired discrimination, deltas, gaps
    assert a.bootstrap.names == b.bootstrap.names
    for field in ("estimate", "low", "high"):
        assert _same_array(getattr(a.bootstrap, field), getattr(b.bootstrap, field)), field
    for j in a.judges:
        ja, jb = a.judges[j], b.judges[j]
        assert (ja.intervals, ja.per_type_intervals) == (jb.intervals, jb.per_type_intervals)
        assert (ja.confusion, ja.calibration_bins) == (jb.confusion, jb.calibration_bins)
        # invented sentences are worded differently in the two texts; their counts are not
        assert sorted(ja.claim_detection.values()) == sorted(jb.claim_detection.values())


def test_report_point_estimates_do_not_depend_on_the_order_of_trajectories(both):
    """In the file's own order the metrics agree too; only the resampled intervals would move."""
    ours, _ = both
    native = load_trajectories(OURS)
    verdicts = load_verdicts(COMMITTED / "verdicts.jsonl")
    a = build_report(ours, verdicts, resamples=50, seed=7)
    b = build_report(native, verdicts, resamples=50, seed=7)
    for j in a.judges:
        for m, v in a.judges[j].metrics.items():
            w = b.judges[j].metrics[m]
            assert (v is None and w is None) or math.isclose(v, w, rel_tol=0, abs_tol=1e-12), (j, m)
