"""A prompt of one's own: a text template over one view, judged under the built-in schema and parser.

A template is UTF-8 text with Python :meth:`str.format` placeholders (``{{`` and ``}}`` write a literal
brace). ``{view}`` is required: the trajectory as the chosen view shows it
(:func:`~trajectory_judge.judges.views.render_view`, exactly as the built-in prompts show it). ``{goal}``
(the customer's request), ``{reply}`` (the final answer sent to the customer) and ``{procedure}`` (the
eight-rule procedure the built-in prompts hold agents to) may be used; every view shows the goal and the
reply, so none of them adds to what the view shows. Anything else is refused as the template is read,
before any request: another name (``{label}``, ``{trajectory_id}``: a judge is shown its view and nothing
about the answer or which trajectory it is), a positional field (``{}``, ``{0}``), attribute or index
access (``{view.steps}``, ``{view[0]}``), a conversion or format spec (``{view!r}``, ``{view:>9}``), and
a template without ``{view}``.

The judge's id is ``VIEW+NAME:MODEL`` (:meth:`~trajectory_judge.models.JudgeSpec.llm`), NAME the file's
name without its suffix (``rubric.txt`` -> ``step+rubric:MODEL``). The judge is handed the label-free
copy under an opaque id (:mod:`~trajectory_judge.judges.blind`), and the template reads only the goal,
steps and reply, so neither the label nor the id can reach the prompt.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from pathlib import Path

from trajectory_judge.judges.views import render_view
from trajectory_judge.models import DataError, Trajectory, check_prompt_name, read_text
from trajectory_judge.testbed.procedure import PROCEDURE

PLACEHOLDERS: tuple[str, ...] = ("view", "goal", "reply", "procedure")
"""The placeholders a template may use; ``view`` is required."""

REQUIRED = "view"
"""The one placeholder every template holds."""

WITHHELD: tuple[str, ...] = (
    "label",
    "faulty",
    "failure_type",
    "failure_step",
    "outcome_correct",
    "id",
    "trajectory_id",
    "instance_id",
    "design_cell",
    "stratum",
)
"""Names that would hand the judge the answer or say which trajectory it reads: refused by name."""


@dataclass(frozen=True)
class PromptTemplate:
    """A checked template (:func:`load_template`): its name, text and digest."""

    name: str
    """NAME in ``VIEW+NAME:MODEL``: the file's name without its suffix."""
    text: str
    """The template as read (newlines normalised to ``\\n``)."""
    file: str
    """The file it was read from, as given."""

    @property
    def sha256(self) -> str:
        """SHA-256 (hex) of the template's text in UTF-8."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, view: str, traj: Trajectory) -> str:
        """The prompt for ``traj`` under ``view``: the template with its placeholders filled."""
        return self.text.format(
            view=render_view(view, traj), goal=traj.goal, reply=traj.final_answer, procedure=PROCEDURE
        )

    def record(self) -> dict[str, str]:
        """What a run record keeps of it: name, file, SHA-256 and the text itself."""
        return {"name": self.name, "file": self.file, "sha256": self.sha256, "text": self.text}


def check_template(text: str, where: str) -> None:
    """Refuse, in one :class:`DataError` naming ``where`` (file and line), a template outside the rules above."""
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise DataError(f"{where}: not a str.format template ({exc}; write a literal brace as {{{{ or }}}})") from None
    seen = set()
    offset = 0
    for literal, name, spec, conversion in fields:
        offset += len(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        line = text.count("\n", 0, min(offset, len(text))) + 1
        at = f"{where}:{line}"
        field = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        base = name.split(".", 1)[0].split("[", 1)[0]
        if base in WITHHELD:
            raise DataError(
                f"{at}: placeholder {field} would put the label or the trajectory's id into the prompt; "
                f"a judge is shown only its view (allowed: {_allowed()})"
            )
        if name == "" or name.isdigit():
            raise DataError(f"{at}: positional placeholder {field}; name one of {_allowed()}")
        if name != base:
            raise DataError(
                f"{at}: placeholder {field} reaches inside {{{base}}}; placeholders are filled with text as "
                f"they stand ({_allowed()})"
            )
        if base not in PLACEHOLDERS:
            raise DataError(f"{at}: unknown placeholder {field}; allowed: {_allowed()}")
        if conversion or spec:
            raise DataError(f"{at}: placeholder {field} takes no conversion or format spec; write {{{base}}}")
        seen.add(base)
        offset += len(field)
    if REQUIRED not in seen:
        raise DataError(
            f"{where}: the template has no {{{REQUIRED}}} placeholder, so the judge would see no trajectory"
        )


def _allowed() -> str:
    return ", ".join("{" + p + "}" for p in PLACEHOLDERS)


def load_template(path: str | Path) -> PromptTemplate:
    """The template in ``path``, checked (:func:`check_template`); a :class:`DataError` in one line otherwise."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a folder, not a prompt template file")
    text = read_text(path)
    if not text.strip():
        raise DataError(f"{path}: the prompt template is empty")
    try:
        name = check_prompt_name(path.stem)
    except ValueError as exc:
        raise DataError(f"{path}: {exc}") from None
    check_template(text, str(path))
    return PromptTemplate(name=name, text=text, file=str(path))
