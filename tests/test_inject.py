import pytest

from trajectory_judge.models import FAILURE_TYPES
from trajectory_judge.testbed.env import SupportDesk, generate_instances
from trajectory_judge.testbed.inject import (
    INVENTED_PROMISES,
    NotHostable,
    can_host,
    inject,
)
from trajectory_judge.testbed.oracle import solve

INSTANCES = generate_instances(120, seed=7)
PAIRS = [(i, t) for i in INSTANCES for t in FAILURE_TYPES if can_host(i, t)]


@pytest.mark.parametrize("inst,ftype", PAIRS, ids=[f"{i.instance_id}-{t}" for i, t in PAIRS])
def test_every_mutant_differs_from_its_parent_and_replays_consistently(inst, ftype):
    mutant, parent = inject(inst, ftype), solve(inst)
    assert mutant.steps != parent.steps or mutant.final_answer != parent.final_answer
    env = SupportDesk(inst)  # replayed observations are what the calls return on a fresh world
    for s in mutant.steps:
        assert env.call(s.call.tool, s.call.args) == s.observation
    assert mutant.label.faulty and mutant.label.failure_type == ftype


@pytest.mark.parametrize("ftype", ["wrong_tool", "hallucinated_argument", "unsupported_claim"])
def test_always_silent_types_leave_the_outcome_correct(ftype):
    assert all(inject(i, ftype).label.outcome_correct for i in INSTANCES)


@pytest.mark.parametrize("ftype", ["ignored_observation", "premature_stop"])
def test_always_loud_types_break_the_outcome(ftype):
    hosts = [i for i in INSTANCES if can_host(i, ftype)]
    assert hosts and not any(inject(i, ftype).label.outcome_correct for i in hosts)


def test_skipped_precondition_is_silent_exactly_at_full_price():
    hosts = [i for i in INSTANCES if can_host(i, "skipped_precondition")]
    assert {i.stratum for i in hosts} == {"happy", "restocking"}
    for i in hosts:
        assert inject(i, "skipped_precondition").label.outcome_correct == (i.policy.restocking_fee_pct == 0)


def test_hallucinated_sku_genuinely_fails_on_replay():
    t = inject(INSTANCES[0], "hallucinated_argument")
    assert not t.steps[2].observation.ok
    assert t.steps[2].call.args["sku"].split("-")[1] in ("BUNDLE", "WARRANTY", "GIFT")


def test_unsupported_claim_appends_one_invented_promise_to_reply_and_answer():
    t, p = inject(INSTANCES[0], "unsupported_claim"), solve(INSTANCES[0])
    added = t.final_answer[len(p.final_answer) :].strip()
    assert added in INVENTED_PROMISES and t.steps[5].call.args["text"] == t.final_answer


def test_injection_is_string_seeded_and_deterministic():
    assert inject(INSTANCES[3], "hallucinated_argument", 7) == inject(INSTANCES[3], "hallucinated_argument", 7)
    skus = {inject(INSTANCES[3], "hallucinated_argument", s).steps[2].call.args["sku"] for s in range(20)}
    assert len(skus) > 1


def test_unhostable_and_unknown_types_are_refused():
    expired = next(i for i in INSTANCES if i.stratum == "expired")
    with pytest.raises(NotHostable, match="cannot host ignored_observation"):
        inject(expired, "ignored_observation")
    with pytest.raises(ValueError, match="unknown failure type"):
        inject(expired, "typo")
