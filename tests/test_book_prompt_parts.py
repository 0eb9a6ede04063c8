"""The judges chapter shows each prompt part under its own label and compares it with the paper's (issue 26)."""

from __future__ import annotations

import pytest

from trajectory_judge import load_trajectories
from trajectory_judge.book.chapters import judges
from trajectory_judge.book.chapters.testbed import example_instance_id, family
from trajectory_judge.book.paths import data_dir
from trajectory_judge.judges.prompts import SHARED_PREFIX


@pytest.fixture(scope="module")
def example():
    trajs = load_trajectories(data_dir() / "trajectories.jsonl")
    return family(trajs, example_instance_id(trajs))["clean"]


def test_prompt_comparison_has_every_part_of_the_papers_appendix_d_once(example):
    t = judges.prompt_comparison_table(example)
    assert list(t.index) == list(judges.PAPER_PROMPT)
    assert t.loc["order", "same?"] == "no" and t.loc["reply view", "same?"] == "added"
    assert t.loc["procedure", "this edition"].startswith("eight numbered rules")
    assert all(part in t.loc["rendering", "this edition"] for part in ("thought", "call", "observation"))


def test_the_comparison_quotes_no_prompt_text_of_ours_or_the_papers(example):
    cells = " ".join(judges.prompt_comparison_table(example).to_numpy().ravel())
    for line in SHARED_PREFIX.splitlines():
        assert len(line) < 30 or line not in cells  # described, never pasted
    assert "You are auditing" not in cells  # the paper's opening words


def test_a_folded_part_has_its_own_label_and_escapes_its_text():
    html = judges.folded("The step schema", "a <b> & c").data
    assert "<summary>The step schema</summary>" in html and "a &lt;b&gt; &amp; c" in html
