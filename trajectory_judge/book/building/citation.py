"""How to cite the paper and this edition, computed from ``CITATION.cff`` (the one source).

``CITATION.cff`` describes the edition and holds, under ``references``, the paper and the authors'
released artifact. From it come the landing page's two BibTeX entries (:func:`paper_bibtex`,
:func:`edition_bibtex`, put on the page by the book's ``tj_cite`` extension), its links
(:func:`cite_links`) and ``.zenodo.json`` (:func:`zenodo_metadata`; after editing ``CITATION.cff``,
``python -c "from trajectory_judge.book.building.citation import write_zenodo; write_zenodo()"`` rewrites it). :func:`set_repository_code`
follows the hosting repository when ``python -m trajectory_judge.book config`` renames it.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from trajectory_judge.book.paths import repo_root
from trajectory_judge.fileio import write_text_if_changed

CITATION_FILE = "CITATION.cff"
ZENODO_FILE = ".zenodo.json"
PAPER_KEY = "mohammadi2026trajectoryjudge"
"""The paper's BibTeX key, the same as in ``book/references.bib``."""

ARXIV_DOI_PREFIX = "10.48550/arXiv."
"""How an arXiv DOI begins; what marks the paper among the references."""

OTHERS = "others"
"""An author entity standing for the authors the reference material does not name (BibTeX ``and others``)."""

_ACRONYM = re.compile(r"\b([A-Z]{2,})\b")
_REPOSITORY_CODE = re.compile(r"^repository-code: *\S*[^\n]*$", re.M)


def load_citation(root: str | Path | None = None) -> dict[str, Any]:
    """``CITATION.cff`` of the book at ``root`` (default: the book around the working directory), parsed."""
    path = Path(root or repo_root()) / CITATION_FILE
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "title" not in data:
        raise ValueError(f"{path}: not a CITATION.cff mapping with a title")
    return data


def paper(cff: Mapping[str, Any]) -> dict[str, Any]:
    """The paper among the references: the one whose DOI is an arXiv DOI."""
    for ref in cff.get("references", []):
        if str(ref.get("doi", "")).startswith(ARXIV_DOI_PREFIX):
            return ref
    raise ValueError(f"{CITATION_FILE}: no reference with an arXiv DOI ({ARXIV_DOI_PREFIX}...)")


def release(cff: Mapping[str, Any]) -> dict[str, Any]:
    """The authors' released artifact among the references: the one of type ``software``."""
    for ref in cff.get("references", []):
        if ref.get("type") == "software":
            return ref
    raise ValueError(f"{CITATION_FILE}: no reference of type software (the authors' release)")


def arxiv_id(ref: Mapping[str, Any]) -> str:
    """``2609.00038`` from the reference's arXiv DOI."""
    return str(ref["doi"]).removeprefix(ARXIV_DOI_PREFIX)


def author_name(author: Mapping[str, Any]) -> str:
    """One CFF author as BibTeX writes it: ``Family, Given``, an entity in braces, or ``others``."""
    if "family-names" in author:
        family = " ".join(p for p in (author.get("name-particle"), author["family-names"]) if p)
        given = author.get("given-names")
        return f"{family}, {given}" if given else family
    name = str(author["name"])
    return OTHERS if name == OTHERS else "{" + name + "}"


def authors_field(authors: list[Mapping[str, Any]]) -> str:
    """The BibTeX ``author`` field of a CFF author list."""
    return " and ".join(author_name(a) for a in authors)


def bibtex_title(title: str) -> str:
    """A title with its acronyms braced (so a style keeps ``LLM`` capitalised) and an em dash as ``---``."""
    return _ACRONYM.sub(r"{\1}", title).replace("\u2014", "---")


@dataclass(frozen=True)
class BibEntry:
    """One BibTeX entry."""

    kind: str
    """The entry type (``misc``)."""
    key: str
    """The citation key."""
    fields: tuple[tuple[str, str], ...]
    """(name, value) pairs, in the order written."""

    def to_bibtex(self, width: int = 78) -> str:
        """The entry as BibTeX, fields aligned, a long value wrapped at spaces under its first line."""
        pad = max(len(name) for name, _ in self.fields)
        lines = []
        for name, value in self.fields:
            head = f"  {name.ljust(pad)} = {{"
            lines.append(
                textwrap.fill(
                    value + "}",
                    width,
                    initial_indent=head,
                    subsequent_indent=" " * len(head),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        return f"@{self.kind}{{{self.key},\n" + ",\n".join(lines) + "\n}"


def paper_bibtex(cff: Mapping[str, Any]) -> str:
    """The paper's BibTeX entry as text, from its reference in ``CITATION.cff``."""
    ref = paper(cff)
    fields = [
        ("author", authors_field(ref["authors"])),
        ("title", bibtex_title(ref["title"])),
        ("year", str(ref["year"])),
        ("eprint", arxiv_id(ref)),
        ("archiveprefix", "arXiv"),
        ("doi", str(ref["doi"])),
        ("url", str(ref["url"])),
    ]
    if ref.get("notes"):
        fields.append(("note", str(ref["notes"])))
    return BibEntry("misc", PAPER_KEY, tuple(fields)).to_bibtex()


def edition_bibtex(cff: Mapping[str, Any], year: str | int) -> str:
    """This edition's BibTeX entry as text, from ``CITATION.cff``; ``year`` is the book's (its copyright year)."""
    key = "trajectoryjudge" + str(year) + "edition"
    ref = paper(cff)
    fields = (
        ("author", authors_field(cff["authors"])),
        ("title", bibtex_title(cff["title"])),
        ("year", str(year)),
        ("version", str(cff["version"])),
        ("url", str(cff["repository-code"])),
        ("note", f"Version {cff['version']}; an executable edition of arXiv:{arxiv_id(ref)}"),
    )
    return BibEntry("misc", key, fields).to_bibtex()


def cite_links(cff: Mapping[str, Any]) -> str:
    """The paper's arXiv id and DOI and the release's DOI, as Markdown links."""
    ref, rel = paper(cff), release(cff)
    return (
        f"arXiv [{arxiv_id(ref)}]({ref['url']}), DOI [{ref['doi']}](https://doi.org/{ref['doi']}); "
        f"the authors' release of code and verdicts, DOI [{rel['doi']}](https://doi.org/{rel['doi']})"
    )


def _creator(author: Mapping[str, Any]) -> dict[str, str]:
    return {"name": author_name(author) if "family-names" in author else str(author["name"])}


def related_identifiers(cff: Mapping[str, Any]) -> list[dict[str, str]]:
    """Zenodo's related identifiers: the paper this edition supplements, the release its data come
    from, and the repository that hosts it."""
    ref, rel = paper(cff), release(cff)
    rows = (
        (ref["doi"], "isSupplementTo", "publication-preprint", "doi"),
        (rel["doi"], "isDerivedFrom", "software", "doi"),
        (cff["repository-code"], "isSupplementTo", "software", "url"),
    )
    return [{"identifier": str(i), "relation": r, "resource_type": t, "scheme": sc} for i, r, t, sc in rows]


def zenodo_metadata(cff: Mapping[str, Any]) -> dict[str, Any]:
    """``.zenodo.json`` (Zenodo's deposit metadata) for the edition ``CITATION.cff`` describes."""
    return {
        "title": cff["title"],
        "upload_type": "software",
        "version": str(cff["version"]),
        "description": cff["abstract"],
        "creators": [_creator(a) for a in cff["authors"]],
        "license": cff["license"],
        "keywords": list(cff.get("keywords", [])),
        "related_identifiers": related_identifiers(cff),
    }


def zenodo_text(cff: Mapping[str, Any]) -> str:
    """``.zenodo.json`` as written: indented JSON, UTF-8, one newline at the end."""
    return json.dumps(zenodo_metadata(cff), indent=2, ensure_ascii=False) + "\n"


def write_zenodo(book: str | Path | None = None) -> bool:
    """Rewrite ``.zenodo.json`` from ``CITATION.cff`` (atomically) if it differs; whether it was rewritten."""
    root = Path(book) if book is not None else repo_root()
    return write_text_if_changed(root / ZENODO_FILE, zenodo_text(load_citation(root)))


def set_repository_code(url: str, book: str | Path | None = None) -> list[Path]:
    """Name ``url`` as ``CITATION.cff``'s ``repository-code`` and rewrite ``.zenodo.json`` (if there is
    one) from it; the files rewritten, each atomically. A book without ``CITATION.cff`` is left as it is."""
    root = Path(book) if book is not None else repo_root()
    path = root / CITATION_FILE
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    if not _REPOSITORY_CODE.search(text):
        raise ValueError(f"{path}: no top-level `repository-code:` line")
    written = []
    if write_text_if_changed(path, _REPOSITORY_CODE.sub(f"repository-code: {url}", text, count=1)):
        written.append(path)
    if (root / ZENODO_FILE).exists() and write_zenodo(root):
        written.append(root / ZENODO_FILE)
    return written
