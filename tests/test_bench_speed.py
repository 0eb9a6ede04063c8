"""The speed benchmark's arithmetic and arguments (tests/benchmarks/bench_speed.py); its figures are not tested."""

from __future__ import annotations

from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent / "benchmarks"


@pytest.fixture()
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_speed

    return bench_speed


def test_bench_speed_measures_every_figure_five_times_by_default(bench, monkeypatch, tmp_path):
    monkeypatch.setenv("TJ_RELEASE_DIR", str(tmp_path))
    args = bench.parse_args([])
    assert (args.figures, args.runs, args.before, args.reference_cmd) == (
        ["report", "build", "rebuild", "tests"],
        5,
        None,
        None,
    )
    assert args.release_dir == tmp_path


def test_bench_speed_measures_only_the_figures_named_in_its_own_order(bench):
    args = bench.parse_args(["tests", "report", "--runs", "3", "--before", "8e51007", "--reference-cmd", "true"])
    assert (args.figures, args.runs, args.before, args.reference_cmd) == (["report", "tests"], 3, "8e51007", "true")


@pytest.mark.parametrize("argv", [["speed"], ["--runs", "0"], ["--runs", "x"]])
def test_bench_speed_refuses_an_unknown_figure_or_a_run_count_below_one(bench, argv, capsys):
    with pytest.raises(SystemExit) as err:
        bench.parse_args(argv)
    assert err.value.code == 2


def test_summary_is_the_median_with_min_and_max(bench):
    s = bench.Summary.of([3.0, 1.0, 2.0, 10.0, 4.0])
    assert (s.median, s.low, s.high) == (3.0, 1.0, 10.0)
    assert bench.Summary.of([1.0, 2.0]).median == 1.5
    assert str(bench.Summary.of([0.5])) == "   0.50 s (0.50–0.50)"
    with pytest.raises(ValueError):
        bench.Summary.of([])


def test_runs_alternate_so_each_variant_goes_first_in_turn(bench):
    assert [bench.round_order(2, r) for r in range(4)] == [[0, 1], [1, 0], [0, 1], [1, 0]]
    assert [bench.round_order(3, r)[0] for r in range(3)] == [0, 1, 2]


def test_the_ratio_is_the_median_of_the_paired_rounds(bench):
    ours = bench.Variant("ours", [], Path("."), {}, walls=[1.0, 2.0, 9.0])
    before = bench.Variant("before", [], Path("."), {}, walls=[2.0, 2.0, 3.0])
    assert bench.paired_ratio(ours, before) == 1.0
