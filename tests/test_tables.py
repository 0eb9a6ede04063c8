"""The book-only table helpers (trajectory_judge.book.chapters.testbed), on the 400-trajectory set built in memory."""

from __future__ import annotations

import pytest

from trajectory_judge import FAILURE_TYPES
from trajectory_judge.book.chapters import testbed
from trajectory_judge.book.render import style


@pytest.fixture(scope="module")
def instances(dataset):
    return testbed.instances_for(dataset, 7)


def test_instances_for_rejects_a_seed_that_did_not_generate_the_data(dataset):
    with pytest.raises(ValueError, match="goal .* seed 8"):
        testbed.instances_for(dataset, 8)


def test_composition_table_has_the_eight_design_cells_and_sums_to_the_set(dataset):
    comp = testbed.composition_table(dataset)
    assert len(comp) == 8 and comp["trajectories"].sum() == len(dataset)
    # reference: the paper's design, 100 clean / 175 silent / 125 loud (its §3)
    assert testbed.stratum_counts(dataset) == {"clean": 100, "silent": 175, "loud": 125}


def test_strata_table_puts_ignored_observation_only_under_restocking(dataset, instances):
    tab = testbed.strata_table(dataset, instances)
    assert tab["total"].sum() == len(dataset)
    assert list(tab.index[tab["ignored_observation"] > 0]) == ["restocking"]
    assert tab.loc["restocking", "total"] == 128  # reference: the paper's Appendix A


def test_coverage_table_is_all_or_nothing(dataset):
    cov = testbed.coverage_table(dataset)
    assert set(cov.loc[list(FAILURE_TYPES), "flagged"]) == {0.0, 1.0}
    assert cov.loc["clean", "flagged"] == 0.0


def test_reply_unchanged_for_exactly_the_four_reply_preserving_types(dataset, instances):
    tab = testbed.reply_unchanged_table(dataset, instances)
    hidden = set(tab.index[tab["outcome view unchanged"] == 1.0])
    assert hidden == {"wrong_tool", "hallucinated_argument", "skipped_precondition", "ignored_observation"}
    assert set(tab["outcome view unchanged"]) == {0.0, 1.0}


def test_example_family_has_a_clean_run_and_every_type(dataset):
    iid = testbed.example_instance_id(dataset)
    fam = testbed.family(dataset, iid)
    assert list(fam) == ["clean", *FAILURE_TYPES]
    assert list(testbed.family_table(fam).index) == list(fam)


def test_example_instance_id_needs_a_full_family(dataset):
    with pytest.raises(ValueError, match="no instance has a clean run"):
        testbed.example_instance_id([t for t in dataset if t.label.failure_type != "wrong_tool"])


def test_mutant_diff_shows_only_the_edited_lines(dataset):
    fam = testbed.family(dataset, testbed.example_instance_id(dataset))
    diff = testbed.mutant_diff(fam["clean"], fam["ignored_observation"]).splitlines()
    assert len(diff) == 6 and all(ln.startswith("step 4 ", 1) for ln in diff)
    assert testbed.mutant_diff(fam["clean"], fam["clean"]) == ""


def test_versions_table_marks_missing_packages():
    v = style.versions_table(["no-such-package-xyz"])
    assert v.loc["no-such-package-xyz", "version"] == "not installed"
    assert "python" in v.index


def test_strata_by_type_splits_only_skipped_precondition(dataset):
    by_type = testbed.strata_by_type(dataset)
    assert set(by_type) == set(FAILURE_TYPES)
    assert [t for t, s in by_type.items() if len(s) > 1] == ["skipped_precondition"]


def test_a_row_label_never_spans_the_heading_row_between_two_groups():
    import pandas as pd

    from trajectory_judge.book.render.tables import table

    idx = pd.MultiIndex.from_tuples(
        [
            ("Reply", "This edition", "reply:m"),
            ("Self-consistency", "This edition", "selfcons3:m"),
            ("Self-consistency", "Paper (release)", "selfcons3:p"),
        ],
        names=["family", "source", "judge"],
    )
    html = table(pd.DataFrame({"n": [1, 2, 3]}, index=idx), name="tbl-x", caption="C", head=None).html
    assert html.count(">This edition</th>") == 2 and 'rowspan="2"' not in html  # each group names its own source


def test_a_source_heads_its_rows_even_when_each_source_holds_one_row():
    import pandas as pd

    from trajectory_judge.book.render.tables import row_groups

    index = pd.MultiIndex.from_tuples(
        [("Paper (release)", "outcome:a"), ("This edition", "outcome:b")], names=["source", "judge"]
    )
    assert row_groups(index) == ["Paper (release)", "This edition"]
    assert (
        row_groups(index.set_names(["pair", "judge"])) is None
    )  # any other outer level changing on every row: a column
