"""Executing the book's notebooks reproducibly.

The book's notebooks are MyST markdown files paired with ``.ipynb`` (jupytext ``ipynb,md:myst``).
The ``.md`` is the source; :func:`execute` syncs it to the ``.ipynb``, runs it with nbclient in a
fresh kernel and writes the executed notebook so that re-running on unchanged data gives a
byte-identical file (stable cell ids, no timing metadata, no absolute path). The notebook carries
in its metadata the digest of the data it was executed on and the records the book's pages need
(:data:`METADATA_KEY`). What the code a chapter ran was is kept apart, in one file beside the
notebooks (:data:`CODE_KEYS`): per chapter, the package modules its kernel imported and their
digest with the book lock's pins (:class:`CodeKey`), so that an edit of the package moves the key
of the chapters that import the edited module and touches no notebook. :func:`execute_many` runs
several chapters side by side, each in a process of its own. The committed ``.ipynb`` are what
nbval checks against fresh runs and what the book renders when their data digest is that of the
data the build names and their code key still holds.

    python -m trajectory_judge.book execute [--data DIR] [--out DIR] [--jobs N] [NOTEBOOK ...]

With no notebook named, only the chapters whose execution is not current run (:func:`stale`: a
changed ``.md``, other data, or a code key that no longer holds); a named chapter always runs. With
``--out`` the executed notebooks go to that folder and the committed ones stay as they are: the
quick way to check that every chapter runs on a folder of one's own (``--data mine/``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from trajectory_judge.book.paths import (
    DATA_ENV,
    PAPER_DATA_ENV,
    data_dir,
    notebooks_dir,
    paper_data_dir,
    paper_trajectories_dir,
    repo_root,
)
from trajectory_judge.fileio import write_text_if_changed

KERNEL = "python3"
"""The kernel every notebook runs on."""


PAIRING = "ipynb,md:myst"
"""The jupytext pairing of every notebook."""


def notebook_sources(names: Sequence[str] = ()) -> list[Path]:
    """The MyST sources of the notebooks: all of ``notebooks/*.md``, or the named ones.

    A name may be a stem (``testbed``) or a path to the ``.md`` or ``.ipynb``.
    """
    if not names:
        return sorted(notebooks_dir().glob("*.md"))
    out = []
    for name in names:
        p = Path(name)
        md = p.with_suffix(".md") if p.suffix in (".md", ".ipynb") else notebooks_dir() / f"{name}.md"
        if not md.exists():
            raise FileNotFoundError(f"no notebook source {md}")
        out.append(md.resolve())
    return out


COLAB_SETUP_ID = "colab-setup"
"""The cell id of the Colab set-up cell (:func:`trajectory_judge.book.building.hosting.colab_cell`)."""


def is_colab_setup(cell) -> bool:
    """Whether ``cell`` is the Colab set-up cell that opens a chapter."""
    from trajectory_judge.book.building.hosting import COLAB_MARKER

    source = cell.get("source", "")  # a string in memory, a list of lines in a notebook file
    return cell.get("cell_type") == "code" and "".join(source).startswith(COLAB_MARKER)


def stable_cell_ids(cells) -> None:
    """Give ``cells`` the ids of the committed notebooks: ``colab-setup`` for the Colab set-up cell
    (its own id, so that adding it moves no other cell's), ``cell-000``, ``cell-001``, ... for the rest."""
    i = 0
    for cell in cells:
        if is_colab_setup(cell):
            cell["id"] = COLAB_SETUP_ID
        else:
            cell["id"] = f"cell-{i:03d}"
            i += 1


def read_source(md: Path):
    """The notebook a MyST source describes, with stable cell ids and normalised metadata."""
    import jupytext

    nb = jupytext.read(md, fmt="md:myst")
    stable_cell_ids(nb.cells)
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    kernelspec = nb.metadata.get("kernelspec") or {"display_name": "Python 3", "language": "python", "name": KERNEL}
    nb.metadata = {"jupytext": {"formats": PAIRING}, "kernelspec": kernelspec}
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


@contextmanager
def _env(var: str, value: str | None) -> Iterator[None]:
    old = os.environ.get(var)
    if value is not None:
        os.environ[var] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = old


METADATA_KEY = "trajectory_judge"
"""The executed notebook's metadata key for what the build needs beside its outputs:
``{"data_sha256": ..., "records": {...}}`` (:func:`data_digest`, :func:`trajectory_judge.book.building.records.pack`)."""

CODE_KEYS = "code-keys.json"
"""The file, beside the executed notebooks, of every chapter's :class:`CodeKey` (chapter -> key)."""

BOOK_LOCK = Path(".ci") / "book.lock"
"""The lock of the book's environment (what Binder and Colab install), relative to the book's root."""


def data_folders(start: str | Path | None = None, data: str | Path | None = None) -> list[tuple[str, Path]]:
    """The folders a chapter's numbers are computed from, each with the name it has in a digest: the
    folder it is executed on (``$TJ_DATA``, or ``data``), the paper's verdicts (``$TJ_PAPER_DATA``) and the
    book's own ``data/``, where the paper's verdicts find their trajectories."""
    if data is None:
        data = data_dir(start)
    return [
        ("$TJ_DATA", Path(data).resolve()),
        ("$TJ_PAPER_DATA", paper_data_dir(start)),
        ("data", paper_trajectories_dir(start)),
    ]


def data_digest(folders: Sequence[tuple[str, Path]]) -> str:
    """sha256 over every file of ``folders`` (their name in the digest, each file's path inside its
    folder and the sha256 of its bytes), in a fixed order: the same folder contents give the same digest
    wherever the folders are."""
    h = hashlib.sha256()
    for label, folder in folders:
        h.update(label.encode() + b"\0")
        for path in sorted(q for q in Path(folder).rglob("*") if q.is_file()):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def installed_package() -> Path:
    """The folder of the ``trajectory_judge`` package this process imports (and a chapter's kernel with it)."""
    import trajectory_judge

    return Path(trajectory_judge.__file__).resolve().parent


def code_digest(modules: Iterable[str], start: str | Path | None = None, *, package: str | Path | None = None) -> str:
    """sha256 over the code a chapter's outputs are computed by: the ``modules`` it imported (paths inside
    ``package``, by default :func:`installed_package`; each path and the sha256 of its bytes, a module since
    removed as such) and the pins (``name==version`` lines) of the book's lock, :data:`BOOK_LOCK`, when the
    book holds one. Editing one of those modules, or moving a pin, changes it; editing any other module of
    the package, a comment of the lock or a compiled file does not."""
    root = installed_package() if package is None else Path(package)
    h = hashlib.sha256()
    for rel in sorted(set(modules)):
        path = root / rel
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"removed")
    h.update(b"lock\0")
    try:
        lock = repo_root(start) / BOOK_LOCK
    except FileNotFoundError:
        lock = None
    if lock is not None and lock.is_file():
        pins = sorted(
            ln.strip()
            for ln in lock.read_text(encoding="utf-8").splitlines()
            if "==" in ln and not ln.lstrip().startswith("#")
        )
        h.update("\n".join(pins).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class CodeKey:
    """What a chapter's outputs were computed by: the package modules its kernel had imported when its last
    cell ran, and their :func:`code_digest` then."""

    modules: tuple[str, ...]
    """Paths inside the package (``analysis/core/formatting.py``), sorted."""
    sha256: str
    """:func:`code_digest` of ``modules`` when the chapter executed."""

    @classmethod
    def of(
        cls, modules: Iterable[str], start: str | Path | None = None, *, package: str | Path | None = None
    ) -> CodeKey:
        """The key of ``modules`` as they are now."""
        mods = tuple(sorted(set(modules)))
        return cls(mods, code_digest(mods, start, package=package))

    def holds(self, start: str | Path | None = None, *, package: str | Path | None = None) -> bool:
        """Whether its modules and the lock's pins are still what the chapter executed with."""
        return code_digest(self.modules, start, package=package) == self.sha256


def read_code_keys(folder: str | Path) -> dict[str, CodeKey]:
    """The code keys of the chapters executed into ``folder`` (:data:`CODE_KEYS`; empty when it has none)."""
    path = Path(folder) / CODE_KEYS
    if not path.is_file():
        return {}
    rows = json.loads(path.read_text(encoding="utf-8"))
    return {name: CodeKey(tuple(row["modules"]), row["sha256"]) for name, row in rows.items()}


def write_code_keys(folder: str | Path, keys: Mapping[str, CodeKey]) -> bool:
    """Record ``keys`` (chapter -> key) in ``folder``'s :data:`CODE_KEYS`, beside the keys of the other
    chapters; the file is rewritten, atomically, only when its bytes change. Returns whether it was."""
    merged = {**read_code_keys(folder), **keys}
    rows = {name: {"modules": list(key.modules), "sha256": key.sha256} for name, key in merged.items()}
    return write_text_if_changed(Path(folder) / CODE_KEYS, json.dumps(rows, indent=1, sort_keys=True) + "\n")


MODULES_PROBE = """\
import json, sys
print(json.dumps({n: getattr(m, "__file__", None) for n, m in list(sys.modules.items()) if n.split(".")[0] == "trajectory_judge"}))
"""
"""Run in a chapter's kernel after its last cell (and taken out of the notebook again): prints the file of
every ``trajectory_judge`` module the kernel has imported."""


def imported_modules(probe_output: str) -> list[str]:
    """The paths inside the package of the modules :data:`MODULES_PROBE` printed (none when the kernel
    never imported the package)."""
    files = json.loads(probe_output)
    if not files.get("trajectory_judge"):
        return []
    root = Path(files["trajectory_judge"]).resolve().parent
    return sorted({Path(f).resolve().relative_to(root).as_posix() for f in files.values() if f})


def places(start: str | Path | None = None, data: str | Path | None = None) -> list[tuple[str, Path]]:
    """Where a recorded data file is named from (:func:`trajectory_judge.book.building.records.portable_path`):
    the book's root, then the folder executed on and the paper's verdicts."""
    folders = data_folders(start, data)
    return [("", repo_root(start)), folders[0], folders[1]]


def recorded_digest(nb) -> str | None:
    """The data digest an executed notebook records (``None``: it records none)."""
    meta = nb.get("metadata", {}).get(METADATA_KEY) or {}
    return meta.get("data_sha256")


def recorded_records(nb) -> dict[str, str]:
    """The records an executed notebook carries (:func:`trajectory_judge.book.building.records.pack`)."""
    meta = nb.get("metadata", {}).get(METADATA_KEY) or {}
    return dict(meta.get("records") or {})


@dataclass(frozen=True)
class Executed:
    """One chapter's execution: the notebook written, its run time and code key, or the one line saying why it failed."""

    source: Path
    out: Path | None
    seconds: float
    error: str | None = None
    code: CodeKey | None = None


def execute(
    md: Path, *, data: str | Path | None = None, timeout: int = 600, out_dir: str | Path | None = None
) -> Executed:
    """Run the notebook of ``md`` in ``notebooks/`` and write the executed ``.ipynb`` beside it
    (or into ``out_dir``, leaving the committed one as it is).

    ``data`` sets ``TJ_DATA`` for the kernel; by default it is the data of the book holding the
    notebook. ``TJ_PAPER_DATA`` is set the same way to that book's paper verdicts. While it runs, the
    chapter's records go to a temporary folder; the executed notebook carries them, packed, and the
    digest of the data it ran on, in its metadata (:data:`METADATA_KEY`). After its last cell the kernel
    lists the package modules it imported (:data:`MODULES_PROBE`): the result's :class:`CodeKey`, which
    :func:`execute_many` records in :data:`CODE_KEYS`. The output is deterministic: stable cell ids, no
    timing or execution metadata, no absolute path, so an unchanged notebook on unchanged data writes
    the same bytes on any machine, and a file that would not change is not rewritten. A failing cell
    raises nbclient's ``CellExecutionError`` and writes nothing.
    """
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    from trajectory_judge.book.building.records import RECORDS_ENV, pack

    md = Path(md).resolve()
    start = _book_start(md)
    folders = data_folders(start, data)
    digest = data_digest(folders)
    nb = read_source(md)
    with (
        tempfile.TemporaryDirectory(prefix="tj-records-") as records,
        tempfile.TemporaryDirectory(prefix="tj-kernel-") as sockets,
        _env(DATA_ENV, str(folders[0][1])),
        _env(PAPER_DATA_ENV, str(folders[1][1])),
        _env(RECORDS_ENV, records if start is not None else ""),  # a copy outside any book: no pages to feed
    ):
        # The kernel talks over local sockets in a private folder, not TCP on loopback: nothing to
        # eavesdrop on, and the kernel has no reason to warn that its traffic is unencrypted.
        sockets_config = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "kernel")}})
        client = NotebookClient(
            nb,
            config=sockets_config,
            timeout=timeout,
            kernel_name=KERNEL,
            record_timing=False,
            resources={"metadata": {"path": str(md.parent)}},
        )
        nb.cells.append(nbformat.v4.new_code_cell(MODULES_PROBE, id="tj-modules"))
        started = time.monotonic()
        client.execute()
        seconds = time.monotonic() - started
        probe = nb.cells.pop()
        packed = pack(Path(records) / md.stem, places(start, data)) if start is not None else {}
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    nb.metadata.pop("widgets", None)
    nb.metadata[METADATA_KEY] = {"data_sha256": digest, "records": packed}
    code = CodeKey.of(imported_modules("".join(o.get("text", "") for o in probe.outputs)), start)
    out = md.with_suffix(".ipynb") if out_dir is None else Path(out_dir) / f"{md.stem}.ipynb"
    write_text_if_changed(out, _notebook_text(nb))
    return Executed(md, out, seconds, code=code)


def _book_start(md: Path) -> Path | None:
    """Where to look for the book of notebook ``md``: its own folder when it is inside a book, else the
    working directory (a copy of a chapter run outside any book reads the book around it)."""
    try:
        repo_root(md.parent)
    except FileNotFoundError:
        return None
    return md.parent


def _execute_one(md: Path, data: str | None, timeout: int, out_dir: str | None) -> Executed:
    """:func:`execute` in a worker process: a failure comes back as its one line, never as a traceback."""
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    started = time.monotonic()
    try:
        return execute(md, data=data, timeout=timeout, out_dir=out_dir)
    except CellExecutionError as exc:
        last = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines() if ln.strip()]
        why = f"a cell failed: {last[-1].strip() if last else type(exc).__name__}"
    except (DeadKernelError, TimeoutError, RuntimeError, OSError) as exc:
        why = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return Executed(md, None, time.monotonic() - started, why)


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def execute_many(
    sources: Sequence[Path],
    *,
    data: str | Path | None = None,
    timeout: int = 600,
    out_dir: str | Path | None = None,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Executed]:
    """Execute ``sources``, ``jobs`` at a time (default: the usable CPUs), each in a process of its own
    with a fresh kernel; the results in the order of ``sources``. ``progress`` gets one line as each
    chapter finishes. The code keys of the chapters that ran go to :data:`CODE_KEYS` beside their
    notebooks, once all have finished."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    say = progress or (lambda line: None)
    n = max(1, min(jobs or usable_cpus(), len(sources) or 1))
    args = (None if data is None else str(data), timeout, None if out_dir is None else str(out_dir))
    say(f"executing {len(sources)} chapter{'s' if len(sources) != 1 else ''}, {n} at a time")
    done: dict[Path, Executed] = {}

    def report(r: Executed) -> None:
        done[r.source] = r
        if r.error is None:
            say(f"executed {_shown(r.out)} in {r.seconds:.1f} s")
        else:
            say(f"{_shown(r.source)}: {r.error}")

    if n == 1:
        for md in sources:
            report(_execute_one(Path(md), *args))
    else:
        # spawned workers: each starts clean, with nothing of the calling process (a Sphinx build) in it
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_execute_one, Path(md), *args) for md in sources]
            for future in as_completed(futures):
                report(future.result())
    results = [done[Path(md)] for md in sources]
    folders: dict[Path, dict[str, CodeKey]] = {}
    for r in results:
        if r.out is not None and r.code is not None:
            folders.setdefault(r.out.parent, {})[r.source.stem] = r.code
    for folder, keys in folders.items():
        write_code_keys(folder, keys)
    return results


def same_source(source, executed) -> bool:
    """Whether ``executed`` is the notebook ``source`` (:func:`read_source`) executed: the same cells (type,
    source, metadata) and kernel, whatever their outputs."""

    def cells(nb) -> list:
        return [(c.cell_type, c.source, {k: v for k, v in c.metadata.items() if k != "execution"}) for c in nb.cells]

    kernel = executed.metadata.get("kernelspec")
    return cells(source) == cells(executed) and source.metadata.get("kernelspec") == kernel


def stale(sources: Sequence[Path], *, data: str | Path | None = None, out_dir: str | Path | None = None) -> list[Path]:
    """The chapters of ``sources`` whose executed notebook (beside them, or in ``out_dir``) is missing or not
    current: of another ``.md`` (:func:`same_source`), of other data than ``data`` (:func:`data_digest`), or
    with no code key in :data:`CODE_KEYS` or one that no longer holds (:meth:`CodeKey.holds`)."""
    import nbformat

    digests: dict[tuple[Path | None, str | None], str] = {}
    out = []
    for md in map(Path, sources):
        md = md.resolve()
        start = _book_start(md)
        folder = md.parent if out_dir is None else Path(out_dir)
        ipynb, key = folder / f"{md.stem}.ipynb", read_code_keys(folder).get(md.stem)
        if not ipynb.is_file() or key is None or not key.holds(start):
            out.append(md)
            continue
        where = (start, None if data is None else str(data))
        if where not in digests:
            digests[where] = data_digest(data_folders(start, data))
        executed = nbformat.read(ipynb, as_version=4)
        if recorded_digest(executed) != digests[where] or not same_source(read_source(md), executed):
            out.append(md)
    return out


def _shown(path: Path | None) -> str:
    if path is None:
        return "?"
    try:
        return str(Path(path).relative_to(repo_root()))
    except (ValueError, FileNotFoundError):
        return str(path)


def sync_ipynb_cell(md: Path, index: int) -> bool:
    """Give the executed ``.ipynb`` of ``md`` the source of its code cell ``index`` from the ``.md``.

    Only the source changes (outputs stay), so a cell that prints nothing where the book runs (the
    Colab set-up) follows its ``.md`` without executing the notebook again. Returns whether the
    file was rewritten; :class:`ValueError` when the two do not hold that cell at the same place.
    """
    import nbformat

    md = Path(md)
    want = [c for c in read_source(md).cells if c.cell_type == "code"]
    out = md.with_suffix(".ipynb")
    nb = nbformat.read(out, as_version=4)
    have = [c for c in nb.cells if c.cell_type == "code"]
    if len(want) != len(have) or want[index].metadata.get("tags") != have[index].metadata.get("tags"):
        raise ValueError(f"{out}: its cells differ from {md.name}; execute it again")
    if have[index].source == want[index].source:
        return False
    have[index].source = want[index].source
    return write_text_if_changed(out, _notebook_text(nb))


def _notebook_text(nb) -> str:
    """An executed notebook as written: nbformat's JSON with one newline at the end."""
    import nbformat

    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def name_repository(url: str, branch: str = "main", book: str | Path | None = None) -> list[Path]:
    """Name the hosting repository in ``_config.yml`` and in every notebook's set-up cell, ``.md``
    and executed ``.ipynb`` (:func:`trajectory_judge.book.building.hosting.set_repository`); the files rewritten."""
    from trajectory_judge.book.building.hosting import set_repository

    root = Path(book) if book is not None else repo_root()
    written = set_repository(url, branch, book=root)
    for md in sorted((root / "notebooks").glob("*.md")):
        if md.with_suffix(".ipynb").exists() and sync_ipynb_cell(md, 0):
            written.append(md.with_suffix(".ipynb"))
    return written


def _config(repository: str, branch: str) -> int:
    """The ``config`` verb: name the hosting repository, or one line of error and exit status 2."""
    try:
        written = name_repository(repository, branch)
    except (ValueError, FileNotFoundError) as exc:
        print(f"trajectory-judge book config: error: {exc}", file=sys.stderr)
        return 2
    root = repo_root()
    names = ", ".join(str(p.relative_to(root)) for p in written) or "nothing (already so)"
    print(f"hosting repository {repository} ({branch}); rewrote {names}", file=sys.stderr)
    return 0


def _refuse(message: str) -> int:
    """One line of error of the ``execute`` verb; its exit status, 2."""
    print(f"trajectory-judge book execute: error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m trajectory_judge.book execute [--data DIR] [--timeout S] [NOTEBOOK ...]`` or
    ``python -m trajectory_judge.book config --repository URL [--branch B]``."""
    parser = argparse.ArgumentParser(prog="python -m trajectory_judge.book", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    ex = sub.add_parser("execute", help="sync each notebook's .md to .ipynb and execute it in place")
    ex.add_argument(
        "notebooks", nargs="*", help="stems or paths, executed whatever their state (default: every stale chapter)"
    )
    ex.add_argument("--data", default=None, help=f"data directory for the kernel (sets {DATA_ENV})")
    ex.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    ex.add_argument("--out", default=None, help="write the executed notebooks into this folder (default: in place)")
    ex.add_argument("--jobs", type=int, default=None, help="chapters executed at once (default: the usable CPUs)")
    cf = sub.add_parser("config", help="name the hosting repository (buttons, Binder badge, Colab set-up)")
    cf.add_argument("--repository", required=True, help="https://github.com/OWNER/REPO")
    cf.add_argument("--branch", default="main", help="branch the buttons open and Colab clones (default main)")
    args = parser.parse_args(argv)
    if args.verb == "config":
        return _config(args.repository, args.branch)
    if args.out is not None:
        out_dir = Path(args.out).resolve()
        if out_dir == notebooks_dir().resolve():
            return _refuse("--out is the notebooks folder; omit it to execute in place")
        out_dir.mkdir(parents=True, exist_ok=True)
    if args.jobs is not None and args.jobs < 1:
        return _refuse(f"--jobs {args.jobs}: at least 1")
    try:
        sources = notebook_sources(args.notebooks)
        if args.data is not None and not Path(args.data).is_dir():  # before any chapter starts
            raise FileNotFoundError(f"data directory {args.data} does not exist")
        if not args.notebooks:
            sources = stale(sources, data=args.data, out_dir=args.out)
    except FileNotFoundError as exc:
        return _refuse(str(exc))
    if not sources:
        print(
            "every chapter's execution is current: nothing to execute (name a chapter to execute it)", file=sys.stderr
        )
        return 0
    results = execute_many(
        sources,
        data=args.data,
        timeout=args.timeout,
        out_dir=args.out,
        jobs=args.jobs,
        progress=lambda line: print(line, file=sys.stderr),
    )
    failed = [r for r in results if r.error is not None]
    if failed:
        print(f"{len(failed)} of {len(results)} chapters failed; their .ipynb are left as they were", file=sys.stderr)
    return 1 if failed else 0
