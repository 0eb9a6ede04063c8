"""The execution page: how each chapter executed in this build, read from the build itself.

Two sources, both written while the book builds: myst-nb's execution data for each notebook (its run
time, whether it succeeded, whether it came from a cache: ``env.nb_metadata[docname]["exec_data"]``)
and each chapter kernel's own record (:data:`trajectory_judge.book.build.records.KERNEL_RECORD`: Python, the
key packages' versions, the data files it read with their sha256). The Sphinx extension
``book/_ext/tj_execution.py`` collects them once every document has been read and renders
:class:`ExecutionReport` as the page's tables and sentence; nothing on the page is typed.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from trajectory_judge.analysis.formatting import list_text
from trajectory_judge.book.build.records import KERNEL_RECORD, KEY_PACKAGES

SHORT_SHA = 12
"""How many hex digits of a sha256 the page prints."""

SHARED_NAMES = {"editions": "the verified verdicts and their bootstrapped reports"}
"""How a result shared through the build's cache (:mod:`trajectory_judge.book.build.shared_results`) is named on the page."""

LOCK_ROW, COMMIT_ROW = "Lock (SHA-256)", "Commit"
"""The environment table's rows for the lock's checksum and the build's commit."""


@dataclass(frozen=True)
class DataFile:
    """A data file a chapter read: where (as the page names it), its sha256 and its size in bytes."""

    name: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ChapterRun:
    """One chapter's execution in this build."""

    docname: str
    title: str
    runtime: float | None
    succeeded: bool
    method: str
    this_build: bool = True
    python: str | None = None
    packages: Mapping[str, str] = field(default_factory=dict)
    files: tuple[DataFile, ...] = ()
    shared: Mapping[str, str] = field(default_factory=dict)
    """Shared result -> ``reused`` (taken from the build's cache) or ``computed`` (by this chapter)."""

    @property
    def shared_text(self) -> str:
        """The chapters table's cell: what the chapter reused or computed for the others (``–``: nothing)."""
        if not self.shared:
            return "–"
        how = {n: "reused" if h == "reused" else "computed here" for n, h in sorted(self.shared.items())}
        return next(iter(how.values())) if len(how) == 1 else "; ".join(f"{n}: {h}" for n, h in how.items())

    @property
    def cached(self) -> bool:
        """Whether its outputs came from an earlier build (myst-nb's cache, or an incremental build that did
        not read it again) rather than from executing it in this build."""
        return not self.this_build

    @property
    def recorded(self) -> bool:
        """Whether its kernel left a record (it does whenever it executed in this build)."""
        return self.python is not None

    @property
    def result(self) -> str:
        if not self.succeeded:
            return "failed"
        if self.this_build:
            return "executed"
        return "from cache" if self.method == "cache" else "from an earlier build"


@dataclass(frozen=True)
class ExecutionReport:
    """Every chapter's run, the lock's sha256 and the commit the build ran on."""

    chapters: tuple[ChapterRun, ...]
    lock_sha256: str | None
    commit: str
    reading_seconds: float | None = None
    """Wall time of the build's reading phase, in which the chapters execute (``None``: not measured)."""
    kernels: tuple[int, int] | None = None
    """Kernels forked from the build's warm process and kernels started anew
    (:mod:`trajectory_judge.book.build.kernelfork`; ``None``: not through it)."""

    @property
    def executed(self) -> tuple[ChapterRun, ...]:
        """The chapters executed in this build (not taken from a cache)."""
        return tuple(c for c in self.chapters if not c.cached)

    @property
    def total_seconds(self) -> float:
        """The executed chapters' run times added up (seconds)."""
        return sum(c.runtime or 0.0 for c in self.executed)

    @property
    def slowest(self) -> ChapterRun | None:
        timed = [c for c in self.executed if c.runtime is not None]
        return max(timed, key=lambda c: c.runtime) if timed else None

    def to_frame(self) -> pd.DataFrame:
        """One row per chapter, in the book's order: run time, result and the number of data files read."""
        rows = [
            (c.title, c.runtime, c.result, len(c.files) if c.recorded else "not recorded", c.shared_text)
            for c in self.chapters
        ]
        return pd.DataFrame(
            rows, columns=["Chapter", "Run time (s)", "Result", "Data files read", "Shared results"]
        ).set_index("Chapter")

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
        """The page's computed sentence: how many chapters executed, their total run time, the slowest, and
        any chapter taken from a cache, failed or unrecorded."""
        n, ran = len(self.chapters), self.executed
        if not ran:
            text = "No chapter executed in this build."
        else:
            who = (
                ("The book's one chapter" if n == 1 else f"All {n} chapters")
                if len(ran) == n
                else f"{len(ran)} of the {n} chapters"
            )
            text = f"{who} executed in this build, taking {self.total_seconds:.1f} s of execution between them"
            slow = self.slowest
            if slow is not None and len(ran) > 1:
                share = slow.runtime / self.total_seconds if self.total_seconds else 0.0
                text += f"; the slowest, {slow.title}, took {slow.runtime:.1f} s ({share:.0%} of the total)"
            text += "."
            if self.reading_seconds is not None:
                text += (
                    f" Reading the book’s documents, which executes them, took the build {self.reading_seconds:.1f} s"
                    " of wall time"
                    + (", as chapters executed side by side." if self.reading_seconds < self.total_seconds else ".")
                )
        text += self.kernels_text()
        cached = [c.title for c in self.chapters if c.cached]
        if cached:
            one = len(cached) == 1
            text += (
                f" {list_text(cached)} {'was' if one else 'were'} not executed: {'its' if one else 'their'} outputs"
                " came from an earlier build (the execution cache, or a build that did not read"
                f" {'it' if one else 'them'} again); the run time shown is that build’s."
            )
        reused = [c.title for c in ran if "reused" in c.shared.values()]
        if reused:
            one = len(reused) == 1
            names = sorted({n for c in ran for n, h in c.shared.items() if h == "reused"})
            text += (
                f" {list_text(reused)} reused {list_text([SHARED_NAMES.get(n, n) for n in names])} from the"
                " build’s cache, where another chapter of this build had left them."
            )
        failed = [c.title for c in self.chapters if not c.succeeded]
        if failed:
            text += f" {list_text(failed)} failed."
        unrecorded = [c.title for c in ran if not c.recorded]
        if unrecorded:
            one = len(unrecorded) == 1
            text += f" {list_text(unrecorded)} left no kernel record, so {'its' if one else 'their'} data files and versions are not shown."
        return text

    def kernels_text(self) -> str:
        """How the chapters' kernels started, when the build's warm process launched any (else empty)."""
        if not self.kernels or not sum(self.kernels):
            return ""
        forked, anew = self.kernels
        if not forked:
            return f" The warm process could not launch the kernels; {_count(anew, 'kernel')} started anew."
        text = (
            " Each chapter ran in a kernel of its own, forked from one process that had imported the"
            " book’s libraries once, instead of starting Python and importing them anew"
        )
        return text + ("." if not anew else f"; {_count(anew, 'kernel')} started anew all the same.")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


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
    path = Path(path)
    for label, folder in places:
        try:
            rel = path.relative_to(folder)
        except ValueError:
            continue
        return f"{label}/{rel.as_posix()}" if label else rel.as_posix()
    return path.name


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
    build: str | None = None,
    started: float | None = None,
) -> ChapterRun:
    """One chapter's run from myst-nb's execution data and its kernel's record (``None`` if it left none).

    With ``started`` (when this build began), exec data written before it is an earlier build's (a
    cache hit keeps the cached run's time); with ``build`` (this build's id), a record another build
    left is ignored."""
    this_build = started is None or float(exec_data.get("mtime") or 0.0) >= started
    if record is None or (build is not None and record.get("build") != build) or not this_build:
        record = {}
    files = tuple(
        DataFile(display_name(f["path"], places), f["sha256"], int(f["size"])) for f in record.get("files", ())
    )
    runtime = exec_data.get("runtime")
    return ChapterRun(
        docname=docname,
        title=title,
        runtime=None if runtime is None else float(runtime),
        succeeded=bool(exec_data.get("succeeded")),
        method=str(exec_data.get("method") or ""),
        this_build=this_build,
        python=record.get("python"),
        packages=dict(record.get("packages", {})),
        files=files,
        shared=dict(record.get("shared", {})),
    )


def file_sha256(path: Path) -> str | None:
    """The sha256 of a file's bytes, or ``None`` when there is no such file."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


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
