"""Sphinx extension of the book: the execution page, filled from this build once every chapter has run.

``{tj-execution} summary`` becomes the page's computed sentence; ``{tj-execution} chapters``,
``files`` and ``environment`` (with ``:name:`` and ``:caption:``) become numbered tables
(:class:`trajectory_judge.book.build.execution_page.ExecutionReport`). At read time each table is a placeholder
that ``tj_tables`` numbers like any other; at ``doctree-resolved``, after every document was read
(serially or in parallel), the placeholder is replaced by the table built from myst-nb's execution
data (``env.nb_metadata``, merged across parallel readers by myst-nb) and the kernels' records on disk
(``tj_records``). A record names the build that wrote it and myst-nb's data says when the notebook
ran, so a chapter whose outputs an earlier build made (a cache, an incremental build) is said to be so.
"""

from __future__ import annotations

import html
import os
import posixpath
import time
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective
from tj_records import records_root

from trajectory_judge.book.build.records import BUILD_ENV

PAGE_KEY = "tj_execution_page"
"""Key of a page holding the directive in myst-nb's per-document metadata (merged by myst-nb)."""

_MARK = "<!-- tj-execution:{} -->"
PARTS = ("summary", "chapters", "files", "environment")


class execution_summary(nodes.General, nodes.Element):
    """Placeholder for the page's computed sentence."""


class ExecutionDirective(SphinxDirective):
    required_arguments = 1
    option_spec = {"name": directives.unchanged, "caption": directives.unchanged}

    def run(self):
        from myst_nb.sphinx_ import NbMetadataCollector

        part = self.arguments[0]
        if part not in PARTS:
            raise self.error(f"tj-execution: part {part!r} is not one of {', '.join(PARTS)}")
        NbMetadataCollector.set_doc_data(self.env, self.env.docname, PAGE_KEY, True)
        if part == "summary":
            return [execution_summary()]
        name, caption = self.options.get("name", f"tbl-execution-{part}"), self.options.get("caption", "")
        block = (
            f'<div class="tj-table-block" data-name="{html.escape(name)}" data-caption="{html.escape(caption)}">\n'
            f"{_MARK.format(part)}</div>\n"
        )
        return [nodes.raw("", block, format="html")]  # tj_tables makes it "Table N"


def _book_order(env) -> list[str]:
    """Every document in the order of the book's table of contents."""
    seen: list[str] = []

    def walk(doc: str) -> None:
        if doc in seen:
            return
        seen.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return seen


def _report(app):
    from myst_nb.sphinx_ import NbMetadataCollector

    from trajectory_judge.book.build.execution_page import (
        ExecutionReport,
        build_commit,
        chapter_run,
        file_sha256,
        read_kernel_records,
    )

    env, root = app.env, Path(app.confdir)
    meta = NbMetadataCollector.get_doc_data(env)
    kernels = read_kernel_records(records_root(app))
    places = [("", root.resolve())]
    for label, var in (
        ("$TJ_DATA", "TJ_DATA"),
        ("$TJ_PAPER_DATA", "TJ_PAPER_DATA"),
        ("$TJ_RELEASE_DIR", "TJ_RELEASE_DIR"),
    ):
        if os.environ.get(var):
            places.append((label, (root / os.environ[var]).resolve()))
    build, started = os.environ.get(BUILD_ENV), getattr(app, "tj_build_started", None)
    runs = [
        chapter_run(
            doc,
            env.titles[doc].astext() if doc in env.titles else doc,
            meta[doc]["exec_data"],
            kernels.get(posixpath.basename(doc)),
            places,
            build=build,
            started=started,
        )
        for doc in _book_order(env)
        if meta.get(doc, {}).get("exec_data")
    ]
    reading = getattr(app, "tj_reading", None)
    from trajectory_judge.book.build.kernelfork import LAUNCHES

    return ExecutionReport(
        tuple(runs),
        file_sha256(root / ".ci" / "requirements.lock"),
        build_commit(root),
        reading[1] - reading[0] if reading and len(reading) == 2 else None,
        (LAUNCHES["forked"], LAUNCHES["anew"]),
    )


def _reading_started(app, env, docnames) -> None:
    app.tj_reading = [time.monotonic()]


def _fill(app, doctree, docname) -> None:
    from myst_nb.sphinx_ import NbMetadataCollector

    if not NbMetadataCollector.get_doc_data(app.env).get(docname, {}).get(PAGE_KEY):
        return
    from trajectory_judge.book.render.tables import table

    report = _report(app)
    for node in list(doctree.findall(execution_summary)):
        node.replace_self(nodes.paragraph(text=report.summary()))
    frames = {
        "chapters": (report.to_frame, {"Run time (s)": 1}),
        "files": (report.files_frame, {}),
        "environment": (report.environment_frame, {}),
    }
    for raw in list(doctree.findall(nodes.raw)):
        for part, (frame, decimals) in frames.items():
            if _MARK.format(part) in raw.astext():
                parent = raw.parent
                name = parent["names"][0] if parent.get("names") else f"tbl-execution-{part}"
                caption = next((c.astext() for c in parent.children if isinstance(c, nodes.caption)), "")
                out = table(
                    frame(),
                    name=name,
                    caption=caption,
                    head=None,
                    decimals=decimals,
                    counts=["Data files read", "Bytes"],
                ).html
                if part == "chapters":
                    out = _link_chapters(app, docname, report, out)
                raw.replace_self(nodes.raw("", f'<div class="tj-execution">\n{out}</div>\n', format="html"))


def _link_chapters(app, docname: str, report, text: str) -> str:
    """Each chapter's row label as a link to the chapter."""
    for c in report.chapters:
        href = html.escape(app.builder.get_relative_uri(docname, c.docname))
        text = text.replace(f">{c.title}</th>", f'><a class="reference internal" href="{href}">{c.title}</a></th>', 1)
    return text


def _refresh(app, env):
    """After any notebook executed, rewrite the pages that show the execution record."""
    from myst_nb.sphinx_ import NbMetadataCollector

    reading = getattr(app, "tj_reading", None)
    if reading and len(reading) == 1:
        reading.append(time.monotonic())  # the reading phase, every chapter's execution in it, is over
    if not NbMetadataCollector.new_exec_data(env):
        return []
    return [doc for doc, data in NbMetadataCollector.get_doc_data(env).items() if data.get(PAGE_KEY)]


def setup(app):
    app.setup_extension("tj_records")
    app.setup_extension("tj_tables")
    app.add_node(execution_summary)
    app.add_directive("tj-execution", ExecutionDirective)
    app.connect("env-before-read-docs", _reading_started, priority=100)  # before any extension starts kernels
    app.connect("env-updated", _refresh, priority=100)
    app.connect("doctree-resolved", _fill)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
