"""Self-consistency: k=3 at T=0.7 with seeds 7, 8, 9; strict majority; confidence = vote share."""

from __future__ import annotations

import pytest
from llm_fakes import ScriptedClient, make_trajectory, response

from trajectory_judge.judges.selfcons import SEEDS, TEMPERATURE, SelfConsistencyJudge


def test_members_sampled_at_point_seven_with_seeds_seven_eight_nine():
    client = ScriptedClient(response())
    j = SelfConsistencyJudge(client, "qwen2.5-coder:1.5b")
    j.judge(make_trajectory())
    assert j.judge_id == "selfcons3:qwen2.5-coder:1.5b"
    assert [(c["temperature"], c["seed"]) for c in client.calls] == [(0.7, 7), (0.7, 8), (0.7, 9)]
    assert len({c["prompt"] for c in client.calls}) == 1


def test_two_of_three_faulty_is_faulty_at_two_thirds():
    client = ScriptedClient(
        [response(True, 2, "wrong_tool"), response(False, 0, "none"), response(True, 3, "wrong_tool")]
    )
    v = SelfConsistencyJudge(client, "m").judge(make_trajectory())
    assert v.faulty is True and v.confidence == pytest.approx(2 / 3)
    assert v.failure_type == "wrong_tool" and v.failure_step == 2  # tie on step: first majority member


def test_vote_share_takes_only_two_values_at_k3():
    for texts, share in [([response()] * 3, 1.0), ([response(False, 0, "none")] * 2 + [response()], 2 / 3)]:
        assert SelfConsistencyJudge(ScriptedClient(texts), "m").judge(make_trajectory()).confidence == pytest.approx(
            share
        )


def test_clean_majority_names_no_type_or_step():
    client = ScriptedClient(
        [response(False, 0, "none"), response(True, 4, "premature_stop"), response(False, 0, "none")]
    )
    v = SelfConsistencyJudge(client, "m").judge(make_trajectory())
    assert (v.faulty, v.failure_type, v.failure_step) == (False, None, None)


def test_type_is_the_majority_members_mode():
    client = ScriptedClient(
        [
            response(True, 2, "wrong_tool"),
            response(True, 2, "hallucinated_argument"),
            response(True, 2, "hallucinated_argument"),
        ]
    )
    assert SelfConsistencyJudge(client, "m").judge(make_trajectory()).failure_type == "hallucinated_argument"


def test_unparseable_member_votes_clean_and_is_recorded():
    client = ScriptedClient(["garbage", response(), response(False, 0, "none")])
    v = SelfConsistencyJudge(client, "m").judge(make_trajectory())
    assert v.faulty is False and v.confidence == pytest.approx(2 / 3)
    assert "member 0: unparseable" in v.error


def test_cost_is_summed_over_members():
    v = SelfConsistencyJudge(ScriptedClient(response()), "m").judge(make_trajectory())
    assert (v.prompt_tokens, v.completion_tokens) == (300, 60)


def test_even_number_of_members_is_an_error():
    with pytest.raises(ValueError, match="odd number of members"):
        SelfConsistencyJudge(ScriptedClient(), "m", seeds=(7, 8))


def test_each_member_is_a_verdict_under_an_id_naming_its_temperature_and_seed():
    j = SelfConsistencyJudge(
        ScriptedClient([response(True, 2, "wrong_tool"), response(False, 0, "none"), response(True, 3, "wrong_tool")]),
        "qwen2.5-coder:1.5b",
    )
    members = j.judge_members(make_trajectory())
    assert [m.judge_id for m in members] == [f"step@T0.7/seed{s}:qwen2.5-coder:1.5b" for s in (7, 8, 9)]
    assert [m.faulty for m in members] == [True, False, True]


def test_ensemble_verdict_is_the_aggregate_of_its_stored_members():
    texts = [response(True, 2, "wrong_tool"), response(False, 0, "none"), response(True, 3, "premature_stop")]
    direct = SelfConsistencyJudge(ScriptedClient(texts), "m").judge(make_trajectory())
    j = SelfConsistencyJudge(ScriptedClient(texts), "m")
    rederived = j.aggregate(j.judge_members(make_trajectory()))
    assert rederived.model_dump(exclude={"latency_s"}) == direct.model_dump(exclude={"latency_s"})


def test_the_command_lines_ensemble_defaults_are_the_judges_own():
    from trajectory_judge.cli.options import SELFCONS_SEEDS, SELFCONS_TEMPERATURE

    assert (SELFCONS_TEMPERATURE, SELFCONS_SEEDS) == (TEMPERATURE, SEEDS)


@pytest.mark.parametrize(
    "seeds, why", [((7,), "got 1"), ((7, 8), "got 2"), ((), "got 0"), ((7, 7, 8), "a seed repeats")]
)
def test_an_ensemble_needs_an_odd_number_of_distinct_seeds_three_or_more(seeds, why):
    from trajectory_judge.judges.selfcons import check_seeds

    with pytest.raises(ValueError, match=why):
        check_seeds(seeds, "--selfcons-seeds")
    assert check_seeds([1, 2, 3, 4, 5]) == (1, 2, 3, 4, 5)


def test_an_ensemble_over_a_template_sends_the_template_over_the_step_view_under_its_ids():
    from trajectory_judge.judges.custom import PromptTemplate
    from trajectory_judge.judges.prompts import prompt_sha256
    from trajectory_judge.judges.views import render_view

    template = PromptTemplate(name="rubric", text="Mine.\n{view}\n", file="rubric.txt")
    client = ScriptedClient(response(True, 2, "wrong_tool"))
    judge = SelfConsistencyJudge(client, "m", template=template)
    assert judge.judge_id == "selfcons3+rubric:m"
    assert judge.member_ids == tuple(f"step+rubric@T0.7/seed{s}:m" for s in SEEDS)
    t = make_trajectory()
    members = judge.judge_members(t)
    assert [m.judge_id for m in members] == list(judge.member_ids)
    assert {c["prompt"] for c in client.calls} == {f"Mine.\n{render_view('step', t)}\n"}
    assert [c["seed"] for c in client.calls] == list(SEEDS)
    fp, builtin = judge.fingerprint(), SelfConsistencyJudge(client, "m").fingerprint()
    assert fp.prompt_sha256 == template.sha256 != builtin.prompt_sha256 == prompt_sha256("step")
    assert fp.differences(builtin) == ["prompt"]
