"""Citing the edition and the paper (trajectory_judge.book.building.citation): ``CITATION.cff`` is valid Citation
File Format, is the one source of ``.zenodo.json`` and of the landing's BibTeX, agrees with the
package, the hosting setting and ``book/references.bib``, and follows ``book config``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from pybtex.database import parse_file, parse_string

from trajectory_judge.book.building import citation as cite
from trajectory_judge.book.building.hosting import hosting, set_repository

ROOT = Path(__file__).resolve().parents[1]
CFF = ROOT / cite.CITATION_FILE


def cff_check(path: Path) -> subprocess.CompletedProcess:
    """The Citation File Format schema check, offline (the schema ships with check-jsonschema)."""
    tool = Path(sys.executable).with_name("check-jsonschema")
    return subprocess.run(
        [str(tool), "--builtin-schema", "vendor.citation-file-format", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- the citation file -----------------------------------------------------------------------
def test_citation_file_is_valid_citation_file_format():
    done = cff_check(CFF)
    assert done.returncode == 0, done.stdout + done.stderr
    assert yaml.safe_load(CFF.read_text(encoding="utf-8"))["cff-version"] == "1.2.0"


@pytest.mark.parametrize(
    "break_it",
    [
        lambda d: d.pop("authors"),  # a required key missing
        lambda d: d.update(license="MIT-ish"),  # not an SPDX licence
        lambda d: d["references"][0].update(doi="arXiv:2609.00038"),  # not a DOI
    ],
    ids=["no-authors", "bad-licence", "bad-doi"],
)
def test_citation_file_check_fails_on_a_broken_copy(tmp_path, break_it):
    data = yaml.safe_load(CFF.read_text(encoding="utf-8"))
    break_it(data)
    broken = tmp_path / cite.CITATION_FILE
    broken.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    done = cff_check(broken)
    assert done.returncode != 0 and "Schema validation errors" in done.stdout + done.stderr


def test_citation_version_is_the_package_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert str(cite.load_citation(ROOT)["version"]) == project["version"]


def test_citation_names_the_books_author_licence_and_hosting_repository():
    cff = cite.load_citation(ROOT)
    book = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert cff["authors"] == [{"name": book["author"]}]
    assert cff["license"] == project["license"]["text"] == "MIT"
    assert (
        (ROOT / "LICENSE")
        .read_text(encoding="utf-8")
        .startswith(f"MIT License\n\nCopyright (c) {book['copyright']} {book['author']}\n")
    )
    assert cff["repository-code"] == hosting(ROOT).url == book["repository"]["url"]


def test_citation_references_the_paper_and_the_authors_release():
    cff = cite.load_citation(ROOT)
    paper, release = cite.paper(cff), cite.release(cff)
    # the paper's arXiv id and DOI (arXiv's DOI form), and the Zenodo DOI of the release's README badge
    assert (cite.arxiv_id(paper), paper["doi"], paper["year"]) == ("2609.00038", "10.48550/arXiv.2609.00038", 2026)
    assert paper["url"] == "https://arxiv.org/abs/2609.00038"
    assert release["doi"] == "10.5281/zenodo.21797926"
    assert release["repository-code"] == "https://github.com/mohammadi-hadi/trajectory-judge"


def test_a_citation_without_the_paper_is_an_error():
    with pytest.raises(ValueError, match="no reference with an arXiv DOI"):
        cite.paper({"references": [{"type": "software", "doi": "10.5281/zenodo.1"}]})
    with pytest.raises(ValueError, match="no reference of type software"):
        cite.release({"references": []})


# --- .zenodo.json ----------------------------------------------------------------------------
def test_zenodo_metadata_agrees_with_the_citation_file():
    cff = cite.load_citation(ROOT)
    zen = json.loads((ROOT / cite.ZENODO_FILE).read_text(encoding="utf-8"))
    assert zen["title"] == cff["title"] and zen["version"] == str(cff["version"])
    assert zen["creators"] == [{"name": a["name"]} for a in cff["authors"]]
    assert zen["license"] == cff["license"] and zen["description"] == cff["abstract"]
    related = {r["identifier"]: r["relation"] for r in zen["related_identifiers"]}
    assert related == {
        cite.paper(cff)["doi"]: "isSupplementTo",
        cite.release(cff)["doi"]: "isDerivedFrom",
        cff["repository-code"]: "isSupplementTo",
    }
    assert (ROOT / cite.ZENODO_FILE).read_text(encoding="utf-8") == cite.zenodo_text(cff), (
        'computed, never edited by hand: python -c "from trajectory_judge.book.building.citation import write_zenodo; write_zenodo()"'
    )


# --- BibTeX ----------------------------------------------------------------------------------
def test_papers_bibtex_agrees_with_the_books_bibliography():
    cff = cite.load_citation(ROOT)
    ours = parse_string(cite.paper_bibtex(cff), "bibtex").entries[cite.PAPER_KEY]
    bib = parse_file(str(ROOT / "book" / "references.bib"), "bibtex").entries[cite.PAPER_KEY]
    assert [str(p) for p in ours.persons["author"]] == [str(p) for p in bib.persons["author"]] == ["Mohammadi, Hadi"]
    for name in ("title", "year", "eprint", "doi", "url"):
        assert ours.fields[name] == bib.fields[name], name
    assert ours.fields["archiveprefix"] == bib.fields["archiveprefix"] == "arXiv"


def test_editions_bibtex_names_its_version_repository_and_the_paper():
    cff = cite.load_citation(ROOT)
    entry = parse_string(cite.edition_bibtex(cff, 2026), "bibtex").entries["trajectoryjudge2026edition"]
    assert [str(p) for p in entry.persons["author"]] == [
        "{trajectory-judge contributors}"
    ]  # one entity, not two people
    assert entry.fields["version"] == str(cff["version"]) and entry.fields["url"] == cff["repository-code"]
    assert (
        entry.fields["title"] == "What Outcome-Only {LLM} Judges Miss on Agent Trajectories --- an executable edition"
    )
    assert "arXiv:2609.00038" in entry.fields["note"] and entry.fields["year"] == "2026"


def test_bibtex_names_people_by_family_name_and_keeps_acronyms_capitalised():
    assert (
        cite.author_name({"family-names": "Rossum", "name-particle": "van", "given-names": "Guido"})
        == "van Rossum, Guido"
    )
    assert cite.author_name({"name": "others"}) == "others"
    assert cite.bibtex_title("LLM judges of AI agents") == "{LLM} judges of {AI} agents"


def test_landing_cite_section_is_computed_not_typed():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    cite_section = intro[intro.index("## Cite") :]
    for name in ("cite_links", "cite_paper_bibtex", "cite_edition_bibtex", "cite_version", "citation_file"):
        assert "{{ " + name + " }}" in cite_section, name
    for typed in ("10.48550", "zenodo", "2609.00038", "@misc", "0.1.0"):
        assert typed not in cite_section, typed
    assert intro.index("## Cite") > intro.index("## Introduction")  # below the first screen


# --- book config --------------------------------------------------------------------------------
def test_config_verb_renames_the_repository_in_the_citation(tmp_path):
    for name in ("_config.yml", cite.CITATION_FILE, cite.ZENODO_FILE):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "notebooks").mkdir()
    written = set_repository("https://github.com/someone/fork", "trunk", book=tmp_path)
    assert {p.name for p in written} == {"_config.yml", cite.CITATION_FILE, cite.ZENODO_FILE}
    cff = cite.load_citation(tmp_path)
    assert cff["repository-code"] == "https://github.com/someone/fork"
    assert (
        cite.release(cff)["repository-code"] == "https://github.com/mohammadi-hadi/trajectory-judge"
    )  # the authors' stays
    before, after = (
        CFF.read_text(encoding="utf-8").splitlines(),
        (tmp_path / cite.CITATION_FILE).read_text(encoding="utf-8").splitlines(),
    )
    assert [a for a, b in zip(before, after) if a != b] == [f"repository-code: {hosting(ROOT).url}"]  # comments kept
    zen = json.loads((tmp_path / cite.ZENODO_FILE).read_text(encoding="utf-8"))
    assert {
        "identifier": "https://github.com/someone/fork",
        "relation": "isSupplementTo",
        "resource_type": "software",
        "scheme": "url",
    } in zen["related_identifiers"]
    assert cff_check(tmp_path / cite.CITATION_FILE).returncode == 0
    assert set_repository("https://github.com/someone/fork", "trunk", book=tmp_path) == []
