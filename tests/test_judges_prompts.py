"""Prompts: shared text first, the trajectory last, views differing only where they should."""

from __future__ import annotations

import re

import pytest
from llm_fakes import make_trajectory

from trajectory_judge.judges.prompts import (
    CONFIDENCE,
    SHARED_PREFIX,
    TAXONOMY,
    VIEW_INSTRUCTIONS,
    build_prompt,
    view_prefix,
)
from trajectory_judge.judges.views import render_view
from trajectory_judge.models import FAILURE_TYPES
from trajectory_judge.testbed.procedure import PROCEDURE


def test_procedure_has_eight_numbered_rules():
    assert re.findall(r"^(\d)\. ", PROCEDURE, flags=re.M) == [str(i) for i in range(1, 9)]


def test_taxonomy_lists_six_types_and_none_in_paper_order():
    names = re.findall(r"^- (\w+):", TAXONOMY, flags=re.M)
    assert names == [*FAILURE_TYPES, "none"]


def test_confidence_instruction_spans_half_to_one_and_discourages_round_numbers():
    assert "0.5" in CONFIDENCE and "1.0" in CONFIDENCE and "round number" in CONFIDENCE


@pytest.mark.parametrize("view", ["outcome", "step", "reply"])
def test_shared_prefix_first_trajectory_last(view):
    traj = make_trajectory()
    prompt = build_prompt(view, traj)
    assert prompt.startswith(SHARED_PREFIX)
    assert prompt.startswith(view_prefix(view))
    assert prompt.rstrip().endswith(render_view(view, traj) + "\n--- END ---")
    # nothing that depends on the trajectory appears before the view's text
    assert traj.trajectory_id not in prompt
    assert prompt.index(traj.goal) > len(view_prefix(view)) - 1


def test_views_share_every_word_of_procedure_taxonomy_and_confidence():
    traj = make_trajectory()
    for view in VIEW_INSTRUCTIONS:
        p = build_prompt(view, traj)
        assert p.count(PROCEDURE) == 1 and p.count(TAXONOMY) == 1 and p.count(CONFIDENCE) == 1


def test_outcome_view_carries_the_debiasing_paragraph_and_no_steps():
    p = build_prompt("outcome", make_trajectory())
    assert "not a sign of failure" in VIEW_INSTRUCTIONS["outcome"]
    assert "step 0 call" not in p


def test_step_view_asks_for_step_by_step_checking():
    text = VIEW_INSTRUCTIONS["step"]
    assert "one by one" in text and "earliest step that went wrong" in text
    assert "step 0 call" in build_prompt("step", make_trajectory())


def test_reply_view_shows_every_step_but_asks_only_about_the_reply():
    traj = make_trajectory()
    assert render_view("reply", traj) == render_view("step", traj)
    text = VIEW_INSTRUCTIONS["reply"]
    assert "single question" in text and "observations do not back up" in text


def test_unknown_view_is_an_error():
    with pytest.raises(ValueError, match="unknown view 'final'"):
        build_prompt("final", make_trajectory())
