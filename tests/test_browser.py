"""The built book as a reader sees it: every page in headless Chromium at desktop and phone width.

Each check counts what a reader should never meet, and its threshold is zero: code cells left
visible in the paper's chapters, tables labelled "Fig.", tables wider than the text column at
1400 px, raw cells (NaN, None, <NA>, e-notation), snake_case headers, images without real alt
text, failed requests or requests off the loopback host, missing launch buttons on a chapter
(``_config.yml`` names the hosting repository), numbers cut in two (broken
over lines, or clipped by a box that cannot scroll), a table that scrolls at phone width without
its row labels held in place, figure text rendered under :data:`MIN_FIGURE_TEXT_PX` at phone
width, template seams in the prose (:data:`SEAMS`), console errors, and MathJax on a page without maths.
Book-wide, at most :data:`MAX_SCROLLING_SHARE` of the tables may scroll sideways at phone width (a table
scrolls when it is wider than the content width of the box that holds it), none by less than
:data:`MIN_SCROLL_PX`, and each that scrolls shows a shadow at its cut edge. The landing page's first
screen, at both widths, states the finding with a number and its verdict and links to the main table
and the figure; in the theme's dark mode every figure keeps a light ground. A page/check that fails
today is marked ``xfail(strict=True)`` with its measured count in :data:`KNOWN`, so the test records
the current state and fails as soon as the chapter is fixed, until the mark is removed.

Needs the built book (``_build/html``) and the system Chromium; otherwise it is skipped. On a
nonzero count a screenshot of the page is saved in ``_build/browser/``.

    .venv/bin/python -m pytest -p no:nbval -o addopts="" -m browser tests/test_browser.py
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WIDTHS = {"desktop": (1400, 1000), "phone": (390, 844)}

NEEDS_BOOK = [
    pytest.mark.browser,
    pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html (build it first)"),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium (apt-get install -y chromium)"),
]
"""The marks of every test that reads the built book in Chromium."""


def needs_book(test):
    for mark in reversed(NEEDS_BOOK):
        test = mark(test)
    return test


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
CHECKS = (
    "visible_code",
    "tables_as_figures",
    "overflowing_tables",
    "raw_cells",
    "snake_case_headers",
    "images_without_alt",
    "failed_requests",
    "off_host_requests",
    "missing_launch_buttons",
    "cut_numbers",
    "unstuck_scrolling_tables",
    "small_figure_text",
    "template_seams",
    "console_errors",
    "mathjax_without_maths",
)

MIN_FIGURE_TEXT_PX = 11.0
"""The smallest figure text a reader meets on a phone: SVG font size times the figure's rendered scale."""

MAX_SCROLLING_SHARE = 0.10
"""At most this share of the book's tables may scroll sideways at phone width."""

MIN_SCROLL_PX = 20
"""A table that scrolls at phone width hides at least this much: a scroll of a few pixels hides a last digit."""

LANDING = "book/intro"
"""The landing page: its first screen states the paper's finding."""

FIRST_SCREEN_LINKS = ("#tbl-main-detection", "#fig-recall-paper")
"""The anchors the landing's first screen links to: the main table and the paper's Figure 2's counterpart."""

SEAMS: tuple[str, ...] = (
    r"\bbetween (\d[\d.,]*) and \1(?![\d.,]*\d)",  # "between 400 and 400"
    r"\bfrom (\d[\d.,]*) to \1(?![\d.,]*\d)",  # "from 3 to 3"
    r"(?<![\d.,])(\d+) of (?:the |all |these |those )?\1(?![\d.,]*\d)",  # "5 of the 5", "400 of 400"
    r"\b[Tt]he 1 [a-z]",  # "Of the 1 outcome-view judge"
    r"\b[Aa]ll [01] [a-z]",  # "all 1 judge", "all 0 runs"
    r"(?<![\d.,])(?<!Table )(?<!Fig\. )(?<!§)1 (?:judges|trajectories|faults|episodes|runs|verdicts|seeds|types|models|cells|rows|pairs|tables|members|samples)\b",
    r"(?<![\d.,])(?<!Table )(?<!Fig\. )(?<!§)(?<!step )(?<!seed )\b1 (?:[a-z][a-z-]* )?(?:judge|trajectory|fault|episode|model)\b",
    # "1 outcome-view judge": a person writes "one" (or "the one") for a count of one
    r"\b(the|a|an|of|and|in|on|to|is) \1\b",  # a doubled word where two fragments meet
)
"""Template seams: prose assembled from data that no person would write (regexes, searched in the
text of paragraphs, list items and captions)."""

# Measured on the chapters before their restyling (issue 16; `.ci/run`, 1400 and 390 px). Each entry
# is the largest count over the two widths. Delete an entry when its chapter is fixed.
KNOWN: dict[tuple[str, str], int] = {}
"""Page/checks that fail today, with their measured counts (none: every chapter meets every check)."""

MEASURE_JS = r"""(paper) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const pad = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(pad.paddingLeft) - parseFloat(pad.paddingRight);
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
    raw_cells: cells.filter(t => /^(nan|none|<na>|nat)$/i.test(t) || /(?<![0-9a-z.])\d+(\.\d+)?e[+-]?\d+(?![0-9a-z])/i.test(t)).length,  // not a checksum's hex
    snake_case_headers: heads.filter(t => /^[a-z0-9]+(_[a-z0-9]+)+$/.test(t)).length,
    images_without_alt: imgs.length,
    binder: hrefs.some(h => h.startsWith('https://mybinder.org/v2/gh/')),
    colab: hrefs.some(h => h.startsWith('https://colab.research.google.com/github/')),
    page_width: document.documentElement.scrollWidth,
  };
}"""

LAYOUT_JS = r"""async ([seams, minPx]) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const pad = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(pad.paddingLeft) - parseFloat(pad.paddingRight);
  document.querySelectorAll('article details').forEach(d => { d.open = true; });  // a reader may open them
  await new Promise(r => setTimeout(r, 400));  // the page refits its tables when a dropdown opens
  // a number as a reader sees it: a run of digits and the signs, marks and brackets around them,
  // with no letter in it ("0.616", "(0.59–0.64)†", "−0.180", "13/16"; not "SHA-256" or "qwen2.5")
  const number = /(?<![^\s])[(\[]?[<>≤≥±+\-−]?\d[\d.,–\-−/%]*[)\]]?[*†‡,;]?(?![^\s])/g;
  const cut = [];
  const clippedBy = cell => {
    const r = cell.getBoundingClientRect();
    for (let a = cell.parentElement; a; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox === 'auto' || ox === 'scroll') return false;   // the reader scrolls to it
      if (ox === 'hidden' || ox === 'clip') {
        const b = a.getBoundingClientRect();
        if (r.right > b.right + 1 || r.left < b.left - 1) return true;
      }
    }
    return r.right > document.documentElement.clientWidth + 1;
  };
  for (const cell of article.querySelectorAll('td, th')) {
    if (!cell.getClientRects().length) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let split = false;
    for (let n = walker.nextNode(); n && !split; n = walker.nextNode()) {
      for (const m of n.data.matchAll(number)) {
        const range = document.createRange();
        range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
        if (tops.size > 1) { split = true; break; }
      }
    }
    if (split || (number.test(cell.innerText) && clippedBy(cell))) cut.push(cell.innerText.trim().slice(0, 40));
    number.lastIndex = 0;
  }
  const tables = [...article.querySelectorAll('table')].filter(t => t.getClientRects().length);
  // a table scrolls when it is wider than the content width of the box that holds it (the nearest
  // ancestor that scrolls sideways, else the article)
  const holderOf = t => { for (let a = t.parentElement; a && a !== article; a = a.parentElement) {
    const ox = getComputedStyle(a).overflowX; if (ox === 'auto' || ox === 'scroll') return a; } return article; };
  const overBy = t => { const h = holderOf(t), cs = getComputedStyle(h);
    return t.getBoundingClientRect().width - (h.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)); };
  const scrolling = tables.filter(t => overBy(t) > 1);
  const scrollPx = scrolling.map(t => Math.round(overBy(t)));
  // the cue: the holder draws a shadow (a gradient background) that stays at its edge while the content scrolls
  const uncued = scrolling.filter(t => { const cs = getComputedStyle(holderOf(t));
    return !(/radial-gradient/.test(cs.backgroundImage) && /scroll/.test(cs.backgroundAttachment)); });
  // the row label of a scrolling table (the last header cell of its first row that is not a group
  // heading, else its first cell) must stay in place while the rest scrolls
  const unstuck = scrolling.filter(t => {
    const row = [...t.querySelectorAll('tbody tr')].find(r => !r.classList.contains('tj-group'));
    const heads = row ? row.querySelectorAll(':scope > th') : [];
    const first = heads.length ? heads[heads.length - 1] : row && row.firstElementChild;
    return !first || getComputedStyle(first).position !== 'sticky';
  });
  // figure text: SVG font size (matplotlib writes glyph groups as scale(s -s), s = size / 100, or
  // <text> with a font size) times the rendered scale (displayed width / viewBox width)
  const sizes = svgText => {
    const out = [];
    for (const m of svgText.matchAll(/scale\(([\d.]+) -([\d.]+)\)/g)) out.push(parseFloat(m[1]) * 100);
    for (const m of svgText.matchAll(/font(?:-size)?:[^;"]*?([\d.]+)px/g)) out.push(parseFloat(m[1]));
    return out;
  };
  const viewWidth = svgText => {
    const m = svgText.match(/viewBox="[\d.\-]+ [\d.\-]+ ([\d.]+) [\d.]+"/);
    return m ? parseFloat(m[1]) : NaN;
  };
  const figures = [];
  for (const img of article.querySelectorAll('img')) {
    if (!/\.svg$/i.test(img.getAttribute('src') || '') || !img.getClientRects().length) continue;
    const text = await (await fetch(img.src)).text();
    figures.push({src: img.getAttribute('src'), width: img.getBoundingClientRect().width, view: viewWidth(text), sizes: sizes(text)});
  }
  for (const svg of article.querySelectorAll('div.tj-figure svg')) {
    const text = svg.outerHTML;
    figures.push({src: 'inline', width: svg.getBoundingClientRect().width, view: viewWidth(text), sizes: sizes(text)});
  }
  const figText = figures.filter(f => f.sizes.length).map(f => ({src: f.src, px: Math.min(...f.sizes) * f.width / f.view}));
  const prose = [...article.querySelectorAll('p, li, figcaption, dd')]
    .filter(e => !e.closest('table, pre, div.cell_input, .highlight')).map(e => e.innerText.replace(/\s+/g, ' '));
  const seamHits = [];
  for (const t of prose) for (const s of seams) { const m = t.match(new RegExp(s)); if (m) seamHits.push(m[0]); }
  return {
    column, tables: tables.length, scrolling_tables: scrolling.length, scroll_px: scrollPx, uncued_scrolling_tables: uncued.length,
    maths: article.querySelectorAll('.math, mjx-container').length,
    cut_numbers: cut.length, cut_examples: cut.slice(0, 5),
    unstuck_scrolling_tables: unstuck.length,
    figure_text: figText, small_figure_text: figText.filter(f => f.px < minPx - 1e-6).length,
    template_seams: seamHits.length, seam_examples: seamHits.slice(0, 5),
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
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(HTML)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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


def _measure(browser, url: str, size: tuple[int, int], paper: bool, shot: Path, dark: bool = False) -> dict:
    """The counts of one page at one viewport, in the light or the dark colour scheme (the dark one's figure grounds
    and table contrast too); a screenshot when any count is nonzero."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]}, color_scheme="dark" if dark else "light")
    failed, off_host, errors, mathjax = [], [], [], []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: mathjax.append(r.url) if "mathjax" in r.url.lower() else None)
    page.on("request", lambda r: None if _is_loopback(r.url) else off_host.append(r.url))
    page.goto(url, wait_until="networkidle")
    counts = page.evaluate(MEASURE_JS, paper)
    counts.update(page.evaluate(LAYOUT_JS, [list(SEAMS), MIN_FIGURE_TEXT_PX]))
    if dark:
        counts["dark"] = page.evaluate(DARK_JS)
    counts.update(
        failed_requests=len(failed),
        off_host_requests=len(off_host),
        console_errors=len(errors),
        console_examples=errors[:3],
        mathjax_without_maths=int(bool(mathjax) and not counts["maths"]),
        mathjax_requests=len(mathjax),
    )
    if size[0] != 1400:
        counts["overflowing_tables"] = 0  # at phone width a wide table scrolls in its own box
    else:
        counts["small_figure_text"] = 0  # measured where it is smallest, on the phone
    if any(counts[c] for c in CHECKS if isinstance(counts.get(c), int)):
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=False)
    print(f"MEASURED {shot.stem} {counts}")
    page.close()
    return counts


@pytest.fixture(scope="module")
def measured(base_url) -> dict[tuple[str, str], dict]:
    """Counts for every (page, width), measured once: the desk in the light scheme, the phone in the dark one
    (the layout is the scheme's either way, so each page is read once per width and each scheme is seen)."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            for doc in PAGES:
                for width, size in WIDTHS.items():
                    shot = SHOTS / f"{doc.replace('/', '-')}-{width}.png"
                    out[(doc, width)] = _measure(
                        browser, base_url + doc + ".html", size, doc in PAPER_CHAPTERS, shot, dark=width == "phone"
                    )
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
            marks = (
                [pytest.mark.xfail(strict=True, reason=f"measured {known} before the chapter was fixed")]
                if known
                else []
            )
            yield pytest.param(doc, check, id=f"{doc}:{check}", marks=marks)


@needs_book
@pytest.mark.parametrize("doc, check", list(_cases()))
def test_page_has_none(measured, doc, check):
    n = _count(measured, doc, check)
    print(f"COUNT {doc} {check} {n}")
    assert n == 0, f"{doc}: {n} {check.replace('_', ' ')} (screenshot in {SHOTS})"


@needs_book
def test_no_page_scrolls_sideways_at_phone_width(measured):
    wide = {
        d: m["page_width"] for (d, w), m in measured.items() if w == "phone" and m["page_width"] > WIDTHS["phone"][0]
    }
    assert not wide, wide


@needs_book
def test_at_most_a_tenth_of_the_tables_scroll_at_phone_width(measured):
    phone = [m for (_, w), m in measured.items() if w == "phone"]
    total, scrolling = sum(m["tables"] for m in phone), sum(m["scrolling_tables"] for m in phone)
    print(f"SCROLLING {scrolling} of {total} tables at {WIDTHS['phone'][0]} px")
    assert total and scrolling <= MAX_SCROLLING_SHARE * total, f"{scrolling} of {total} tables scroll at phone width"


@needs_book
def test_no_table_scrolls_by_less_than_min_scroll_at_phone_width(measured):
    small = {d: [px for px in m["scroll_px"] if px < MIN_SCROLL_PX] for (d, w), m in measured.items() if w == "phone"}
    assert not {d: v for d, v in small.items() if v}, small


@needs_book
def test_every_scrolling_table_shows_a_cue_at_its_cut_edge(measured):
    uncued = {d: m["uncued_scrolling_tables"] for (d, w), m in measured.items() if m["uncued_scrolling_tables"]}
    assert not uncued, uncued


@needs_book
def test_mathjax_loads_where_there_is_maths(measured):
    # the other half of the mathjax_without_maths check: a page with maths still gets MathJax
    with_maths = [(d, m["mathjax_requests"]) for (d, w), m in measured.items() if m["maths"]]
    assert with_maths and all(n for _, n in with_maths), with_maths


FIRST_SCREEN_JS = r"""(links) => {
  const h = window.innerHeight, w = window.innerWidth;
  const inView = r => r.width > 0 && r.top >= 0 && r.bottom <= h && r.left >= 0 && r.right <= w;
  const article = document.querySelector('article.bd-article') || document.body;
  const finding = [...article.querySelectorAll('p')].find(p => /The finding/.test(p.innerText));
  const seen = (re) => {
    if (!finding) return false;
    const walker = document.createTreeWalker(finding, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of n.data.matchAll(re)) {
        const range = document.createRange();
        range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
        if ([...range.getClientRects()].some(inView)) return true;
      }
    }
    return false;
  };
  const linked = links.map(l => [...article.querySelectorAll('a[href]')].some(a =>
    a.getAttribute('href').endsWith(l) && [...a.getClientRects()].some(inView)));
  return {finding: !!finding, number: seen(/\d+(\.\d+)?%?/g), verdict: seen(/\b(borne|bears?) out\b|\bconfirm|consistent with|contradict/g), links: linked,
          figure: !!article.querySelector('div.tj-figure svg')};
}"""


@needs_book
@pytest.mark.parametrize("width", list(WIDTHS))
def test_landing_first_screen_states_the_finding_with_a_number_its_verdict_and_links(base_url, width):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            page = browser.new_page(viewport=dict(zip(("width", "height"), WIDTHS[width])))
            page.goto(base_url + LANDING + ".html", wait_until="networkidle")
            got = page.evaluate(FIRST_SCREEN_JS, list(FIRST_SCREEN_LINKS))
            if not all([got["number"], got["verdict"], *got["links"]]):
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"landing-first-screen-{width}.png"))
        finally:
            browser.close()
    print(f"FIRST SCREEN {width} {got}")
    assert got["finding"] and got["figure"], got
    assert got["number"] and got["verdict"], (
        f"no number or verdict of the finding in the first screen at {width}: {got}"
    )
    assert all(got["links"]), f"first screen at {width} lacks a link to {FIRST_SCREEN_LINKS}: {got}"


DARK_JS = r"""() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const lum = c => { const m = c.match(/[\d.]+/g); if (!m) return 0; const [r, g, b, a] = m.map(Number);
    return (a === undefined ? 1 : a) * (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; };
  const figures = [...article.querySelectorAll('img, div.tj-figure')].filter(e => e.getClientRects().length && !e.closest('div.tj-figure img'));
  const ground = e => { for (let a = e; a; a = a.parentElement) { const c = getComputedStyle(a).backgroundColor;
    if (!/rgba\(0, 0, 0, 0\)|transparent/.test(c)) return lum(c); } return 1; };
  const cells = [...article.querySelectorAll('table td, table th')].filter(c => c.innerText.trim() && c.getClientRects().length);
  const faint = cells.filter(c => Math.abs(lum(getComputedStyle(c).color) - ground(c)) < 0.4).map(c => c.innerText.trim().slice(0, 30));
  return {theme: document.documentElement.dataset.theme, figures: figures.length, faint_cells: faint.slice(0, 5), n_faint: faint.length,
          dark_ground: figures.filter(e => lum(getComputedStyle(e).backgroundColor) < 0.85).map(e => e.getAttribute('src') || 'inline svg')};
}"""


@needs_book
def test_figures_keep_a_light_ground_and_tables_their_contrast_in_dark_mode(measured):
    out = {doc: m["dark"] for (doc, width), m in measured.items() if width == "phone"}
    print(f"DARK {out}")
    assert all(m["theme"] == "dark" for m in out.values()), {d: m["theme"] for d, m in out.items()}
    assert sum(m["figures"] for m in out.values()), "no figure found"
    bad = {d: m["dark_ground"] for d, m in out.items() if m["dark_ground"]}
    assert not bad, bad
    faint = {d: (m["n_faint"], m["faint_cells"]) for d, m in out.items() if m["n_faint"]}
    assert not faint, f"table text without contrast in dark mode: {faint}"


@needs_book
def test_smallest_figure_text_at_phone_width_is_legible(measured):
    px = {f["src"]: f["px"] for (_, w), m in measured.items() if w == "phone" for f in m["figure_text"]}
    smallest = min(px.values(), default=None)
    print(f"SMALLEST FIGURE TEXT {smallest} px at {WIDTHS['phone'][0]} px over {len(px)} figures")
    assert px and smallest >= MIN_FIGURE_TEXT_PX, sorted(px.items(), key=lambda kv: kv[1])[:5]


@pytest.mark.parametrize(
    "text, seam",
    [
        ("scored on between 400 and 400 trajectories", True),
        ("between 40 and 400 trajectories", False),
        ("Of the 1 outcome-view judge in the data", True),
        ("5 of the 5 judges", True),
        ("all 400 of 400 trajectories", True),
        ("13 of 130 cells", False),
        ("the 1.5B model", False),
        ("from 0.5 to 0.55", False),
        ("from 3 to 3", True),
        ("1 judges", True),
        ("Table 1 judges", False),
        ("in the the data", True),
        ("all five judges", False),
        ("0.5 of 0.55", False),
        ("1 outcome-view judge of ours has judged", True),
        ("flags 1 fault", True),
        ("the one outcome-view judge", False),
        ("seed 1 judge", False),
        ("Table 1 judge", False),
        ("catches 1 every time", False),
    ],
)
def test_seam_patterns_catch_template_seams_and_spare_real_sentences(text, seam):
    assert any(re.search(p, text) for p in SEAMS) is seam, text


DIFF_JS = r"""
() => {
  const rgb = s => (s.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const pres = [...document.querySelectorAll('div.highlight-diff pre')];
  const lines = [...document.querySelectorAll('div.highlight-diff .gd, div.highlight-diff .gi')];
  return {
    diffs: pres.length,
    scrolling: pres.filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.scrollWidth - p.clientWidth),
    min_contrast: Math.min(...lines.map(l => { const s = getComputedStyle(l); return ratio(rgb(s.color), rgb(s.backgroundColor)); })),
  };
}
"""


@needs_book
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", list(WIDTHS))
def test_testbed_diffs_wrap_and_keep_their_contrast(base_url, width, scheme):
    """Every line of a clean-against-mutant diff is read in place (nothing scrolls, at desk or phone width)
    and each changed line's colour stands out from its background by WCAG's 4.5:1, in light and dark mode."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            context = browser.new_context(color_scheme=scheme, viewport=dict(zip(("width", "height"), WIDTHS[width])))
            page = context.new_page()
            page.goto(base_url + "notebooks/testbed.html", wait_until="networkidle")
            m = page.evaluate(DIFF_JS)
        finally:
            browser.close()
    assert m["diffs"], "the testbed chapter shows no diff"
    assert not m["scrolling"], f"{len(m['scrolling'])} diffs scroll sideways, by {m['scrolling']} px"
    assert m["min_contrast"] >= 4.5, m


@needs_book
def test_no_page_shows_raw_role_markup():
    """A MyST role inside maths (``{term}`ECE```) is not parsed there and would show as raw text."""
    leaks = {}
    for path in sorted(HTML.rglob("*.html")):
        text = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))
        found = re.findall(r"\{(?:term|cite|ref|numref|glue:text)\}`", text)
        if found:
            leaks[str(path.relative_to(HTML))] = len(found)
    assert not leaks, leaks


@needs_book
def test_no_page_shows_markdown_code_marks_as_text():
    """A sentence glued as text (``{glue:text}``) is not parsed as Markdown: `--flag` in it would show its backticks."""
    leaks = {}
    for path in sorted(HTML.rglob("*.html")):
        if path.relative_to(HTML).parts[0].startswith("_"):  # Sphinx's own pages and the sources
            continue
        page = path.read_text(encoding="utf-8")
        page = re.sub(r"<(pre|code|script|style|textarea)\b.*?</\1>", "", page, flags=re.S)
        found = re.findall(r"`[^`<>\n]{1,80}`", re.sub(r"<[^>]+>", "", page))
        if found:
            leaks[str(path.relative_to(HTML))] = found[:3]
    assert not leaks, leaks
