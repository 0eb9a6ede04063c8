"""Sphinx extension of the book: the build renders executed notebooks; it executes only what no
execution of the named data holds.

The book runs in myst-nb's ``cache`` mode (``execute_notebooks: cache``): myst-nb renders a notebook
from its jupyter-cache folder when the folder holds an execution of the same code, and executes it
otherwise. What myst-nb's key leaves out is the data, so here the folder is keyed by it:

* ``config-inited``: the digest of the data the build names (``TJ_DATA``, ``TJ_PAPER_DATA`` and the
  book's ``data/``; :func:`trajectory_judge.book.building.execute_notebooks.data_digest`) names the cache,
  ``<build>/.jupyter_cache/<first 16 digits>`` (``nb_execution_cache_path``), and the records folder of
  the pages (``tj_records``). A build on other data reads every page again (``tj_data_digest`` is a
  setting that rebuilds the environment) and never meets another folder's executions.
* ``env-before-read-docs``: every chapter is put in that cache through jupyter-cache's own API before
  myst-nb reads it. An execution is used only while its chapter's code key holds: the package modules
  its kernel imported and the book lock's pins are what they were when it ran
  (:class:`~trajectory_judge.book.building.execute_notebooks.CodeKey`, recomputed now from the key's own
  module list). A committed ``notebooks/NAME.ipynb`` that records the named data's digest, whose key in
  ``notebooks/code-keys.json`` holds, and whose code cells are those of ``NAME.md``, is cached as it is;
  every other chapter (a reader's folder, outputs older than the data or than a module the chapter
  imports) is executed first by the package's ``execute`` step, side by side
  (:func:`trajectory_judge.book.building.execute_notebooks.execute_many`), and its execution is cached
  with its key. The notebook cached is the one myst-nb reads from ``NAME.md`` (with myst-nb's own
  reader), with the executed outputs, so that myst-nb's match is exact. A chapter whose cached execution
  is another than the one its page was last read with is read again. A chapter that fails stops the
  build with one line per failure.
* ``doctree-read``: a chapter myst-nb executed itself while reading (the cache missed: its source
  changed during the build) is reported as a warning, which ``-W`` turns into a failed build, with the
  command to run.

Each chapter's records (its tables as CSV and JSON, what each table and figure was computed from, the
data files its kernel read) come from the executed notebook's metadata, unpacked into the records
folder, so provenance lines, downloads and the execution page read the execution the page shows.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

DIGEST_DIGITS = 16
"""How many hex digits of the data digest name the cache and records folders."""

JOBS_ENV = "TJ_BOOK_JOBS"
"""Environment variable: how many chapters the build executes at once (default: the usable CPUs)."""

ORIGIN = "tj_origin"
"""Key, in a jupyter-cache record's data, of where the execution came from: ``committed`` or ``executed``."""

CODE = "tj_code"
"""Key, in a jupyter-cache record's data, of the execution's code key (``{"modules": [...], "sha256": ...}``)."""


@dataclass(frozen=True)
class ChapterSource:
    """Where the outputs a chapter's page shows came from, in this build."""

    origin: str
    """``committed`` (the committed notebook, executed on the same data) or ``executed`` (by the execute step)."""
    this_build: bool
    """Whether this build put it in the cache (else an earlier build on the same data did)."""
    seconds: float | None
    """The execution's run time, when it executed for a build (the committed notebooks record none)."""
    created: float
    """When its cache record was made (myst-nb reports this time for a notebook it rendered from the cache)."""


def _folders(app):
    from trajectory_judge.book.building.execute_notebooks import data_folders

    return data_folders(app.confdir)


def _configure(app, config) -> None:
    """Name the cache and records folders by the digest of the data the build names."""
    from trajectory_judge.book.building.execute_notebooks import data_digest

    try:
        digest = data_digest(_folders(app))
    except FileNotFoundError as exc:
        raise ExtensionError(f"tj_notebook_cache: {exc}") from None
    config.tj_data_digest = digest
    config.nb_execution_cache_path = str(Path(app.outdir).parent / ".jupyter_cache" / digest[:DIGEST_DIGITS])
    app.tj_sources = {}
    app.tj_execute_seconds = None


def _jobs() -> int | None:
    raw = os.environ.get(JOBS_ENV, "").strip()
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ExtensionError(f"{JOBS_ENV}={raw!r}: not a whole number of chapters to execute at once")
    return n


def _notebook(app, env, docname: str):
    """The unexecuted notebook myst-nb reads for ``docname`` (with myst-nb's reader), or None when
    it is not a notebook or has no code cell."""
    from myst_nb.core.read import create_nb_reader

    path = Path(env.doc2path(docname))
    if app.config.source_suffix.get(path.suffix) != "myst-nb":
        return None
    text = path.read_text(encoding=app.config.source_encoding)
    reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
    if reader is None:
        return None
    nb = reader.read(text)
    return (nb, path) if any(c.get("cell_type") == "code" for c in nb.cells) else None


def _code(nb) -> list:
    return [c for c in nb.cells if c.get("cell_type") == "code"]


def with_outputs(nb, executed):
    """``nb`` (as myst-nb read it) with the outputs of ``executed``, the same notebook executed, and
    the metadata the build needs; ``None`` when their code cells differ (``executed`` is of other code)."""
    import copy

    mine, theirs = _code(nb), _code(executed)
    if len(mine) != len(theirs) or any(a.source != b.source for a, b in zip(mine, theirs)):
        return None
    out = copy.deepcopy(nb)
    for cell, run in zip(_code(out), theirs):
        cell["outputs"] = copy.deepcopy(run.get("outputs", []))
        cell["execution_count"] = run.get("execution_count")
    for key in ("language_info", "trajectory_judge"):
        if key in executed.metadata:
            out.metadata[key] = copy.deepcopy(executed.metadata[key])
    return out


def _cache(cache, nb, path: Path, origin: str, seconds: float | None, code):
    from jupyter_cache.base import CacheBundleIn

    data: dict[str, object] = {ORIGIN: origin, CODE: {"modules": list(code.modules), "sha256": code.sha256}}
    if seconds is not None:
        data["execution_seconds"] = seconds
    return cache.cache_notebook_bundle(CacheBundleIn(nb, str(path), data=data), check_validity=False, overwrite=True)


def _fill_cache(app, env, docnames) -> None:
    """Make sure every chapter of the book is in the cache of the named data before myst-nb reads it, and
    that every page whose execution changed since it was last read is read again."""
    from jupyter_cache import get_cache

    if env.mystnb_config.execution_mode != "cache":
        return
    cache = get_cache(env.mystnb_config.execution_cache_path)
    found = {doc: read for doc in sorted(env.found_docs) if (read := _notebook(app, env, doc)) is not None}
    records, todo = {}, []
    for doc, (nb, path) in found.items():
        entry = _cached_or_committed(cache, nb, path, app.config.tj_data_digest, app.confdir)
        if entry is None:
            todo.append(doc)
        else:
            records[doc] = entry
    if todo:
        records.update(_execute_missing(app, env, cache, {d: found[d] for d in todo}))
    _unpack_records(app, found, records, todo)
    shown = {doc: (record.pk, record.created.timestamp()) for doc, (record, _) in records.items()}
    last = getattr(env, "tj_shown", {})
    docnames.extend(d for d in sorted(shown) if d not in docnames and last.get(d) != shown[d])
    env.tj_shown = shown


def _code_key(record):
    """The code key a cache record was made under (``None``: it records none, as myst-nb's own entries)."""
    from trajectory_judge.book.building.execute_notebooks import CodeKey

    row = (record.data or {}).get(CODE)
    return None if not row else CodeKey(tuple(row["modules"]), row["sha256"])


def _cached_or_committed(cache, nb, path: Path, data: str, start):
    """``(cache record, executed notebook)`` of ``nb`` on the data of digest ``data``: the cache's entry when it
    records that data and its code key holds, else the committed notebook's execution when it does (cached
    now); ``None``."""
    import nbformat

    from trajectory_judge.book.building.execute_notebooks import read_code_keys, recorded_digest

    try:
        record = cache.match_cache_notebook(nb)
    except KeyError:
        record = None
    if record is not None:
        cached = cache.get_cache_bundle(record.pk).nb
        code = _code_key(record)
        if recorded_digest(cached) == data and code is not None and code.holds(start):
            return record, cached
        # an entry of code that has changed since (a module the chapter imports, or a pin), or without a key
        # at all (myst-nb cached its own execution after a miss): replaced
    committed = path.with_suffix(".ipynb")
    code = read_code_keys(path.parent).get(path.stem)
    if not committed.is_file() or code is None or not code.holds(start):
        return None
    executed = nbformat.read(committed, as_version=4)
    merged = with_outputs(nb, executed) if recorded_digest(executed) == data else None
    return None if merged is None else (_cache(cache, merged, path, "committed", None, code), merged)


def _execute_missing(app, env, cache, todo: dict) -> dict:
    """Execute the chapters ``todo`` (docname -> (notebook, path)) on the named data, side by side, and cache them."""
    import nbformat

    from trajectory_judge.book.building.execute_notebooks import execute_many

    folder = Path(env.mystnb_config.execution_cache_path) / "executed"
    folder.mkdir(parents=True, exist_ok=True)
    logger.info(f"tj_notebook_cache: {len(todo)} chapters hold no execution of this data; executing them")
    began = time.monotonic()
    results = execute_many(
        [path for _, path in todo.values()],
        data=_folders(app)[0][1],
        timeout=env.mystnb_config.execution_timeout,
        out_dir=folder,
        jobs=_jobs(),
        progress=lambda line: logger.info(f"tj_notebook_cache: {line}"),
    )
    app.tj_execute_seconds = time.monotonic() - began
    failed = [r for r in results if r.error is not None]
    if failed:
        lines = "; ".join(f"{_rel(app, r.source)}: {r.error}" for r in failed)
        raise ExtensionError(
            f"{len(failed)} chapter{'s' if len(failed) != 1 else ''} failed to execute on the named data: {lines}"
        )
    records = {}
    for (doc, (nb, path)), r in zip(todo.items(), results):
        merged = with_outputs(nb, nbformat.read(r.out, as_version=4))
        if merged is None:  # the source changed while it executed
            raise ExtensionError(f"{_rel(app, path)} changed while it executed; build again")
        records[doc] = (_cache(cache, merged, path, "executed", r.seconds, r.code), merged)
    return records


def _unpack_records(app, found: dict, records: dict, todo: list) -> None:
    """Each chapter's records into the build's records folder, and where its outputs came from."""
    from tj_records import records_root

    from trajectory_judge.book.building.execute_notebooks import places, recorded_digest, recorded_records
    from trajectory_judge.book.building.records import unpack

    root, where = records_root(app), places(app.confdir)
    for doc, (record, nb) in records.items():
        stem = Path(doc).name
        if recorded_digest(nb) != app.config.tj_data_digest:  # an entry of this cache always records it
            raise ExtensionError(f"{_rel(app, found[doc][1])}: its cached execution is of other data; remove _build")
        unpack(recorded_records(nb), root / stem, where)
        data = record.data or {}
        app.tj_sources[doc] = ChapterSource(
            origin=data.get(ORIGIN, "executed"),
            this_build=doc in todo,
            seconds=data.get("execution_seconds"),
            created=record.created.timestamp(),
        )


def _rel(app, path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(app.confdir).resolve()))
    except ValueError:
        return str(path)


def _check_read(app, doctree) -> None:
    """Warn (``-W``: fail) when myst-nb executed a chapter while reading it: the cache missed."""
    from myst_nb.sphinx_ import NbMetadataCollector

    docname = app.env.docname
    exec_data = NbMetadataCollector.get_doc_data(app.env).get(docname, {}).get("exec_data")
    source = app.tj_sources.get(docname)
    if not exec_data or source is None:
        if exec_data and app.env.mystnb_config.execution_mode == "cache":
            logger.warning(
                f"{docname}: executed while the book was read, outside the execute step",
                location=docname,
                type="tj",
                subtype="execution",
            )
        return
    if abs(float(exec_data.get("mtime") or 0.0) - source.created) > 1e-3:
        logger.warning(
            f"{docname}: executed again while the book was read (its source changed during the build);"
            f" run `python -m trajectory_judge.book execute {Path(docname).name}` and build again",
            location=docname,
            type="tj",
            subtype="execution",
        )


def sources(app) -> dict[str, ChapterSource]:
    """Each chapter's :class:`ChapterSource` in this build (docname -> source)."""
    return dict(getattr(app, "tj_sources", {}))


def _settle(app) -> None:
    """Sphinx and every extension are imported by now: keep their objects out of the collector's way."""
    from trajectory_judge.book.building.collector import settle

    settle()


def setup(app):
    app.setup_extension("tj_records")
    app.add_config_value("tj_data_digest", "", "env", [str])
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _settle)
    app.connect("env-before-read-docs", _fill_cache)
    app.connect("doctree-read", _check_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
