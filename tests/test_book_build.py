"""The book's Sphinx machinery, built end to end on a one-chapter book with a sample repository.

Pins what the chapters rely on: a table from ``table()`` is numbered "Table N" with its caption
above and ``{numref}`` finds it from another page, figures keep "Fig. N" and get their alt text,
the bibliography is author-year, and one setting (the hosting repository) gives repository,
Binder and Colab buttons that open the chapter's paired ``.ipynb``.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajectory_judge.book.building.execute_notebooks import name_repository

pytestmark = pytest.mark.slow  # a whole (one-chapter) book build: .ci/run's slow tier

ROOT = Path(__file__).resolve().parents[1]
REPO = "https://github.com/example/trajectory-judge"

CONFIG = """\
title: Mini book
author: test
copyright: "2026"
only_build_toc_files: true
exclude_patterns: [_build, "notebooks/*.ipynb", book/_ext]
execute: {execute_notebooks: force, timeout: 120, allow_errors: false}
parse: {myst_enable_extensions: [colon_fence, dollarmath, substitution]}
bibtex_bibfiles: [book/references.bib]
html: {favicon: book/_static/favicon.svg, use_repository_button: true, use_download_button: true}
repository:
  url: https://github.com/placeholder/book
  branch: trunk
launch_buttons: {notebook_interface: jupyterlab, binderhub_url: "https://mybinder.org", colab_url: "https://colab.research.google.com", thebe: false}
sphinx:
  extra_extensions: [sphinxcontrib.bibtex]
  local_extensions: {tj_tables: book/_ext/, bib_authoryear: book/_ext/, tj_launch: book/_ext/, tj_cite: book/_ext/}
  config: {numfig: true, bibtex_reference_style: author_year_round, bibtex_default_style: authoryear}
"""

TOC = "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/demo\n"

INTRO = """\
# Mini book

{{ binder_badge }}

As {cite:t}`efron1979bootstrap` showed, and {cite:p}`mohammadi2026trajectoryjudge` measured (after {cite}`wang2023fair` and {cite:t}`wang2023selfconsistency`); see {numref}`tbl-demo` and {numref}`fig-demo`.

## Cite

{{ cite_paper_bibtex }}

{{ cite_edition_bibtex }}

{{ cite_links }}; {{ citation_file }}

```{bibliography}
```
"""

DEMO = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Demo

```{code-cell} ipython3
:tags: [remove-cell]

import matplotlib.pyplot as plt
import pandas as pd
from trajectory_judge.book.chapters.page import setup, show, table
setup()
```

```{code-cell} ipython3
:tags: [hide-input]

frame = pd.DataFrame({"recall": [0.5, None], "n": [3, 4]}, index=pd.Index(["step:qwen2.5:14b", "programmatic"], name="judge"))
table(frame, name="tbl-demo", caption="Recall of each judge.")
```

```{code-cell} ipython3
---
tags: [hide-input]
mystnb:
  figure: {caption: A rising line., name: fig-demo}
---
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
show(fig, "A line rising from zero to one.")
```
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    book = tmp_path_factory.mktemp("minibook")
    (book / "_config.yml").write_text(CONFIG)
    (book / "_toc.yml").write_text(TOC)
    shutil.copytree(ROOT / "book" / "_ext", book / "book" / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "book" / "_static").mkdir()
    for name in ("book.css", "favicon.svg", "binder-badge.svg", "colab-badge.svg"):
        shutil.copy(ROOT / "book" / "_static" / name, book / "book" / "_static" / name)
    shutil.copy(ROOT / "book" / "references.bib", book / "book" / "references.bib")
    (book / "book" / "intro.md").write_text(INTRO)
    for name in ("CITATION.cff", ".zenodo.json"):
        shutil.copy(ROOT / name, book / name)
    (book / "notebooks").mkdir()
    (book / "notebooks" / "demo.md").write_text(DEMO)
    import jupytext

    assert {p.name for p in name_repository(REPO, "main", book=book)} == {
        "_config.yml",
        "demo.md",
        "CITATION.cff",
        ".zenodo.json",
    }  # the one setting
    jupytext.write(jupytext.read(book / "notebooks" / "demo.md"), book / "notebooks" / "demo.ipynb")
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "--all", "-W", "--keep-going"]
    done = subprocess.run(cmd, cwd=book, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return book / "_build" / "html"


def test_landing_cite_section_is_bibtex_from_the_citation_file_of_the_configured_repository(built):
    from trajectory_judge.book.building import citation as cite

    text = html.unescape(re.sub(r"<[^>]+>", "", (built / "book" / "intro.html").read_text()))
    cff = cite.load_citation(built.parents[1])
    assert cff["repository-code"] == REPO
    for entry in (cite.paper_bibtex(cff), cite.edition_bibtex(cff, 2026)):  # the mini book's copyright year
        assert entry in text, entry
    assert f"url     = {{{REPO}}}" in text
    page = (built / "book" / "intro.html").read_text()
    assert f'href="{REPO}/blob/main/CITATION.cff"' in page and 'href="https://doi.org/10.5281/zenodo.21797926"' in page


def test_launch_buttons_open_the_paired_notebook_in_binder_and_colab(built):
    page = (built / "notebooks" / "demo.html").read_text()
    assert "https://mybinder.org/v2/gh/example/trajectory-judge/main?urlpath=lab/tree/notebooks/demo.ipynb" in page
    assert "https://colab.research.google.com/github/example/trajectory-judge/blob/main/notebooks/demo.ipynb" in page
    assert f'href="{REPO}"' in page
    assert "Colab set-up" not in page  # the set-up cell is never on the page


def test_landing_page_binder_badge_opens_the_configured_repository(built):
    intro = (built / "book" / "intro.html").read_text()
    assert re.search(
        r'<a class="reference external" href="https://mybinder\.org/v2/gh/example/trajectory-judge/main\?urlpath=lab/tree/notebooks/results\.ipynb"><img alt="Launch on Binder" src="[^"]*binder-badge\.svg"',
        intro,
    )


def test_a_table_output_is_numbered_table_with_its_caption_above(built):
    page = (built / "notebooks" / "demo.html").read_text()
    m = re.search(
        r'<figure class="numbered-table[^"]*" id="tbl-demo">\s*<figcaption>\s*<p><span class="caption-number">Table 1 </span>'
        r'<span class="caption-text">Recall of each judge\.</span>',
        page,
    )
    assert m, "table caption not found above the table"
    assert page.index('caption-number">Table 1') < page.index('id="T_tbl-demo"')
    assert "Fig. 1" in page and "Fig. 2" not in page  # the table did not take a figure number


def test_numref_from_another_page_reads_table_n(built):
    intro = (built / "book" / "intro.html").read_text()
    assert re.search(r'<span class="std std-numref">Table 1</span>', intro)
    assert re.search(r'<span class="std std-numref">Fig\. 1</span>', intro)


def test_figure_is_svg_with_the_alt_text_it_was_given(built):
    page = (built / "notebooks" / "demo.html").read_text()
    assert re.search(r'<img alt="A line rising from zero to one\." src="[^"]+\.svg"', page)


def test_bibliography_is_author_year_and_favicon_is_linked(built):
    intro = (built / "book" / "intro.html").read_text()
    text = re.sub(r"<[^>]+>", "", intro)
    assert "Efron (1979)" in text
    assert "(Mohammadi, 2026)" in text  # the paper has one author
    assert "Wang et al." in text and "and others" not in text  # several authors, or BibTeX's "and others", read "et al."
    assert re.search(r'<link rel="icon" href="[^"]*favicon\.svg"', intro)


def test_a_citation_names_one_work_with_the_letter_its_reference_list_label_has(built):
    # the paper prints "Wang et al. [2023a]" (fair evaluators) and "[2023b]" (self-consistency)
    text = re.sub(r"<[^>]+>", "", (built / "book" / "intro.html").read_text())
    assert "(Wang et al., 2023a)" in text and "Wang et al. (2023b)" in text
    assert "[Wang et al., 2023a]" in text and "[Wang et al., 2023b]" in text
    assert "Efron (1979)" in text and "1979a" not in text  # a label no other work shares has no letter
