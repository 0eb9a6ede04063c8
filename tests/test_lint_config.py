"""The linters' promises hold: every suppression comment is read by the tool it addresses, the type checker
covers the layers it is meant to, and CI runs both right after the tests (pyproject.toml, .ci/run)."""

from __future__ import annotations

import io
import re
import tokenize
import tomllib
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore")
NOQA = re.compile(r"#\s*noqa(?P<codes>:\s*[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)?", re.IGNORECASE)


def python_files() -> list[Path]:
    """The Python files ruff checks: the package, the tests and the Sphinx extensions, minus its exclusions."""
    excluded = {ROOT / p for p in PYPROJECT["tool"]["ruff"]["extend-exclude"]}
    files = [p for d in ("trajectory_judge", "tests", "book/_ext") for p in sorted((ROOT / d).rglob("*.py"))]
    return [p for p in files if not any(p == e or e in p.parents for e in excluded)]


def comments(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of each comment in ``path``; a comment's words inside a string literal are not one."""
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def checked_by_mypy(path: Path) -> bool:
    """Whether ``mypy`` (run with no arguments) checks ``path``: it is, or lies under, an entry of its files."""
    entries = [ROOT / f for f in PYPROJECT["tool"]["mypy"]["files"]]
    return any(path == e or e in path.parents for e in entries)


def unread_ignores(files: list[Path]) -> list[str]:
    """``file:line`` of every ``# type: ignore`` in a file mypy does not check."""
    return [
        f"{p.relative_to(ROOT) if ROOT in p.parents else p}:{n}"
        for p in files
        if not checked_by_mypy(p)
        for n, text in comments(p)
        if TYPE_IGNORE.search(text)
    ]


def test_every_type_ignore_is_in_a_file_mypy_checks():
    """mypy's warn_unused_ignores and ignore-without-code see every ignore, so each names its code and is needed."""
    assert PYPROJECT["tool"]["mypy"]["warn_unused_ignores"] is True
    assert "ignore-without-code" in PYPROJECT["tool"]["mypy"]["enable_error_code"]
    assert unread_ignores(python_files()) == []


def test_an_ignore_in_a_file_mypy_does_not_check_is_reported(tmp_path):
    """The control: the check above has something to find when an ignore sits where mypy never looks."""
    assert not checked_by_mypy(ROOT / "tests" / "conftest.py")
    assert checked_by_mypy(ROOT / "trajectory_judge" / "analysis" / "metrics.py")
    stray = tmp_path / "stray.py"
    stray.write_text(
        "x = '# type: ignore'\ny: int = 'a'  # type: ignore[assignment]\nz = 2  # typed\n", encoding="utf-8"
    )
    assert unread_ignores([stray]) == [f"{stray}:2"]


def test_mypy_checks_the_data_model_analysis_judges_run_backends_and_the_book():
    for part in ("models", "analysis", "judges", "run", "backends", "book"):
        assert checked_by_mypy(ROOT / "trajectory_judge" / part), f"mypy does not check trajectory_judge/{part}"
    assert checked_by_mypy(ROOT / "book" / "_ext" / "tj_records.py")
    # the extensions are top-level modules, as Sphinx imports them
    assert PYPROJECT["tool"]["mypy"]["mypy_path"] == "book/_ext"


def test_every_noqa_names_the_rules_it_silences():
    """A bare ``# noqa`` silences every rule on its line, where RUF100 cannot tell that it is unused."""
    bare = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in python_files()
        if "noqa" in p.read_text(encoding="utf-8")  # only these files can hold one: tokenize no other
        for n, text in comments(p)
        for m in NOQA.finditer(text)
        if not m.group("codes")
    ]
    assert bare == []
    assert "RUF100" in PYPROJECT["tool"]["ruff"]["lint"]["select"]


def test_a_bare_noqa_is_told_from_one_that_names_its_code():
    assert not NOQA.search("import x  # noqa").group("codes")
    assert NOQA.search("import x  # noqa: F401 - re-exported").group("codes")
    assert NOQA.search("import x  # noqa: E402, F401").group("codes")


def test_ci_runs_every_tier_and_lints_formats_and_type_checks_in_a_stream_of_its_own():
    import re

    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^make ci$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    (checks,) = re.findall(r"^checks: install\n((?:\t.*\n)+)", make, re.M)  # `make checks`, by hand
    assert [line.split()[-1] for line in checks.splitlines()][:3] == ["test", "lint", "types"]
    (streams,) = re.findall(r"^ci: install\n\t\$\(MAKE\) -j4 --output-sync=target (.*)\n", make, re.M)
    # each stream runs tiers one after another: the slow tier (the longest) and the book's stream (which waits on
    # Chromium as much as it computes) at normal priority, the others niced
    recipes = {s: re.search(rf"^{s}:\n((?:\t.*\n)+)", make, re.M).group(1).splitlines() for s in streams.split()}
    targets = {s: [line.split()[-1] for line in lines] for s, lines in recipes.items()}
    assert sorted(t for ts in targets.values() for t in ts) == ["lint", "pages", "rerun", "slow", "test", "types"]
    unniced = (["slow"], ["pages"])
    assert all(all(("nice" in line) == (targets[s] not in unniced) for line in lines) for s, lines in recipes.items())
    assert "\t$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .\n" in make
    assert "\ntypes: install\n\t$(VENV)/bin/mypy\n" in make


def test_ruff_and_mypy_are_pinned_exactly_in_the_dev_extra():
    dev = {Requirement(r).name: Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]}
    for tool in ("ruff", "mypy"):
        assert tool in dev, f"{tool} is not in the dev extra"
        (spec,) = dev[tool].specifier
        assert spec.operator == "==", f"{tool} is pinned as {spec}, not exactly"
