"""Sphinx extension of the book: the chapters' notebooks execute side by side, one kernel per core.

myst-nb executes a notebook when Sphinx reads it, so the chapters run one after another on one core.
Here, once Sphinx knows which documents it will read (``env-before-read-docs``), every notebook that
myst-nb would execute (``execute_notebooks: force``) starts executing at once in a pool of
:func:`jobs` kernels, in reading order; Sphinx then reads serially as before, and where myst-nb
would execute a notebook it takes that notebook's finished run instead (waiting for it if need be).

Nothing else changes: the notebook is read by myst-nb's own reader and run by the function myst-nb
runs it with (jupyter-cache's ``single_nb_execution``, same cwd, timeout and ``allow_errors``), so its
outputs, glue, errors, log lines and per-document execution data (``exec_data``: the notebook's own
run time) are what they were. A run is used only for the very notebook it ran (same cells, metadata,
cwd and options, compared in full); anything else (a notebook changed by another extension, a
per-notebook override, a forked parallel reader) executes as myst-nb would, serially.

Each kernel is forked from one warm process that imported ipykernel, numpy, pandas, matplotlib and
the book's modules once, as the configuration was read (:mod:`trajectory_judge.book.build.kernelfork`), so
that no chapter pays 1 to 2 s of Python start and imports; ``TJ_BOOK_FORK=0`` starts each anew.

The number of kernels: ``TJ_BOOK_JOBS`` if set, else the ``tj_execute_jobs`` setting, else the CPUs
this process may use; 1 switches the pool off.

It also names, and empties at the start of every build, the folder where chapters share results
computed once per build (``TJ_BUILD_CACHE``, ``<build>/.tj-cache``; :mod:`trajectory_judge.book.build.shared_results`).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from sphinx.util import logging

from trajectory_judge.book.build import kernelfork
logger = logging.getLogger(__name__)

KERNEL = "python3"
"""The kernel the warm process is started for (the chapters' kernelspec)."""

JOBS_ENV = "TJ_BOOK_JOBS"
"""Environment variable: how many notebooks execute at once (1: serially, as myst-nb alone does)."""


class Runs:
    """Notebook executions under way, each keyed by everything its result depends on.

    They run in daemon threads, not a ThreadPoolExecutor, whose threads the interpreter waits for at
    exit: on Ctrl-C the build exits at once, and with it the pipe to the warm process, which then
    kills the kernels still running (a kernel started anew ends when it sees its parent gone)."""

    def __init__(self, jobs: int) -> None:
        import queue

        self.pid = os.getpid()
        self.futures: dict[str, Future] = {}
        self.lock = threading.Lock()
        self.todo: queue.SimpleQueue = queue.SimpleQueue()
        self.jobs = jobs
        for i in range(jobs):
            threading.Thread(target=self._work, name=f"tj-execute-{i}", daemon=True).start()

    def _work(self) -> None:
        while (job := self.todo.get()) is not None:
            future, fn, args, kwargs = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the reader, which raises it
                future.set_exception(exc)

    def submit(self, key: str, fn, *args, **kwargs) -> None:
        future: Future = Future()
        with self.lock:
            self.futures[key] = future
        self.todo.put((future, fn, args, kwargs))

    def take(self, key: str) -> Future | None:
        if os.getpid() != self.pid:  # a forked reader: the pool's threads are not in this process
            return None
        with self.lock:
            return self.futures.pop(key, None)

    def close(self) -> None:
        with self.lock:
            for f in self.futures.values():
                f.cancel()
            self.futures.clear()
        for _ in range(self.jobs):  # one stop per thread: each ends when it next looks for a job
            self.todo.put(None)


_RUNS: Runs | None = None
_ORIGINAL = None


def run_key(
    nb, cwd: str | None, timeout: Any, allow_errors: Any, meta_override: Any, record_timing: Any, kwargs: dict
) -> str:
    """Everything an execution's result depends on: the unexecuted notebook (its metadata and every
    cell's type, source and metadata; not the cell ids, which myst-nb's reader draws afresh on each
    read) and the options of the run."""
    import json

    cells = [{k: c.get(k) for k in ("cell_type", "source", "metadata")} for c in nb.get("cells", [])]
    content = {
        "nbformat": [nb.get("nbformat"), nb.get("nbformat_minor")],
        "metadata": nb.get("metadata"),
        "cells": cells,
    }
    options = [cwd, timeout, allow_errors, meta_override, record_timing, sorted(kwargs.items())]
    return json.dumps([options, content], sort_keys=True, default=repr)


def _execute(nb, cwd, timeout, allow_errors, meta_override=True, record_timing=False, **kwargs):
    """myst-nb's call to ``single_nb_execution``: the run already under way for this notebook, else a run now."""
    key = run_key(nb, cwd, timeout, allow_errors, meta_override, record_timing, kwargs)
    future = _RUNS.take(key) if _RUNS is not None else None
    if future is None:
        return _ORIGINAL(
            nb, cwd, timeout, allow_errors, meta_override=meta_override, record_timing=record_timing, **kwargs
        )
    result = future.result()
    executed = result.nb
    for mine, run in zip(nb.cells, executed.cells):  # the same cells (the key says so) under myst-nb's ids
        if "id" in mine:
            run["id"] = mine["id"]
    for k in list(nb):  # myst-nb renders the object it passed in: give it the executed notebook
        del nb[k]
    nb.update(executed)
    result.nb = nb
    return result


def jobs(app) -> int:
    """How many notebooks execute at once: ``TJ_BOOK_JOBS``, else ``tj_execute_jobs``, else the usable CPUs."""
    raw = os.environ.get(JOBS_ENV, "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            from sphinx.errors import ConfigError

            raise ConfigError(f"{JOBS_ENV}={raw!r}: not a whole number of notebooks to execute at once") from None
    else:
        n = int(app.config.tj_execute_jobs or 0)
    if n <= 0:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, n)


def _notebook(app, env, docname: str):
    """The unexecuted notebook myst-nb will read for ``docname`` and execute, or None when it will not."""
    from myst_nb.core.read import create_nb_reader

    nb_config = env.mystnb_config
    path = env.doc2path(docname)
    if Path(path).suffix not in app.config.source_suffix or app.config.source_suffix[Path(path).suffix] != "myst-nb":
        return None
    text = Path(path).read_text(encoding=app.config.source_encoding)
    reader = create_nb_reader(str(path), env.myst_config, nb_config, text)
    if reader is None:
        return None
    nb = reader.read(text)
    if any(c.get("cell_type") == "code" for c in nb.cells):
        return nb, path
    return None


def _start(app, env, docnames: list[str]) -> None:
    """Start executing, ``jobs`` at a time in reading order, every notebook myst-nb will execute."""
    global _RUNS
    nb_config = getattr(env, "mystnb_config", None)
    n = jobs(app)
    if (
        _ORIGINAL is None
        or nb_config is None
        or n <= 1
        or app.parallel > 1
        or nb_config.execution_mode != "force"
        or nb_config.execution_in_temp
        or nb_config.execution_excludepatterns
    ):
        return
    todo = [found for found in (_notebook(app, env, d) for d in docnames) if found is not None]
    if len(todo) < 2:
        return
    if _RUNS is not None:
        _RUNS.close()
    _RUNS = Runs(min(n, len(todo)))
    warm = kernelfork.server() is not None  # its manager starts a kernel anew where the warm process can't serve
    extra = {"kernel_manager_class": kernelfork.kernel_manager_class()} if warm else {}
    for nb, path in todo:
        cwd = os.path.abspath(str(Path(path).parent))
        args = (cwd, nb_config.execution_timeout, nb_config.execution_allow_errors, True, False)
        _RUNS.submit(run_key(nb, *args, {}), _ORIGINAL, nb, *args, **extra)
    how = "kernels forked from a warm process" if warm else "one new kernel each"
    logger.info(f"tj_execute: executing {len(todo)} notebooks, {min(n, len(todo))} at a time ({how})")


def _start_fork_server(app, config) -> None:
    """Start the build's warm process (:mod:`trajectory_judge.book.build.kernelfork`) as soon as the
    configuration is read, so that its imports overlap Sphinx's own start, when notebooks will be
    executed side by side and the kernel is ipykernel's launcher."""
    if (
        _ORIGINAL is None
        or not kernelfork.enabled()
        or jobs(app) <= 1
        or getattr(config, "nb_execution_mode", None) != "force"
    ):
        return
    argv = _kernel_argv(KERNEL)
    if argv is not None:
        kernelfork.start_server(argv[0])


def _kernel_argv(name: str) -> list[str] | None:
    """The launch command of the kernel ``name`` when it is ipykernel's launcher, else ``None``."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        argv = list(KernelSpecManager().get_kernel_spec(name).argv)
    except Exception:  # noqa: BLE001 - no such kernel: myst-nb reports it when it executes
        return None
    return kernelfork.kernel_command(argv) if kernelfork.launcher_argv(argv) is not None else None


def _finish(app, exc) -> None:
    global _RUNS
    if _RUNS is not None:
        if _RUNS.futures and exc is None:  # myst-nb executed these itself: their runs were spent for nothing
            logger.info(
                f"tj_execute: {len(_RUNS.futures)} notebook runs not used (their notebooks changed "
                "before myst-nb read them, or myst-nb did not execute them)"
            )
        _RUNS.close()
        _RUNS = None
    kernelfork.stop_server()


def cache_folder(app) -> Path:
    """The build's cache of shared results (:mod:`trajectory_judge.book.build.shared_results`), inside the build folder."""
    return Path(app.outdir).parent / ".tj-cache"


def _empty_cache(app, config) -> None:
    """Name the cache for the kernels and empty it: results are shared within one build, never across."""
    import shutil

    from trajectory_judge.book.build.shared_results import CACHE_ENV

    root = cache_folder(app)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    os.environ[CACHE_ENV] = str(root)


def setup(app):
    global _ORIGINAL
    app.add_config_value("tj_execute_jobs", 0, "env", [int])
    app.connect("config-inited", _empty_cache)
    app.connect("config-inited", _start_fork_server)
    try:
        import myst_nb.core.execute.direct as direct
    except ImportError:  # another myst-nb: notebooks execute serially, as myst-nb does
        direct = None
    if direct is not None and callable(getattr(direct, "single_nb_execution", None)):
        current = direct.single_nb_execution
        _ORIGINAL = getattr(current, "tj_original", current)  # once, even if this module is loaded again
        _execute.tj_original = _ORIGINAL
        direct.single_nb_execution = _execute
        app.connect("env-before-read-docs", _start)
        app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
