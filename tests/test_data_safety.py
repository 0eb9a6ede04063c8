"""No bad output path, second writer, signal or full disk corrupts a data directory.

Table-driven over the classes of issue 14 (parts 2 and 3): every refused case exits 2 with one
line naming the paths, and every input file is byte-identical afterwards; whole-file writes are
atomic; one writer per directory; Ctrl-C and SIGTERM stop promptly; a full disk stops cleanly;
server faults never become verdicts; organic episodes are keyed by their model.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from fake_server import FakeModelServer

from trajectory_judge import fileio, models
from trajectory_judge.backends.clients import OllamaClient, OpenAIClient, TransportError
from trajectory_judge.cli import main
from trajectory_judge.run import store

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
DATA_NAMES = ("trajectories.jsonl", "verdicts.jsonl", "members.jsonl", "runs.jsonl", "organic.jsonl", "SHA256SUMS")


# --- a small data directory ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A data directory with every data file: 16 trajectories, rule verdicts, members, runs, organic, manifest."""
    base = tmp_path_factory.mktemp("template")
    d = base / "d"
    assert main(["build-dataset", "--n", "16", "--out", str(d)]) == 0
    assert main(["check", str(d / "trajectories.jsonl"), "--out", str(base / "v.jsonl")]) == 0
    shutil.move(base / "v.jsonl", d / "verdicts.jsonl")
    (d / "members.jsonl").write_text("")
    (d / "runs.jsonl").write_text(json.dumps({"started": "2026-01-01T00:00:00+00:00", "status": "ok"}) + "\n")
    organic = (ROOT / "data" / "organic.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:2]
    (d / "organic.jsonl").write_text("".join(organic), encoding="utf-8")
    assert main(["manifest", "--data", str(d)]) == 0
    return base


@pytest.fixture()
def ws(template, tmp_path) -> Path:
    """A fresh copy: ``ws/d`` is the data directory, ``ws/o`` an empty output folder."""
    shutil.copytree(template / "d", tmp_path / "d")
    (tmp_path / "o").mkdir()
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
    }


def fill(argv: list[str], ws: Path) -> list[str]:
    return [a.format(d=ws / "d", o=ws / "o") for a in argv]


# --- class 1: outputs never land on inputs or data files ------------------------------------------
def _symlink_to(name: str):
    def setup(ws: Path) -> None:
        (ws / "o" / "link.out").symlink_to(ws / "d" / name)

    return setup


def _hardlink_to(name: str):
    def setup(ws: Path) -> None:
        os.link(ws / "d" / name, ws / "o" / "hard.out")

    return setup


def _copy_trajectories(ws: Path) -> None:
    shutil.copy(ws / "d" / "trajectories.jsonl", ws / "o" / "t.jsonl")


def _manifest_is_a_link(ws: Path) -> None:
    (ws / "d" / "SHA256SUMS").unlink()
    (ws / "d" / "SHA256SUMS").symlink_to(ws / "d" / "trajectories.jsonl")


def _no_members(ws: Path) -> None:
    (ws / "d" / "members.jsonl").unlink()


REFUSED = [
    # (case, setup, argv, key words of the one-line message)
    (
        "check onto its own input",
        None,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/trajectories.jsonl"],
        ["refusing", "input"],
    ),
    (
        "check onto its input elsewhere",
        _copy_trajectories,
        ["check", "{o}/t.jsonl", "--out", "{o}/t.jsonl"],
        ["refusing", "input"],
    ),
    (
        "check onto organic input",
        None,
        ["check", "{d}/organic.jsonl", "--out", "{d}/organic.jsonl"],
        ["refusing", "input"],
    ),
    (
        "check onto verdicts",
        None,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/verdicts.jsonl"],
        ["refusing", "data directory"],
    ),
    (
        "check onto runs",
        None,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/runs.jsonl"],
        ["refusing", "data directory"],
    ),
    (
        "check onto members",
        None,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/members.jsonl"],
        ["refusing", "data directory"],
    ),
    (
        "check onto absent members of a data dir",
        _no_members,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/members.jsonl"],
        ["refusing", "data directory"],
    ),
    (
        "check onto organic",
        None,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/organic.jsonl"],
        ["refusing", "data directory"],
    ),
    (
        "check onto the manifest",
        None,
        ["check", "{d}/trajectories.jsonl", "--out", "{d}/SHA256SUMS"],
        ["refusing", "data directory"],
    ),
    (
        "check through a symlink",
        _symlink_to("trajectories.jsonl"),
        ["check", "{d}/trajectories.jsonl", "--out", "{o}/link.out"],
        ["refusing", "input"],
    ),
    (
        "check through a hard link",
        _hardlink_to("trajectories.jsonl"),
        ["check", "{d}/trajectories.jsonl", "--out", "{o}/hard.out"],
        ["refusing", "input"],
    ),
    ("check onto a directory", None, ["check", "{d}/trajectories.jsonl", "--out", "{o}"], ["directory"]),
    (
        "report json onto verdicts",
        None,
        ["report", "--data", "{d}", "--json", "{d}/verdicts.jsonl"],
        ["refusing", "input"],
    ),
    (
        "report json onto trajectories",
        None,
        ["report", "--data", "{d}", "--json", "{d}/trajectories.jsonl"],
        ["refusing", "input"],
    ),
    ("report json onto runs", None, ["report", "--data", "{d}", "--json", "{d}/runs.jsonl"], ["refusing", "input"]),
    ("report json onto members", None, ["report", "--data", "{d}", "--json", "{d}/members.jsonl"], ["refusing"]),
    (
        "report markdown onto the manifest",
        None,
        ["report", "--data", "{d}", "--markdown", "{d}/SHA256SUMS"],
        ["refusing"],
    ),
    (
        "report markdown onto organic",
        None,
        ["report", "--data", "{d}", "--markdown", "{d}/organic.jsonl"],
        ["refusing"],
    ),
    (
        "report json and markdown on one path",
        None,
        ["report", "--data", "{d}", "--json", "{o}/r", "--markdown", "{o}/r"],
        ["refusing", "same file"],
    ),
    (
        "report json through a symlink",
        _symlink_to("verdicts.jsonl"),
        ["report", "--data", "{d}", "--json", "{o}/link.out"],
        ["refusing", "input"],
    ),
    (
        "report markdown through a hard link",
        _hardlink_to("runs.jsonl"),
        ["report", "--data", "{d}", "--markdown", "{o}/hard.out"],
        ["refusing", "input"],
    ),
    (
        "report json onto another data dir",
        None,
        ["report", "--data", "{d}", "--json", "{d}/../d/verdicts.jsonl"],
        ["refusing"],
    ),
    ("report json onto a directory", None, ["report", "--data", "{d}", "--json", "{o}"], ["directory"]),
    ("manifest onto a linked data file", _manifest_is_a_link, ["manifest", "--data", "{d}"], ["refusing", "input"]),
    (
        "build-dataset over judged trajectories",
        None,
        ["build-dataset", "--n", "8", "--out", "{d}"],
        ["refusing to replace", "--force"],
    ),
    (
        "build-dataset with another seed",
        None,
        ["build-dataset", "--n", "16", "--seed", "8", "--out", "{d}"],
        ["refusing to replace", "verdicts"],
    ),
    (
        "build-dataset into a data file",
        None,
        ["build-dataset", "--n", "8", "--out", "{d}/verdicts.jsonl"],
        ["refusing", "is a file"],
    ),
]


@pytest.mark.parametrize("case, setup, argv, words", REFUSED, ids=[c[0] for c in REFUSED])
def test_an_output_that_would_overwrite_an_input_or_data_file_is_refused(ws, capsys, case, setup, argv, words):
    if setup is not None:
        setup(ws)
    before = snapshot(ws)
    capsys.readouterr()
    assert main(fill(argv, ws)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err, err
    for w in words:
        assert w in err, (w, err)
    assert snapshot(ws) == before  # every file byte-identical, nothing new


ALLOWED = [
    # (case, argv, the one file that may be new or change)
    (
        "check into a fresh folder",
        ["check", "{d}/trajectories.jsonl", "--out", "{o}/verdicts.jsonl"],
        "o/verdicts.jsonl",
    ),
    ("report beside the data", ["report", "--data", "{d}", "--resamples", "20", "--json", "{o}/r.json"], "o/r.json"),
    ("manifest rewrites its own SHA256SUMS", ["manifest", "--data", "{d}"], "d/SHA256SUMS"),
    (
        "build-dataset again with the same settings",
        ["build-dataset", "--n", "16", "--out", "{d}"],
        "d/trajectories.jsonl",
    ),
    ("build-dataset --force", ["build-dataset", "--n", "8", "--out", "{d}", "--force"], "d/trajectories.jsonl"),
]


@pytest.mark.parametrize("case, argv, target", ALLOWED, ids=[c[0] for c in ALLOWED])
def test_legitimate_outputs_are_written_whole_with_ordinary_permissions(ws, case, argv, target):
    before = snapshot(ws)
    old = os.umask(0o022)
    try:
        assert main(fill(argv, ws)) == 0
    finally:
        os.umask(old)
    after = snapshot(ws)
    assert {k: v for k, v in after.items() if k != target} == {k: v for k, v in before.items() if k != target}
    assert (ws / target).stat().st_mode & 0o777 == 0o644
    assert not [p for p in ws.rglob("*.tmp")]


# --- class 2: every whole-file write is atomic ------------------------------------------------------
ATOMIC = [
    ("check --out", ["check", "{d}/trajectories.jsonl", "--out", "{o}/rules.jsonl"], "o/rules.jsonl"),
    ("report --json", ["report", "--data", "{d}", "--resamples", "20", "--json", "{o}/r.json"], "o/r.json"),
    ("report --markdown", ["report", "--data", "{d}", "--resamples", "20", "--markdown", "{o}/r.md"], "o/r.md"),
    ("manifest", ["manifest", "--data", "{d}"], "d/SHA256SUMS"),
    ("build-dataset", ["build-dataset", "--n", "16", "--out", "{d}"], "d/trajectories.jsonl"),
]


@pytest.mark.parametrize("case, argv, target", ATOMIC, ids=[c[0] for c in ATOMIC])
def test_a_full_disk_during_a_whole_file_write_keeps_the_previous_file_and_leaves_no_litter(
    ws, monkeypatch, capsys, case, argv, target
):
    if not (ws / target).exists():
        (ws / target).write_text("previous\n")
    before = snapshot(ws)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "fsync", full)
    assert main(fill(argv, ws)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "Traceback" not in err[0]
    monkeypatch.undo()
    assert snapshot(ws) == before  # the previous file intact, no temporary file left
    assert not [p.name for p in ws.rglob("*") if p.name.startswith(".") and p.name != ".lock"]


def test_the_atomic_writer_never_leaves_a_partial_file_when_interrupted(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old\n")
    with pytest.raises(KeyboardInterrupt), fileio.atomic_open(path) as fh:
        fh.write("new, half written")
        raise KeyboardInterrupt
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_fetched_release_files_get_ordinary_permissions(release, tmp_path):
    from trajectory_judge.provenance.release import RELEASE_SHA256

    class Mirror(httpx.BaseTransport):
        def handle_request(self, request):
            return httpx.Response(200, content=(release / request.url.path.rsplit("/", 1)[-1]).read_bytes())

    from trajectory_judge.provenance import release as rel

    old = os.umask(0o022)
    try:
        with httpx.Client(transport=Mirror()) as client:
            for name, digest in RELEASE_SHA256.items():
                rel._download(client, f"http://mirror/{name}", tmp_path / name, digest)
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(RELEASE_SHA256)
    assert {(tmp_path / n).stat().st_mode & 0o777 for n in RELEASE_SHA256} == {0o644}


def test_the_release_projection_refuses_to_write_onto_the_release_it_reads(release, tmp_path, capsys):
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    before = snapshot(copy)
    assert main(["fetch-release", "--dir", str(copy), "--project", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "refusing" in err and "input" in err and str(copy) in err
    assert snapshot(copy) == before


# --- class 3: one writer per data directory ----------------------------------------------------------
# the template folder is pinned by its SHA256SUMS: these writers are told to write into it all the same
def _run_argv(data: Path, url: str, *extra: str) -> list[str]:
    return [
        "run",
        "--data",
        str(data),
        "--force",
        "--judges",
        "step",
        "--backend",
        "openai",
        "--base-url",
        url,
        "--model",
        "m",
        "--judge-model-name",
        "fake:1b",
        "--retries",
        "0",
        "--quiet",
        *extra,
    ]


def _agent_argv(data: Path, url: str, *extra: str) -> list[str]:
    return [
        "agent",
        "--data",
        str(data),
        "--force",
        "--episodes",
        "2",
        "--backend",
        "openai",
        "--base-url",
        url,
        "--model",
        "m",
        "--agent-model-name",
        "fake:1b",
        "--retries",
        "0",
        "--quiet",
        *extra,
    ]


@pytest.mark.parametrize("verb", ["run", "agent"])
def test_a_second_writer_is_refused_at_once_naming_the_first(ws, capsys, verb):
    d = ws / "d"
    before = snapshot(ws)
    from lock_holder import held_by_another_process

    d.mkdir(exist_ok=True)
    with FakeModelServer(["ok"]) as srv, held_by_another_process(d) as pid:
        argv = (_run_argv if verb == "run" else _agent_argv)(d, srv.url)
        t0 = time.monotonic()
        assert main(argv) == 2
        assert time.monotonic() - t0 < 5
        assert srv.generations == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{d} is being written by pid {pid} (started " in err
    assert {k: v for k, v in snapshot(ws).items() if k != "d/.lock"} == {
        k: v for k, v in before.items() if k != "d/.lock"
    }


def _spawn(argv: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "trajectory_judge.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def _wait_for(cond, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


@pytest.mark.slow  # two CLI runs in subprocesses
def test_two_real_concurrent_runs_one_writes_the_other_exits_2(ws):
    d = ws / "d"
    release = threading.Event()  # the first run's requests are answered only once the second has exited
    with FakeModelServer([("hold", release)]) as srv:
        try:
            first = _spawn(_run_argv(d, srv.url, "--limit", "6"))
            _wait_for(lambda: srv.generations >= 1)
            second = _spawn(_run_argv(d, srv.url, "--limit", "6"))
            _, err2 = second.communicate(timeout=60)
            still_running = first.poll() is None
        finally:
            release.set()
        _, err1 = first.communicate(timeout=60)
    assert still_running
    assert second.returncode == 2, err2
    assert f"is being written by pid {first.pid} (started" in err2 and len(err2.strip().splitlines()) == 1
    assert first.returncode == 0, err1
    verdicts = models.load_verdicts(d / "verdicts.jsonl")  # no duplicate keys
    assert sum(v.judge_id == "step:fake:1b" for v in verdicts) == 6


# --- class 4: signals stop promptly, keep what was written, record the run ---------------------------
def _kept(d: Path, verb: str) -> int:
    """How many of this run's verdicts (``run``) or episodes (``agent``) are whole lines on disk."""
    path = d / ("verdicts.jsonl" if verb == "run" else "organic.jsonl")
    lines = path.read_bytes().split(b"\n")[:-1] if path.exists() else []
    if verb == "run":
        return sum(b'"step:fake:1b"' in ln for ln in lines)
    return len(lines) - 2  # the folder holds two episodes before the run


SIGNALS = [
    (verb, sig, code, conc)
    for verb, concs in (("run", (1, 4)), ("agent", (1,)))
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143))
    for conc in concs
]


@pytest.mark.slow  # each a run in a process of its own, signalled while a stand-in server hangs
@pytest.mark.parametrize(
    "verb, sig, code, concurrency", SIGNALS, ids=[f"{v}-{signal.Signals(s).name}-c{c}" for v, s, _, c in SIGNALS]
)
def test_a_signal_against_a_hung_server_stops_within_seconds_and_records_the_run(ws, verb, sig, code, concurrency):
    d = ws / "d"
    runs_before = (d / "runs.jsonl").read_bytes()
    script = ["ok", "ok", ("slow", 120)]
    with FakeModelServer(script) as srv:
        argv = (
            _run_argv(d, srv.url, "--limit", "8", "--concurrency", str(concurrency))
            if verb == "run"
            else _agent_argv(d, srv.url, "--episodes", "4")
        )  # the reply ends each episode after one request
        p = _spawn(argv)
        _wait_for(lambda: srv.generations >= (2 + concurrency if verb == "run" else 3))
        _wait_for(lambda: _kept(d, verb) >= 2)  # the two answers before the hang are on disk
        t0 = time.monotonic()
        p.send_signal(sig)
        _, err = p.communicate(timeout=30)
        elapsed = time.monotonic() - t0
    assert p.returncode == code, err
    assert elapsed < 5, elapsed
    assert "Traceback" not in err
    runs = (d / "runs.jsonl").read_bytes()
    assert runs.startswith(runs_before)
    rec = json.loads(runs[len(runs_before) :])
    assert rec["status"] == "interrupted"
    assert rec["written"] == 2
    if verb == "run":
        assert "2 verdicts written are kept" in err
        assert sum(v.judge_id == "step:fake:1b" for v in models.load_verdicts(d / "verdicts.jsonl")) == 2
    else:
        assert "2 episodes written by this run are kept" in err
        assert len(models.parse_jsonl(d / "organic.jsonl", models.Episode)) == 2 + 2


# --- class 5: runs.jsonl stays whole --------------------------------------------------------------
def test_a_torn_last_run_record_is_set_aside_before_the_next_is_appended(tmp_path, capsys):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"a": 1}\n{"b": 2, "tor')
    store.append_run_record(tmp_path, {"c": 3})
    assert [json.loads(x) for x in runs.read_text().splitlines()] == [{"a": 1}, {"c": 3}]
    assert (tmp_path / "runs.jsonl.torn-1").read_bytes() == b'{"b": 2, "tor'
    assert f"to {tmp_path / 'runs.jsonl.torn-1'}" in capsys.readouterr().err


def test_a_run_record_that_does_not_fit_leaves_runs_jsonl_byte_identical(tmp_path, monkeypatch):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"a": 1}\n')
    real = os.write

    def half_then_full(fd, data):
        if len(data) > 4:
            real(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(store.os, "write", half_then_full)
    with pytest.raises(OSError):
        store.append_run_record(tmp_path, {"c": 3, "pad": "x" * 100})
    monkeypatch.undo()
    assert runs.read_text() == '{"a": 1}\n'


@pytest.fixture()
def tiny_fs(tmp_path):
    """A 1 MiB tmpfs (root only); skipped where it cannot be mounted."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs here ({r.stderr.strip() or 'mount failed'}); ENOSPC is injected elsewhere"
        )
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.slow  # two CLI runs in subprocesses on a mounted tmpfs
def test_a_run_on_a_full_filesystem_stops_cleanly_and_resumes_after_space_is_freed(ws, tiny_fs):
    d = tiny_fs / "d"
    shutil.copytree(ws / "d", d)
    (d / "verdicts.jsonl").unlink()
    (d / "SHA256SUMS").unlink()
    runs_before = (d / "runs.jsonl").read_bytes()
    fd = os.open(tiny_fs / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk, then free two pages: room for some of the 32 verdicts, not all
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    os.truncate(tiny_fs / "filler", max(0, (tiny_fs / "filler").stat().st_size - 2 * 4096))
    judges = ("--judges", "outcome,step")
    with FakeModelServer(["ok"]) as srv:
        p = _spawn(_run_argv(d, srv.url, *judges))
        _, err = p.communicate(timeout=120)
        assert p.returncode == 1, err
        assert "verdicts kept; free space and rerun to resume" in err and "Traceback" not in err
        kept = models.parse_jsonl(d / "verdicts.jsonl", models.Verdict)  # whole lines only
        assert 0 < len(kept) < 32
        assert (d / "runs.jsonl").read_bytes().startswith(runs_before)
        (tiny_fs / "filler").unlink()
        p = _spawn(_run_argv(d, srv.url, *judges))
        _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    verdicts = models.load_verdicts(d / "verdicts.jsonl")
    assert len(verdicts) == 32 and verdicts[: len(kept)] == kept
    assert all(json.loads(x) for x in (d / "runs.jsonl").read_text().splitlines())


# --- class 6: server faults are never verdicts ---------------------------------------------------------
def _client(cls, body):
    n = {"calls": 0}

    def handler(req):
        if req.url.path in ("/api/generate", "/v1/chat/completions"):
            n["calls"] += 1
            return httpx.Response(200, json=body)
        return httpx.Response(404)

    c = cls("http://srv", "m", retries=1, transport=httpx.MockTransport(handler), sleep=lambda s: None)
    return c, n


def _openai(usage):
    return {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}], "usage": usage}


FAULTS = [
    ("ollama without response", OllamaClient, {"done": True, "eval_count": 3}, "without a 'response'"),
    ("ollama response not text", OllamaClient, {"response": {"faulty": True}}, "without a 'response'"),
    ("ollama body a list", OllamaClient, [{"response": "{}"}], "not an object"),
    (
        "ollama prompt count text",
        OllamaClient,
        {"response": "{}", "prompt_eval_count": "abc"},
        "prompt_eval_count='abc'",
    ),
    ("ollama eval count negative", OllamaClient, {"response": "{}", "eval_count": -4}, "eval_count=-4"),
    ("ollama eval count fractional", OllamaClient, {"response": "{}", "eval_count": 2.5}, "eval_count=2.5"),
    ("ollama count a boolean", OllamaClient, {"response": "{}", "eval_count": True}, "eval_count=True"),
    ("openai body a list", OpenAIClient, [1, 2], "not an object"),
    ("openai usage text", OpenAIClient, _openai("lots"), "malformed 'usage'"),
    (
        "openai prompt tokens text",
        OpenAIClient,
        _openai({"prompt_tokens": "abc", "completion_tokens": 1}),
        "prompt_tokens='abc'",
    ),
    (
        "openai completion tokens negative",
        OpenAIClient,
        _openai({"prompt_tokens": 1, "completion_tokens": -1}),
        "completion_tokens=-1",
    ),
]


@pytest.mark.parametrize("case, cls, body, words", FAULTS, ids=[c[0] for c in FAULTS])
def test_a_malformed_200_reply_is_retried_then_a_server_fault(case, cls, body, words):
    c, n = _client(cls, body)
    try:
        with pytest.raises(TransportError, match="gave up after 2 attempts") as exc:
            c.complete("p", {"type": "object"}, temperature=0.0, seed=7)
    finally:
        c.close()
    assert words in str(exc.value) and n["calls"] == 2


def test_missing_token_counts_are_zero_not_a_fault():
    c, _ = _client(OllamaClient, {"response": "{}"})
    try:
        comp = c.complete("p", {"type": "object"}, temperature=0.0, seed=7)
    finally:
        c.close()
    assert (comp.prompt_tokens, comp.completion_tokens) == (0, 0)


# --- class 7: organic episodes are keyed by their model ----------------------------------------------
class _Refuse:
    """A client that must not be called."""

    def complete(self, *a, **kw):  # pragma: no cover - reaching it fails the test
        raise AssertionError("an episode already on disk was played again")


def test_the_committed_organic_episodes_still_count_as_done_and_are_not_rewritten(tmp_path):
    from trajectory_judge.run.organic import run_episodes
    from trajectory_judge.testbed.env import generate_instances

    out = tmp_path / "organic.jsonl"
    shutil.copy(ROOT / "data" / "organic.jsonl", out)
    before = out.read_bytes()
    eps = models.parse_jsonl(out, models.Episode)
    assert {e.agent_model for e in eps} == {"qwen2.5-coder:1.5b"} and len(eps) == 60
    assert all(e.episode_id == f"{e.trajectory.instance_id}-organic" for e in eps)  # the old id scheme
    new = run_episodes(generate_instances(60, 7), _Refuse(), out, agent_model="qwen2.5-coder:1.5b", progress=False)
    assert new == [] and out.read_bytes() == before


def test_a_second_model_plays_its_own_episodes_with_its_own_ids(tmp_path):
    from llm_fakes import ScriptedClient

    from trajectory_judge.run.organic import run_episodes
    from trajectory_judge.testbed.env import generate_instances

    out = tmp_path / "organic.jsonl"
    shutil.copy(ROOT / "data" / "organic.jsonl", out)
    before = out.read_bytes()
    reply = json.dumps(
        {
            "thought": "t",
            "tool": "reply",
            "email": "",
            "order_id": "",
            "sku": "",
            "amount_eur": 0,
            "reason": "",
            "text": "Done.",
        }
    )
    new = run_episodes(
        generate_instances(60, 7)[:2],
        ScriptedClient([reply] * 4),
        out,
        agent_model="qwen2.5-coder:0.5b",
        progress=False,
    )
    assert [e.episode_id for e in new] == [f"{e.trajectory.instance_id}-organic-qwen2.5-coder:0.5b" for e in new]
    assert out.read_bytes().startswith(before)
    ids = [e.trajectory.trajectory_id for e in models.parse_jsonl(out, models.Episode)]
    assert len(ids) == 62 and len(set(ids)) == 62
