"""Judges see only their view: no label, and an opaque id that names no fault (judges/blind.py, the runner)."""

from __future__ import annotations

import re

import pytest
from llm_fakes import ScriptedClient, response
from scipy.stats import fisher_exact

from trajectory_judge.analysis.core.baselines import baseline
from trajectory_judge.analysis.core.metrics import detection
from trajectory_judge.judges.blind import Blinder, judge_view, opaque_id
from trajectory_judge.judges.llm import LLMJudge
from trajectory_judge.judges.prompts import build_prompt
from trajectory_judge.judges.selfcons import SelfConsistencyJudge
from trajectory_judge.judges.views import VIEWS
from trajectory_judge.models import FAILURE_TYPES, Verdict, parse_jsonl
from trajectory_judge.run.runner import run_judges

KEY = b"a key for the tests, 32 bytes.."
OPAQUE = re.compile(r"T-[0-9a-f]{16}")


class Cheat:
    """A Python judge that decides from anything but the evidence; it records what it was handed."""

    def __init__(self, name, decide):
        self.judge_id, self.decide, self.seen = name, decide, []

    def judge(self, t):
        self.seen.append(t)
        faulty, ftype = self.decide(t)
        return Verdict(
            trajectory_id=t.trajectory_id,
            judge_id=self.judge_id,
            faulty=faulty,
            failure_type=ftype if faulty else None,
            confidence=0.9,
        )


def _named_type(text):
    return next((f for f in FAILURE_TYPES if f in text), None)


def _instance_number(t):
    digits = re.sub(r"\D", "", t.instance_id)
    return int(digits) if digits else -1


CHEATS = {
    # the label itself
    "label-reader": lambda t: (bool(t.label and t.label.faulty), t.label.failure_type if t.label else None),
    # the fault named in the id (INS-00036-hallucinated_argument) or its "-clean" suffix
    "id-suffix": lambda t: (not t.trajectory_id.endswith("-clean"), _named_type(t.trajectory_id)),
    "id-type-name": lambda t: (_named_type(t.trajectory_id + t.instance_id) is not None, _named_type(t.trajectory_id)),
    # instances past the first 100 host faults only
    "instance-number": lambda t: (_instance_number(t) >= 100, None),
    # any other function of the id string
    "id-hash-bit": lambda t: (
        int(t.trajectory_id[-1], 16) % 2 == 0 if t.trajectory_id[-1] in "0123456789abcdef" else True,
        None,
    ),
}


def _f1(trajs, verdicts):
    by_id = {v.trajectory_id: v for v in verdicts}
    return detection([(t.label, by_id[t.trajectory_id]) for t in trajs])["f1"]


def test_cheats_score_perfectly_when_handed_the_answer(dataset):
    # the control: without blinding, reading the label or the id gives F1 1 (so the next test can fail)
    for name in ("label-reader", "id-suffix", "id-type-name"):
        judge = Cheat(name, CHEATS[name])
        assert _f1(dataset, [judge.judge(t) for t in dataset]) == 1.0, name


@pytest.mark.parametrize("name", list(CHEATS))
def test_label_reading_and_id_parsing_judges_get_no_signal(dataset, tmp_path, name):
    # a fixed key makes the test deterministic (the runner draws one per run); any key would do
    judge = Cheat(name, CHEATS[name])
    run_judges(dataset, [judge], tmp_path / "verdicts.jsonl", progress=False, record=False, blind_key=KEY)
    stored = parse_jsonl(tmp_path / "verdicts.jsonl", Verdict)
    assert [v.trajectory_id for v in stored] == [t.trajectory_id for t in dataset]  # stored under the real ids
    assert all(
        t.label is None and OPAQUE.fullmatch(t.trajectory_id) and t.instance_id == t.trajectory_id for t in judge.seen
    )
    flag_all = baseline(dataset, "flag everything").metrics["f1"]
    assert _f1(dataset, stored) <= flag_all  # no better than flagging everything
    flags = {v.trajectory_id: v.faulty for v in stored}
    table = [
        [sum(flags[t.trajectory_id] == f and t.label.faulty == y for t in dataset) for f in (True, False)]
        for y in (True, False)
    ]
    assert fisher_exact(table).pvalue > 0.05  # its flags are independent of the truth
    assert not any(v.failure_type for v in stored)  # and no type read off the id


def test_the_judge_is_handed_a_copy_it_cannot_change(dataset, tmp_path):
    class Vandal(Cheat):
        def judge(self, t):
            t.steps.clear()
            return super().judge(t)

    traj = dataset[0].model_copy(deep=True)
    run_judges([traj], [Vandal("vandal", lambda t: (False, None))], tmp_path / "v.jsonl", progress=False, record=False)
    assert traj == dataset[0]


def test_no_rendered_prompt_holds_the_label_or_the_id(dataset):
    for t in dataset:
        stripped = t.model_copy(update={"trajectory_id": "x", "instance_id": "y", "label": None})
        for view in VIEWS:
            prompt = build_prompt(view, t)
            assert prompt == build_prompt(view, stripped)  # a function of the evidence only
            assert t.trajectory_id not in prompt and t.instance_id not in prompt


def test_llm_judges_and_ensembles_are_sent_no_id(dataset, tmp_path):
    client = ScriptedClient(response(step=0))
    judges = [*(LLMJudge(v, client, "m") for v in VIEWS), SelfConsistencyJudge(client, "m")]
    trajs = dataset[:16]
    run_judges(trajs, judges, tmp_path / "verdicts.jsonl", progress=False, record=False)
    assert len(client.calls) == 16 * 6
    for call in client.calls:
        assert not any(t.trajectory_id in call["prompt"] or t.instance_id in call["prompt"] for t in dataset)
    members = parse_jsonl(tmp_path / "members.jsonl", Verdict)
    assert {v.trajectory_id for v in members} == {t.trajectory_id for t in trajs}


def test_opaque_ids_are_deterministic_under_a_key_and_unrelated_across_keys():
    a, b = b"k" * 32, b"j" * 32
    assert opaque_id("INS-00036-hallucinated_argument", a) == opaque_id("INS-00036-hallucinated_argument", a)
    assert opaque_id("INS-00036-hallucinated_argument", a) != opaque_id("INS-00036-hallucinated_argument", b)
    assert OPAQUE.fullmatch(opaque_id("INS-00036-clean", a))
    with pytest.raises(ValueError, match="non-empty key"):
        opaque_id("x", b"")


def test_blinder_maps_verdicts_back_and_refuses_ids_it_never_issued(dataset):
    blinder = Blinder(b"k" * 32)
    seen = blinder.blind(dataset[1])
    assert seen == judge_view(dataset[1], b"k" * 32) and blinder.real_id(seen.trajectory_id) == dataset[1].trajectory_id
    v = Verdict(trajectory_id=seen.trajectory_id, judge_id="x", faulty=False, confidence=0.5)
    assert blinder.unblind(v).trajectory_id == dataset[1].trajectory_id
    with pytest.raises(KeyError):
        blinder.real_id("T-0000000000000000")
