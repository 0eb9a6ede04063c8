"""README's "Measure your own judge" flow, end to end, in an experiment folder of one's own.

A stand-in model server (``tests/fake_server.py``) plays an Ollama server and a hosted
OpenAI-compatible API that wants a key; a judge written in Python joins them through the API. The
folder is built, judged, retried and reported, then merged with the folders of the other readers'
flows and rendered as a book with ``-W`` (``tests/reader_book.py``: one build for every such flow),
and the committed ``data/`` is left as it was.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from reader_book import HOSTED_JUDGE, KEY, OLLAMA_JUDGE, OWN_LIMIT, PYTHON_JUDGE, digests

ROOT = Path(__file__).resolve().parents[1]
JUDGES = (OLLAMA_JUDGE, HOSTED_JUDGE, PYTHON_JUDGE)


@pytest.mark.slow
def test_own_experiment_folder_from_dataset_to_book(reader_book):
    flow, mine = reader_book.flows["own_experiment"], reader_book.root / "mine"
    # an Ollama judge whose first two answers do not parse, judged again with --retry-unparseable
    assert "2 unparseable" in flow["ollama_err"]
    assert "2 unparseable verdicts judged again" in flow["retry_err"]
    # a hosted judge: the key goes with every completion request and nowhere else
    assert flow["hosted_auth"] == [["/v1/chat/completions", f"Bearer {KEY}"]]
    chats = flow["hosted_chats"]
    assert len(chats) == OWN_LIMIT and all("cache_prompt" not in b for b in chats)
    # a Python judge through the API, with a run record like any run
    assert flow["python_written"] == OWN_LIMIT

    verdicts = [json.loads(ln) for ln in (mine / "verdicts.jsonl").read_text().splitlines()]
    assert {v["judge_id"] for v in verdicts} == set(JUDGES)
    assert not any(v["error"] for v in verdicts)  # the retried answers parsed
    assert len((mine / "retried.jsonl").read_text().splitlines()) == 2
    runs = [json.loads(ln) for ln in (mine / "runs.jsonl").read_text().splitlines()]
    assert [r["backend"] for r in runs] == ["ollama", "ollama", "openai", "python"]
    assert runs[1]["retried"] == 2 and runs[-1]["judge_kinds"] == {PYTHON_JUDGE: "python"}
    for folder in (mine, reader_book.folder):  # the flow's folder and the merged one the book reads
        for path in (p for p in folder.rglob("*") if p.is_file()):
            assert KEY.encode() not in path.read_bytes(), f"the API key was written to {path}"

    # the report, with no manifest step
    assert all(j in flow["report_out"] for j in JUDGES)

    # the book, with -W, on the reader's folder that holds these verdicts
    page = reader_book.page("notebooks/judges")
    assert all(judge in page for judge in JUDGES)
    assert "Python judge" in page
    # its downloads are the reader's own files, copied byte for byte, with their sha256
    verdicts_file = (reader_book.folder / "verdicts.jsonl").read_bytes()
    sha = hashlib.sha256(verdicts_file).hexdigest()
    link = re.search(rf'href="\.\./(_downloads/tj/data/outside/{sha[:16]}/verdicts\.jsonl)"', page)  # not the paper's
    assert link and (reader_book.html / link.group(1)).read_bytes() == verdicts_file
    assert f'data-sha256="{sha}"' in page
    execution = reader_book.page("book/execution")  # how the chapters ran, truthfully
    assert "executed for this build on $TJ_DATA" in execution and "shown as committed" not in execution
    runs_page = reader_book.page("notebooks/runs")  # this edition's runs, beyond the paper
    assert re.search(r"<td[^>]*>\s*not reported\s*</td>", runs_page)  # a hosted API names no model file
    for path in (p for p in reader_book.build.rglob("*") if p.is_file()):
        assert KEY.encode() not in path.read_bytes(), f"the API key reached the book: {path}"
    assert digests(ROOT / "data") == reader_book.flows["committed"]
