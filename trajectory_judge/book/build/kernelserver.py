"""The warm process of :mod:`trajectory_judge.book.build.kernelfork`: it imports :data:`PRELOAD` once, then forks
a kernel for each request the build sends it, and kills the kernels still running when the build closes
its pipe.

    python -m trajectory_judge.book.build.kernelserver RESPONSE_FD   # started by kernelfork.ForkServer only

Requests come one JSON line each on stdin (``id``, the launcher's ``args``, ``env``, ``cwd``, ``quiet``);
answers and exits go back one JSON line each on ``RESPONSE_FD`` (``{"ready": pid}``, ``{"id", "pid"}``,
``{"exited", "code"}``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from importlib.util import find_spec

LAUNCHER = "ipykernel_launcher"
"""The module a Jupyter kernelspec runs ipykernel with (``python -m ipykernel_launcher -f FILE``)."""

PRELOAD: tuple[str, ...] = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "IPython",
    "jupyter_client.session",
    "numpy",
    "pandas",
    "scipy.special",
    "pydantic",
    "matplotlib.pyplot",
    "matplotlib.backends.backend_svg",
    "seaborn",
    "myst_nb",
    "trajectory_judge.book.chapters.page",
    "trajectory_judge.book.chapters.editions",
    "trajectory_judge.book.render.claim_text",
    "trajectory_judge.book.chapters.landing",
    "trajectory_judge.book.render.pipeline_figure",
    "trajectory_judge.judges.schema",
    "trajectory_judge.judges.selfcons",
    "trajectory_judge.book.render.figures",
    "trajectory_judge.book.render.tables",
    "trajectory_judge.book.render.style",
    "trajectory_judge.book.chapters.view_analysis",
    "trajectory_judge.book.chapters.appendix",
    "trajectory_judge.book.chapters.audit",
    "trajectory_judge.book.chapters.judge_panel",
    "trajectory_judge.book.chapters.uncertainty",
    "trajectory_judge.book.chapters.organic_faults",
    "trajectory_judge.book.chapters.discrimination",
    "trajectory_judge.book.chapters.results",
    "trajectory_judge.book.chapters.edition_runs",
    "trajectory_judge.book.chapters.seed_variance",
    "trajectory_judge.book.chapters.support_desk",
)
"""Modules the warm process imports before it forks: what the chapters' kernels import (a test checks
that every module a chapter imports is among them or theirs). Importing has
no effect a chapter could see, except the inline backend of matplotlib, which stays unimported (it
installs its display hooks into the running shell when it is first loaded, inside the kernel)."""

INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
"""The backend ipykernel names in ``MPLBACKEND`` when none is set; the warm process names it too,
before matplotlib reads it, so that the kernels' ``rcParams`` are what a fresh kernel's are."""


def _write(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message) + "\n").encode())  # one write of under PIPE_BUF: never interleaved


_LIVE: set[int] = set()
"""The kernels forked by this server that have not exited."""


def _reap(fd: int) -> None:
    """Report every child that has exited (called on SIGCHLD)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _LIVE.discard(pid)
        _write(fd, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _become_kernel(request: dict, response_fd: int) -> None:
    """In the forked child: become ``python -m ipykernel_launcher ARGS`` with the request's environment
    and working directory, run the kernel to its end and exit. Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()  # as jupyter_client's launcher: a process group of its own, for interrupts
        os.close(response_fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        if request.get("quiet"):
            os.dup2(devnull, 2)
        os.close(devnull)
        parent = os.getppid()
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["JPY_PARENT_PID"] = str(parent)  # its parent is this server: gone with the server
        if request.get("cwd"):
            os.chdir(request["cwd"])
        spec = find_spec(LAUNCHER)
        sys.argv = [spec.origin if spec and spec.origin else LAUNCHER, *request["args"]]
        from ipykernel import kernelapp

        try:
            kernelapp.launch_new_instance()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        import atexit

        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - the child must never return into the server's loop
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def serve(response_fd: int) -> None:
    """The warm process: import :data:`PRELOAD`, then fork a kernel for each request line on stdin."""
    if sys.path and (sys.path[0] in ("", os.getcwd())):
        del sys.path[0]  # as ipykernel_launcher does; the kernel adds it back
    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)
    os.environ["JPY_PARENT_PID"] = str(os.getpid())  # ipykernel reads it on import: a kernel polls its parent, us
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - not preloaded: the kernel imports it as usual
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the build; the build closes our pipe
    signal.signal(signal.SIGCHLD, lambda *_: _reap(response_fd))
    _write(response_fd, {"ready": os.getpid()})
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _become_kernel(request, response_fd)
        _LIVE.add(pid)
        _write(response_fd, {"id": request["id"], "pid": pid})
    # the build closed its pipe (it ended, or was stopped): a kernel still running has no one to
    # report to, so it and whatever it started are stopped now (their records are written whole)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for pid in list(_LIVE):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in list(_LIVE):  # reaped here, so none is left a zombie that looks alive to the build
        try:
            _, status = os.waitpid(pid, 0)
            _write(response_fd, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})
        except OSError:
            pass


if __name__ == "__main__":
    serve(int(sys.argv[1]))
