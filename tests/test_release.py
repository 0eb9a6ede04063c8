"""fetch-release against a loopback HTTP server serving the release (and a corrupted copy)."""

import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from trajectory_judge.cli import main
from trajectory_judge.provenance.release import RELEASE_SHA256, fetch_release, verified


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    servers = []

    def start(directory):
        handler = functools.partial(_Quiet, directory=str(directory))
        srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()


def test_fetch_release_downloads_and_verifies_from_a_mirror(release, serve, tmp_path, capsys):
    url = serve(release)
    out = tmp_path / "cache"
    assert main(["fetch-release", "--dir", str(out), "--base-url", url]) == 0
    assert verified(out) and sorted(p.name for p in out.iterdir()) == sorted(RELEASE_SHA256)
    assert "release verified" in capsys.readouterr().out


def test_existing_verified_copy_is_used_without_network(release, tmp_path):
    out = tmp_path / "cache"
    shutil.copytree(release, out)
    # a base URL nobody listens on: a verified copy must not need it
    assert fetch_release(out, base_url="http://127.0.0.1:9/") == out


def test_checksum_mismatch_fails_and_leaves_no_file(release, serve, tmp_path, capsys):
    bad = tmp_path / "mirror"
    shutil.copytree(release, bad)
    data = bytearray((bad / "verdicts.jsonl").read_bytes())
    data[100] ^= 1
    (bad / "verdicts.jsonl").write_bytes(bytes(data))
    out = tmp_path / "cache"
    assert main(["fetch-release", "--dir", str(out), "--base-url", serve(bad)]) == 1
    assert "checksum mismatch" in capsys.readouterr().err
    assert not (out / "verdicts.jsonl").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no partial download left


def test_offline_fails_with_a_clear_message(tmp_path, capsys):
    out = tmp_path / "cache"
    assert main(["fetch-release", "--dir", str(out), "--base-url", "http://127.0.0.1:9"]) == 1
    err = capsys.readouterr().err
    assert "could not download" in err and "offline" in err
    assert list(out.iterdir()) == []


def test_missing_file_on_mirror_is_an_error(serve, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fetch-release", "--dir", str(tmp_path / "c"), "--base-url", serve(empty)]) == 1
    assert "HTTP 404" in capsys.readouterr().err
