"""The execution page: how each chapter's outputs on this build came to be, read from the build itself.

Three sources, all read while the book builds: where each chapter's outputs came from (the committed
notebook, executed on the same data; an execution for this build; or an earlier build's execution of
the same data, kept in the cache), with the run time of those that executed
(``book/_ext/tj_notebook_cache.py``); myst-nb's execution data for each notebook (whether it
succeeded: ``env.nb_metadata[docname]["exec_data"]``); and each chapter kernel's own record, carried
by the executed notebook (:data:`trajectory_judge.book.building.records.KERNEL_RECORD`: Python, the key
packages' versions, the data files it read with their sha256). The Sphinx extension
``book/_ext/tj_execution.py`` collects them once every document has been read and renders
:class:`ExecutionReport` as the page's tables and sentence; nothing on the page is typed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from trajectory_judge.analysis.core.formatting import list_text
from trajectory_judge.book.building.records import KERNEL_RECORD, KEY_PACKAGES, place_relative
from trajectory_judge.provenance.checksums import sha256_file

SHORT_SHA = 12
"""How many hex digits of a sha256 the page prints."""

LOCK_ROW, COMMIT_ROW = "Lock (SHA-256)", "Commit"
"""The environment table's rows for the lock's checksum and the build's commit."""

ORIGINS: dict[str, str] = {
    "committed": "committed notebook",
    "executed": "executed for this build",
    "cached": "an earlier build’s execution",
    "read": "executed while read",
}
"""Where a chapter's outputs came from, with how the chapters' table says it: its committed notebook (executed on
the same data), an execution for this build, an earlier build's execution of the same data (the cache), or myst-nb
executing it while the book was read (the cache missed)."""


@dataclass(frozen=True)
class DataFile:
    """A data file a chapter read: where (as the page names it), its sha256 and its size in bytes."""

    name: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ChapterRun:
    """How one chapter's outputs in this build came to be."""

    docname: str
    title: str
    runtime: float | None
    """Its run time when it executed for a build (``None``: the committed notebook records none)."""
    succeeded: bool
    origin: str
    """One of :data:`ORIGINS`."""
    python: str | None = None
    packages: Mapping[str, str] = field(default_factory=dict)
    files: tuple[DataFile, ...] = ()

    @property
    def this_build(self) -> bool:
        """Whether it executed for this build."""
        return self.origin in ("executed", "read")

    @property
    def recorded(self) -> bool:
        """Whether its kernel left a record (every execution by the execute step does)."""
        return self.python is not None

    @property
    def result(self) -> str:
        return ORIGINS.get(self.origin, self.origin) if self.succeeded else "failed"


@dataclass(frozen=True)
class ExecutionReport:
    """Every chapter's run, the data the build names, the lock's sha256 and the commit the build ran on."""

    chapters: tuple[ChapterRun, ...]
    lock_sha256: str | None
    commit: str
    execute_seconds: float | None = None
    """Wall time of this build's execute step (``None``: nothing executed)."""
    data: str = "data/"
    """The data the build names, as the page prints it (``data/``, ``$TJ_DATA``)."""
    digest: str | None = None
    """The sha256 of that data (:func:`trajectory_judge.book.building.execute_notebooks.data_digest`)."""

    @property
    def executed(self) -> tuple[ChapterRun, ...]:
        """The chapters executed for this build."""
        return tuple(c for c in self.chapters if c.this_build)

    @property
    def total_seconds(self) -> float:
        """The executed chapters' run times added up (seconds)."""
        return sum(c.runtime or 0.0 for c in self.executed)

    @property
    def slowest(self) -> ChapterRun | None:
        timed = [c for c in self.executed if c.runtime is not None]
        return max(timed, key=lambda c: c.runtime or 0.0) if timed else None

    def to_frame(self) -> pd.DataFrame:
        """One row per chapter, in the book's order: where its outputs came from, run time, data files read."""
        rows = [(c.title, c.result, c.runtime, len(c.files) if c.recorded else "not recorded") for c in self.chapters]
        columns = ["Chapter", "Outputs", "Run time (s)", "Data files read"]
        return pd.DataFrame(rows, columns=columns).set_index("Chapter")

    def files_frame(self) -> pd.DataFrame:
        """One row per data file any chapter read: its short sha256, size and the chapters that read it."""
        readers: dict[DataFile, list[str]] = {}
        for c in self.chapters:
            for f in c.files:
                readers.setdefault(f, []).append(c.title)
        recorded = [c.title for c in self.chapters if c.recorded]
        rows = [
            (f.name, f.sha256[:SHORT_SHA], f.size, _readers_text(who, recorded))
            for f, who in sorted(readers.items(), key=lambda kv: (kv[0].name, kv[0].sha256))
        ]
        return pd.DataFrame(rows, columns=["File", "SHA-256, first 12 digits", "Bytes", "Read by"]).set_index("File")

    def environment_frame(self) -> pd.DataFrame:
        """Python and each key package as the chapters' kernels saw them, then the lock and the commit.

        A version that differed between kernels is listed once per value, with the chapters that saw it."""
        rows: list[tuple[str, str, str]] = []
        recorded = [c for c in self.chapters if c.recorded]
        names = ["Python"] + list(dict.fromkeys([*KEY_PACKAGES, *(p for c in recorded for p in c.packages)]))
        for name in names:
            seen: dict[str, list[str]] = {}
            for c in recorded:
                value = c.python if name == "Python" else c.packages.get(name, "not recorded")
                seen.setdefault(str(value), []).append(c.title)
            for value, who in seen.items():
                rows.append((name, value, _readers_text(who, [c.title for c in recorded])))
        rows.append((LOCK_ROW, self.lock_sha256 or "no lock file", "the build (.ci/requirements.lock)"))
        rows.append((COMMIT_ROW, self.commit, "the build (git HEAD)"))
        return pd.DataFrame(rows, columns=["Component", "Version", "Reported by"]).set_index("Component")

    def summary(self) -> str:
        """The page's computed sentence: where the chapters' outputs came from, what executed for this
        build and how long it took, and any chapter that failed or left no record."""
        n = len(self.chapters)
        every = "The book’s one chapter" if n == 1 else f"All {n} chapters"
        digest = f" (sha256 {self.digest[:SHORT_SHA]})" if self.digest else ""
        by: dict[str, list[str]] = {}
        for c in self.chapters:
            by.setdefault(c.origin, []).append(c.title)
        parts = []
        for origin in ("committed", "executed", "cached", "read"):
            who = by.get(origin)
            if not who:
                continue
            one = len(who) == 1
            was, its = ("was", "its notebook was") if one else ("were", "their notebooks were")
            phrase = {
                "committed": f"{was} shown as committed: {its} executed on the very data this build names, "
                f"{self.data}{digest}",
                "executed": f"{was} executed for this build on {self.data}{digest}",
                "cached": f"{was} shown from an earlier build’s execution of the same data, {self.data}{digest}",
                "read": f"{was} executed by myst-nb while the book was read, because the cache missed",
            }[origin]
            parts.append(f"{every if len(who) == n else list_text(who)} {phrase}")
        text = "; ".join(parts) + "." if parts else "No chapter was shown."
        ran = self.executed
        if ran:
            text += f" Executing took {self.total_seconds:.1f} s between them"
            slow = self.slowest
            if slow is not None and slow.runtime is not None and len(ran) > 1 and self.total_seconds:
                text += f"; the slowest, {slow.title}, {slow.runtime:.1f} s ({slow.runtime / self.total_seconds:.0%})"
            if self.execute_seconds is not None:
                text += f", in {self.execute_seconds:.1f} s of wall time" + (
                    ", side by side" if self.execute_seconds < self.total_seconds else ""
                )
            text += "."
        elif "cached" not in by:
            text += " Nothing executed in this build."
        failed = [c.title for c in self.chapters if not c.succeeded]
        if failed:
            text += f" {list_text(failed)} failed."
        unrecorded = [c.title for c in self.chapters if not c.recorded]
        if unrecorded:
            one = len(unrecorded) == 1
            text += f" {list_text(unrecorded)} left no kernel record, so {'its' if one else 'their'} data files and versions are not shown."
        return text


def _readers_text(who: Sequence[str], every: Sequence[str]) -> str:
    """``every chapter``, ``every chapter but X`` or the list of chapters."""
    if len(every) > 1 and list(who) == list(every):
        return "every chapter"
    rest = [c for c in every if c not in who]
    if len(every) > 3 and len(rest) == 1:
        return f"every chapter but {rest[0]}"
    return list_text(who)


def display_name(path: str | Path, places: Sequence[tuple[str, Path]]) -> str:
    """A file's name as the page prints it: relative to the first of ``places`` (label, folder) that holds
    it, behind that place's label (``data/verdicts.jsonl``, ``$TJ_DATA/verdicts.jsonl``); else its file
    name alone (no absolute path of the builder's machine)."""
    return place_relative(path, places) or Path(path).name


def read_kernel_records(root: Path) -> dict[str, dict]:
    """Chapter stem -> its kernel's record, for every chapter that left one under ``root``."""
    out = {}
    for f in sorted(Path(root).glob(f"*/{KERNEL_RECORD}")):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a record torn by a killed kernel counts as none
        out[f.parent.name] = data
    return out


def chapter_run(
    docname: str,
    title: str,
    exec_data: Mapping,
    record: Mapping | None,
    places: Sequence[tuple[str, Path]] = (),
    *,
    origin: str,
    runtime: float | None,
) -> ChapterRun:
    """One chapter's run: where its outputs came from (``origin``, one of :data:`ORIGINS`) and their run
    time, whether myst-nb rendered it without error (its execution data) and its kernel's record
    (``None`` if it left none)."""
    if origin not in ORIGINS:
        raise ValueError(f"origin {origin!r}: one of {', '.join(ORIGINS)}")
    record = record or {}
    files = tuple(
        DataFile(display_name(f["path"], places), f["sha256"], int(f["size"])) for f in record.get("files", ())
    )
    return ChapterRun(
        docname=docname,
        title=title,
        runtime=None if runtime is None else float(runtime),
        succeeded=bool(exec_data.get("succeeded")),
        origin=origin,
        python=record.get("python"),
        packages=dict(record.get("packages", {})),
        files=files,
    )


def file_sha256(path: Path) -> str | None:
    """The sha256 of a file's bytes, or ``None`` when there is no such file."""
    return sha256_file(path) if Path(path).is_file() else None


def build_commit(root: Path) -> str:
    """The commit checked out in ``root`` (``…, with uncommitted changes`` when the tree differs from it)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return head + (", with uncommitted changes" if dirty else "")
