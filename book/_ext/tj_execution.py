"""Sphinx extension of the book: the execution page, filled from this build once every chapter was read.

``{tj-execution} summary`` becomes the page's computed sentence; ``{tj-execution} chapters``,
``files`` and ``environment`` (with ``:name:`` and ``:caption:``) become numbered tables
(:class:`trajectory_judge.book.building.execution_page.ExecutionReport`). At read time each table is a placeholder
that ``tj_tables`` numbers like any other; at ``doctree-resolved``, after every document was read
(serially or in parallel), the placeholder is replaced by the table built from where each chapter's
outputs came from (``tj_notebook_cache``: the committed notebook, an execution for this build, or an
earlier build's execution of the same data), myst-nb's execution data (``env.nb_metadata``) and the
kernels' records the executed notebooks carry (``tj_records``).
"""

from __future__ import annotations

import html
import os
import posixpath
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective
from tj_notebook_cache import sources
from tj_records import records_root

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

    from trajectory_judge.book.building.execution_page import (
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
    chapters = sources(app)
    runs = []
    for doc in _book_order(env):
        exec_data = meta.get(doc, {}).get("exec_data")
        if not exec_data:
            continue
        source = chapters.get(doc)
        if source is None:
            origin, runtime = "read", exec_data.get("runtime")
        else:
            origin = "committed" if source.origin == "committed" else "executed" if source.this_build else "cached"
            runtime = source.seconds
        runs.append(
            chapter_run(
                doc,
                env.titles[doc].astext() if doc in env.titles else doc,
                exec_data,
                kernels.get(posixpath.basename(doc)),
                places,
                origin=origin,
                runtime=runtime,
            )
        )
    data = f"$TJ_DATA ({Path(os.environ['TJ_DATA']).name}/)" if os.environ.get("TJ_DATA") else "data/"
    return ExecutionReport(
        tuple(runs),
        file_sha256(root / ".ci" / "requirements.lock"),
        build_commit(root),
        getattr(app, "tj_execute_seconds", None),
        data=data,
        digest=app.config.tj_data_digest or None,
    )


def _fill(app, doctree, docname) -> None:
    from myst_nb.sphinx_ import NbMetadataCollector

    pages = NbMetadataCollector.get_doc_data(app.env)
    # the single-page build (the PDF's source) resolves the whole book once, as the root document's tree
    whole = app.builder.name == "singlehtml" and docname == app.config.root_doc
    if not (pages.get(docname, {}).get(PAGE_KEY) or (whole and any(d.get(PAGE_KEY) for d in pages.values()))):
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
    """After any chapter was read again, rewrite the pages that show the execution record."""
    from myst_nb.sphinx_ import NbMetadataCollector

    if not NbMetadataCollector.new_exec_data(env):
        return []
    return [doc for doc, data in NbMetadataCollector.get_doc_data(env).items() if data.get(PAGE_KEY)]


def setup(app):
    app.setup_extension("tj_records")
    app.setup_extension("tj_notebook_cache")
    app.setup_extension("tj_tables")
    app.add_node(execution_summary)
    app.add_directive("tj-execution", ExecutionDirective)
    app.connect("env-updated", _refresh, priority=100)
    app.connect("doctree-resolved", _fill)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
