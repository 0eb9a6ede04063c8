"""The book's build configuration with the hosting repository filled in (launch buttons).

Jupyter Book 1 reads its settings from one file and has no environment override, so the hosting
repository is given once, at build time, and written into a derived config beside ``_config.yml``::

    python -m trajectory_judge.book config --repository https://github.com/OWNER/REPO
    jupyter-book build . --all -W --keep-going --config _config.local.yml

The derived file turns on the repository button and the Binder (mybinder.org) and Colab launch
buttons, which open each chapter's paired ``.ipynb``. It must sit in the book's folder: the local
Sphinx extensions are found relative to it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajectory_judge.book.paths import BOOK_CONFIG, repo_root

LOCAL_CONFIG = "_config.local.yml"
"""The derived config's file name (git-ignored)."""

BINDER_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"

_GITHUB = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def check_repository(url: str) -> str:
    """``url`` without a trailing slash or ``.git``; :class:`ValueError` unless it is
    ``https://github.com/OWNER/REPO`` (Binder and Colab open notebooks from GitHub)."""
    clean = url.strip().rstrip("/").removesuffix(".git")
    if not _GITHUB.match(clean):
        raise ValueError(f"--repository {url!r}: expected https://github.com/OWNER/REPO")
    return clean


def with_repository(config: dict[str, Any], url: str, branch: str = "main") -> dict[str, Any]:
    """A copy of ``config`` naming the hosting repository, with repository, Binder and Colab buttons on."""
    out = dict(config)
    out["repository"] = {"url": check_repository(url), "branch": branch, "path_to_book": ""}
    out["html"] = {**config.get("html", {}), "use_repository_button": True}
    out["launch_buttons"] = {**config.get("launch_buttons", {}), "binderhub_url": BINDER_URL, "colab_url": COLAB_URL}
    return out


def write_local_config(url: str, branch: str = "main", book: str | Path | None = None) -> Path:
    """Write ``_config.local.yml`` in the book's folder from its ``_config.yml``; return its path."""
    import yaml

    root = Path(book) if book is not None else repo_root()
    config = yaml.safe_load((root / BOOK_CONFIG).read_text(encoding="utf-8"))
    out = root / LOCAL_CONFIG
    text = yaml.safe_dump(with_repository(config, url, branch), sort_keys=False, allow_unicode=True)
    header = f"# Generated from {BOOK_CONFIG} by `python -m trajectory_judge.book config`; do not edit.\n"
    out.write_text(header + text, encoding="utf-8")
    return out
