"""Sphinx extension of the book: "How this was made" under each table and figure, and a chapter's downloads.

While a chapter executes, :func:`trajectory_judge.book.render.tables.table` and
:func:`trajectory_judge.book.render.figures.show` leave records in the build's records folder
(:mod:`trajectory_judge.book.building.provenance_lines`). Right after a chapter is read (its notebook executed), a
transform puts under each numbered table and each figure a folded line naming the function that
computed it, the data files read by then with their short sha256, the package version, the commit
(read here, at build time, so it is never in a committed notebook) and the chapter's notebook; and it
ends each chapter that recorded tables with a "Downloads" section: every table as CSV and JSON and
every data file the chapter read, each with its sha256. When the build finishes those files are
copied into the site (``_downloads/tj/``) byte for byte.

Everything a page needs is on disk before the page is read, so reading in parallel is safe.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from tj_records import records_root

import trajectory_judge
from trajectory_judge.book.building.execution_page import build_commit
from trajectory_judge.book.building.hosting import hosting
from trajectory_judge.book.building.provenance_lines import (
    SITE_DIR,
    TABLES_INTRO,
    BuildState,
    Download,
    data_files_html,
    display_path,
    figure_key,
    provenance_html,
    publishable,
    short_commit,
    site_data_path,
    table_links_html,
)
from trajectory_judge.book.building.records import chapter_files

_BLOCK = re.compile(r'^\s*<div class="tj-table-block" data-name="([^"]+)"')
_HTML_FIGURE = re.compile(r'^\s*<div class="tj-figure" role="img" aria-label="([^"]*)"')
_STATE: dict[str, BuildState] = {}


def _state(app) -> BuildState:
    if "state" not in _STATE:
        root = Path(app.srcdir)
        try:
            where = hosting(root)
            base = f"{where.url}/blob/{where.branch}/"
        except (OSError, ValueError):
            base = ""
        _STATE["state"] = BuildState(trajectory_judge.__version__, short_commit(build_commit(root)), base)
    return _STATE["state"]


def _chapter(docname: str) -> str | None:
    head, _, stem = docname.rpartition("/")
    return stem if head == "notebooks" else None


def _meta(folder: Path, kind: str, key: str) -> dict | None:
    path = folder / kind / f"{key}.meta.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _find(root: Path, chapter: str, kind: str, key: str) -> tuple[str, dict] | None:
    """The record ``key`` that ``chapter`` left while it executed."""
    meta = _meta(root / chapter, kind, key)
    return (chapter, meta) if meta is not None else None


def _ancestors(node: nodes.Node, depth: int) -> list[nodes.Node]:
    out: list[nodes.Node] = []
    p = node.parent
    while p is not None and len(out) < depth:
        out.append(p)
        p = p.parent
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Provenance(SphinxTransform):
    """A provenance line under each recorded table and figure; downloads at the end of a chapter."""

    default_priority = 510  # after tj_tables has numbered tables (500) and given figures alt text (501)

    def apply(self, **kwargs) -> None:
        root = records_root(self.app)
        chapter = _chapter(self.env.docname)
        if chapter is None:  # a prose page: its glued outputs say how they were made in their own chapter
            return
        state = _state(self.app)
        shown: list[str] = []
        for raw in list(self.document.findall(nodes.raw)):
            text = raw.astext()
            m = _BLOCK.match(text)
            if m:
                name = html.unescape(m.group(1))
                found = _find(root, chapter, "tables", name)
                anchor = raw.parent if raw.parent.__class__.__name__ == "table_figure" else raw
                if found:
                    shown.append(name)
            else:
                m = _HTML_FIGURE.match(text)
                found = _find(root, chapter, "figures", figure_key(html.unescape(m.group(1)))) if m else None
                anchor = raw
            if found:
                self._after(anchor, found, state)
        for img in list(self.document.findall(nodes.image)):
            found = _find(root, chapter, "figures", figure_key(img.get("alt", ""))) if img.get("alt") else None
            if found:  # under the figure's caption when it has one (myst-nb puts the image in a bundle inside it)
                fig = next((a for a in _ancestors(img, 3) if isinstance(a, nodes.figure)), None)
                self._after(fig if fig is not None else img, found, state)
        self._downloads(root / chapter, chapter, shown)

    def _after(self, node: nodes.Node, found: tuple[str, dict], state: BuildState) -> None:
        chapter, meta = found
        line = nodes.raw("", provenance_html(meta["made_by"], meta["files"], state, chapter), format="html")
        node.parent.insert(node.parent.index(node) + 1, line)

    def _downloads(self, folder: Path, chapter: str, shown: list[str]) -> None:
        tables_dir = folder / "tables"
        names = (
            sorted(p.name.removesuffix(".meta.json") for p in tables_dir.glob("*.meta.json"))
            if tables_dir.is_dir()
            else []
        )
        if not names:
            return
        names = [n for n in shown if n in names] + [n for n in names if n not in shown]
        up = "../" * self.env.docname.count("/")
        items = nodes.bullet_list(classes=["tj-downloads"])
        for name in names:
            meta = _meta(folder, "tables", name) or {}
            files = []
            for ext in ("csv", "json"):
                path = tables_dir / f"{name}.{ext}"
                files.append(
                    Download(
                        ext.upper(), f"{up}{SITE_DIR}/{chapter}/tables/{name}.{ext}", _sha256(path), path.stat().st_size
                    )
                )
            para = nodes.paragraph()
            if name in shown:  # "Table 12", linked to the table
                para += addnodes.pending_xref(
                    "",
                    nodes.inline("", name),
                    refdomain="std",
                    reftype="numref",
                    reftarget=nodes.fully_normalize_name(name),
                    refexplicit=False,
                    refwarn=True,
                    refdoc=self.env.docname,
                )
            else:
                para += nodes.inline("", meta.get("caption") or name)
            para += nodes.raw("", ": " + table_links_html(files), format="html")
            items += nodes.list_item("", para)
        src = Path(self.app.srcdir)
        data = [
            Download(
                display_path(f.path, src),
                f"{up}{SITE_DIR}/data/{site_data_path(f.path, f.sha256, src)}" if publishable(f.path, src) else "",
                f.sha256,
                f.size,
            )
            for f in chapter_files(records_root(self.app), chapter)
        ]
        section = nodes.section("", ids=["tj-downloads"], classes=["tj-downloads-section"])
        section += nodes.title("", "Downloads")
        section += nodes.paragraph("", TABLES_INTRO)
        section += items
        section += nodes.raw("", data_files_html(data), format="html")
        parents = [s for s in self.document.children if isinstance(s, nodes.section)]
        (parents[-1] if parents else self.document).append(section)


def _copy_downloads(app, exception) -> None:
    """Copy every chapter's tables and the data files it read into the site."""
    if exception is not None or app.builder.format != "html":
        return
    root, out, src = records_root(app), Path(app.outdir) / SITE_DIR, Path(app.srcdir)
    shutil.rmtree(out, ignore_errors=True)
    for docname in sorted(app.env.found_docs):
        chapter = _chapter(docname)
        if chapter is None or not (root / chapter / "tables").is_dir():
            continue
        for path in sorted((root / chapter / "tables").iterdir()):
            if path.suffix in (".csv", ".json") and not path.name.endswith(".meta.json"):
                target = out / chapter / "tables" / path.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        for f in chapter_files(root, chapter):
            target = out / "data" / site_data_path(f.path, f.sha256, src)
            if not target.exists() and f.path.is_file() and publishable(f.path, src):
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f.path, target)


def setup(app):
    app.setup_extension("tj_records")
    app.connect("builder-inited", _state)
    app.add_transform(Provenance)
    app.connect("build-finished", _copy_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
