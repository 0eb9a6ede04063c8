"""What a chapter leaves for the build beside its outputs: the records directory.

While ``python -m trajectory_judge.book execute`` runs a chapter, :data:`RECORDS_ENV` names a
temporary folder that the chapter's kernel inherits. A chapter names itself once, in its first cell
(``setup("results")``), and whatever it records (:func:`write_record`) goes to
``RECORDS_DIR/<chapter>/``: its tables as CSV and JSON, what each table and figure was computed
from, and its kernel's record (Python, the key packages, every data file read). When the chapter
finishes, :func:`pack` turns that folder into a dictionary that the executed notebook carries in
its metadata, with every path relative to the book or to the data folders it names, so that the
file is the same on any machine; the build's ``tj_notebook_cache`` extension unpacks it
(:func:`unpack`) where the pages read it (provenance lines, downloads, the execution page).

Elsewhere (nbval, Binder, Colab) the variable is unset and nothing is written.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from trajectory_judge.fileio import READ_EVENT, FileRead, atomic_write_bytes, atomic_write_text

RECORDS_ENV = "TJ_BUILD_RECORDS"
"""Environment variable naming the records directory of the chapter executing (set by ``execute``)."""

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


class ReadLog:
    """The data files this process has read, by path (the last reading of a path wins), as the readers announce
    them (:data:`~trajectory_judge.fileio.READ_EVENT`): an audit hook (:func:`sys.addaudithook`) the kernel adds
    when its chapter names itself, calling ``on_read`` (if set) after each."""

    def __init__(self) -> None:
        self._files: dict[Path, FileRead] = {}
        self.on_read: Callable[[FileRead], None] | None = None
        """Called with each file read, after it is logged (the kernel's record follows every read)."""

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event == READ_EVENT:
            record = FileRead(*args)
            self._files[record.path] = record
            if self.on_read is not None:
                self.on_read(record)

    def files(self) -> list[FileRead]:
        """Every data file logged so far, by path."""
        return sorted(self._files.values())


_chapter: str | None = None
_versions: dict[str, str] | None = None
_reads: ReadLog | None = None


def set_chapter(name: str | None) -> None:
    """Name the chapter this kernel executes (a notebook stem such as ``results``); from the first call on, the
    kernel logs every data file it reads (:class:`ReadLog`, :func:`files_read`)."""
    global _chapter, _reads
    if name is not None and (not name or "/" in name or name.startswith(".")):
        raise ValueError(f"chapter name {name!r}: a notebook stem such as 'results'")
    _chapter = name
    if _reads is None:  # an audit hook stays for the process: added once
        _reads = ReadLog()
        sys.addaudithook(_reads)
    folder = records_dir()
    _reads.on_read = _write_kernel_record if folder is not None else None
    if folder is not None:  # during a build: the kernel's record, kept up to date with every read
        for sub in FRESH_EACH_RUN:
            shutil.rmtree(folder / sub, ignore_errors=True)
        _write_kernel_record()


def files_read() -> list[FileRead]:
    """Every data file this kernel has read since its chapter named itself (:func:`set_chapter`), by path."""
    return [] if _reads is None else _reads.files()


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
    """What this kernel ran with: its chapter, Python, the key packages' versions and every data file it
    has read so far (resolved path, sha256, size)."""
    global _versions
    if _versions is None:
        _versions = package_versions()
    return {
        "chapter": _chapter,
        "python": platform.python_version(),
        "packages": dict(_versions),
        "files": [{"path": str(r.path), "sha256": r.sha256, "size": r.size} for r in files_read()],
    }


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


Places = Sequence[tuple[str, Path]]
"""Where a recorded path may lie, in order: (label, folder), the book's root first with the label ``""``,
then ``$TJ_DATA`` and ``$TJ_PAPER_DATA`` (:func:`trajectory_judge.book.building.execute_notebooks.places`)."""


def portable_path(path: str | Path, places: Places) -> str:
    """``path`` relative to the first of ``places`` that holds it (``data/verdicts.jsonl``,
    ``$TJ_DATA/verdicts.jsonl``); a file in none of them by its name alone, behind ``?/``."""
    p = Path(path).resolve()
    return place_relative(p, [(label, Path(folder).resolve()) for label, folder in places]) or f"?/{p.name}"


def place_relative(path: str | Path, places: Places) -> str | None:
    """``path`` relative to the first of ``places`` that holds it, behind that place's label (none for the
    book's root), as the paths are written; ``None`` when none holds it."""
    for label, folder in places:
        try:
            rel = Path(path).relative_to(folder).as_posix()
        except ValueError:
            continue
        return f"{label}/{rel}" if label else rel
    return None


def resolve_portable(text: str, places: Places) -> Path:
    """The file a :func:`portable_path` names, under this build's ``places``."""
    head, _, rest = text.partition("/")
    for label, folder in places:
        if label and head == label:
            return Path(folder) / rest
    book = next((Path(f) for label, f in places if not label), Path.cwd())
    return book / text


def pack(folder: Path, places: Places) -> dict[str, str]:
    """A chapter's records folder as ``{relative path: text}`` (sorted), its kernel record's data files
    named by :func:`portable_path`: the same on any machine for the same book, data and environment."""
    out: dict[str, str] = {}
    folder = Path(folder)
    if not folder.is_dir():
        return out
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        rel = path.relative_to(folder).as_posix()
        text = path.read_text(encoding="utf-8")
        out[rel] = _kernel_paths(text, lambda p: portable_path(p, places)) if rel == KERNEL_RECORD else text
    return out


def unpack(records: Mapping[str, str], folder: Path, places: Places) -> None:
    """Write what :func:`pack` made into ``folder`` (emptied first), the data files' paths resolved under
    ``places``; every file is written whole."""
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    for rel, text in records.items():
        if rel.startswith("/") or ".." in Path(rel).parts:
            raise ValueError(f"record {rel!r}: not a path inside a chapter's records")
        if rel == KERNEL_RECORD:
            text = _kernel_paths(text, lambda p: str(resolve_portable(p, places)))
        atomic_write_text(folder / rel, text)


def _kernel_paths(text: str, rename: Callable[[str], str]) -> str:
    """A kernel record's text (:data:`KERNEL_RECORD`) with each data file's path renamed."""
    record = json.loads(text)
    for row in record.get("files", []):
        row["path"] = rename(row["path"])
    return json.dumps(record, indent=1, sort_keys=True) + "\n"
