import pytest

from trajectory_judge.testbed.checker import check
from trajectory_judge.testbed.env import generate_instances
from trajectory_judge.testbed.oracle import solve

INSTANCES = generate_instances(600, seed=7)


@pytest.mark.parametrize("inst", INSTANCES, ids=[i.instance_id for i in INSTANCES])
def test_oracle_violates_no_rule_and_reaches_expected_outcome(inst):
    traj = solve(inst)
    assert check(traj) == []
    assert traj.label.outcome_correct and not traj.label.faulty
    assert len(traj.steps) == 6 and traj.steps[-1].call.tool == "reply"


def test_oracle_reads_the_policy_for_the_sku_the_lookup_returned():
    traj = solve(INSTANCES[0])
    assert traj.steps[2].call.args["sku"] == traj.steps[1].observation.data["sku"]
