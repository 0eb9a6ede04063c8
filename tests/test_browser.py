"""The built book as a reader sees it: every page in headless Chromium at desktop and phone width.

Each check counts what a reader should never meet, and its threshold is zero: code cells left
visible in the paper's chapters, tables labelled "Fig.", tables wider than the text column at
1400 px, raw cells (NaN, None, <NA>, e-notation), snake_case headers, images without real alt
text, failed requests or requests off the loopback host, missing launch buttons on a chapter
(``_config.yml`` names the hosting repository). A page/check that fails
today is marked ``xfail(strict=True)`` with its measured count in :data:`KNOWN`, so the test records
the current state and fails as soon as the chapter is fixed, until the mark is removed.

Needs the built book (``_build/html``) and the system Chromium; otherwise it is skipped. On a
nonzero count a screenshot of the page is saved in ``_build/browser/``.

    .venv/bin/python -m pytest -p no:nbval -o addopts="" -m browser tests/test_browser.py
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WIDTHS = {"desktop": (1400, 1000), "phone": (390, 844)}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html (build it first)"),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium (apt-get install -y chromium)"),
]


def _pages() -> tuple[list[str], set[str]]:
    """Every page of the table of contents (as html paths), and the paper's notebook chapters."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages, paper = [toc["root"]], set()
    for part in toc["parts"]:
        for ch in part["chapters"]:
            pages.append(ch["file"])
            if part["caption"] == "The paper" and ch["file"].startswith("notebooks/"):
                paper.add(ch["file"])
    return pages, paper


PAGES, PAPER_CHAPTERS = _pages()
NOTEBOOK_PAGES = {p for p in PAGES if p.startswith("notebooks/")}
CHECKS = ("visible_code", "tables_as_figures", "overflowing_tables", "raw_cells", "snake_case_headers",
          "images_without_alt", "failed_requests", "off_host_requests", "missing_launch_buttons")

# Measured on the chapters before their restyling (issue 16; `.ci/run`, 1400 and 390 px). Each entry
# is the largest count over the two widths. Delete an entry when its chapter is fixed.
KNOWN: dict[tuple[str, str], int] = {
}

MEASURE_JS = r"""(paper) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const column = article.clientWidth;
  // inside a closed <details> (a hide-input "show code" toggle) nothing is shown, although Chromium
  // still reports boxes for it
  const visible = e => !e.closest('details:not([open])') && !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const cells = [...article.querySelectorAll('td, th')].map(c => c.innerText.trim());
  const heads = [...article.querySelectorAll('thead th, th.col_heading, th.index_name')].map(c => c.innerText.trim());
  const figs = [...article.querySelectorAll('figure')].filter(f => {
    const num = f.querySelector('figcaption .caption-number');
    return num && num.innerText.trim().startsWith('Fig') && f.querySelector('table');
  });
  const imgs = [...article.querySelectorAll('img')].filter(i => {
    const alt = (i.getAttribute('alt') || '').trim();
    const file = (i.getAttribute('src') || '').split('/').pop();
    return !alt || alt === file || /\.(png|svg|jpe?g)$/i.test(alt);
  });
  const hrefs = [...document.querySelectorAll('a[href]')].map(a => a.href);
  return {
    visible_code: paper ? [...article.querySelectorAll('div.cell div.cell_input')].filter(e => visible(e) && !e.closest('details:not([open])')).length : 0,
    tables_as_figures: figs.length,
    overflowing_tables: [...article.querySelectorAll('table')].filter(t => t.getBoundingClientRect().width > column + 1).length,
    raw_cells: cells.filter(t => /^(nan|none|<na>|nat)$/i.test(t) || /\d(\.\d+)?e[+-]?\d+/i.test(t)).length,
    snake_case_headers: heads.filter(t => /^[a-z0-9]+(_[a-z0-9]+)+$/.test(t)).length,
    images_without_alt: imgs.length,
    binder: hrefs.some(h => h.startsWith('https://mybinder.org/v2/gh/')),
    colab: hrefs.some(h => h.startsWith('https://colab.research.google.com/github/')),
    page_width: document.documentElement.scrollWidth,
  };
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _is_loopback(url: str) -> bool:
    if url.startswith(("data:", "blob:", "about:")):
        return True
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(HTML)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _measure(browser, url: str, size: tuple[int, int], paper: bool, shot: Path) -> dict:
    """The counts of one page at one viewport; a screenshot when any count is nonzero."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    failed, off_host = [], []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("request", lambda r: None if _is_loopback(r.url) else off_host.append(r.url))
    page.goto(url, wait_until="networkidle")
    counts = page.evaluate(MEASURE_JS, paper)
    counts.update(failed_requests=len(failed), off_host_requests=len(off_host))
    if size[0] != 1400:
        counts["overflowing_tables"] = 0  # at phone width a wide table scrolls in its own box
    if any(counts[c] for c in CHECKS if isinstance(counts.get(c), int)):
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=False)
    page.close()
    return counts


@pytest.fixture(scope="module")
def measured(base_url) -> dict[tuple[str, str], dict]:
    """Counts for every (page, width), measured once."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            for doc in PAGES:
                for width, size in WIDTHS.items():
                    shot = SHOTS / f"{doc.replace('/', '-')}-{width}.png"
                    out[(doc, width)] = _measure(browser, base_url + doc + ".html", size, doc in PAPER_CHAPTERS, shot)
        finally:
            browser.close()
    return out


def _count(measured: dict, doc: str, check: str) -> int:
    if check == "missing_launch_buttons":
        if doc not in NOTEBOOK_PAGES:  # _config.yml names the hosting repository, so every chapter has them
            return 0
        return sum(not (m["binder"] and m["colab"]) for (d, _), m in measured.items() if d == doc)
    return max(m[check] for (d, _), m in measured.items() if d == doc)


def _cases():
    for doc in PAGES:
        for check in CHECKS:
            known = KNOWN.get((doc, check))
            marks = [pytest.mark.xfail(strict=True, reason=f"measured {known} before the chapter's restyling (issue 16)")] if known else []
            yield pytest.param(doc, check, id=f"{doc}:{check}", marks=marks)


@pytest.mark.parametrize("doc, check", list(_cases()))
def test_page_has_none(measured, doc, check):
    n = _count(measured, doc, check)
    print(f"COUNT {doc} {check} {n}")
    assert n == 0, f"{doc}: {n} {check.replace('_', ' ')} (screenshot in {SHOTS})"


def test_no_page_scrolls_sideways_at_phone_width(measured):
    wide = {d: m["page_width"] for (d, w), m in measured.items() if w == "phone" and m["page_width"] > WIDTHS["phone"][0]}
    assert not wide, wide
