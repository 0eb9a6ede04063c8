"""The edition as one PDF, printed from the book's own build, and the download menu's link to it.

As a Sphinx extension it adds "whole book .pdf" to the theme's download menu on every page. As a
script it makes the PDF, after the HTML build (``make pdf``; ``make book`` runs it too):

    python book/_ext/tj_pdf.py

1. ``jupyter-book build . --builder singlehtml`` writes every page of the table of contents into one
   HTML file (``_build/singlehtml/trajectory-judge.html``). It reuses the HTML build's doctrees (``_build/.doctrees``), so nothing is read or
   executed again; figures and tables keep the numbers the site gives them.
2. Chromium, driven by Playwright, opens that file from a loopback server, opens every folded block
   (code, outputs, dropdowns), waits for MathJax and prints it with the book's print rules
   (``@media print`` in ``book/_static/book.css``) and page numbers in the footer.
3. The PDF lands in the site as ``_build/html/trajectory-judge.pdf``, which the landing page and the
   download menu link to.

Without Chromium or Playwright the script says so in one line and exits 0: the site is complete
without its PDF. A failing single-page build is an error.
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PDF_NAME = "trajectory-judge.pdf"
"""The PDF's file name in the site's root."""

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""The names a system Chromium goes by (Debian's package is ``chromium``)."""

VIEWPORT_WIDTH = 860
"""The page width in CSS pixels the book is laid out at for print: A4 less its margins at :data:`SCALE`,
so that the scripts that fit tables to their box choose the form the paper shows."""

SCALE = 0.8
"""Print scale: the book's type at 80 % reads as about ten-point text on A4."""

OPEN_FOLDS_JS = r"""async () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  await document.fonts.ready;
  await new Promise(r => setTimeout(r, 500));  // the table fitting runs again when a dropdown opens
}"""
"""Unfold every folded block (a reader of paper cannot click) and wait for maths and fonts."""

FOOTER = (
    '<div style="width:100%;font-size:7pt;color:#555;padding:0 14mm;display:flex;justify-content:space-between;'
    'font-family:sans-serif"><span>{title}</span><span><span class="pageNumber"></span> / '
    '<span class="totalPages"></span></span></div>'
)


# --- the Sphinx extension: the download menu's entry -------------------------------------------------
def _download_entry(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Add the whole book's PDF to the theme's download menu (its "download-buttons" group)."""
    if app.builder.name != "html":
        return
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"].append(
                {
                    "type": "link",
                    "url": context["pathto"](PDF_NAME, 1),
                    "text": "whole book .pdf",
                    "tooltip": "Download the whole edition as one PDF",
                    "icon": "fas fa-book",
                    "label": "download-book-pdf-button",
                }
            )


def setup(app: Any) -> dict[str, Any]:
    # after sphinx-book-theme's add_header_buttons (priority 501), which fills the download group
    app.connect("html-page-context", _download_entry, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --- the script: the PDF -----------------------------------------------------------------------------
def find_chromium() -> str | None:
    """The system Chromium's path, or None."""
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    return None


def build_singlehtml(root: Path) -> Path:
    """The single-page build of the book, from the HTML build's doctrees: the page, at the build's top.

    Sphinx writes the page under the root document's name (``book/intro.html``) with its links relative
    to the build's top folder, where jupyter-book's ``index.html`` only redirects; a copy at the top,
    ``trajectory-judge.html``, is the page whose links resolve.
    """
    import yaml

    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [str(jupyter_book), "build", str(root), "--builder", "singlehtml", "-W", "--keep-going"]
    subprocess.run(command, check=True, cwd=root)
    out = root / "_build" / "singlehtml"
    root_doc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))["root"]
    page = out / "trajectory-judge.html"
    shutil.copyfile(out / f"{root_doc}.html", page)
    return page


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``folder`` served on a free loopback port for as long as the block runs; yields its URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the requests are not worth a line each
        pass


def print_pdf(page_url: str, out: Path, chromium: str, title: str) -> None:
    """Print ``page_url`` to ``out`` with Chromium through Playwright: A4, folds open, page numbers."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            page = browser.new_page(viewport={"width": VIEWPORT_WIDTH, "height": 1200})
            page.emulate_media(media="print")
            page.goto(page_url, wait_until="networkidle", timeout=180_000)
            page.evaluate(OPEN_FOLDS_JS)
            page.pdf(
                path=str(out),
                format="A4",
                scale=SCALE,
                print_background=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER.format(title=html.escape(title)),
                margin={"top": "14mm", "bottom": "16mm", "left": "14mm", "right": "14mm"},
                outline=True,
                tagged=True,
            )
        finally:
            browser.close()


def footer_title(root: Path) -> str:
    """The title every sheet's footer carries: the book's title from ``_config.yml``, before its dash."""
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return str(config.get("title", "")).split(" — ")[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the built book to one PDF in its site.")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2], help="the book's root")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    site = root / "_build" / "html"
    if not (site / "index.html").is_file():
        print(f"tj_pdf: no built book in {site}: build it first (make book)", file=sys.stderr)
        return 1
    chromium = find_chromium()
    if chromium is None:
        print("tj_pdf: no Chromium on the PATH (apt-get install -y chromium): the PDF is not made", file=sys.stderr)
        return 0
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print("tj_pdf: Playwright is not installed (pip install playwright): the PDF is not made", file=sys.stderr)
        return 0
    start = time.monotonic()
    single = build_singlehtml(root)
    built = time.monotonic()
    out = site / PDF_NAME
    with serving(single.parent) as url:
        print_pdf(url + single.name, out, chromium, footer_title(root))
    done = time.monotonic()
    print(
        f"tj_pdf: wrote {out.relative_to(root)} ({out.stat().st_size / 1e6:.1f} MB) in {done - start:.0f} s "
        f"(single page {built - start:.0f} s, printing {done - built:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
