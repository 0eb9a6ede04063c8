import hashlib
from collections import Counter
from pathlib import Path

from trajectory_judge.cli import main
from trajectory_judge.models import DESIGN_CELLS, design_cell, stratum
from trajectory_judge.testbed.dataset import build_dataset

ROOT = Path(__file__).resolve().parents[1]


def test_composition_is_that_of_appendix_a(dataset):
    cells = Counter(design_cell(t.label) for t in dataset)
    assert cells == {
        "clean": 100,
        "wrong_tool/silent": 50,
        "hallucinated_argument/silent": 50,
        "unsupported_claim/silent": 50,
        "skipped_precondition/silent": 25,
        "skipped_precondition/loud": 25,
        "ignored_observation/loud": 50,
        "premature_stop/loud": 50,
    }
    assert Counter(stratum(t.label) for t in dataset) == {"clean": 100, "silent": 175, "loud": 125}


def test_any_prefix_is_a_stratified_sample(dataset):
    n = len(dataset)
    totals = Counter(design_cell(t.label) for t in dataset)
    seen: Counter[str] = Counter()
    for k, t in enumerate(dataset, start=1):
        seen[design_cell(t.label)] += 1
        for cell in DESIGN_CELLS:
            assert abs(seen[cell] - k * totals[cell] / n) <= 1, (k, cell)


def test_rebuild_is_byte_identical_to_the_committed_file(tmp_path):
    assert main(["build-dataset", "--n", "400", "--seed", "7", "--out", str(tmp_path)]) == 0
    fresh = (tmp_path / "trajectories.jsonl").read_bytes()
    committed = (ROOT / "data" / "trajectories.jsonl").read_bytes()
    assert hashlib.sha256(fresh).hexdigest() == hashlib.sha256(committed).hexdigest()


def test_other_seeds_and_sizes_build(tmp_path):
    a, b = build_dataset(80, 1), build_dataset(80, 2)
    assert len(a) == 80 and a != b
