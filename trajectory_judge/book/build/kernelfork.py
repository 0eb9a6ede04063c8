"""Kernels forked from a warm process, so that a build's chapters don't each pay for Python's start and imports.

A chapter's kernel normally starts as ``python -m ipykernel_launcher -f CONNECTION_FILE``: a new
interpreter that imports ipykernel, then numpy, pandas, matplotlib and the book's modules, about 2 s of
CPU before the chapter's first line runs, paid again by each of the 11 chapters. During
``jupyter-book build`` the ``tj_execute`` extension instead starts one :class:`ForkServer`: a Python
process that imports those modules once (:data:`trajectory_judge.book.build.kernelserver.PRELOAD`) and then
does nothing but fork. Each kernel is a child forked from it, which goes on exactly as ``ipykernel_launcher`` would (the same argv,
environment, working directory and a session of its own), so it starts in a few milliseconds with
the modules already imported. Nothing has run in the warm process but imports: no kernel, no
IPython shell, no figure, no chapter code; every chapter still runs in a process of its own, from its
first cell, and writes the outputs a fresh kernel writes (a test compares them).

jupyter_client drives the forked kernel as it drives its own (:func:`kernel_manager_class`): the
connection file, ports, heartbeat, interrupt (SIGINT to the kernel's process group), shutdown and kill
are unchanged; only the launch differs. The server reports each child's exit status, and it exits
when the build closes its pipe (the build ended, or was stopped by Ctrl-C), killing any kernel still
running; a kernel whose server is gone exits too (ipykernel's parent poller).

Anything the server can't serve (another kernel command, a server that failed to start or died)
launches the normal way. ``TJ_BOOK_FORK=0`` switches the server off.

The warm process itself is :mod:`trajectory_judge.book.build.kernelserver`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from functools import lru_cache
from typing import Any

from trajectory_judge.book.build import kernelserver
from trajectory_judge.book.build.kernelserver import LAUNCHER

FORK_ENV = "TJ_BOOK_FORK"
"""Environment variable: ``0`` launches every kernel the normal way (no warm process)."""


def enabled() -> bool:
    """Whether kernels may be forked (``TJ_BOOK_FORK`` is not ``0``) on this platform."""
    return os.environ.get(FORK_ENV, "1").strip() != "0" and hasattr(os, "fork") and sys.platform != "darwin"


def launcher_argv(cmd: list[str]) -> list[str] | None:
    """The arguments after ``-m ipykernel_launcher`` when ``cmd`` launches ipykernel, else ``None``."""
    if len(cmd) >= 3 and cmd[1:3] == ["-m", LAUNCHER]:
        return list(cmd[3:])
    return None


def kernel_command(argv: list[str]) -> list[str]:
    """A kernelspec's ``argv`` as jupyter_client runs it: a bare ``python``, ``python3`` or ``python3.11``
    is this interpreter (``sys.executable``), not the first one on ``PATH``."""
    bare = {"python", f"python{sys.version_info[0]}", "python%i.%i" % sys.version_info[:2]}
    return [sys.executable, *argv[1:]] if argv and argv[0] in bare else list(argv)


class ForkedKernel:
    """A kernel forked by the server, with the part of :class:`subprocess.Popen` jupyter_client uses."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, server: "ForkServer") -> None:
        self.pid = pid
        self.server = server

    @property
    def returncode(self) -> int | None:
        return self.server.exit_code(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout or 0.0)
            time.sleep(0.02)
        return code

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """The warm process, seen from the build: :meth:`launch` forks a kernel for a launch command."""

    def __init__(self, python: str) -> None:
        self.python = python
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [python, "-m", kernelserver.__name__, str(write_fd)],
            stdin=subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,
        )  # with this process's environment
        os.close(write_fd)
        self._responses = os.fdopen(read_fd, "r", encoding="utf-8")
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._pids: dict[int, int] = {}
        self._exits: dict[int, int] = {}
        self._next = 0
        self.ready = False
        self.closed = False
        threading.Thread(target=self._listen, name="tj-kernelfork", daemon=True).start()

    def _listen(self) -> None:
        for line in self._responses:
            message = json.loads(line)
            with self._cond:
                if "ready" in message:
                    self.ready = True
                elif "exited" in message:
                    self._exits[message["exited"]] = message["code"]
                else:
                    self._pids[message["id"]] = message["pid"]
                self._cond.notify_all()
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def alive(self) -> bool:
        return not self.closed and self.proc.poll() is None

    def exit_code(self, pid: int) -> int | None:
        """A forked kernel's exit code; ``None`` while it runs (-1 when its server vanished first)."""
        with self._cond:
            if pid in self._exits:
                return self._exits[pid]
            if not self.closed:
                return None
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat", "rb") as stat:
                exited = stat.read().rsplit(b")", 1)[-1].split()[0] == b"Z"  # a zombie: it has exited
        except (ProcessLookupError, FileNotFoundError):
            return -1
        except OSError:
            return None
        return -1 if exited else None

    def serves(self, cmd: list[str]) -> bool:
        """Whether this server can launch ``cmd``: ipykernel's launcher on this server's Python."""
        # the very path: a virtual environment's python links to the base one, whose site-packages differ
        return launcher_argv(cmd) is not None and os.path.abspath(cmd[0]) == os.path.abspath(self.python)

    def launch(
        self, cmd: list[str], env: dict[str, str], cwd: str | None, quiet: bool = False, timeout: float = 60.0
    ) -> ForkedKernel:
        """Fork a kernel for the launch command ``cmd`` (``quiet``: its stderr to the null device, as
        nbval asks); raise :class:`OSError` when the server can't."""
        args = launcher_argv(cmd)
        if args is None or not self.alive():
            raise OSError("the kernel fork server can't launch this kernel")
        with self._lock:
            self._next += 1
            rid = self._next
            request = {
                "id": rid,
                "args": args,
                "env": dict(env),
                "cwd": None if cwd is None else str(cwd),
                "quiet": quiet,
            }
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError) as exc:
                raise OSError(f"the kernel fork server is gone: {exc}") from None
        end = time.monotonic() + timeout
        with self._cond:
            while rid not in self._pids:
                if self.closed or not self._cond.wait(timeout=max(0.0, end - time.monotonic())):
                    raise OSError("the kernel fork server did not answer")
            return ForkedKernel(self._pids.pop(rid), self)

    def close(self) -> None:
        """Close the pipe: the server kills any kernel still running, and exits."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


_SERVER: ForkServer | None = None

LAUNCHES: dict[str, int] = {"forked": 0, "anew": 0}
"""Kernels the managers of :func:`kernel_manager_class` launched in this process: forked by the warm process, or started anew."""


def start_server(python: str) -> ForkServer | None:
    """Start the build's warm process on ``python`` (with this process's environment); ``None`` when off."""
    global _SERVER
    if not enabled():
        return None
    stop_server()
    LAUNCHES.update(forked=0, anew=0)
    try:
        _SERVER = ForkServer(python)
    except OSError:
        _SERVER = None
    return _SERVER


def stop_server() -> None:
    global _SERVER
    if _SERVER is not None:
        _SERVER.close()
        _SERVER = None


def server() -> ForkServer | None:
    return _SERVER


def _launching_class(base: type) -> type:
    """``base`` (a jupyter_client kernel manager) launching through the build's warm process when it can."""
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    class ForkLaunch(base):
        """A kernel manager whose local ipykernel kernels are forked from the warm process."""

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            warm, prov = _SERVER, self.provisioner
            if warm is None or type(prov) is not LocalProvisioner or not warm.serves(kernel_cmd):
                LAUNCHES["anew"] += 1
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            try:
                import asyncio

                cwd, quiet = kw.get("cwd"), getattr(kw.get("stderr"), "name", None) == os.devnull
                process = await asyncio.get_running_loop().run_in_executor(
                    None, warm.launch, kernel_cmd, kw.get("env") or dict(os.environ), cwd, quiet
                )
            except OSError:
                LAUNCHES["anew"] += 1
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            LAUNCHES["forked"] += 1
            import atexit

            # at exit (Ctrl-C during a build), stop the kernels before nbclient's own exit handler, registered
            # as each kernel started, waits seconds for a busy kernel to shut down (handlers run last first)
            atexit.unregister(stop_server)
            atexit.register(stop_server)
            prov.process, prov.pid, prov.pgid = process, process.pid, process.pid
            prov.cwd = cwd or os.getcwd()
            self._reconcile_connection_info(prov.connection_info)

    ForkLaunch.__name__ = ForkLaunch.__qualname__ = "Fork" + base.__name__
    return ForkLaunch


@lru_cache(maxsize=None)
def kernel_manager_class() -> type:
    """jupyter_client's async kernel manager (nbclient's), launching through the warm process when it can."""
    from jupyter_client.manager import AsyncKernelManager

    return _launching_class(AsyncKernelManager)


@lru_cache(maxsize=None)
def blocking_kernel_manager_class() -> type:
    """jupyter_client's blocking kernel manager (nbval's), launching through the warm process when it can."""
    from jupyter_client.manager import KernelManager

    return _launching_class(KernelManager)
