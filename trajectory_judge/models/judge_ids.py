"""Judge ids: the grammar that says what kind of judge wrote a verdict, parsed once into a :class:`JudgeSpec`.

The guide's "Judge ids" page says the grammar at length; :data:`JUDGE_ID_GRAMMAR` says it in one
phrase for error messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal


def check_name(value: str, what: str = "judge id") -> str:
    """``value`` if it is a usable judge id or model name, else :class:`ValueError` saying why.

    A name is non-empty printable text without ``|`` (the separator of paired-delta keys); so no
    newline, tab or other control character. ``@``, ``/``, ``.`` and ``:`` are allowed (member ids
    look like ``step@T0.7/seed7:qwen2.5-coder:1.5b``).
    """
    if not value.strip():
        raise ValueError(f"{what} must not be empty")
    if "|" in value:
        raise ValueError(f"{what} {value!r} must not contain '|'")
    if not value.isprintable():
        raise ValueError(f"{what} {value!r} must be printable text (no newline, tab or control character)")
    return value


LLM_VIEWS, RULES_ID = ("outcome", "step", "reply"), "programmatic"
"""The views an LLM judge reads (single-pass LLM judge ids begin with one), and the rule engine's id."""
JUDGE_ID_GRAMMAR = (
    "'programmatic', 'VIEW:MODEL' (VIEW one of outcome, step, reply), 'VIEW+PROMPT:MODEL' (a prompt of "
    "one's own, PROMPT named as NAME below), 'selfconsK:MODEL' or 'selfconsK+PROMPT:MODEL' (K at least 2), "
    "'VIEW@T<temperature>/seed<n>:MODEL' or 'VIEW+PROMPT@T<temperature>/seed<n>:MODEL', or a Python judge's "
    "'NAME' or 'NAME:DETAIL' (NAME lower-case letters, digits, '_' or '-', starting with a letter)"
)
"""The judge-id grammar in one phrase, for error messages (the guide's "Judge ids" page says it at length)."""
_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_ENSEMBLE = re.compile(r"selfcons(?P<k>[2-9]|[1-9]\d+)(\+(?P<prompt>.*))?")
_MEMBER = re.compile(
    r"(?P<view>outcome|step|reply)(\+(?P<prompt>[^@]*))?@T(?P<temperature>\d+(\.\d+)?)/seed(?P<seed>\d+)"
)
_CUSTOM = re.compile(r"(?P<view>outcome|step|reply)\+(?P<prompt>.*)")


def check_prompt_name(name: str) -> str:
    """``name`` if it can name a prompt of one's own in a judge id (``step+NAME:MODEL``, ``selfcons3+NAME:MODEL``,
    ``step+NAME@T0.7/seed7:MODEL``), else a ValueError.

    The grammar of a Python judge's NAME: lower-case letters, digits, ``_`` or ``-``, starting with a letter.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"prompt name {name!r} must be lower-case letters, digits, '_' or '-', starting with a letter "
            "(it is taken from the prompt file's name without its suffix)"
        )
    return name


JudgeKind = Literal["rules", "llm", "ensemble", "member", "python"]
"""What a judge id names: the rule engine, a single-pass LLM judge, the self-consistency ensemble,
one sampled member of an ensemble, or a judge written in Python."""

ENSEMBLE_FAMILY, ENSEMBLE_VIEW, PYTHON_FAMILY = "selfcons", "step", "python"
"""The family of the self-consistency ensemble and the view its samples read (under the built-in step prompt,
or under a prompt of one's own for ``selfconsK+NAME``), and the family of every judge written in Python."""


@dataclass(frozen=True)
class JudgeSpec:
    """A judge id parsed once (:meth:`parse`): what kind of judge it names, what it reads, and which model.

    ``str(spec)`` is the id exactly as written. The one parser of the grammar (README, "Judge ids";
    :data:`JUDGE_ID_GRAMMAR`); every part of the package that groups, names or renders judges reads
    these fields rather than the text.
    """

    judge_id: str
    """The id as it appears in the verdicts."""
    kind: JudgeKind
    """``rules``, ``llm``, ``ensemble``, ``member`` or ``python``."""
    family: str
    """``programmatic``, ``outcome``, ``step``, ``reply``, ``selfcons`` or ``python``; a member's family is
    the view it samples (a member is one sampled pass of that view's judge)."""
    view: str
    """What it reads: ``rules`` (the whole trajectory, by rule), one of :data:`LLM_VIEWS`, or ``python`` (its own)."""
    model: str | None = None
    """The model behind an LLM judge (everything after the first ``:``); None for the rules and a Python judge."""
    ensemble: int = 1
    """Samples per verdict: k for ``selfconsK``, 1 for every other judge (a member is one sample)."""
    temperature: float | None = None
    """A member's sampling temperature (``@T0.7``); None for any other judge."""
    seed: int | None = None
    """A member's seed (``/seed7``); None for any other judge."""
    detail: str | None = None
    """A Python judge's ``DETAIL`` (after the first ``:``), or None."""
    prompt: str | None = None
    """The NAME of a prompt of one's own (``step+NAME:MODEL``, the ensemble ``selfcons3+NAME:MODEL`` and its
    members ``step+NAME@T0.7/seed7:MODEL``); None for a judge under the built-in prompts."""

    def __str__(self) -> str:
        return self.judge_id

    @property
    def head(self) -> str:
        """The id before its model or detail: ``step``, ``step+NAME``, ``selfcons3``, ``selfcons3+NAME``,
        ``step@T0.7/seed7``, ``step+NAME@T0.7/seed7``, a Python judge's NAME."""
        return self.judge_id.partition(":")[0]

    @property
    def is_llm(self) -> bool:
        """True for every judge that is not the rule engine or a Python judge."""
        return self.kind not in ("rules", "python")

    @property
    def is_member(self) -> bool:
        """True for one sampled member of an ensemble (``VIEW@T<temperature>/seed<n>:MODEL``, or
        ``VIEW+NAME@T<temperature>/seed<n>:MODEL`` under a prompt of one's own)."""
        return self.kind == "member"

    @property
    def rendered_view(self) -> str:
        """The view of a trajectory it is shown (:func:`trajectory_judge.judges.views.render_view`): its own
        LLM view; the full trajectory (``step``) for the rules, the ensemble and a Python judge."""
        return self.view if self.view in LLM_VIEWS else "step"

    @classmethod
    def parse(cls, judge_id: str) -> JudgeSpec:
        """The record of ``judge_id``, or :class:`ValueError` naming the id and what is wrong with it."""
        return _parse_judge_id(judge_id)

    @classmethod
    def rules(cls) -> JudgeSpec:
        """The rule engine, ``programmatic``."""
        return cls.parse(RULES_ID)

    @classmethod
    def llm(cls, view: str, model: str, prompt: str | None = None) -> JudgeSpec:
        """A single-pass LLM judge, ``VIEW:MODEL``; with ``prompt`` (a prompt of one's own), ``VIEW+PROMPT:MODEL``."""
        head = view if prompt is None else f"{view}+{check_prompt_name(prompt)}"
        return cls._kind_of(f"{head}:{model}", "llm")

    @classmethod
    def self_consistency(cls, k: int, model: str, prompt: str | None = None) -> JudgeSpec:
        """The self-consistency ensemble of ``k`` samples of the step view, ``selfconsK:MODEL``; with ``prompt``
        (samples of a prompt of one's own over the step view), ``selfconsK+PROMPT:MODEL``."""
        head = f"{ENSEMBLE_FAMILY}{k}" if prompt is None else f"{ENSEMBLE_FAMILY}{k}+{check_prompt_name(prompt)}"
        return cls._kind_of(f"{head}:{model}", "ensemble")

    @classmethod
    def member(cls, view: str, temperature: float, seed: int, model: str, prompt: str | None = None) -> JudgeSpec:
        """One sample of an ensemble, ``VIEW@T<temperature>/seed<n>:MODEL`` (the temperature written shortest,
        ``:g``); with ``prompt`` (a sample of a prompt of one's own), ``VIEW+PROMPT@T<temperature>/seed<n>:MODEL``."""
        head = view if prompt is None else f"{view}+{check_prompt_name(prompt)}"
        return cls._kind_of(f"{head}@T{temperature:g}/seed{seed}:{model}", "member")

    @classmethod
    def _kind_of(cls, judge_id: str, kind: JudgeKind) -> JudgeSpec:
        spec = cls.parse(judge_id)
        if spec.kind != kind:
            raise ValueError(f"judge id {judge_id!r} names {_KIND_NAMES[spec.kind]}, not {_KIND_NAMES[kind]}")
        return spec


def _check_separators(judge_id: str, head: str, sep: str, detail: str, needs_model: bool) -> None:
    """The grammar's checks on spaces and on the ``:`` before a model, each a ValueError naming the id."""
    if any(c.isspace() for c in judge_id):
        raise ValueError(f"judge id {judge_id!r} must not contain spaces; expected {JUDGE_ID_GRAMMAR}")
    if sep and not detail:
        raise ValueError(f"judge id {judge_id!r} ends in ':'; expected {JUDGE_ID_GRAMMAR}")
    if needs_model and not sep:
        raise ValueError(f"judge id {judge_id!r} names no model; an LLM judge's id reads {head}:MODEL")


_KIND_NAMES: dict[JudgeKind, str] = {
    "rules": "the rule engine",
    "llm": "an LLM judge",
    "ensemble": "a self-consistency ensemble",
    "member": "an ensemble member",
    "python": "a Python judge",
}
"""Each kind of judge as a sentence names it."""


@lru_cache(maxsize=4096)
def _parse_judge_id(judge_id: str) -> JudgeSpec:
    """:meth:`JudgeSpec.parse`, once per distinct id (a file holds a few ids on many lines; the record is immutable)."""
    check_name(judge_id)
    if judge_id == RULES_ID:
        return JudgeSpec(judge_id, "rules", RULES_ID, "rules")
    head, sep, detail = judge_id.partition(":")
    member, ensemble, custom = _MEMBER.fullmatch(head), _ENSEMBLE.fullmatch(head), _CUSTOM.fullmatch(head)
    _check_separators(judge_id, head, sep, detail, bool(head in LLM_VIEWS or member or ensemble or custom))
    if head in LLM_VIEWS:
        return JudgeSpec(judge_id, "llm", head, head, detail)
    if member:  # before a prompt of one's own: VIEW+NAME@T.../seed... is a member, not a prompt named NAME@T...
        view, name = member["view"], _prompt_of(judge_id, member["prompt"])
        temperature, seed = float(member["temperature"]), int(member["seed"])
        return JudgeSpec(judge_id, "member", view, view, detail, temperature=temperature, seed=seed, prompt=name)
    if custom:
        name = _prompt_of(judge_id, custom["prompt"])
        return JudgeSpec(judge_id, "llm", custom["view"], custom["view"], detail, prompt=name)
    if ensemble:
        name = _prompt_of(judge_id, ensemble["prompt"])
        k = int(ensemble["k"])
        return JudgeSpec(judge_id, "ensemble", ENSEMBLE_FAMILY, ENSEMBLE_VIEW, detail, ensemble=k, prompt=name)
    if head.startswith(ENSEMBLE_FAMILY):
        raise ValueError(
            f"judge id {judge_id!r}: a self-consistency id names its size, 2 or more (selfcons3:MODEL, "
            "selfcons3+PROMPT:MODEL)"
        )
    if head == RULES_ID:
        raise ValueError(f"judge id {judge_id!r}: the rule engine takes no model (its id is 'programmatic')")
    if not _NAME.fullmatch(head):
        raise ValueError(f"judge id {judge_id!r}: {head!r} is not a judge name; expected {JUDGE_ID_GRAMMAR}")
    return JudgeSpec(judge_id, "python", PYTHON_FAMILY, PYTHON_FAMILY, detail=detail or None)


def _prompt_of(judge_id: str, name: str | None) -> str | None:
    """The PROMPT of ``judge_id`` (None when it names none), or a ValueError naming the id when it is no NAME."""
    if name is None:
        return None
    try:
        return check_prompt_name(name)
    except ValueError as exc:
        raise ValueError(f"judge id {judge_id!r}: {exc}") from None


def check_judge_id(value: str) -> str:
    """``value`` if it follows the judge-id grammar (:meth:`JudgeSpec.parse`), else :class:`ValueError`."""
    JudgeSpec.parse(value)
    return value
