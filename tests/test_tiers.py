"""The test tiers lose nothing: README's test command plus the lines .ci/run adds collect every test once.

README's test command (``python -m pytest``, with pyproject's addopts) is the fast tier: it deselects the
``slow`` end-to-end tests and the ``browser`` tests, which .ci/run runs on lines of their own. Each
command is collected here in-process, as pytest itself collects it from the repository's root; those
collections take a while, so the checks that use them are in the slow tier (.ci/run runs them once).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import shlex
from pathlib import Path
from types import FunctionType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / ".ci" / "run"
BUILDS_A_BOOK = re.compile(r"""with_name\(["']jupyter-book["']\)|\b(import|from) jupyter_book\b|\bsphinx\.cmd\b""")
"""How a test builds a book: it runs the installed ``jupyter-book`` (or Sphinx itself)..."""
BUILD_ARGV = re.compile(r"""["'](jupyter-book|sphinx-build)["'],""")
"""... or a subprocess on an argv that names it (a test that only reads such an argv builds nothing)."""


def builds(source: str) -> bool:
    """Whether a function's source builds a book."""
    return bool(BUILDS_A_BOOK.search(source) or (BUILD_ARGV.search(source) and "subprocess." in source))


def test_a_build_is_told_from_a_command_that_is_only_read():
    assert builds('subprocess.run([str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT)])')
    assert builds('jb = Path(sys.executable).with_name("jupyter-book")')
    assert builds('subprocess.run(["jupyter-book", "build", "."])')
    assert not builds('assert ["jupyter-book", "build", ".", "--all", "-W"] in runs')


def ci_pytest_commands(script: str) -> list[list[str]]:
    """The arguments of every ``python -m pytest`` that a shell script runs, one list per command."""
    commands = []
    for line in script.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for tail in line.split("-m pytest")[1:]:
            commands.append(shlex.split(re.split(r"&&|\|\||;|\|", tail)[0]))
    return commands


def key(item: pytest.Item) -> str:
    """A test's identity across collections: its node id, a parametrized one by its parameters' indices.

    (A second collection in one process escapes an id's backslashes again, so ids alone would differ.)
    """
    spec = getattr(item, "callspec", None)
    return f"{item.nodeid.split('[')[0]}{sorted(spec.indices.items())}" if spec else item.nodeid


class _Collected:
    """A plugin that keeps the node ids a collection selects."""

    def __init__(self) -> None:
        self.items: list[pytest.Item] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)


def collect(args: list[str]) -> list[pytest.Item]:
    """The items ``python -m pytest ARGS`` selects from the repository's root (collected, never run)."""
    plugin = _Collected()
    code = pytest.main(
        [*args, "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT)], plugins=[plugin]
    )
    assert code in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), f"collecting {args} failed: {code!r}"
    return plugin.items


@pytest.fixture(scope="module")
def tiers() -> dict[str, list[pytest.Item]]:
    """Every test (no marker deselected), README's test command, and each pytest line of .ci/run."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        out = {"every test": collect(["-m", ""]), "README": collect([])}
        for args in ci_pytest_commands(CI.read_text(encoding="utf-8")):
            out[shlex.join(args) or "README"] = collect(args)
    finally:
        os.chdir(here)
    return out


def test_ci_script_parser_finds_each_pytest_command():
    script = "# .venv/bin/python -m pytest -m no\nA=1 .venv/bin/python -m pytest -m 'a or b' t.py && echo\nx && py -m pytest\n"
    assert ci_pytest_commands(script) == [["-m", "a or b", "t.py"], []]


@pytest.mark.slow  # collects every tier again (about 10 s)
def test_readme_command_plus_the_ci_lines_collect_every_test(tiers):
    every = {key(i) for i in tiers["every test"]}
    assert len(every) > 1000 and any(n.startswith("notebooks/") for n in every)  # nbval's cells are tests too
    covered = set().union(*({key(i) for i in items} for name, items in tiers.items() if name != "every test"))
    assert not every - covered, (
        f"tests that neither README's command nor .ci/run collects: {sorted(every - covered)[:20]}"
    )


@pytest.mark.slow  # collects every tier again (about 10 s)
def test_without_its_slow_line_ci_would_miss_the_end_to_end_tests(tiers):
    """The control: drop .ci/run's slow line and the coverage check has something to report."""
    rest = set().union(
        *({key(i) for i in items} for name, items in tiers.items() if name != "every test" and "-m slow" not in name)
    )
    assert "tests/test_own_experiment.py::test_own_experiment_folder_from_dataset_to_book" not in rest


@pytest.mark.slow  # collects every tier again (about 10 s)
def test_ci_runs_readmes_command_and_the_slow_and_browser_tiers_on_lines_of_their_own(tiers):
    lines = [name for name in tiers if name != "every test"]
    assert "README" in lines
    assert any(" -m slow" in f" {name}" for name in lines) and any(" -m browser" in f" {name}" for name in lines)


@pytest.mark.slow  # collects every tier again (about 10 s)
def test_the_default_tier_has_no_slow_or_browser_test_and_runs_the_notebooks(tiers):
    marked = [(i.nodeid, m) for i in tiers["README"] for m in ("slow", "browser") if i.get_closest_marker(m)]
    assert not marked
    assert {i.nodeid.split("::")[0] for i in tiers["README"] if i.nodeid.startswith("notebooks/")} == {
        f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")
    }


@functools.cache
def _reaches_a_build(func: FunctionType, depth: int = 3) -> bool:
    """Whether a test's function, or a function of the tests it calls by name (``depth`` deep), builds a book."""
    file = func.__code__.co_filename
    if not file.startswith(str(ROOT / "tests")) or file == __file__:  # this file's strings are the check's examples
        return False
    if builds(inspect.getsource(func)):
        return True
    called = (func.__globals__.get(name) for name in func.__code__.co_names)
    return depth > 0 and any(_reaches_a_build(g, depth - 1) for g in called if isinstance(g, FunctionType))


def builds_a_book(item: pytest.Item) -> bool:
    """Whether a test, or a fixture it uses, builds a book (nbval's cells never do)."""
    fixtures = getattr(item, "_fixtureinfo", None)
    funcs = [getattr(item, "function", None)] + [
        d.func for defs in (fixtures.name2fixturedefs.values() if fixtures else ()) for d in defs
    ]
    return any(_reaches_a_build(f) for f in funcs if isinstance(f, FunctionType))


@pytest.mark.slow  # collects every tier again (about 10 s)
def test_no_test_of_the_default_tier_builds_a_book(tiers):
    builds = sorted({i.nodeid for i in tiers["README"] if builds_a_book(i)})
    assert not builds, f"tests that build a book outside the slow tier (mark them slow): {builds}"


@pytest.mark.slow  # collects every tier again (about 10 s)
def test_the_book_build_check_finds_the_tests_that_build_the_book(tiers):
    """The control: the checker sees the book builds of the slow tier (and so could see one elsewhere)."""
    slow = {i.nodeid for i in tiers["every test"] if i.get_closest_marker("slow") and builds_a_book(i)}
    assert "tests/test_own_experiment.py::test_own_experiment_folder_from_dataset_to_book" in slow
    assert "tests/test_inspect_tasks.py::test_the_book_builds_on_an_imported_folder" in slow


def test_the_guide_and_the_publishing_workflow_run_the_slow_tier_as_ci_does():
    slow = next(ln.strip() for ln in CI.read_text(encoding="utf-8").splitlines() if "-m slow" in ln and "#" not in ln)
    assert slow.startswith(".venv/bin/python -m pytest ")
    assert slow in (ROOT / "book" / "guide" / "tests.md").read_text(encoding="utf-8")
    assert slow in (ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
