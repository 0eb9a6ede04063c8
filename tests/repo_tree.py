"""What a commit of the repository holds, in a git checkout or in a copy without ``.git`` (a downloaded archive).

In a checkout, git says (its tracked files and the untracked ones ``.gitignore`` lets through); in a copy,
the tree is walked and ``.gitignore``'s patterns are applied as git applies them for the forms it uses:
a name or glob matches at any depth, a leading ``/`` anchors it at the root, a trailing ``/`` matches
folders only, and a folder whose own ``.gitignore`` holds ``*`` (a tool's cache) is left out whole.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
from pathlib import Path


def is_checkout(root: Path) -> bool:
    return (root / ".git").exists() and shutil.which("git") is not None


def _patterns(root: Path) -> list[str]:
    text = (root / ".gitignore").read_text(encoding="utf-8") if (root / ".gitignore").is_file() else ""
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")] + [".git/"]


def ignored(root: Path, rel: str, *, is_dir: bool = False) -> bool:
    """Whether ``.gitignore`` excludes the path ``rel`` (``/``-separated, relative to ``root``) or a folder above it."""
    parts = rel.strip("/").split("/")
    for pattern in _patterns(root):
        folder_only = pattern.endswith("/")
        pat = pattern.rstrip("/")
        anchored = pat.startswith("/") or "/" in pat
        pat = pat.lstrip("/")
        for depth in range(1, len(parts) + 1):
            if folder_only and depth == len(parts) and not is_dir:
                continue
            here = "/".join(parts[:depth])
            if fnmatch.fnmatchcase(here if anchored else parts[depth - 1], pat):
                return True
    return False


def tree_files(root: Path) -> list[str]:
    """The files (``/``-separated, relative to ``root``) that a commit of the tree holds."""
    if is_checkout(root):
        git = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        names = subprocess.run(git, cwd=root, capture_output=True, check=True).stdout.decode().split("\0")
        return [n for n in names if n and (root / n).is_file()]
    # a tool's cache folder ignores itself with a .gitignore of its own holding `*` (mypy, ruff, pytest)
    own = {g.parent for g in root.rglob(".gitignore") if g.parent != root and "*" in g.read_text().split()}
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not ignored(root, rel) and not any(f in path.parents for f in own):
            out.append(rel)
    return out
