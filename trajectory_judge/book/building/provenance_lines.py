"""How each table and figure was made, and the files a reader can download: records and their HTML.

While a chapter executes in a build, :func:`~trajectory_judge.book.render.tables.table` records each table
(:func:`record_table`: its frame as CSV and JSON, and a note of the function that computed it, see
:mod:`trajectory_judge.provenance.computed`, and the data files the chapter had read by the time it
showed the table, with their sha256: an upper bound of what the table was computed from) and
:func:`~trajectory_judge.book.render.figures.show` each figure (:func:`record_figure`). The book's extension
``book/_ext/tj_provenance.py`` turns the notes into a folded "How this was made" line under each
table and figure (:func:`provenance_html`), copies the tables and the chapter's data files into the
site and lists them, with their sha256, in a "Downloads" section (:func:`table_links_html`, :func:`data_files_html`). Nothing
here writes outside a build, so the committed notebooks do not change.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from trajectory_judge.book.building.records import files_read, records_dir, write_record
from trajectory_judge.book.paths import data_dir, repo_root
from trajectory_judge.provenance.computed import computed

SHORT = 12
"""Hex digits of a sha256 shown on the page (the whole digest is in the element's ``data-sha256``)."""

SUMMARY = "How this was made"
"""The summary of the folded provenance line."""

SITE_DIR = "_downloads/tj"
"""Where, inside the HTML output, the extension puts each chapter's tables and the data files read."""


def display_path(path: str | Path, root: str | Path) -> str:
    """``path`` relative to the book's ``root`` (``data/verdicts.jsonl``); a file elsewhere (a
    reader's folder outside the book) as its folder and name (``mine/verdicts.jsonl``)."""
    p, r = Path(path).resolve(), Path(root).resolve()
    try:
        return p.relative_to(r).as_posix()
    except ValueError:
        return f"{p.parent.name}/{p.name}"


def site_data_path(path: str | Path, sha256: str, root: str | Path) -> str:
    """Where the site keeps its copy of a data file, under ``_downloads/tj/data/``: a file of the book at
    its path in the book; a file elsewhere (a reader's folder) under ``outside/`` and the first 16 hex
    digits of its sha256, so that two folders of the same name (a reader's ``data/`` beside the book's)
    never share an address."""
    p, r = Path(path).resolve(), Path(root).resolve()
    try:
        return p.relative_to(r).as_posix()
    except ValueError:
        return f"outside/{sha256[:16]}/{p.name}"


def _origin(obj: Any) -> tuple[str | None, list[dict[str, Any]]]:
    """The function that computed ``obj`` (if one names itself) and the data files read by now (path in the
    book, sha256, size)."""
    info = computed(obj)
    files = [{"path": display_path(f.path, repo_root()), "sha256": f.sha256, "size": f.size} for f in files_read()]
    return (info.made_by if info else None), files


def record_table(
    frame: pd.DataFrame,
    *,
    name: str,
    caption: str,
    decimals: int | Mapping[str, int],
    counts: Sequence[str],
    index: bool,
) -> None:
    """Record the table ``name`` during a build: ``tables/<name>.csv`` (the frame's values as the function
    returned them, before the book's formatting), ``tables/<name>.json`` (the same values, pandas'
    ``split`` layout, with the caption, the function, the data files and the display's decimals) and
    ``tables/<name>.meta.json`` (that description alone, for the extension)."""
    if records_dir() is None:
        return
    made_by, files = _origin(frame)
    meta = {
        "name": name,
        "caption": caption,
        "made_by": made_by,
        "files": files,
        "index_levels": frame.index.nlevels,
        "column_levels": frame.columns.nlevels,
        "decimals": decimals if isinstance(decimals, int) else dict(decimals),
        "counts": list(counts),
    }
    values = json.loads(frame.to_json(orient="split", default_handler=str))
    write_record(f"tables/{name}.csv", frame.to_csv())
    write_record(f"tables/{name}.json", json.dumps({**meta, **values}, indent=1, ensure_ascii=False) + "\n")
    write_record(f"tables/{name}.meta.json", json.dumps(meta, indent=1, ensure_ascii=False) + "\n")


def figure_key(alt: str) -> str:
    """The record name of a figure: a digest of its alt text (what the page's image carries)."""
    return hashlib.sha256(alt.strip().encode("utf-8")).hexdigest()[:16]


def record_figure(fig: Any, alt: str, made_by: str | None = None) -> None:
    """Record, during a build, the function that computed figure ``fig`` (or ``made_by``, for a figure
    drawn as text) and the files read by then."""
    if records_dir() is None:
        return
    tagged, files = _origin(fig)
    made_by = made_by or tagged
    meta = {"alt": alt, "made_by": made_by, "files": files}
    write_record(f"figures/{figure_key(alt)}.meta.json", json.dumps(meta, indent=1, ensure_ascii=False) + "\n")


# --- what the extension writes into the page ------------------------------------------------------
@dataclass(frozen=True)
class BuildState:
    """What the whole build shares: the package version, the commit, the notebooks' address."""

    version: str
    commit: str
    """The commit's first 12 hex digits, ``, with uncommitted changes`` on a dirty tree (:func:`short_commit`)."""
    notebook_base: str
    """The address notebooks sit under (``https://github.com/OWNER/REPO/blob/BRANCH/``), or ``""``."""


def short_commit(commit: str) -> str:
    """:func:`trajectory_judge.book.building.execution_page.build_commit`'s answer with the hash cut to :data:`SHORT` digits."""
    head, sep, rest = commit.partition(",")
    if len(head) == 40 and all(c in "0123456789abcdef" for c in head):
        head = head[:SHORT]
    return head + sep + rest


def _sha(path: str, sha256: str) -> str:
    return (
        f'<code class="tj-sha" data-path="{html.escape(path)}" data-sha256="{sha256}" '
        f'title="sha256 {sha256}">{sha256[:SHORT]}</code>'
    )


def provenance_html(made_by: str | None, files: Sequence[Mapping[str, Any]], state: BuildState, chapter: str) -> str:
    """The folded line under a table or figure: the function, the data files read by then with their
    short sha256, the package version and commit, and the chapter's notebook."""
    who = (
        f"Computed by <code>{html.escape(made_by)}</code>"
        if made_by
        else "Computed in a cell of this chapter's notebook"
    )
    reads = "; ".join(f"<code>{html.escape(f['path'])}</code> {_sha(f['path'], f['sha256'])}" for f in files)
    reads = (
        f"; the data files the chapter had read by the time it showed this: {reads}"
        if reads
        else "; the chapter had read no data file by then"
    )
    nb = f"notebooks/{chapter}.ipynb"
    link = (
        f'<a href="{html.escape(state.notebook_base + nb)}">{nb}</a>' if state.notebook_base else f"<code>{nb}</code>"
    )
    commit = html.escape(state.commit)
    return (
        f'<details class="tj-provenance"><summary>{SUMMARY}</summary>\n<p>{who}{reads}. '
        f"trajectory-judge {html.escape(state.version)}, commit <code>{commit}</code>; notebook {link}.</p>\n</details>\n"
    )


@dataclass(frozen=True)
class Download:
    """A file of the site a reader can download: its label, address from the page, sha256 and size."""

    label: str
    href: str
    sha256: str
    size: int


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} kB" if n < 1024**2 else f"{n / 1024**2:.1f} MB"


def _item(d: Download) -> str:
    if not d.href:  # a file outside the book and the reader's folder (the release's cache): named, not copied
        return f"<code>{html.escape(d.label)}</code> ({_size(d.size)}, sha256 {_sha(d.label, d.sha256)}; not copied into the site)"
    return (
        f'<a class="tj-download" href="{html.escape(d.href)}" download>{html.escape(d.label)}</a> '
        f"({_size(d.size)}, sha256 {_sha(d.href, d.sha256)})"
    )


def publishable(path: str | Path, root: str | Path) -> bool:
    """Whether the site may carry a copy of ``path``: a file of the book (its ``data/``) or of the
    folder it is built on (``TJ_DATA``), never of a cache outside them such as the published release's."""
    p = Path(path).resolve()
    try:
        folders = [Path(root).resolve(), data_dir(root)]
    except FileNotFoundError:
        folders = [Path(root).resolve()]
    return any(p.is_relative_to(f) for f in folders)


TABLES_INTRO = (
    "Each table of this page as the package's function returned it, before the page formats it: "
    "numbers unrounded, a value printed with its interval as that text."
)
DATA_INTRO = "The data files this chapter read:"


def table_links_html(files: Sequence[Download]) -> str:
    """A table's downloads on one line: ``CSV (1 kB, sha256 …) · JSON (3 kB, sha256 …)``."""
    return " · ".join(_item(d) for d in files)


def data_files_html(data: Sequence[Download]) -> str:
    """The list of data files a chapter read, each a download (or, outside the book, named) with its sha256."""
    items = "".join(f"<li>{_item(d)}</li>\n" for d in data)
    return f'<p>{html.escape(DATA_INTRO)}</p>\n<ul class="tj-downloads">\n{items}</ul>\n'
