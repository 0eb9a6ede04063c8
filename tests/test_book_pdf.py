"""The edition's PDF holds what the site shows: the landing page's glued findings, the main table's numbers and
every page of the table of contents, and the site links to it; without Chromium the PDF step says so and goes on.

Reads the built site (``_build/html``) and ``trajectory-judge.pdf`` in it (``make pdf``, book/_ext/tj_pdf.py),
the PDF's text as poppler's ``pdftotext`` extracts it (Debian's ``poppler-utils``; the browser target of the
Makefile installs it). Those tests are of the browser tier, skipped until both exist; the PDF step's own
messages are checked in the fast tier.

    .venv/bin/python -m pytest -p no:nbval -o addopts="" -m browser tests/test_book_pdf.py
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from tj_pdf import PDF_NAME, footer_title  # noqa: E402 (the extension's folder is on the path only from here)

PDF = HTML / PDF_NAME
PDFTOTEXT = shutil.which("pdftotext")


def needs_pdf(test):
    """The marks of a test that reads the built site and its PDF (the browser tier)."""
    for mark in (
        pytest.mark.skipif(PDFTOTEXT is None, reason="no pdftotext (apt-get install -y poppler-utils)"),
        pytest.mark.skipif(not PDF.is_file(), reason=f"no {PDF_NAME} in _build/html (make pdf)"),
        pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html (build it first)"),
        pytest.mark.browser,
    ):
        test = mark(test)
    return test


PAGE_OF = re.compile(r"^\s*\d+ / \d+\s*$")
"""The footer's page number (``12 / 236``), printed on every sheet."""


def flat(text: str) -> str:
    """``text`` without any whitespace: a phrase broken over lines or sheets in the PDF reads as it does on the page."""
    return re.sub(r"\s+", "", text)


@cache
def pdf_text() -> str:
    """The PDF's text, without the footer every sheet repeats (the title and the page number), flattened."""
    out = subprocess.run([PDFTOTEXT, "-enc", "UTF-8", str(PDF), "-"], capture_output=True, text=True, check=True)
    footer = flat(footer_title(ROOT))
    lines = [ln for ln in out.stdout.splitlines() if not PAGE_OF.match(ln) and flat(ln) != footer]
    return flat("\n".join(lines))


def _soup(page: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup((HTML / page).read_text(encoding="utf-8"), "html.parser")


@needs_pdf
def test_the_pdf_holds_every_sentence_the_landing_page_glues_in():
    # the landing's finding and its own-run paragraph are glued from the chapters (myst-nb glue)
    glued = [s.get_text(" ", strip=True) for s in _soup("book/intro.html").select("article span.pasted-text")]
    assert len(glued) >= 3 and any(re.search(r"\d", g) for g in glued)
    missing = [g for g in glued if flat(g) not in pdf_text()]
    assert not missing


@needs_pdf
def test_the_pdf_holds_every_number_of_the_main_table():
    fig = _soup("notebooks/results.html").find(id="tbl-main-detection")
    assert fig is not None, "no main table (tbl-main-detection) on the results page"
    cells = [td.get_text(" ", strip=True) for td in fig.select("td")]
    assert len(cells) >= 10 and all(re.search(r"\d", c) for c in cells)
    caption = fig.select_one("figcaption").get_text(" ", strip=True)
    assert flat(caption.replace("#", "")) in pdf_text()  # "Table N" and its caption, as the site numbers it
    assert [c for c in cells if flat(c) not in pdf_text()] == []


@needs_pdf
def test_the_pdf_holds_every_page_of_the_table_of_contents_in_its_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    text, at = pdf_text(), 0
    for doc in pages[1:]:
        title = _soup(f"{doc}.html").select_one("article h1").get_text(" ", strip=True).rstrip("#")
        found = text.find(flat(title), at)
        assert found >= 0, f"{doc}: its title {title!r} is not in the PDF after the page before it"
        at = found


@needs_pdf
def test_the_landing_page_and_every_download_menu_link_to_the_pdf():
    links = [a["href"] for a in _soup("book/intro.html").select("article a[href]")]
    assert f"../{PDF_NAME}" in links
    for page in ("book/intro.html", "notebooks/results.html", "book/guide/api.html"):
        menu = _soup(page).select("a.btn[href$='.pdf']")
        hrefs = {(HTML / page).parent.joinpath(a["href"]).resolve() for a in menu}
        assert PDF.resolve() in hrefs, page


# --- the PDF step's messages and the download menu's entry (fast tier) -------------------------------
def _site(tmp_path: Path) -> Path:
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / "index.html").write_text("<html></html>", encoding="utf-8")
    return tmp_path


def test_without_chromium_the_pdf_step_says_so_in_one_line_and_goes_on(tmp_path, monkeypatch, capsys):
    import tj_pdf

    monkeypatch.setattr(tj_pdf, "find_chromium", lambda: None)
    assert tj_pdf.main(["--root", str(_site(tmp_path))]) == 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no Chromium" in err and "the PDF is not made" in err
    assert not (tmp_path / "_build" / "html" / PDF_NAME).exists()


def test_without_a_built_book_the_pdf_step_fails_and_says_what_to_build(tmp_path, capsys):
    import tj_pdf

    assert tj_pdf.main(["--root", str(tmp_path)]) == 1
    assert "build it first (make book)" in capsys.readouterr().err


def test_the_download_menu_gets_the_pdf_in_the_themes_download_group_only():
    from types import SimpleNamespace

    import tj_pdf

    group = {"type": "group", "label": "download-buttons", "buttons": [{"label": "download-source-button"}]}
    other = {"type": "group", "label": "launch-buttons", "buttons": []}
    context = {"header_buttons": [other, group], "pathto": lambda name, resource: f"../{name}"}
    app = SimpleNamespace(builder=SimpleNamespace(name="html"))
    tj_pdf._download_entry(app, "notebooks/results", "page.html", context, None)
    assert [b["url"] for b in group["buttons"][1:]] == [f"../{PDF_NAME}"] and other["buttons"] == []
    tj_pdf._download_entry(SimpleNamespace(builder=SimpleNamespace(name="singlehtml")), "x", "page.html", context, None)
    assert len(group["buttons"]) == 2  # the single-page build (the PDF's source) has no menu to add to
