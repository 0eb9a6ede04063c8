"""The counterfactual set: the same fault planted at every step of the same instances."""

from __future__ import annotations

import pytest

from trajectory_judge.cli import main
from trajectory_judge.models import dumps
from trajectory_judge.testbed.checker import check
from trajectory_judge.testbed.counterfactual import FAULT, build_counterfactual, plant, positions
from trajectory_judge.testbed.env import generate_instances
from trajectory_judge.testbed.oracle import solve


@pytest.fixture(scope="module")
def instances():
    return generate_instances(12, 7)


def test_mutants_of_one_instance_differ_only_in_where_the_planted_call_sits(instances):
    for inst in instances:
        clean = [(s.call.tool, s.call.args) for s in solve(inst).steps]
        planted = set()
        for k in positions(inst):
            steps = plant(inst, k).steps
            planted.add((steps[k].call.tool, str(steps[k].call.args), str(steps[k].observation)))
            assert [(s.call.tool, s.call.args) for i, s in enumerate(steps) if i != k] == clean
        assert len(planted) == 1  # the same call, with the same (failed) observation, at every step


def test_planted_fault_is_silent_labelled_at_its_step_and_seven_steps_long(instances):
    for inst in instances:
        for k in positions(inst):
            t = plant(inst, k)
            assert t.label.faulty and t.label.failure_type == FAULT and t.label.failure_step == k
            assert t.label.outcome_correct and len(t.steps) == 7
            assert not t.steps[k].observation.ok


def test_rule_engine_finds_the_ungrounded_argument_at_every_position(instances):
    for inst in instances:
        for k in positions(inst):
            first = check(plant(inst, k))[0]
            assert (first.step, first.rule) == (k, "R1_ungrounded_argument")


def test_positions_cover_every_call_but_the_reply_stays_last(instances):
    assert all(list(positions(inst)) == list(range(6)) for inst in instances)
    with pytest.raises(ValueError, match="position must be a step from 0 to 5"):
        plant(instances[0], 6)


def test_committed_counterfactual_set_is_what_the_command_builds(tmp_path):
    from tests.conftest import ROOT

    assert main(["build-counterfactual", "--instances", "60", "--seed", "7", "--out", str(tmp_path / "cf")]) == 0
    built = (tmp_path / "cf" / "trajectories.jsonl").read_bytes()
    assert built == (ROOT / "data" / "counterfactual" / "trajectories.jsonl").read_bytes()
    assert built.decode().count("\n") == 60 * 7
    assert "".join(dumps(t) + "\n" for t in build_counterfactual(60, 7)).encode() == built


def test_build_counterfactual_refuses_zero_instances_in_one_line(tmp_path, capsys):
    assert main(["build-counterfactual", "--instances", "0", "--out", str(tmp_path / "cf")]) == 2
    err = capsys.readouterr().err
    assert "--instances" in err and len(err.strip().splitlines()) == 1
