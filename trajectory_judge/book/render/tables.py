"""Tables as the book shows them: formatted text, human headers, numbered "Table N", one HTML form.

:func:`table` turns a DataFrame into the HTML every chapter displays. Numbers are written by
:func:`trajectory_judge.book.render.style.format_number` (``–`` for missing, integers for counts, fixed
decimals), headers and row labels by :func:`trajectory_judge.book.render.style.label`, and the marks of
any interval are explained in a note under the table. The HTML is rendered by a pandas ``Styler``
with a fixed id, so re-executing a notebook writes the same bytes (nbval compares them).

The same HTML serves a desk and a phone (``book/_static/book.css``): an outer row level that groups
the rows (the source, a pair of judges) is a heading row above its group rather than a column; a
value and its interval are two unbreakable parts, side by side in the text column and the interval
under the value on a phone; a table of sentences stacks its rows as cards on a phone; every other
table that is still too wide scrolls in its own box with its row labels held in place.

The output carries its name and caption as data attributes; the book's Sphinx extension
(``book/_ext/tj_tables.py``) wraps it as a numbered table ("Table N", caption above) that
``{numref}`` can refer to by ``name``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from trajectory_judge.book.building.provenance_lines import record_table
from trajectory_judge.book.render.style import (
    COUNT_KEYS,
    DECIMALS,
    LABELS,
    MARKS,
    MISSING,
    format_number,
    label,
    marks_in,
)

HEAD_ROWS = 12
"""A table longer than this shows its first rows and puts the rest in a dropdown (by default)."""


class BookTable:
    """A rendered table: HTML for the book and Jupyter, a one-line text form (no memory address)."""

    def __init__(self, html_text: str, name: str, caption: str) -> None:
        self.html, self.name, self.caption = html_text, name, caption

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"Table {self.name}: {self.caption}"


def _column_key(column: Any) -> Any:
    """The key a column is formatted by: the innermost level of a tuple column."""
    return column[-1] if isinstance(column, tuple) else column


def format_frame(
    frame: pd.DataFrame, *, decimals: int | Mapping[str, int] = 3, counts: Sequence[str] = ()
) -> pd.DataFrame:
    """Every cell of ``frame`` as text, column by column: counts (integer dtype, a key of
    :data:`~trajectory_judge.book.render.style.COUNT_KEYS` or of ``counts``) as integers, other numbers with
    the column's decimals (``decimals`` per key, else :data:`~trajectory_judge.book.render.style.DECIMALS`,
    else the default), missing values as ``–``, text unchanged."""
    default = decimals if isinstance(decimals, int) else 3
    per_key = {**DECIMALS, **({} if isinstance(decimals, int) else dict(decimals))}
    out = {}
    for col in frame.columns:
        key = _column_key(col)
        series = frame[col]
        is_count = key in COUNT_KEYS or key in counts or pd.api.types.is_integer_dtype(series.dtype)
        d = per_key.get(key, default)
        out[col] = [format_number(v, d, count=is_count and not isinstance(v, str)) for v in series]
    return pd.DataFrame(out, index=frame.index, columns=frame.columns)


def _row_label(value: Any) -> Any:
    """A row label: a known key or judge id in words; any other value (a package, a tool) unchanged."""
    if isinstance(value, str) and (value in LABELS or ":" in value or value == "programmatic"):
        return label(value)
    return value


def _relabel_index(index: pd.Index, rows: bool = False) -> pd.Index:
    """Human labels for every level of an index (column headers in full, row labels only when known),
    and for its names."""
    name_of = _row_label if rows else label
    if isinstance(index, pd.MultiIndex):
        tuples = [tuple(name_of(v) for v in t) for t in index]
        return pd.MultiIndex.from_tuples(tuples, names=[label(n) if n else None for n in index.names])
    return pd.Index([name_of(v) for v in index], name=label(index.name) if index.name else None)


_HYPHEN_MINUS = re.compile(r"^-(?=\.?\d)")


def true_minus(cell: Any) -> Any:
    """A negative number's hyphen-minus as a true minus sign (``-0.060`` as ``−0.060``), so a table
    has one minus sign, the one its intervals use; any other cell unchanged."""
    return _HYPHEN_MINUS.sub("\u2212", cell) if isinstance(cell, str) else cell


_BREAKS: tuple[str, ...] = (
    "Halluci|nated",
    "pre|condition",
    "Pre|condition",
    "obser|vation",
    "Obser|vation",
    "discrimi|nation",
    "Discrimi|nation",
    "Repli|cate",
    "Trajec|tories",
    "trajec|tories",
    "Unsup|ported",
    "unsup|ported",
)
SOFT_HYPHENS: dict[str, str] = {w.replace("|", ""): w.replace("|", "\u00ad") for w in _BREAKS}
"""Where a long header word may break on a narrow screen (a soft hyphen, shown only at a break)."""


def _soft_hyphens(header: Any) -> Any:
    if not isinstance(header, str):
        return header
    return re.sub(r"[A-Za-z]+", lambda m: SOFT_HYPHENS.get(m.group(0), m.group(0)), header)


def readable(frame: pd.DataFrame, **fmt: Any) -> pd.DataFrame:
    """``frame`` formatted by :func:`format_frame` with human headers and row labels, and one minus
    sign (:func:`true_minus`)."""
    text = format_frame(frame, **fmt).map(true_minus)
    text.columns = _relabel_index(text.columns)
    text.index = _relabel_index(text.index, rows=True)
    return text


_NUMBER_CELL = re.compile(r"^[<>≤≥±+\-−]?\s*[\d.,]+%?(\s*(/|of)\s*[\d.,]+)?(\s*\(.*\))?[*†‡]?$")
"""A cell that is a number or a count of a total, optionally with its interval and mark
(``0.616 (0.59–0.64)†``, ``< 0.001``, ``13/16``)."""


def text_columns(text: pd.DataFrame) -> list[Any]:
    """Columns whose every cell is words (judge ids, names, notes): the book sets them flush left."""
    if text.columns.nlevels > 1:
        return []
    out = []
    for c in text.columns:
        cells = [v for v in text[c] if v != MISSING]
        if cells and all(isinstance(v, str) and v and not _NUMBER_CELL.match(v.strip()) for v in cells):
            out.append(c)
    return out


_INTERVAL_CELL = re.compile(
    r"(<td\b[^>]*>)([<>≤≥]?\s?[\-−+]?\d[\d.,]*%?)\s(\([\-−]?\d[\d.,]*(?:–| to )[\-−]?\d[\d.,]*\)[*†‡]?)(</td>)"
)
"""A cell holding a value and its interval, ``0.616 (0.59–0.64)`` or ``−0.180 (−0.28 to −0.08)†``."""


def _interval_spans(html_text: str) -> str:
    """Each value-and-interval cell as two unbreakable parts, value then interval: one line in the
    text column, the interval on its own line under the value on a phone (``book.css``)."""
    return _INTERVAL_CELL.sub(r'\1<span class="tj-v">\2</span> <span class="tj-ci">\3</span>\4', html_text)


STACK_CHARS = 48
"""A table with a text cell or row label this long holds sentences: on a phone its rows are stacked as
cards, one "header: value" line per cell (``table.tj-stack`` in ``book.css``), instead of scrolling."""


def holds_sentences(text: pd.DataFrame) -> bool:
    """True when a text column or the row labels of ``text`` hold a cell of :data:`STACK_CHARS` or more."""
    cells = [v for c in text_columns(text) for v in text[c]] + [str(v) for v in text.index.get_level_values(-1)]
    return text.columns.nlevels == 1 and any(isinstance(v, str) and len(v) >= STACK_CHARS for v in cells)


_DATA_CELL = re.compile(r'<td id="T_[^"]*_row\d+_col(\d+)" class="data ')


def _stacked(html_text: str, columns: Sequence[Any]) -> str:
    """The table marked ``tj-stack``, each data cell carrying its column header as ``data-label``."""
    out = html_text.replace('class="tj-table', 'class="tj-table tj-stack', 1)
    return _DATA_CELL.sub(
        lambda m: f'<td data-label="{html.escape(str(columns[int(m.group(1))]))}"{m.group(0)[3:]}', out
    )


def row_groups(index: pd.Index) -> list[Any] | None:
    """The outer labels of a row index whose outer level groups its rows (a source, a pair of judges),
    one per row; None for a flat index or an outer level that changes on every row (except a source,
    the paper's or this edition's, which heads its rows even when it holds one)."""
    if index.nlevels < 2 or len(index) < 2:
        return None
    outer = list(index.get_level_values(0))
    runs = 1 + sum(a != b for a, b in zip(outer, outer[1:]))
    return outer if runs < len(outer) or str(index.names[0]).lower() == "source" else None


def _spans_groups(index: pd.Index, groups: list[Any]) -> bool:
    """True when an outer label of ``index`` would be merged (one cell spanning rows) across the
    boundary of two ``groups``, where a heading row will separate them: such a table repeats its labels."""
    if index.nlevels < 2:
        return False
    outer = list(index.get_level_values(0))
    return any(g != h and a == b for g, h, a, b in zip(groups, groups[1:], outer, outer[1:]))


def _group_rows(html_text: str, groups: list[Any], width: int) -> str:
    """Insert a heading row (``tr.tj-group``, spanning ``width`` columns) above each group of rows, so
    the outer row label is read once per group instead of taking a column of its own."""
    head, sep, rest = html_text.partition("<tbody>\n")
    body, end, tail = rest.partition("</tbody>")
    rows = re.split(r"(?=^\s*<tr>)", body, flags=re.M)
    rows = [r for r in rows if r.strip()]
    if len(rows) != len(groups):
        return html_text  # not the Styler layout this expects: leave the table as it is
    out = []
    for i, (row, group) in enumerate(zip(rows, groups)):
        if i == 0 or group != groups[i - 1]:
            label = html.escape(str(group))
            out.append(
                f'    <tr class="tj-group">\n      <th class="tj-group-label" colspan="{width}">'
                f"<span>{label}</span></th>\n    </tr>\n"
            )
        out.append(row)
    return head + sep + "".join(out) + end + tail


_HEADER_CELL = re.compile(r"(<th\b[^>]*>)(.*?)(</th>)", re.S)


def _code_identifiers(html_text: str) -> str:
    """Header cells that name one of the environment's tools show the name as code, as the prose does:
    ``get_customer`` is an identifier, not a snake_case header."""
    from trajectory_judge.testbed.env import TOOLS

    named = [t for t in TOOLS if "_" in t]  # a one-word tool ("reply") is code only as a whole cell
    tool = re.compile(r"(?<![\w>])(" + "|".join(map(re.escape, named)) + r")(?![\w<])")

    def code(name: str) -> str:  # a break is allowed after each underscore, nowhere else
        return "<code>" + name.replace("_", "_<wbr>") + "</code>"

    def cell(m: re.Match[str]) -> str:
        inner = m.group(2)
        inner = code(inner) if inner.strip() in TOOLS else tool.sub(lambda t: code(t.group(1)), inner)
        return m.group(1) + inner + m.group(3)

    return _HEADER_CELL.sub(cell, html_text)


def _row_ids(html_text: str, ids: Sequence[str]) -> str:
    """The body rows of a Styler table given the ``id`` of ``ids``, one per row in order, so a page can link to a
    row (``page.html#id``); a table whose rows do not match ``ids`` one to one is an error."""
    head, sep, rest = html_text.partition("<tbody>\n")
    body, end, tail = rest.partition("</tbody>")
    rows = re.findall(r"^\s*<tr>", body, flags=re.M)
    if len(rows) != len(ids):
        raise ValueError(f"row ids: {len(ids)} ids for a table of {len(rows)} rows")
    it = iter(ids)
    body = re.sub(r"^(\s*)<tr>", lambda m: f'{m.group(1)}<tr id="{html.escape(next(it))}">', body, flags=re.M)
    return head + sep + body + end + tail


def _styled_html(text: pd.DataFrame, uid: str, show_index: bool) -> str:
    """The Styler HTML of a text frame, with a fixed id and one header row where possible; text
    columns flush left, numbers flush right (``book.css``). An outer row level that groups the rows
    becomes a heading row above each group (:func:`row_groups`), and a value's interval may go under
    it on a narrow screen."""
    frame = text.copy()
    frame = frame.rename(columns=_soft_hyphens)
    groups = row_groups(frame.index) if show_index else None
    sparse = True
    if groups is not None:
        frame.index = frame.index.droplevel(0)
        sparse = not _spans_groups(frame.index, groups)
    if show_index and frame.index.nlevels == 1 and frame.columns.nlevels == 1 and frame.index.name:
        frame.columns.name, frame.index.name = frame.index.name, None  # row-label header in the same row
    styler = frame.style.set_uuid(uid).set_table_attributes('class="tj-table"')
    left = text_columns(frame)
    if left:
        styler = styler.set_table_styles(
            {c: [{"selector": "td, th", "props": "text-align: left;"}] for c in left}, overwrite=False
        )
    if not show_index:
        styler = styler.hide(axis="index")
    elif frame.index.nlevels > 1:
        styler = styler.hide(names=True, axis="index")
    out = styler.to_html(sparse_index=sparse)
    if holds_sentences(frame):
        out = _stacked(out, list(frame.columns))
    if groups is not None:
        out = _group_rows(out, groups, frame.index.nlevels + len(frame.columns))
    return _code_identifiers(_interval_spans(out))


def _notes_html(text: pd.DataFrame) -> str:
    """One line per interval mark found in the table, saying what it means."""
    marks = marks_in([v for col in text.columns for v in text[col]])
    if not marks:
        return ""
    items = "; ".join(f"{html.escape(m)} {html.escape(MARKS[m])}" for m in marks)
    return f'<p class="tj-table-notes">{items}.</p>\n'


def table(
    frame: pd.DataFrame,
    *,
    name: str,
    caption: str,
    head: int | None = HEAD_ROWS,
    index: bool = True,
    decimals: int | Mapping[str, int] = 3,
    counts: Sequence[str] = (),
    more: str | None = None,
) -> BookTable:
    """``frame`` as the book's numbered "Table N" named ``name`` (for ``{numref}``) with ``caption``.

    Rows beyond ``head`` go into a dropdown below the first ones (``head=None`` shows all);
    ``more`` is the dropdown's summary (default "All N rows"). ``index=False`` hides the row labels.
    """
    text = readable(frame, decimals=decimals, counts=counts)
    parts = [_styled_html(text if head is None else text.iloc[:head], name, index)]
    if head is not None and len(text) > head:
        summary = html.escape(more or f"All {len(text)} rows")
        rest = _styled_html(text, f"{name}-all", index)
        parts.append(f'<details class="tj-table-more"><summary>{summary}</summary>\n{rest}</details>\n')
    parts.append(_notes_html(text))
    record_table(frame, name=name, caption=caption, decimals=decimals, counts=counts, index=index)
    head_div = f'<div class="tj-table-block" data-name="{html.escape(name)}" data-caption="{html.escape(caption)}">\n'
    return BookTable(head_div + "".join(parts) + "</div>\n", name, caption)


def dropdown_table(
    frame: pd.DataFrame,
    *,
    name: str,
    caption: str,
    summary: str,
    index: bool = True,
    decimals: int | Mapping[str, int] = 3,
    counts: Sequence[str] = (),
    row_ids: Sequence[str] | None = None,
) -> BookTable:
    """Like :func:`table`, numbered and captioned, but every row sits in a dropdown whose summary
    line is ``summary`` (for long material shown after its summary, e.g. a full audit). ``row_ids`` gives each
    row a stable anchor, one per row in order, that other pages link to."""
    text = readable(frame, decimals=decimals, counts=counts)
    inner = _styled_html(text, name, index)
    if row_ids is not None:
        inner = _row_ids(inner, row_ids)
    record_table(frame, name=name, caption=caption, decimals=decimals, counts=counts, index=index)
    body = f'<details class="tj-table-more"><summary>{html.escape(summary)}</summary>\n{inner}</details>\n'
    head_div = f'<div class="tj-table-block" data-name="{html.escape(name)}" data-caption="{html.escape(caption)}">\n'
    return BookTable(head_div + body + _notes_html(text) + "</div>\n", name, caption)


def wrap_headers(t: BookTable) -> BookTable:
    """``t`` with column headers that may wrap onto several lines (``book.css``: ``table.tj-wrap-head``),
    for a table whose headers, not its numbers, make it wider than the text column."""
    return BookTable(re.sub(r'class="tj-table(?=[" ])', 'class="tj-table tj-wrap-head', t.html), t.name, t.caption)
