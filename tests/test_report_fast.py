"""`trajectory-judge report` stays light: no scipy, pandas or HTTP client on its path, with every interval
and every printed byte as before (the exact bounds in closed form, the terminal tables without pandas)."""

import json
import math
import os
import random
import subprocess
import sys

import pytest
from analysis_synth import design, random_verdicts, verdict

from trajectory_judge.analysis.core.bootstrap import clopper_pearson
from trajectory_judge.analysis.core.formatting import TextTable
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.cli import report as R
from trajectory_judge.models import dumps

HEAVY = ("scipy", "pandas", "matplotlib", "httpx")
"""Modules the report on a folder without ensemble members or run records must not import."""


def _folder(d):
    trajs = design(4)
    rng = random.Random(5)
    sure = [
        verdict(t.trajectory_id, "step:sure", t.label.faulty or rng.random() < 0.5, confidence=rng.choice([0.6, 0.9]))
        for t in trajs
    ]  # flags every fault: recall 1, an exact (Clopper–Pearson) interval
    vs = [*random_verdicts(trajs, "outcome:m1", 1), *random_verdicts(trajs, "step:m1", 2), *sure]
    (d / "trajectories.jsonl").write_text("".join(dumps(t) + "\n" for t in trajs))
    (d / "verdicts.jsonl").write_text("".join(dumps(v) + "\n" for v in vs))
    return d


def _modules_after_report(data) -> tuple[list[str], str]:
    code = (
        "import contextlib, io, json, sys\nfrom trajectory_judge.cli import main\nout = io.StringIO()\n"
        f"with contextlib.redirect_stdout(out): rc = main(['report', '--data', {str(data)!r}])\n"
        f"print(json.dumps([rc, sorted(m for m in {HEAVY!r} if m in sys.modules), out.getvalue()]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, heavy, out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rc == 0
    return heavy, out


def test_report_imports_no_scipy_pandas_or_http_client_and_still_prints_exact_intervals(tmp_path):
    heavy, out = _modules_after_report(_folder(tmp_path))
    assert heavy == []
    assert "†" in out.split("Baselines")[0]  # a Clopper–Pearson interval was computed, without scipy


def test_report_on_the_releases_verdicts_imports_no_scipy_pandas_or_http_client(release):
    heavy, out = _modules_after_report(release)
    assert heavy == [] and "†" in out


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_clopper_pearson_at_no_or_every_success_equals_scipy_bit_for_bit(level):
    # the report's only exact intervals: 0 of n and n of n, in closed form; the reference is scipy's quantile
    from scipy import stats
    from scipy.special import betaincinv

    alpha = 1 - level
    for n in [*range(1, 1201), 1500, 2000, 4000, 10_000]:
        for trials in (n, float(n)):
            assert clopper_pearson(0, trials, level) == (0.0, float(betaincinv(1, n, 1 - alpha / 2)))
            assert clopper_pearson(trials, trials, level) == (float(betaincinv(n, 1, alpha / 2)), 1.0)
    for n in (1, 7, 100, 400):
        assert clopper_pearson(0, n, level)[1] == stats.beta.ppf(1 - alpha / 2, 1, n)
        assert clopper_pearson(n, n, level)[0] == stats.beta.ppf(alpha / 2, n, 1)


def _tables():
    nan = math.nan
    yield TextTable.from_rows(
        {
            "programmatic": {"n": 400, "F1": "0.800*", "silent recall": "0.429*"},
            "step:qwen2.5:14b": {"n": 23, "F1": "0.923 (0.91–0.93)", "silent recall": "–"},
        },
        "judge",
    )
    yield TextTable.from_rows(
        {"a": {"n": -3, "x": 0.5, "yy": nan}, "bbbbbbbbbbbb": {"n": 12345, "x": nan, "yy": 1.0}}, "long index name here"
    )
    yield TextTable.from_rows({" lead": {"v": "x"}, "  two": {"v": "a longer cell"}}, "b − a")
    yield TextTable.from_rows({"r": {"a column with a long header": "1", "n": 1}}, None)
    yield TextTable.from_rows({"r1": {"f": 0.125}, "r2": {"f": 10.0}, "r3": {"f": None}}, "i")


@pytest.mark.parametrize("table", list(_tables()))
def test_text_table_prints_exactly_as_pandas_to_string(table):
    fmt = lambda v: f"{v:.2f}"
    assert table.to_string(float_format=fmt, na_rep="–") == table.to_frame().to_string(float_format=fmt, na_rep="–")


def test_text_table_refuses_a_column_that_mixes_text_and_numbers():
    with pytest.raises(ValueError, match="column 'c' mixes"):
        TextTable.from_rows({"a": {"c": 1}, "b": {"c": "x"}}, "i").to_string()


# the terminal tables as they were made with pandas, before TextTable: the reference for byte identity
def _old_terminal_table(rep, metrics):
    import pandas as pd

    rows = {j: {"n": jr.n, **{R.HEADERS[m]: R.metric_cell(rep, j, m) for m in metrics}} for j, jr in rep.judges.items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("judge")


def _old_baselines_table(rep):
    import pandas as pd

    rows = {
        f"baseline: {b.name}": {"n": b.n, **{R.HEADERS[m]: R.format_number(b.metrics[m]) for m in R.BASELINE_METRICS}}
        for b in rep.baselines
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("baseline")


def _old_deltas_table(rep, metrics=R.DELTA_COLUMNS):
    import pandas as pd

    cells = {}
    for d in rep.deltas:
        if d.metric not in metrics:
            continue
        row = cells.setdefault(R.pair_label(d.a, d.b, d.kind), {"n": d.n})
        mark = R.EXCLUDES_ZERO if d.low > 0 or d.high < 0 else ""
        row[R.HEADERS[d.metric]] = R.format_interval(d.value, d.low, d.high, "bootstrap") + mark
    frame = pd.DataFrame.from_dict(cells, orient="index")
    return frame.reindex(columns=["n", *(R.HEADERS[m] for m in metrics)]).fillna("–").rename_axis("b − a")


def _old_per_type_terminal(rep):
    frame = rep.per_type_table().T.rename(columns=R.TYPE_HEADERS).rename_axis(index="judge", columns=None)
    frame.insert(0, "n", [rep.judges[j].n for j in frame.index])
    return frame


def test_terminal_tables_print_byte_for_byte_as_their_pandas_versions_did():
    trajs = design(6)
    vs = [
        *random_verdicts(trajs, "outcome:m1", 1),
        *random_verdicts(trajs, "step:m1", 2),
        *random_verdicts(trajs, "reply:m1", 3),
        *random_verdicts(trajs, "step:m2", 4),
        *random_verdicts(trajs[::2], "outcome:m2", 5),
    ]
    rep = build_report(trajs, vs, resamples=200, seed=3)
    for metrics in R.TERMINAL_AXES.values():
        assert R.terminal_table(rep, metrics).to_string() == _old_terminal_table(rep, metrics).to_string()
    whole = build_report(trajs, [v for v in vs if v.judge_id != "outcome:m2"], resamples=200, seed=3)
    assert R.baselines_table(whole).to_string() == _old_baselines_table(whole).to_string()
    assert "flag everything on outcome:m2's" in R.baselines_table(rep).to_string()  # it judged half: its own anchor
    assert R.deltas_table(rep).to_string() == _old_deltas_table(rep).to_string()
    assert (
        R.deltas_table(rep, ("f1", "step_exact")).to_string()
        == _old_deltas_table(rep, ("f1", "step_exact")).to_string()
    )
    fmt = lambda v: f"{v:.2f}"
    assert R.per_type_terminal(rep).to_string(float_format=fmt, na_rep="–") == _old_per_type_terminal(rep).to_string(
        float_format=fmt, na_rep="–"
    )


def test_column_sums_are_exact_in_integer_columns_and_the_exact_sum_rounded_in_float_columns_at_any_block():
    """:class:`ColumnSums` is ``w @ data``: to the last bit on integer-valued columns, and on float columns (confidence,
    Brier, latency) within one rounding of the exact sum (checked against sums of Fractions), with the same bits
    whichever replicates are summed together and repeated columns getting identical bits."""
    from fractions import Fraction

    import numpy as np
    from loop_reference import count_weights

    from trajectory_judge.analysis.core.bootstrap import ColumnSums, stratified_indices
    from trajectory_judge.analysis.core.plan import make_plan

    trajs = design(6)
    vs = [
        *random_verdicts(trajs, "outcome:m1", 1),
        *random_verdicts(trajs, "step:m1", 2),
        *random_verdicts(trajs[::2], "step:m2", 3),
    ]
    plan = make_plan(trajs, vs)
    sums = ColumnSums.of(plan.data)
    integral = np.equal(plan.data, np.round(plan.data)).all(axis=0)
    assert integral.any() and not integral.all()  # counts and float columns (confidence, latency) both present
    idx = stratified_indices(plan.cells, resamples=3000, rng=np.random.default_rng(1))
    w = count_weights(idx, len(trajs))
    got = sums(w)
    assert np.array_equal(got[:, integral], (w @ plan.data)[:, integral])  # integer sums are exact in any order
    for part in (slice(0, 1), slice(1, 1000), slice(1000, 3000), slice(2999, 3000)):  # any block: the same bits
        assert np.array_equal(sums(w[part]), got[part])
    first = {}
    for j, d in enumerate(sums.inverse):  # a repeated column is one sum spread back: identical bits
        assert np.array_equal(got[:, j], got[:, first.setdefault(d, j)])
    for r in (0, 999, 2999):  # exact arithmetic on a few replicates: the float sums round the exact ones
        for j in np.flatnonzero(~integral):
            exact = sum(Fraction(int(a)) * Fraction(float(b)) for a, b in zip(w[r], plan.data[:, j]))
            assert abs(Fraction(float(got[r, j])) - exact) <= Fraction(np.spacing(abs(got[r, j])))


def test_report_loads_numpy_with_one_blas_thread_and_leaves_the_environment_unchanged(tmp_path):
    code = (
        "import contextlib, ctypes, io, os, sys\nfrom trajectory_judge.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): main(['report', '--data', {str(_folder(tmp_path))!r}, '--resamples', '50'])\n"
        "libs = [line.split()[-1] for line in open('/proc/self/maps') if 'openblas' in line and '.so' in line]\n"
        "get = getattr(ctypes.CDLL(libs[0]), 'scipy_openblas_get_num_threads64_', None) if libs else None\n"
        "print(get() if get else 'no OpenBLAS', 'OPENBLAS_NUM_THREADS' in os.environ)"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    if out[:2] == ["no", "OpenBLAS"]:
        pytest.skip("numpy here is not linked with scipy's OpenBLAS")
    assert out == ["1", "False"]
