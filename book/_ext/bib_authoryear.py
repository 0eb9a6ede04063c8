"""Sphinx extension of the book: an author-year bibliography that matches author-year citations.

``bibtex_reference_style: author_year_round`` cites as "(Cemri et al., 2025)" and "Efron (1979)";
``bibtex_default_style: authoryear`` labels the reference list "[Cemri et al., 2025]" (sorted by
author, year and title) instead of numbering it. Two works that would share a label get a letter
after the year, in the list and in every citation alike ("Wang et al., 2023a", "Wang et al., 2023b").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import sphinxcontrib.bibtex.plugin
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.template import field, first_of, node, optional, tag
from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle
from sphinxcontrib.bibtex.style.referencing.basic_author_year import (
    BasicAuthorYearParentheticalReferenceStyle,
    BasicAuthorYearTextualReferenceStyle,
)
from sphinxcontrib.bibtex.style.referencing.extra_year import ExtraYearReferenceStyle
from sphinxcontrib.bibtex.style.template import join, join2, post_text, pre_text, reference


def _round() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@node
def _names_et_al(children, data, role, other=None, **kwargs):
    """Names of ``role``; a list ending in "others" (BibTeX's "and others") reads "First et al."."""
    assert not children
    persons = list(data["entry"].persons.get(role, []))
    style = data["style"]
    if len(persons) > 1 and persons[-1].last_names == ["others"] and other is not None:
        first = style.person.style_plugin.format(persons[0], style.person.abbreviate).format_data(data)
        return Text(first, other)
    names = [style.person.style_plugin.format(p, style.person.abbreviate) for p in persons]
    return join(other=other, **kwargs)[names].format_data(data)


@node
def _year(children, data):
    """The year as the reference list labels it: "2023", or "2023a" when two works share a label."""
    assert not children
    year = data["entry"].fields.get("year", "n.d.")
    label = getattr(data.get("formatted_entry"), "label", "") or ""
    tail = label.rsplit(", ", 1)[-1]
    return Text(tail if tail[:-1] == year and tail[-1:].isalpha() else year)


class _Parenthetical(BasicAuthorYearParentheticalReferenceStyle):
    def inner(self, role_name: str):
        return join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
            pre_text,
            reference[
                join(sep=self.author_year_sep)[self.person.author_or_editor_or_title(full="s" in role_name), _year]
            ],
            post_text,
        ]


class _Textual(BasicAuthorYearTextualReferenceStyle):
    def inner(self, role_name: str):
        return join(sep=self.text_reference_sep)[
            self.person.author_or_editor_or_title(full="s" in role_name),
            join[
                self.bracket.left,
                join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[pre_text, reference[_year], post_text],
                self.bracket.right,
            ],
        ]


class _Year(ExtraYearReferenceStyle):
    def inner(self, role_name: str):
        return reference[_year]


_SUFFIXED = {
    BasicAuthorYearParentheticalReferenceStyle: _Parenthetical,
    BasicAuthorYearTextualReferenceStyle: _Textual,
    ExtraYearReferenceStyle: _Year,
}


@dataclasses.dataclass
class EtAlPersonStyle(PersonStyle):
    """Person names that read BibTeX's "and others" as "et al." in citations."""

    def names(self, role: str, full: bool):
        return _names_et_al(
            role=role, sep=self.sep, sep2=self.sep2, last_sep=self.last_sep, other=None if full else self.other
        )

    def author_or_editor_or_title(self, full: bool):
        other = None if full else self.other
        kw = dict(sep=self.sep, sep2=self.sep2, last_sep=self.last_sep, other=other)
        return first_of[
            optional[_names_et_al("author", **kw)], optional[_names_et_al("editor", **kw)], tag("em")[field("title")]
        ]


@dataclasses.dataclass
class RoundAuthorYearReferenceStyle(AuthorYearReferenceStyle):
    """Author-year citations in round brackets."""

    bracket_parenthetical: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_textual: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_author: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_label: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_year: BracketStyle = dataclasses.field(default_factory=_round)
    person: PersonStyle = dataclasses.field(default_factory=EtAlPersonStyle)

    def __post_init__(self):
        super().__post_init__()
        self.styles = [
            _SUFFIXED[type(s)](**{f.name: getattr(s, f.name) for f in dataclasses.fields(s)})
            if type(s) in _SUFFIXED
            else s
            for s in self.styles
        ]
        self.role_style.clear()
        self.role_style.update((r, s) for s in self.styles for r in s.role_names())


def _who(entry) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = [" ".join(p.last_names) for p in people]
    if len(last) > 2 or (len(last) == 2 and last[1] == "others"):
        return f"{last[0]} et al."
    if len(last) == 2:
        return f"{last[0]} and {last[1]}"
    return last[0] if last else "Anon."


class AuthorYearLabelStyle(BaseLabelStyle):
    """List labels "Last, Year", "Last and Last, Year" or "Last et al., Year", with a letter after
    the year when two works share a label."""

    def format_labels(self, sorted_entries: Iterable[Any]) -> Iterator[str]:
        entries = list(sorted_entries)
        labels = [f"{_who(e)}, {e.fields.get('year', 'n.d.')}" for e in entries]
        seen: dict[str, int] = {}
        for text in labels:  # "Wang et al., 2023a", "Wang et al., 2023b" for same-label works
            if labels.count(text) == 1:
                yield text
                continue
            seen[text] = seen.get(text, 0) + 1
            yield text + "abcdefghijklmnopqrstuvwxyz"[seen[text] - 1]


class AuthorYearStyle(PlainStyle):
    """pybtex's plain style with author-year labels."""

    default_label_style = AuthorYearLabelStyle


register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
sphinxcontrib.bibtex.plugin.register_plugin(
    "sphinxcontrib.bibtex.style.referencing", "author_year_round", RoundAuthorYearReferenceStyle
)


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
