"""Kernels forked from the build's warm process (trajectory_judge.book.build.kernelfork) behave as fresh ones."""

from __future__ import annotations

import os
import sys
import time

import nbformat
import pytest

from trajectory_judge.book.build import kernelfork

pytest.importorskip("nbclient")
pytestmark = pytest.mark.skipif(
    not kernelfork.enabled(), reason="kernels are forked on Linux only (TJ_BOOK_FORK=0 off)"
)

PROBE = [
    "import os, sys\nprint('out'); print('err', file=sys.stderr)\n"
    "(os.getcwd(), os.path.basename(sys.argv[0]), '' in sys.path, os.environ.get('TJ_PROBE'), __name__)",
    "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [0.5, None]})",
    "import matplotlib.pyplot as plt\nplt.rcParams['backend'], plt.get_backend()",
    "fig, ax = plt.subplots(figsize=(2, 1)); ax.plot([0, 1], [1, 0]);",  # shown by the inline backend's hook
    "import warnings\nwarnings.warn('careful', UserWarning)",
    "from IPython.display import Markdown, display\ndisplay(Markdown('*shown*'))",
    "1 / 0",
]


def _outputs(nb) -> list:
    """Every cell's outputs, the kernel's pid (in the paths of its cells' code) masked."""
    import json
    import re

    return json.loads(re.sub(r"ipykernel_[0-9]+", "ipykernel_PID", json.dumps([c.get("outputs") for c in nb.cells])))


def _run(cells, cwd, manager=None, timeout=60):
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    kw = {"kernel_manager_class": manager} if manager is not None else {}
    NotebookClient(
        nb, kernel_name="python3", timeout=timeout, allow_errors=True, resources={"metadata": {"path": str(cwd)}}, **kw
    ).execute()
    return nb


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """The warm process on this interpreter, ready."""
    os.environ["TJ_PROBE"] = "seen"
    server = kernelfork.start_server(sys.executable)
    assert server is not None
    end = time.monotonic() + 60
    while not server.ready and time.monotonic() < end:
        time.sleep(0.05)
    assert server.ready, "the warm process did not finish its imports in 60 s"
    yield server
    kernelfork.stop_server()
    os.environ.pop("TJ_PROBE", None)


@pytest.mark.slow  # starts kernels (the warm process's imports alone take 3 s)
def test_a_forked_kernel_writes_the_outputs_a_fresh_kernel_writes(warm, tmp_path):
    fresh = _run(PROBE, tmp_path)
    before = dict(kernelfork.LAUNCHES)
    forked = _run(PROBE, tmp_path, kernelfork.kernel_manager_class())
    assert kernelfork.LAUNCHES["forked"] == before["forked"] + 1, "the kernel was not forked"
    assert _outputs(forked) == _outputs(fresh)
    first = forked.cells[0].outputs[-1]["data"]["text/plain"]
    assert str(tmp_path) in first and "ipykernel_launcher.py" in first and "'seen'" in first
    assert any(
        o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for o in forked.cells[3].outputs
    ), "the inline backend did not show the figure"


@pytest.mark.slow  # starts kernels (the warm process's imports alone take 3 s)
def test_a_forked_kernel_polls_the_warm_process_as_its_parent(warm, tmp_path):
    nb = _run(
        ["import os\nos.getppid(), int(os.environ['JPY_PARENT_PID'])"], tmp_path, kernelfork.kernel_manager_class()
    )
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == repr((warm.proc.pid, warm.proc.pid))


@pytest.mark.slow  # starts kernels (the warm process's imports alone take 3 s)
def test_a_forked_kernel_is_interrupted_when_a_cell_times_out(warm, tmp_path):
    from nbclient.exceptions import CellTimeoutError

    start = time.monotonic()
    with pytest.raises(CellTimeoutError):
        _run(["import time\ntime.sleep(120)"], tmp_path, kernelfork.kernel_manager_class(), timeout=2)
    assert time.monotonic() - start < 30


@pytest.mark.slow  # starts kernels (the warm process's imports alone take 3 s)
def test_forked_kernels_end_with_the_warm_process(tmp_path):
    import asyncio

    server = kernelfork.start_server(sys.executable)
    try:
        km = kernelfork.kernel_manager_class()(kernel_name="python3")
        asyncio.run(km.start_kernel(cwd=str(tmp_path)))
        pid = km.provisioner.pid
        assert kernelfork.LAUNCHES["forked"] == 1 and pid != server.proc.pid
        server.close()  # as when the build dies: its pipe closes
        end = time.monotonic() + 15
        while km.provisioner.process.poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        assert km.provisioner.process.poll() is not None, "the kernel outlived its warm process"
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        asyncio.run(km.cleanup_resources())
    finally:
        kernelfork.stop_server()


@pytest.mark.slow  # starts kernels (the warm process's imports alone take 3 s)
def test_without_a_warm_process_kernels_start_anew(tmp_path):
    kernelfork.stop_server()
    kernelfork.LAUNCHES.update(forked=0, anew=0)
    nb = _run(["2 + 2"], tmp_path, kernelfork.kernel_manager_class())
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "4"
    assert kernelfork.LAUNCHES == {"forked": 0, "anew": 1}


def test_the_warm_process_serves_only_ipykernels_launcher_on_its_own_python():
    assert kernelfork.launcher_argv(["python", "-m", "ipykernel_launcher", "-f", "x.json"]) == ["-f", "x.json"]
    assert kernelfork.launcher_argv(["python", "-m", "other_kernel", "-f", "x.json"]) is None
    assert kernelfork.kernel_command(["python", "-m", "ipykernel_launcher"])[0] == sys.executable
    assert kernelfork.kernel_command(["/opt/py/bin/python", "-m", "ipykernel_launcher"])[0] == "/opt/py/bin/python"
    server = kernelfork.ForkServer.__new__(kernelfork.ForkServer)
    server.python = sys.executable
    assert server.serves([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json"])
    assert not server.serves([os.path.realpath(sys.executable) + "-other", "-m", "ipykernel_launcher"])
    assert not server.serves([sys.executable, "-m", "other_kernel"])


def test_tj_book_fork_0_switches_the_warm_process_off(monkeypatch):
    monkeypatch.setenv(kernelfork.FORK_ENV, "0")
    assert not kernelfork.enabled()
    assert kernelfork.start_server(sys.executable) is None


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc."""
    import subprocess

    out, todo = [], [pid]
    while todo:
        kids = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True, text=True).stdout.split()
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow  # builds the book until its kernels run
def test_ctrl_c_during_a_build_stops_it_and_its_kernels_within_seconds(tmp_path):
    """Ctrl-C (SIGINT to the build's process group) while chapters execute: the build exits promptly and
    leaves no warm process and no kernel behind."""
    import signal
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        pytest.skip("jupyter-book is not installed beside this Python")
    proc = subprocess.Popen(
        [str(jb), "build", str(root), "--all", "--path-output", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines = []
    for line in proc.stdout:  # wait until a chapter is executing
        lines.append(line)
        if "Executing notebook" in line:
            break
    else:
        pytest.fail("the build ended before executing a chapter:\n" + "".join(lines[-20:]))
    end = time.monotonic() + 20
    while len(below := _descendants(proc.pid)) < 2 and time.monotonic() < end:  # the warm process, and a kernel
        time.sleep(0.2)
    assert len(below) >= 2, "no warm process and kernel below the build while it executes"
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the build did not stop within 30 s of Ctrl-C")
    took = time.monotonic() - start
    assert proc.returncode != 0 and took < 10, (
        f"the build took {took:.1f} s to stop after Ctrl-C (exit {proc.returncode})"
    )
    end = time.monotonic() + 5
    while any(_running(p) for p in below) and time.monotonic() < end:
        time.sleep(0.2)
    assert not [p for p in below if _running(p)], "a kernel or the warm process outlived the build"


def test_the_warm_process_preloads_every_module_a_chapter_imports():
    """Each module a chapter's code imports (the package's, and the libraries that cost the most) is
    among the warm process's imports or theirs, so no chapter pays for it again."""
    import importlib
    import re
    from pathlib import Path

    from trajectory_judge.book.build.kernelserver import PRELOAD

    for name in PRELOAD:
        importlib.import_module(name)
    wanted = {
        m
        for md in (Path(__file__).resolve().parents[1] / "notebooks").glob("*.md")
        for m in re.findall(
            r"^(?:from|import) ((?:trajectory_judge|pandas|numpy|matplotlib|seaborn|IPython|myst_nb)[\w.]*)",
            md.read_text(encoding="utf-8"),
            flags=re.M,
        )
    }
    assert wanted and not sorted(m for m in wanted if m not in sys.modules)
