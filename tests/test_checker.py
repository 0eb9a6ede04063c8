import json

import pytest

from trajectory_judge.judges.programmatic import ProgrammaticJudge
from trajectory_judge.models import FAILURE_TYPES, load_trajectories
from trajectory_judge.testbed.checker import check
from trajectory_judge.testbed.env import generate_instances
from trajectory_judge.testbed.inject import inject
from trajectory_judge.testbed.oracle import solve

# (flagged, typed) coverage per type; the two zeros are structural (paper §3, Appendix B)
COVERAGE = {
    "wrong_tool": (0.0, 0.0),
    "hallucinated_argument": (1.0, 1.0),
    "skipped_precondition": (1.0, 1.0),
    "ignored_observation": (1.0, 1.0),
    "premature_stop": (1.0, 1.0),
    "unsupported_claim": (0.0, 0.0),
}


@pytest.mark.parametrize("ftype", FAILURE_TYPES)
def test_checker_coverage_is_exactly_the_design(dataset, ftype):
    judge = ProgrammaticJudge()
    verdicts = [judge.judge(t) for t in dataset if t.label.failure_type == ftype]
    flagged = sum(v.faulty for v in verdicts) / len(verdicts)
    typed = sum(v.failure_type == ftype for v in verdicts) / len(verdicts)
    assert (flagged, typed) == COVERAGE[ftype]


def test_checker_is_blind_to_wrong_tool_and_unsupported_claim():
    inst = generate_instances(1)[0]
    assert check(inject(inst, "wrong_tool")) == [] and check(inject(inst, "unsupported_claim")) == []


def test_checker_localises_every_flagged_mutant_exactly(dataset):
    judge = ProgrammaticJudge()
    for t in dataset:
        v = judge.judge(t)
        if v.faulty:
            assert v.failure_step == t.label.failure_step


def test_prose_never_grounds_an_argument():
    # an order id that appears only in the reply text does not ground a later lookup
    traj = solve(generate_instances(1)[0])
    steps = [s.model_copy(deep=True) for s in traj.steps]
    steps[5].call.args["text"] = "see ORD-77777"
    extra = steps[1].model_copy(deep=True)
    extra.index, extra.call.args = 6, {"order_id": "ORD-77777"}
    t2 = traj.model_copy(update={"steps": steps + [extra]})
    assert any(v.rule == "R1_ungrounded_argument" and v.step == 6 for v in check(t2))


def test_failed_calls_ground_nothing():
    traj = solve(generate_instances(1)[0])
    steps = [s.model_copy(deep=True) for s in traj.steps]
    steps[1].observation.ok = False  # the lookup failed: its data must not ground the policy SKU
    t2 = traj.model_copy(update={"steps": steps})
    assert check(t2)[0].rule == "R1_ungrounded_argument" and check(t2)[0].step == 2


def test_violations_are_ordered_by_step_then_priority():
    t = inject(generate_instances(2)[1], "premature_stop")
    v = check(t)
    assert [x.rule for x in v] == ["R7_reply_placement", "R8_no_terminal_action"]
    assert v == sorted(v)


def test_rules_judge_confidences_are_the_two_constants(dataset):
    judge = ProgrammaticJudge()
    assert {judge.judge(t).confidence for t in dataset} == {0.95, 0.60}


def test_checker_reproduces_published_programmatic_verdicts(release):
    trajs = load_trajectories(release / "trajectories.jsonl")
    assert len(trajs) == 400
    published = {}
    with open(release / "verdicts.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["judge_id"] == "programmatic":
                published[r["trajectory_id"]] = (r["faulty"], r["failure_type"], r["failure_step"])
    judge = ProgrammaticJudge()
    ours = {t.trajectory_id: judge.judge(t) for t in trajs}
    assert {k: (v.faulty, v.failure_type, v.failure_step) for k, v in ours.items()} == published
