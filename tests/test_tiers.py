"""The test tiers lose nothing: the task runner's tier lines together select every test once collected.

The tiers are the pytest lines of the Makefile's ``test``, ``slow``, ``browser`` and ``rerun`` targets
(``.ci/run`` is ``make ci``); README's test command is the ``test`` line. Nothing is collected a second
time: tests/conftest.py keeps what this session collected before any marker deselected it, and when this
session is the fast tier over the whole tree (README's command), the checks read every test from there,
each tier's selection computed from its marker expression and paths. Run alone they are skipped, saying so.
"""

from __future__ import annotations

import functools
import inspect
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import FunctionType

import pytest
from tier_collection import COLLECTED

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = ROOT / "Makefile"
CI = ROOT / ".ci" / "run"
TIERS = ("test", "slow", "browser", "rerun")
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


@dataclass(frozen=True)
class Tier:
    """What one pytest line selects: a marker expression over the paths it names, with or without nbval."""

    name: str
    line: str
    markexpr: str
    paths: tuple[str, ...]
    nbval: bool

    def selects(self, nodeid: str, markers: set[str]) -> bool:
        path = nodeid.split("::")[0]
        if not any(path == p or path.startswith(p.rstrip("/") + "/") for p in self.paths):
            return False
        if path.endswith(".ipynb") and not self.nbval:
            return False
        return marker_expression(self.markexpr, markers)


def marker_expression(expr: str, markers: set[str]) -> bool:
    """pytest's ``-m`` grammar (names joined by ``and``, ``or``, ``not`` and parentheses) on a test's markers."""
    words = re.findall(r"\(|\)|[\w.-]+", expr)
    assert "".join(words) == re.sub(r"\s+", "", expr), f"not a marker expression: {expr!r}"
    python = " ".join(w if w in ("and", "or", "not", "(", ")") else str(w in markers) for w in words)
    return bool(eval(python or "True", {"__builtins__": {}}))  # only True, False and the three operators


def test_marker_expressions_read_as_pytest_reads_them():
    assert marker_expression("not slow and not browser", {"llm"})
    assert not marker_expression("not slow and not browser", {"slow"})
    assert marker_expression("slow or (browser and not rerun)", {"browser"})
    assert marker_expression("", {"slow"})


def makefile_lines() -> dict[str, str]:
    """Each target's pytest line (its arguments after ``-m pytest``), by target."""
    lines, target = {}, None
    for line in MAKEFILE.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^([\w-]+):", line):
            target = m.group(1)
        elif line.startswith("\t") and " -m pytest" in line and target:
            lines[target] = line.split(" -m pytest", 1)[1].strip()
    return lines


def tier(name: str, args: str) -> Tier:
    """The selection of ``python -m pytest ARGS`` from the repository's root, pyproject's addopts included unless cleared."""
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    words = shlex.split(args)
    if "addopts=" not in words and "addopts=" not in args.replace('""', ""):
        words = shlex.split(ini["addopts"]) + words
    markexpr, paths, nbval, i = "", [], False, 0
    with_value = {"-m", "-p", "-o", "-n", "--dist", "--nbval-sanitize-with", "-k"}
    while i < len(words):
        w = words[i]
        if w in with_value:
            if w == "-m":
                markexpr = words[i + 1]
            if w == "-p" and words[i + 1] == "no:nbval":
                nbval = False
            i += 2
            continue
        if w == "--nbval":
            nbval = True
        elif not w.startswith("-"):
            paths.append(w)
        i += 1
    return Tier(name, args, markexpr, tuple(paths or ini["testpaths"]), nbval)


def tiers() -> list[Tier]:
    lines = makefile_lines()
    assert set(TIERS) <= set(lines), f"the Makefile has no pytest line for {set(TIERS) - set(lines)}"
    return [tier(name, lines[name]) for name in TIERS]


def test_each_tier_reads_as_the_selection_it_makes():
    by = {t.name: t for t in tiers()}
    assert by["test"].nbval and by["test"].paths == ("notebooks", "tests")
    assert by["test"].markexpr == "not slow and not browser"
    assert by["slow"].markexpr == "slow" and not by["slow"].nbval and by["slow"].paths == ("tests",)
    assert by["browser"].markexpr == "browser" and by["rerun"].markexpr == "rerun"


def test_readme_ci_and_the_publishing_workflow_run_the_task_runners_tiers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fast = makefile_lines()["test"].replace("$(WORKERS)", "auto")
    assert f".venv/bin/python -m pytest {fast}" in readme
    assert re.search(r"^make ci\b", CI.read_text(encoding="utf-8"), re.M)
    flow = (ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
    for target in ("install", "test", "lint", "types", "slow", "book"):
        assert re.search(rf"run: (make \w+ && )?make {target}\b", flow), f"the workflow does not run `make {target}`"
    guide = (ROOT / "book" / "guide" / "tests.md").read_text(encoding="utf-8")
    for target in TIERS:
        assert f"make {target}" in guide, f"the guide's tests page does not name `make {target}`"


@pytest.fixture(scope="module")
def collected(request) -> list[pytest.Item]:
    """Every test this session collected, before any marker deselected it, when the session is the fast tier
    over the whole tree; otherwise the checks are skipped (run README's test command)."""
    items = request.config.stash.get(COLLECTED, [])
    whole = {i.nodeid.split("::")[0].split("/")[0] for i in items} >= {"tests", "notebooks"}
    if not whole or len(items) < 1000:
        pytest.skip("reads the whole collection: run README's test command (the fast tier over tests and notebooks)")
    return items


def markers(item: pytest.Item) -> set[str]:
    return {m.name for m in item.iter_markers()}


def test_the_tiers_together_select_every_test(collected):
    ts = tiers()
    missed = [i.nodeid for i in collected if not any(t.selects(i.nodeid, markers(i)) for t in ts)]
    assert not missed, f"tests that no tier of the Makefile selects: {missed[:20]}"


def test_without_its_slow_line_the_runner_would_miss_the_end_to_end_tests(collected):
    """The control: drop the slow tier and the coverage check has something to report."""
    rest = [t for t in tiers() if t.name != "slow"]
    missed = [i for i in collected if not any(t.selects(i.nodeid, markers(i)) for t in rest)]
    assert any("slow" in markers(i) for i in missed)


def test_the_fast_tier_has_no_slow_or_browser_test_and_runs_every_notebook(collected):
    fast = next(t for t in tiers() if t.name == "test")
    chosen = [i for i in collected if fast.selects(i.nodeid, markers(i))]
    assert not [i.nodeid for i in chosen if markers(i) & {"slow", "browser"}]
    assert {i.nodeid.split("::")[0] for i in chosen if i.nodeid.startswith("notebooks/")} == {
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


def test_no_test_of_the_fast_tier_builds_a_book(collected):
    fast = next(t for t in tiers() if t.name == "test")
    builds = sorted({i.nodeid for i in collected if fast.selects(i.nodeid, markers(i)) and builds_a_book(i)})
    assert not builds, f"tests that build a book outside the slow tier (mark them slow): {builds}"


def test_the_book_build_check_finds_the_tests_that_build_the_book(collected):
    """The control: the checker sees the book builds of the slow tier (and so could see one elsewhere)."""
    slow = {i.nodeid for i in collected if i.get_closest_marker("slow") and builds_a_book(i)}
    assert (
        "tests/test_book_code_key.py::test_an_edit_executes_exactly_the_chapters_that_import_the_edited_module" in slow
    )
    assert any(n.startswith("tests/test_book_parallel.py::") for n in slow)
