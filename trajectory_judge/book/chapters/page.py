"""What every page of the book shares: :func:`setup` for the hidden first cell, tables and figures.

A chapter's first code cell (tagged ``remove-cell``) is::

    from trajectory_judge.book.chapters.page import setup, show, table
    setup()

after which :func:`~trajectory_judge.book.render.tables.table` gives a numbered table and
:func:`~trajectory_judge.book.render.figures.show` an SVG figure with alt text.
"""

from __future__ import annotations

import pandas as pd

from trajectory_judge.book.render.figures import judge_style, setup_figures, show
from trajectory_judge.book.render.tables import table

__all__ = ["judge_style", "setup", "show", "table"]


def setup(chapter: str | None = None) -> None:
    """Name the chapter (its notebook's stem, for the build's records: :mod:`trajectory_judge.book.building.records`)
    and set the book's display options: SVG figures with fixed sizes and palette, and pandas reprs that
    never truncate silently nor use e-notation (for any frame shown without :func:`table`).

    Built on a reader's folder (``TJ_DATA``), it shows the note that says so
    (:func:`trajectory_judge.book.chapters.editions.folder_note`); on this edition's data it shows nothing."""
    from trajectory_judge.book.building.collector import settle
    from trajectory_judge.book.building.records import set_chapter

    set_chapter(chapter)
    setup_figures()
    settle()  # the kernel's imports stay for the chapter: out of the collector's way
    folder_note()
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_columns", 50)
    pd.set_option("display.width", 200)
    pd.set_option("display.float_format", "{:.3f}".format)
    pd.set_option("styler.format.na_rep", "\u2013")
    pd.set_option("styler.format.precision", 3)


def say(text: str) -> None:
    """Show ``text`` as Markdown, or nothing at all when it is empty (an empty ``Markdown`` shows its repr)."""
    if text:
        from IPython.display import Markdown, display

        display(Markdown(text))


def folder_note() -> None:
    """Show, on a reader's folder only, which folder and judges the page is about."""
    from trajectory_judge.book.paths import own_folder

    if own_folder() is None:
        return
    from IPython.display import Markdown, display

    from trajectory_judge.analysis.core.loading import load_data
    from trajectory_judge.book.chapters.editions import folder_note as note
    from trajectory_judge.book.paths import data_dir

    display(Markdown("> " + note(load_data(data_dir()))))
