"""The hosting repository: one setting for the launch buttons, the Binder badge and Colab's set-up.

The setting is the ``repository:`` block of ``_config.yml`` (Jupyter Book's own keys ``url`` and
``branch``). From it Jupyter Book draws the repository, Binder and Colab buttons of every chapter,
the ``tj_launch`` extension the Binder badge of the landing page, and every chapter opens with a
set-up cell (removed from the book's pages) that, on Colab only, clones that repository at that
branch, installs the package with its book extra and changes into the clone's ``notebooks/``. A
fork names itself once::

    python -m trajectory_judge.book config --repository https://github.com/OWNER/REPO [--branch B]

which rewrites the block, the set-up cell of every notebook (``.md`` and ``.ipynb``), README's
badges and the citation's ``repository-code`` (``CITATION.cff``, and ``.zenodo.json`` with it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trajectory_judge.book.building.citation import set_repository_code
from trajectory_judge.book.paths import BOOK_CONFIG, repo_root
from trajectory_judge.fileio import write_text_if_changed

BINDER_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"
REPOSITORY_ENV = "TJ_REPOSITORY_URL"
"""Overrides, on Colab, the repository the set-up cell clones (any git URL or a local path)."""

COLAB_MARKER = "# Colab set-up"
"""How the set-up cell's source begins (what finds it in a notebook)."""

_GITHUB = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_BRANCH = re.compile(r"^[A-Za-z0-9_./-]+$")
_BLOCK = re.compile(r"^repository:\n  url: *(?P<url>\S*)[^\n]*\n  branch: *(?P<branch>\S*)[^\n]*$", re.M)
_CELL = re.compile(
    r"```\{code-cell\} ipython3\n:tags: \[remove-cell\]\n\n" + re.escape(COLAB_MARKER) + r".*?\n```\n", re.S
)


@dataclass(frozen=True)
class Hosting:
    """Where the book's repository is hosted."""

    url: str
    """``https://github.com/OWNER/REPO``."""
    branch: str
    """The branch the buttons open and Colab clones."""

    @property
    def slug(self) -> str:
        """``OWNER/REPO``."""
        return self.url.removeprefix("https://github.com/")

    def binder(self, notebook: str = "notebooks/results.ipynb") -> str:
        """The mybinder.org address that opens ``notebook`` in JupyterLab."""
        return f"{BINDER_URL}/v2/gh/{self.slug}/{self.branch}?urlpath=lab/tree/{notebook}"

    def colab(self, notebook: str = "notebooks/results.ipynb") -> str:
        """The Colab address that opens ``notebook`` from GitHub."""
        return f"{COLAB_URL}/github/{self.slug}/blob/{self.branch}/{notebook}"


def check_repository(url: str) -> str:
    """``url`` without a trailing slash or ``.git``; :class:`ValueError` unless it is
    ``https://github.com/OWNER/REPO`` (Binder and Colab open notebooks from GitHub)."""
    clean = url.strip().rstrip("/").removesuffix(".git")
    if not _GITHUB.match(clean):
        raise ValueError(f"--repository {url!r}: expected https://github.com/OWNER/REPO")
    return clean


def check_branch(branch: str) -> str:
    """``branch``; :class:`ValueError` unless it is a plain git branch name."""
    if not _BRANCH.match(branch) or branch.startswith("-"):
        raise ValueError(f"--branch {branch!r}: expected a git branch name such as main")
    return branch


def hosting(book: str | Path | None = None) -> Hosting:
    """The hosting repository named by the book's ``_config.yml``."""
    path = Path(book or repo_root()) / BOOK_CONFIG
    found = _BLOCK.search(path.read_text(encoding="utf-8"))
    if not found:
        raise ValueError(f"{path}: no `repository:` block with `url:` and `branch:` lines")
    return Hosting(check_repository(found["url"]), check_branch(found["branch"]))


def colab_cell(where: Hosting) -> str:
    """The MyST source of the set-up cell that opens every chapter (a no-op outside Colab)."""
    return f'''```{{code-cell}} ipython3
:tags: [remove-cell]

{COLAB_MARKER} (not shown in the book): on Colab only, fetch the book and install it.
import importlib, os, subprocess, sys

if "google.colab" in sys.modules and not os.path.exists("../{BOOK_CONFIG}"):
    repository = os.environ.get("{REPOSITORY_ENV}", "{where.url}")
    clone = os.path.abspath("trajectory-judge")
    if not os.path.isdir(clone):
        subprocess.run(["git", "clone", "-q", "--depth", "1", "-b", "{where.branch}", repository, clone], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", clone + "[book]"], check=True)
    importlib.invalidate_caches()
    os.chdir(os.path.join(clone, "notebooks"))
```
'''


def with_colab_cell(text: str, where: Hosting) -> str:
    """A notebook's MyST source with its set-up cell for ``where``: replaced, or put first after
    the front matter."""
    cell = colab_cell(where)
    if _CELL.search(text):
        return _CELL.sub(lambda _: cell, text, count=1)
    head, sep, body = text.partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        raise ValueError("no front matter to put the Colab set-up after")
    return f"{head}{sep}\n{cell}{body}"


def set_repository(url: str, branch: str = "main", book: str | Path | None = None) -> list[Path]:
    """Name the hosting repository in ``_config.yml``, README's badges, every notebook's ``.md`` set-up
    cell and the citation (``CITATION.cff``'s ``repository-code``, ``.zenodo.json``).

    Returns the files rewritten (each written atomically); raises :class:`ValueError` on a bad URL
    or branch, or a ``_config.yml`` without the block. The ``.ipynb`` follow through
    :func:`trajectory_judge.book.building.execute_notebooks.name_repository`.
    """
    root = Path(book) if book is not None else repo_root()
    where = Hosting(check_repository(url), check_branch(branch))
    before = hosting(root)  # the block must be there before anything is rewritten
    config = root / BOOK_CONFIG
    block = f"repository:\n  url: {where.url}\n  branch: {where.branch}"
    written = [config] if _rewrite(config, lambda text: _BLOCK.sub(block, text, count=1)) else []
    readme = root / "README.md"  # its badges link to the same places
    if readme.exists() and _rewrite(
        readme, lambda text: text.replace(before.binder(), where.binder()).replace(before.colab(), where.colab())
    ):
        written.append(readme)
    written += set_repository_code(where.url, book=root)
    for md in sorted((root / "notebooks").glob("*.md")):
        if _rewrite(md, lambda text: with_colab_cell(text, where)):
            written.append(md)
    return written


def _rewrite(path: Path, change: Callable[[str], str]) -> bool:
    """Apply ``change`` to the text of ``path``, writing it (atomically) only when it changes; whether it did."""
    return write_text_if_changed(path, change(path.read_text(encoding="utf-8")))
