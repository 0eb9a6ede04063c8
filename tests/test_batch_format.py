"""The batch line formats: one parser that names file, line and field, one writer that is its inverse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajectory_judge.cli import main
from trajectory_judge.models import DataError
from trajectory_judge.run.batch import read_results
from trajectory_judge.run.batch_format import BatchResult, read_lines, read_requests

REQUEST = {"custom_id": "tj-1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m"}}
ANSWER = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
RESULT = {"id": "r1", "custom_id": "tj-1", "response": {"status_code": 200, "body": ANSWER}, "error": None}


def _file(tmp_path: Path, *lines: str, name: str = "f.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(x + "\n" for x in lines))
    return path


BAD_REQUESTS = {
    "body-missing": ({k: v for k, v in REQUEST.items() if k != "body"}, ("body", "Field required")),
    "body-not-object": (REQUEST | {"body": "hi"}, ("body", "valid dictionary")),
    "id-a-number": (REQUEST | {"custom_id": 7}, ("custom_id", "valid string", "(got 7)")),
    "id-empty": (REQUEST | {"custom_id": ""}, ("custom_id", "at least 1 character")),
    "method-get": (REQUEST | {"method": "GET"}, ("method", "'POST'")),
    "url-embeddings": (REQUEST | {"url": "/v1/embeddings"}, ("url", "'/v1/chat/completions'")),
    "unknown-field": (REQUEST | {"priority": 1}, ("priority", "Extra inputs are not permitted")),
}


@pytest.mark.parametrize("line, words", list(BAD_REQUESTS.values()), ids=list(BAD_REQUESTS))
def test_a_malformed_request_line_is_refused_naming_file_line_and_field(tmp_path, line, words):
    path = _file(tmp_path, json.dumps(REQUEST), json.dumps(line))
    with pytest.raises(DataError) as err:
        read_requests(path)
    assert str(err.value).startswith(f"{path}:2: invalid BatchRequest: {words[0]}: ")
    assert all(w in str(err.value) for w in words), str(err.value)


BAD_RESULTS = {
    "status-as-text": (RESULT | {"response": {"status_code": "200", "body": ANSWER}}, "response.status_code"),
    "status-missing": (RESULT | {"response": {"body": ANSWER}}, "response.status_code"),
    "id-missing": ({k: v for k, v in RESULT.items() if k != "custom_id"}, "custom_id"),
    "response-a-list": (RESULT | {"response": [200]}, "response"),
}


@pytest.mark.parametrize("line, field", list(BAD_RESULTS.values()), ids=list(BAD_RESULTS))
def test_a_malformed_result_line_is_refused_naming_file_line_and_field(tmp_path, line, field):
    path = _file(tmp_path, json.dumps(RESULT), json.dumps(line), json.dumps(RESULT))
    with pytest.raises(DataError, match=rf"^{path}:2: invalid BatchResult: {field}: "):
        read_results(path)


def test_a_line_that_is_not_json_or_not_utf8_is_refused_naming_its_line(tmp_path):
    path = _file(tmp_path, json.dumps(REQUEST), "{not json")
    with pytest.raises(DataError, match=rf"^{path}:2: not valid JSON \("):
        read_requests(path)
    path.write_bytes(json.dumps(REQUEST).encode() + b"\n\n" + b'{"custom_id": "\xff"}\n')
    with pytest.raises(DataError, match=rf"^{path}:3: not UTF-8 text \(byte 0xff\)"):
        read_requests(path)


def test_only_a_last_line_without_its_newline_may_be_torn(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(RESULT) + "\n" + json.dumps(RESULT)[:30])
    torn: list[str] = []
    assert [n for n, _ in read_lines(path, BatchResult, on_torn=torn.append)] == [1]
    assert torn == [f"{path}:2: the last line is not whole (30 bytes, no newline); left out"]
    with pytest.raises(DataError, match=rf"^{path}:2: not valid JSON"):  # no one said a torn tail is expected
        list(read_lines(path, BatchResult))
    path.write_text(json.dumps(RESULT)[:30] + "\n" + json.dumps(RESULT) + "\n")  # torn, then written on
    with pytest.raises(DataError, match=rf"^{path}:1: not valid JSON"):
        list(read_lines(path, BatchResult, on_torn=torn.append))


def test_the_commands_refuse_a_malformed_line_in_one_line_naming_file_line_and_field(tmp_path, capsys):
    req = _file(tmp_path, json.dumps(REQUEST), json.dumps(REQUEST | {"body": None}), name="req.jsonl")
    argv = ["run-requests", str(req), "--endpoint", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o.jsonl")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"{req}:2: invalid BatchRequest: body:" in err and "dictionary" in err
    assert not (tmp_path / "o.jsonl").exists()  # refused before anything is asked or written


def test_the_writer_is_the_parsers_inverse_on_every_exported_line(tmp_path):
    d = tmp_path / "d"
    assert main(["build-dataset", "--out", str(d), "--n", "40"]) == 0
    req = tmp_path / "req.jsonl"
    argv = ["export-requests", "--data", str(d), "--judges", "outcome,selfcons", "--model", "m", "--limit", "3"]
    assert main([*argv, "--out", str(req), "--quiet"]) == 0
    lines = req.read_text(encoding="utf-8").splitlines()
    parsed = read_requests(req)
    assert len(parsed) == len(lines) == 12  # 3 outcome + 3 x 3 members
    assert [r.line() for r in parsed.values()] == lines
    res = BatchResult.of(4, "tj-1", 200, ANSWER)
    assert BatchResult.model_validate_json(res.line()) == res
    assert json.loads(res.line()) == {
        "id": "tj-batch-req-4",
        "custom_id": "tj-1",
        "response": {"status_code": 200, "request_id": "tj-1", "body": ANSWER},
        "error": None,
    }


def test_results_of_other_engines_are_read_with_their_extra_fields_and_errors(tmp_path):
    # the shapes of the OpenAI Batch API's output (error as an object, response null) and of
    # vllm run-batch (error as a message), beside an answer with fields this package does not write
    openai_failed = {"id": "b1", "custom_id": "tj-2", "response": None, "error": {"code": "x", "message": "expired"}}
    vllm_failed = {"id": "b2", "custom_id": "tj-3", "response": {"status_code": 400, "body": None}, "error": "bad"}
    extra = RESULT | {"custom_id": "tj-1", "response": {"status_code": 200, "request_id": "q", "body": ANSWER, "x": 1}}
    path = _file(tmp_path, json.dumps(extra), json.dumps(openai_failed), json.dumps(vllm_failed))
    got = read_results(path)
    assert list(got.answers) == ["tj-1"] and got.answers["tj-1"]["choices"][0]["message"]["content"] == "{}"
    assert got.errors == {"tj-2": '{"code": "x", "message": "expired"}', "tj-3": "HTTP 400"}
    settled = {r.custom_id: r.settled for _, r in read_lines(path, BatchResult)}
    assert settled == {"tj-1": True, "tj-2": False, "tj-3": True}  # a 400 is not asked again; no response is
