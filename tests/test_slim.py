"""The report's slim records: streamed like the full loaders, smaller, and the same report."""

import json
import sys
import tracemalloc

import pytest
from analysis_synth import design, random_verdicts

from trajectory_judge.analysis.core.loading import load_data, load_slim_data
from trajectory_judge.analysis.core.paired import reaches_input
from trajectory_judge.analysis.core.report import build_report
from trajectory_judge.analysis.core.slim import (
    Shared,
    TrajectoryRecord,
    VerdictRecord,
    view_key,
)
from trajectory_judge.fileio import READ_EVENT
from trajectory_judge.models import DataError, dumps, jsonl_lines, read_text
from trajectory_judge.testbed.dataset import build_dataset


def slim_trajectories(trajs):
    shared = Shared()
    return [TrajectoryRecord.of(t, shared) for t in trajs]


def _write(d, trajs, verdicts):
    (d / "trajectories.jsonl").write_text("".join(dumps(t) + "\n" for t in trajs))
    (d / "verdicts.jsonl").write_text("".join(dumps(v) + "\n" for v in verdicts))
    return d


@pytest.fixture(scope="module")
def testbed():
    trajs = build_dataset(200, 7)
    vs = [*random_verdicts(trajs, "outcome:m1", 1), *random_verdicts(trajs, "step:m1", 2)]
    return trajs, vs


def test_slim_report_json_equals_the_full_report_byte_for_byte(tmp_path, testbed):
    trajs, vs = testbed
    _write(tmp_path, trajs, vs)
    full, slim = load_data(tmp_path), load_slim_data(tmp_path)
    assert all(isinstance(t, TrajectoryRecord) for t in slim.trajectories)
    assert all(isinstance(v, VerdictRecord) for v in slim.verdicts)
    a = build_report(full.trajectories, full.verdicts, resamples=300, seed=3).to_json()
    b = build_report(slim.trajectories, slim.verdicts, resamples=300, seed=3).to_json()
    assert a == b
    assert json.loads(a)["judges"]["step:m1"]["paired_discrimination"]["reaches_input"]["n"] > 0


def test_view_digests_tell_a_fault_from_its_parent_as_the_renderings_do(testbed):
    trajs, _ = testbed
    parents = {t.instance_id: t for t in trajs if not t.label.faulty}
    faults = [t for t in trajs if t.label.faulty and t.instance_id in parents]
    records = {r.trajectory_id: r for r in slim_trajectories(trajs)}
    outcomes = []
    for f in faults:
        p = parents[f.instance_id]
        for judge in ("outcome:m", "step:m"):
            full = reaches_input(judge, f, p)
            assert reaches_input(judge, records[f.trajectory_id], records[p.trajectory_id]) == full
            outcomes.append(full)
        assert view_key("step", records[f.trajectory_id]) == view_key("step", f)
    assert True in outcomes and False in outcomes  # both kinds occur, so the equality above can fail


def test_a_slim_trajectory_is_a_tenth_of_the_full_one_or_less(testbed):
    trajs, _ = testbed
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    copies = [t.model_copy(deep=True) for t in trajs]
    full = tracemalloc.get_traced_memory()[0] - base
    records = slim_trajectories(copies)
    del copies
    slim = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(records) == 200
    assert slim * 10 <= full, (slim, full)


def test_lines_are_numbered_as_read_text_numbers_them_and_the_file_is_announced_as_read(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n{"b": 2}\r{"c": 3}\n  \n{"d": 4}')
    heard = []
    sys.addaudithook(
        lambda event, args: heard.append(args) if event == READ_EVENT and args[0] == path.resolve() else None
    )
    want = [(i, ln) for i, ln in enumerate(read_text(path).split("\n"), 1) if ln.strip()]
    got = list(jsonl_lines(path))
    assert got == want and [n for n, _ in got] == [1, 3, 4, 6]
    assert len(heard) == 2 and heard[0] == heard[1]  # read whole or streamed: the same hash and size


def test_bad_lines_fail_with_the_messages_of_the_full_loader(tmp_path, testbed):
    trajs, vs = testbed
    cases = {
        "json": lambda lines: lines.__setitem__(3, "{not json"),
        "unknown": lambda lines: lines.__setitem__(3, lines[3].replace(vs[3].trajectory_id, "nobody", 1)),
        "step": lambda lines: lines.__setitem__(
            3, json.dumps({**json.loads(lines[3]), "faulty": True, "failure_step": 999, "failure_type": None})
        ),
        "duplicate": lambda lines: lines.__setitem__(4, lines[3]),
    }
    for name, spoil in cases.items():
        d = tmp_path / name
        d.mkdir()
        _write(d, trajs, vs)
        lines = (d / "verdicts.jsonl").read_text().split("\n")
        spoil(lines)
        (d / "verdicts.jsonl").write_text("\n".join(lines))
        with pytest.raises(DataError) as full:
            load_data(d)
        with pytest.raises(DataError) as slim:
            load_slim_data(d)
        assert str(slim.value) == str(full.value), name
        assert "verdicts.jsonl:" in str(slim.value)


def test_an_unlabelled_trajectory_is_named_by_file_and_line(tmp_path):
    trajs = design(2)
    vs = random_verdicts(trajs, "step:m", 1)
    trajs[1] = trajs[1].model_copy(update={"label": None})
    _write(tmp_path, trajs, vs)
    with pytest.raises(DataError, match=r"trajectories.jsonl:2: .* has no label"):
        load_slim_data(tmp_path)


def test_a_line_is_the_same_record_through_the_json_parser_as_through_json_loads(testbed, tmp_path):
    from trajectory_judge.models import Trajectory, Verdict, parse_line

    trajs, vs = testbed
    for record, model in [*((t, Trajectory) for t in trajs[:50]), *((v, Verdict) for v in vs[:50])]:
        line = dumps(record)
        assert parse_line(tmp_path, 1, line, model) == model.model_validate(json.loads(line)) == record
    nan = json.dumps({**json.loads(dumps(vs[0])), "confidence": float("nan")})  # JSON's NaN: json.loads reads it
    with pytest.raises(DataError, match=r":7: invalid Verdict: confidence: .*\(got nan\)"):
        parse_line(tmp_path, 7, nan, Verdict)
