"""What a chapter leaves for the build beside its outputs: the records directory.

During ``jupyter-book build`` the Sphinx extension ``book/_ext/tj_records.py`` sets
:data:`RECORDS_ENV` to a folder under the build directory before any notebook executes; every
kernel inherits it. A chapter names itself once, in its first cell (``setup("results")``), and
whatever it records (:func:`write_record`) goes to ``RECORDS_DIR/<chapter>/``, where the extension
picks it up when it writes the pages (provenance lines, downloads, the execution page).

Outside a build (nbval, ``python -m trajectory_judge.book execute``, Binder, Colab) the variable is
unset and nothing is written, so the committed notebooks stay byte-identical.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
from importlib import metadata
from pathlib import Path

from trajectory_judge.fileio import FileRead, atomic_write_bytes, files_read, on_read

RECORDS_ENV = "TJ_BUILD_RECORDS"
"""Environment variable naming the build's records directory (set by the ``tj_records`` extension)."""

BUILD_ENV = "TJ_BUILD_ID"
"""Environment variable naming this build (set with :data:`RECORDS_ENV`): a kernel's record carries it, so
a record left by an earlier build into the same folder is never taken for this build's."""

KERNEL_RECORD = "kernel.json"
"""A chapter's record of its kernel (:func:`kernel_record`), rewritten after each data file it reads."""

KEY_PACKAGES = (
    "numpy",
    "pandas",
    "scipy",
    "matplotlib",
    "seaborn",
    "pydantic",
    "myst-nb",
    "jupyter-book",
    "sphinx",
    "trajectory-judge",
)
"""The packages whose versions the execution page shows, as each chapter's kernel saw them."""

FRESH_EACH_RUN = ("tables", "figures")
"""Record folders a chapter empties when it starts executing in a build (no stale table outlives a rename)."""

_chapter: str | None = None
_versions: dict[str, str] | None = None
_shared: dict[str, str] = {}


def set_chapter(name: str | None) -> None:
    """Name the chapter this kernel executes (a notebook stem such as ``results``)."""
    global _chapter
    if name is not None and (not name or "/" in name or name.startswith(".")):
        raise ValueError(f"chapter name {name!r}: a notebook stem such as 'results'")
    _chapter = name
    if records_dir() is not None:  # during a build: the kernel's record, kept up to date with every read
        for sub in FRESH_EACH_RUN:
            shutil.rmtree(records_dir() / sub, ignore_errors=True)
        _write_kernel_record()
        on_read(_write_kernel_record)


def chapter() -> str | None:
    """The chapter this kernel executes, as named by :func:`set_chapter` (``None`` before)."""
    return _chapter


def records_dir() -> Path | None:
    """This chapter's records folder during a build, or ``None`` (no build, or no chapter named)."""
    root = os.environ.get(RECORDS_ENV)
    if not root or _chapter is None:
        return None
    return Path(root) / _chapter


def write_record(relpath: str, data: str | bytes) -> Path | None:
    """Write ``data`` atomically to ``relpath`` in this chapter's records folder; ``None`` outside a build."""
    folder = records_dir()
    if folder is None:
        return None
    target = folder / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, data.encode("utf-8") if isinstance(data, str) else data)
    return target


def package_versions(packages: tuple[str, ...] = KEY_PACKAGES) -> dict[str, str]:
    """Each package's installed version as this process sees it (``"not installed"`` when absent)."""
    out = {}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def kernel_record() -> dict:
    """What this kernel ran with: its chapter, the build that started it, Python, the key packages' versions,
    every data file it has read so far (resolved path, sha256, size) and the shared results it took from
    the build's cache or computed (:func:`note_shared`)."""
    global _versions
    if _versions is None:
        _versions = package_versions()
    return {
        "chapter": _chapter,
        "build": os.environ.get(BUILD_ENV),
        "python": platform.python_version(),
        "packages": dict(_versions),
        "files": [{"path": str(r.path), "sha256": r.sha256, "size": r.size} for r in files_read()],
        "shared": dict(_shared),
    }


def note_shared(name: str, reused: bool) -> None:
    """Record that this chapter took the shared result ``name`` from the build's cache (``reused``) or
    computed it (:func:`trajectory_judge.book.build.shared_results.cached`); the execution page says which."""
    if _shared.get(name) != "reused":  # once reused, the chapter's outputs rest on another chapter's run
        _shared[name] = "reused" if reused else "computed"
    _write_kernel_record()


def _write_kernel_record(_read: FileRead | None = None) -> None:
    write_record(KERNEL_RECORD, json.dumps(kernel_record(), indent=1, sort_keys=True) + "\n")


def chapter_files(root: str | Path, chapter: str) -> list[FileRead]:
    """Every data file ``chapter`` read while it executed in the build whose records are under ``root``
    (``tj_records.records_root(app)``), from its kernel's record, by path; empty when it left none."""
    path = Path(root) / chapter / KERNEL_RECORD
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return sorted(FileRead(Path(r["path"]), r["sha256"], int(r["size"])) for r in rows)
