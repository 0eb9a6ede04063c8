"""The landing page's map of the book, from its table of contents: each part of ``_toc.yml`` with its chapters'
titles, each a link (:func:`book_map`), so the map names every chapter the book holds and no other."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from trajectory_judge.analysis.core.formatting import list_text
from trajectory_judge.book.render.claim_text import number_word

__all__ = ["Part", "book_map", "chapter_title", "toc_parts"]

TOC = "_toc.yml"
"""The book's table of contents, at the root of the book."""

_FENCE = re.compile(r"^(```|~~~)")
_TITLE = re.compile(r"^# (.+?)\s*$")


@dataclass(frozen=True)
class Part:
    """One part of the table of contents."""

    caption: str
    """Its caption (``The paper``)."""
    chapters: tuple[tuple[str, str], ...]
    """Its chapters in order: (document name from the book's root, title)."""


def chapter_title(path: Path) -> str:
    """A page's title: its first level-one heading outside front matter and code cells."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced, front = False, bool(lines) and lines[0].strip() == "---"
    for i, line in enumerate(lines):
        if front:
            front = not (i > 0 and line.strip() == "---")
            continue
        if _FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced and (m := _TITLE.match(line)):
            return m.group(1)
    raise ValueError(f"{path}: no title (a line '# Title' outside code cells)")


def _page(root: Path, doc: str) -> Path:
    for suffix in (".md", ".ipynb"):
        if (root / (doc + suffix)).is_file():
            return root / (doc + suffix)
    raise FileNotFoundError(f"{TOC}: {doc!r} is not a page of the book (no {doc}.md under {root})")


def toc_parts(root: str | Path) -> list[Part]:
    """The parts of the book's ``_toc.yml`` under ``root``, each with its chapters' document names and titles."""
    root = Path(root)
    toc = yaml.safe_load((root / TOC).read_text(encoding="utf-8"))
    parts = toc.get("parts") if isinstance(toc, dict) else None
    if not parts:
        raise ValueError(f"{root / TOC}: no parts")
    out = []
    for part in parts:
        docs = [str(c["file"]).removesuffix(".md").removesuffix(".ipynb") for c in part.get("chapters") or ()]
        out.append(Part(str(part["caption"]), tuple((d, chapter_title(_page(root, d))) for d in docs)))
    return out


def book_map(root: str | Path) -> str:
    """The book's parts and chapters as MyST for the landing page: a sentence counting the parts, then one item per
    part, its caption and its chapters' titles, each linked (``{doc}``) to its page."""
    parts = toc_parts(root)
    items = []
    for p in parts:
        links = [f"{{doc}}`{title} </{doc}>`" for doc, title in p.chapters]
        items.append(f"- *{p.caption}*: {list_text(links)}.")
    return f"The book is in {number_word(len(parts))} parts:\n\n" + "\n".join(items) + "\n"
