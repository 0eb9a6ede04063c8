"""The statistics chapter's two figures as a phone shows them: text at least the book's phone minimum, no
legend of more than five entries (the risk–coverage figure names its judge in each panel, the front figure names
each judge beside its point), and direct labels that neither overlap one another nor leave their axes.

Drawn from the committed data with few resamples (the figures' shapes do not depend on the interval widths).
"""

from __future__ import annotations

import itertools

import pytest

MAX_LEGEND_ENTRIES = 5
"""A legend a reader can hold in mind on a phone."""


@pytest.fixture(scope="module")
def editions():
    import matplotlib

    matplotlib.use("Agg")
    from trajectory_judge.book.chapters.editions import load_editions

    return load_editions(50, 7)


@pytest.fixture
def book_style():
    import matplotlib.pyplot as plt

    from trajectory_judge.book.render.figures import rc_params

    with plt.rc_context(rc_params()):
        yield


def _legend_entries(fig) -> int:
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.get_axes())]
    return max((len(leg.get_texts()) for leg in legends if leg is not None), default=0)


@pytest.mark.parametrize("name", ["risk_coverage_figure", "front_figure"])
def test_statistics_figure_text_is_legible_at_phone_width_and_its_legend_short(editions, book_style, name):
    from figure_text import MIN_PHONE_TEXT_PX, smallest_text_px

    from trajectory_judge.book.chapters import statistics
    from trajectory_judge.book.render.figures import show

    fig = getattr(statistics, name)(editions)
    assert _legend_entries(fig) <= MAX_LEGEND_ENTRIES
    px = smallest_text_px(show(fig, name).svg)
    assert px is not None and px >= MIN_PHONE_TEXT_PX, px


def test_each_risk_panel_is_titled_by_its_judge_with_the_others_in_grey(editions, book_style):
    import matplotlib.pyplot as plt

    from trajectory_judge.book.chapters.statistics import GREY, risk_coverage_figure
    from trajectory_judge.book.render.figures import judge_style, two_line_name

    fig = risk_coverage_figure(editions)
    panels = [ax for ax in fig.get_axes() if ax.axison]
    judges = [j for rep in (editions.paper_rep, editions.rep) for j in rep.judges]
    assert [ax.get_title(loc="left") for ax in panels] == [two_line_name(j) for j in judges]
    for ax, j, rep in zip(panels, judges, [r for r in (editions.paper_rep, editions.rep) for _ in r.judges]):
        colours = [line.get_color() for line in ax.get_lines() if line.get_linestyle() != "None"]
        assert colours.count(judge_style(j)["color"]) == 1 and colours.count(GREY) == len(rep.judges) - 1, j
    plt.close(fig)


def test_front_figure_names_every_judge_beside_its_point_without_overlap(editions, book_style):
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from trajectory_judge.book.chapters.statistics import front_figure, point_labels

    fig = front_figure(editions)
    renderer = fig.canvas.get_renderer()
    for ax, rep in zip(fig.get_axes(), (editions.paper_rep, editions.rep)):
        labels = [t for t in ax.texts if t.get_text() in set(point_labels(list(rep.judges)).values())]
        assert sorted(t.get_text() for t in labels) == sorted(point_labels(list(rep.judges)).values())
        boxes = [Text.get_window_extent(t, renderer) for t in labels]  # the words, not a leader line
        frame = ax.get_window_extent(renderer)
        assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
        assert not [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]
    plt.close(fig)


def test_point_labels_name_the_family_and_size_and_the_whole_model_where_two_would_read_alike():
    from trajectory_judge.book.chapters.statistics import point_labels

    assert point_labels(["programmatic", "step:qwen2.5-coder:1.5b", "selfcons3:qwen2.5:14b"]) == {
        "programmatic": "Rules",
        "step:qwen2.5-coder:1.5b": "Step 1.5B",
        "selfcons3:qwen2.5:14b": "Self-cons. \u00d73 14B",
    }
    both = point_labels(["step:qwen2.5-coder:1.5b", "step:qwen2.5:1.5b"])
    assert both == {"step:qwen2.5-coder:1.5b": "Step Qwen2.5-Coder 1.5B", "step:qwen2.5:1.5b": "Step qwen2.5 1.5B"}
