"""The book's one style: names a reader sees, one number and interval format, tables and figures
that render the same bytes on every run, and the derived config that turns on launch buttons."""

from __future__ import annotations

import math
from html import escape

import pandas as pd
import pytest
from figure_text import MIN_PHONE_TEXT_PX, smallest_text_px

from trajectory_judge.book.building import hosting as config
from trajectory_judge.book.render import figures, style, tables
from trajectory_judge.models import JudgeSpec


# --- names -----------------------------------------------------------------------------------
def test_judges_are_named_as_a_person_writes_them():
    assert style.judge_name("step:qwen2.5-coder:1.5b") == "Step \u00b7 Qwen2.5-Coder 1.5B"
    assert style.judge_name("step:qwen2.5:14b") == "Step \u00b7 Qwen2.5 14B"
    assert style.judge_name("step:llama3.1:8b") == "Step \u00b7 Llama 3.1 8B"
    assert style.judge_name("selfcons3:qwen2.5:14b") == "Self-consistency \u00d73 \u00b7 Qwen2.5 14B"
    assert style.judge_name("programmatic") == "Rules"
    assert style.judge_name("short-run") == "short-run (Python judge)"  # NAME alone is a Python judge's id
    with pytest.raises(ValueError, match="is not a judge name"):
        style.judge_name("Step:m")
    assert style.label("false_alarm_rate") == "False-alarm rate"  # a bare key is labelled as a key, not a judge


def test_every_metric_key_of_the_analysis_has_a_human_label():
    from trajectory_judge.analysis.core.metrics import METRICS
    from trajectory_judge.analysis.core.paired import PAIRED_GROUPS

    for key in (*METRICS, *PAIRED_GROUPS):
        assert key in style.LABELS and "_" not in style.label(key), key
    assert style.label("false_alarm_rate") == "False-alarm rate" and style.label("silent_recall") == "Silent recall"
    assert style.label("some_new_key") == "Some new key"


def test_paper_and_edition_rows_group_under_a_source_level():
    frame = pd.DataFrame({"recall": [0.5]}, index=pd.Index(["step:qwen2.5:14b"], name="judge"))
    grouped = style.with_source(frame, "release")
    assert grouped.index.names == ["source", "judge"] and grouped.index[0][0] == "Paper (release)"


def test_plural_agrees_with_the_count():
    assert style.plural(1, "ensemble") == "1 ensemble" and style.plural(0, "ensemble") == "0 ensembles"


# --- numbers ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, kwargs, text",
    [
        (None, {}, "\u2013"),
        (math.nan, {}, "\u2013"),
        (pd.NA, {}, "\u2013"),
        (60.0, {"count": True}, "60"),
        (5.328e-05, {}, "0.000"),
        (-0.0001, {}, "0.000"),
        (0.61604, {}, "0.616"),
        (10.44, {"decimals": 1}, "10.4"),
        (True, {}, "yes"),
        ("text", {}, "text"),
    ],
)
def test_numbers_have_one_format_never_e_notation(value, kwargs, text):
    assert style.format_number(value, **kwargs) == text


def test_marks_in_finds_the_marks_a_table_uses():
    assert style.marks_in(["0.400\u2021", "0.1 (0.0\u20130.2)\u2020", "x"]) == [style.DAGGER, style.ZERO_WIDTH]


# --- tables ----------------------------------------------------------------------------------
def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {"false_alarm_rate": [5.328e-05, None], "step_exact_n": [60.0, 3.0], "f1": ["0.400\u2021", "0.5*"]},
        index=pd.Index(["step:qwen2.5-coder:1.5b", "programmatic"], name="judge"),
    )


def test_table_has_human_headers_and_no_raw_values():
    html = tables.table(_frame(), name="tbl-t", caption="Caption").html
    for raw in ("NaN", "None", "e-05", "60.0", "false_alarm_rate", "step_exact_n", "step:qwen"):
        assert raw not in html, raw
    for shown in ("False-alarm rate", "Loc. n", ">60<", "Step \u00b7 Qwen2.5-Coder 1.5B", "\u2013", "Rules"):
        assert shown in html, shown


def test_table_explains_each_mark_it_uses_once():
    html = tables.table(_frame(), name="tbl-t", caption="Caption").html
    note = {m: escape(text) for m, text in style.MARKS.items()}
    assert html.count(note[style.ZERO_WIDTH]) == 1 and html.count(note[style.STRUCTURAL]) == 1
    assert note[style.DAGGER] not in html


def test_table_is_the_same_bytes_every_time_and_its_text_form_has_no_address():
    a, b = tables.table(_frame(), name="tbl-t", caption="C"), tables.table(_frame(), name="tbl-t", caption="C")
    assert a.html == b.html and 'id="T_tbl-t"' in a.html
    assert repr(a) == "Table tbl-t: C" and "0x" not in repr(a)


def test_words_sit_flush_left_and_numbers_flush_right():
    f = pd.DataFrame(
        {
            "judge_id": ["programmatic", "step:qwen2.5-coder:1.5b"],
            "n": [400, 3],
            "recall": ["0.616 (0.59–0.64)", "–"],
            "note": ["–", "exact"],
        }
    )
    assert tables.text_columns(tables.readable(f)) == ["Judge id", "Note"]
    cells = pd.DataFrame(
        {
            "why": ["3 of 10 seeds print it", "exact"],
            "p": ["< 0.001", "−0.180 (−0.28 to −0.08)†"],
            "k": ["13/16", "3 of 4"],
        }
    )
    assert tables.text_columns(cells) == ["why"]
    html = tables.table(f, name="tbl-align", caption="c", index=False).html
    assert "#T_tbl-align td.col0 {\n  text-align: left;" in html and "td.col3 {" in html
    assert "td.col1 {" not in html and "td.col2 {" not in html


def test_long_table_shows_its_head_and_the_rest_in_a_dropdown():
    frame = pd.DataFrame({"n": range(30)})
    html = tables.table(frame, name="tbl-long", caption="C", head=5).html
    assert html.count("<details") == 1 and "All 30 rows" in html
    first = html.split("<details")[0]
    assert first.count("<tr>") == 1 + 5  # header and five rows before the dropdown


# --- figures ---------------------------------------------------------------------------------
def test_each_judge_has_one_colour_and_marker_from_the_colour_blind_safe_palette():
    a, b = figures.judge_style("step:qwen2.5:14b"), figures.judge_style("step:qwen2.5-coder:1.5b")
    assert a["color"] == b["color"] and a["marker"] != b["marker"]
    palette = set(figures.OKABE_ITO.values())
    for judge in ("programmatic", "outcome:m:1b", "step:m:1b", "reply:m:1b", "selfcons3:m:1b"):
        assert figures.judge_style(judge)["color"] in palette - {figures.OKABE_ITO["black"]}
    assert figures.FALSE_ALARM["color"] == figures.OKABE_ITO["black"]


def test_figure_svg_is_deterministic_and_carries_its_alt_text():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def draw():
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1], **{k: v for k, v in figures.judge_style("step:m:1b").items() if k != "label"})
        return figures.show(fig, "Recall rises with <size>")

    one, two = draw(), draw()
    assert one.svg == two.svg and "<title>Recall rises with &lt;size&gt;</title>" in one.svg
    assert repr(one) == "Figure: Recall rises with <size>"
    with pytest.raises(ValueError, match="alt text"):
        figures.show(plt.figure(), " ")


def test_a_clip_rectangle_whose_last_bit_moves_keeps_its_name_and_distinct_rectangles_keep_distinct_names():
    # matplotlib names a clip rectangle by a hash of its coordinates at full precision: the same printed
    # drawing, laid out twice, can come with other names. The book's SVG names it by what it prints.
    def drawn(names: tuple[str, str]) -> str:
        rects = (
            '<rect x="50.840829" y="54.46" width="115.03" height="68.6"/>',
            '<rect x="176.3" y="54.46" width="115.03" height="68.6"/>',
        )
        defs = "".join(f'<clipPath id="{n}">\n    {r}\n   </clipPath>' for n, r in zip(names, rects, strict=True))
        uses = "".join(f'<path d="M 0 0" clip-path="url(#{n})"/>' for n in names)
        return f"<svg>{uses}<defs>{defs}</defs></svg>"

    one = figures.stable_clip_ids(drawn(("p755f5a76ff", "pd44ced74fa")))
    two = figures.stable_clip_ids(drawn(("pd36c317bf1", "pfd353d360e")))
    assert one == two
    first, second = (m.split('"')[1] for m in one.split("<clipPath id=")[1:])
    assert first != second and one.count(f"url(#{first})") == 1 and one.count(f"url(#{second})") == 1
    same_shape_twice = figures.stable_clip_ids(drawn(("pa", "pb")).replace("176.3", "50.840829"))
    assert len(set(m.split('"')[1] for m in same_shape_twice.split("<clipPath id=")[1:])) == 2


def test_book_text_is_at_least_the_minimum_font_that_a_phone_shows_at_eleven_pixels():
    params = figures.rc_params()
    keys = ("font.size", "axes.labelsize", "axes.titlesize", "xtick.labelsize", "ytick.labelsize", "legend.fontsize")
    assert min(params[k] for k in keys) >= figures.MIN_FONT_PT
    # the book's width, shown in the phone's column: its smallest text at the phone minimum or more
    width_pt = figures.PHONE_WIDTH_IN * 72
    assert figures.MIN_FONT_PT * figures.PHONE_COLUMN_PX / width_pt >= MIN_PHONE_TEXT_PX >= 11


def test_direct_labels_of_crowded_points_overlap_neither_one_another_nor_the_points_nor_leave_the_axes():
    import itertools

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    with plt.rc_context(figures.rc_params()):
        fig, ax = plt.subplots()
        points = [(5.3, 0.46, "Outcome 1.5B"), (10.5, 0.46, "Step 1.5B"), (5.4, 0.32, "Step 0.5B"),
                  (11.2, 0.42, "Reply 1.5B"), (30.4, 0.58, "Self-cons. x3 1.5B"), (0.0, 0.83, "Rules")]  # fmt: skip
        ax.scatter([p[0] for p in points], [p[1] for p in points])
        ax.set(xlim=(-1.5, 32), ylim=(0, 1.08))
        labels = figures.direct_labels(ax, points)
        renderer = fig.canvas.get_renderer()
        boxes = [Text.get_window_extent(t, renderer) for t in labels]
        frame = ax.get_window_extent(renderer)
        dots = [ax.transData.transform((x, y)) for x, y, _ in points]
        plt.close(fig)
    assert [t.get_text() for t in labels] == [p[2] for p in points]
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
    assert not [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]
    assert not [(b, d) for b in boxes for d in dots if b.contains(*d)]


# --- config ----------------------------------------------------------------------------------
def test_one_setting_gives_binder_and_colab_addresses():
    where = config.Hosting(config.check_repository("https://github.com/someone/fork.git/"), "main")
    assert where.url == "https://github.com/someone/fork"
    assert (
        where.binder("notebooks/x.ipynb")
        == "https://mybinder.org/v2/gh/someone/fork/main?urlpath=lab/tree/notebooks/x.ipynb"
    )
    assert (
        where.colab("notebooks/x.ipynb")
        == "https://colab.research.google.com/github/someone/fork/blob/main/notebooks/x.ipynb"
    )


def test_config_verb_rejects_a_url_that_is_not_a_github_repository(capsys):
    from trajectory_judge.book.building.execute_notebooks import main

    assert main(["config", "--repository", "ftp://example.org/x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "trajectory-judge book config: error: --repository 'ftp://example.org/x': expected https://github.com/OWNER/REPO"
    ]


def test_row_labels_that_are_names_stay_as_written():
    frame = pd.DataFrame({"version": ["1.0", "2.0"]}, index=pd.Index(["python", "trajectory-judge"], name="package"))
    text = tables.readable(frame)
    assert list(text.index) == ["Python", "trajectory-judge"] and list(text.columns) == ["Version"]


def test_a_self_consistency_member_id_is_a_judge_of_its_view_with_its_seed():
    from trajectory_judge.book.render.style import judge_name

    spec = JudgeSpec.parse("step@T0.7/seed8:qwen2.5-coder:1.5b")
    assert (spec.view, spec.model, spec.ensemble, spec.is_llm) == ("step", "qwen2.5-coder:1.5b", 1, True)
    assert judge_name("step@T0.7/seed8:qwen2.5-coder:1.5b") == "Step (T 0.7, seed 8) \u00b7 Qwen2.5-Coder 1.5B"


# --- layout: tables that fit a phone, figures legible on it (issue 22) ------------------------
def _grouped() -> pd.DataFrame:
    rows = pd.MultiIndex.from_tuples(
        [("release", "programmatic"), ("release", "step:qwen2.5:14b"), ("edition", "programmatic")],
        names=["source", "judge"],
    )
    return pd.DataFrame(
        {"recall": ["0.766 (0.74\u20130.79)", "\u22120.180 (\u22120.28 to \u22120.08)\u2020", "0.5*"]}, index=rows
    )


def test_an_outer_row_level_becomes_one_heading_row_per_group_not_a_column():
    html = tables.table(style.with_source(_grouped().loc["release"], "release"), name="tbl-g", caption="C").html
    assert html.count('class="tj-group"') == 1 and "<span>Paper (release)</span></th>" in html
    assert 'colspan="2"' in html and "rowspan" not in html and ">Judge</th>" in html
    assert tables.row_groups(_grouped().index) == ["release", "release", "edition"]
    assert tables.row_groups(pd.Index(["a", "b"])) is None
    distinct = pd.MultiIndex.from_tuples([("a", "x"), ("b", "y")])
    assert tables.row_groups(distinct) is None  # an outer level that changes on every row groups nothing


def test_value_and_interval_are_two_unbreakable_parts_of_one_cell():
    html = tables.table(_grouped(), name="tbl-iv", caption="C").html
    assert '<span class="tj-v">0.766</span> <span class="tj-ci">(0.74\u20130.79)</span></td>' in html
    assert (
        '<span class="tj-v">\u22120.180</span> <span class="tj-ci">(\u22120.28 to \u22120.08)\u2020</span></td>' in html
    )
    assert ">0.5*</td>" in html  # a value without an interval stays as it is


def test_smallest_text_px_is_font_size_times_the_scale_the_column_shows_it_at():
    # 9 pt glyphs (matplotlib's scale(0.09 -0.09)) in a 720 pt wide SVG: shrunk into 358 px, 9 * 358 / 720
    svg = '<svg viewBox="0 0 720 300"><g transform="translate(1 2) scale(0.09 -0.09)"><use/></g></svg>'
    assert smallest_text_px(svg, 358) == pytest.approx(9 * 358 / 720)
    small = '<svg viewBox="0 0 150 100"><g transform="scale(0.1 -0.1)"></g></svg>'  # narrower than the column: shown at 4/3 px per pt
    assert smallest_text_px(small, 358) == pytest.approx(10 * 4 / 3)
    assert smallest_text_px('<svg viewBox="0 0 10 10"></svg>') is None


def test_a_figure_at_the_book_width_is_legible_on_a_phone_and_a_wide_one_is_not():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(figures.rc_params()):
        narrow, ax = plt.subplots()
        ax.plot([0, 1], [0, 1], label="a judge")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.02))  # a legend above the axes, as the chapters draw
        wide, ax2 = plt.subplots(figsize=(7.5, 4.0))
        ax2.plot([0, 1], [0, 1])
        shown = {k: smallest_text_px(figures.show(f, k).svg) for k, f in (("narrow", narrow), ("wide", wide))}
    assert shown["narrow"] >= MIN_PHONE_TEXT_PX > shown["wide"]


def test_a_table_of_sentences_stacks_on_a_phone_with_each_cell_labelled_by_its_header():
    sentences = pd.DataFrame(
        {"why": ["3 of 10 seeds print the published value at three decimals", "exact"], "n": [3, 4]}
    )
    html = tables.table(sentences, name="tbl-why", caption="C", index=False).html
    assert (
        'class="tj-table tj-stack"' in html
        and html.count('data-label="Why"') == 2
        and html.count('data-label="n"') == 2
    )
    assert (
        "tj-stack" not in tables.table(_frame(), name="tbl-t", caption="C").html
    )  # numbers scroll, they are not stacked
    wrapped = tables.wrap_headers(tables.table(sentences, name="tbl-why", caption="C", index=False)).html
    assert 'class="tj-table tj-wrap-head tj-stack"' in wrapped and 'class="tj-table-block"' in wrapped


def test_a_table_has_one_minus_sign_and_long_header_words_may_break_with_a_hyphen():
    frame = pd.DataFrame({"hallucinated_argument": [-0.06, 0.5], "note": ["-", "a-1"]})
    html = tables.table(frame, name="tbl-minus", caption="C", index=False).html
    assert ">\u22120.060<" in html and "-0.060" not in html and ">-<" in html and ">a-1<" in html
    assert "Halluci\u00adnated argument" in html
