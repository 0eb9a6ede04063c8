"""README is a README and the guide is part of the book: every command they show exists, and no page
carries the project's history.

The commands are checked against the command lines' own ``--help`` (the truth about verbs and
options), produced in-process by each program's ``main``; no command is run.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as dt
import io
import json
import re
import shlex
import sys
from functools import cache
from pathlib import Path

import jupytext
import pytest
import yaml
from test_book import glue_references, glued_names, prose_digits

from trajectory_judge.book.chapters import appendix

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
GUIDE = ROOT / "book" / "guide"
GUIDE_PAGES = sorted(GUIDE.glob("*.md"))
CAPTION = "Using trajectory-judge"


# --- what the command lines say about themselves ----------------------------------------------------
def _cli_main(argv):
    from trajectory_judge.cli import main

    return main(argv)


def _book_main(argv):
    from trajectory_judge.book.building.execute_notebooks import main

    return main(argv)


def _serve_main(argv):
    from tools.serve import main

    return main(argv)


PROGRAMS = {
    "trajectory-judge": _cli_main,
    "trajectory_judge.cli": _cli_main,
    "trajectory_judge.book": _book_main,
    "tools/serve.py": _serve_main,
}
"""Each command line of the package, by how a command names it, and its ``main``."""

_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


@cache
def help_text(program: str, verb: str | None = None) -> str:
    """What ``PROGRAM [VERB] --help`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        PROGRAMS[program]([*([verb] if verb else []), "--help"])
    assert done.value.code == 0, (program, verb)
    return out.getvalue()


def verbs(program: str) -> set[str]:
    """The verbs (or actions) ``PROGRAM --help`` lists in its first ``{a,b,...}``."""
    listed = re.search(r"\{([\w,-]+)\}", help_text(program))
    assert listed, program
    return set(listed.group(1).split(","))


def options(program: str, verb: str | None) -> set[str]:
    """Every option ``PROGRAM [VERB] --help`` names (a program whose verbs are one positional
    argument, like the server recipe's actions, has one set of options for all of them)."""
    text = help_text(program, verb if verb and f"{program} {verb}" in help_text(program, verb) else None)
    return set(_OPTION.findall(text))


# --- the commands the pages show ------------------------------------------------------------------
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")
_CHAIN = re.compile(r"\s(?:&&|\|\||;|\|)\s")


def commands_in(markdown: str) -> list[str]:
    """Every shell command of ``markdown``: the lines of its ``bash`` blocks (continuations joined,
    chains split) and its inline code spans, those of the package's programs and all others."""
    found = []
    for lang, body in _FENCE.findall(markdown):
        if lang in ("bash", "sh", "shell", ""):
            for line in body.replace("\\\n", " ").splitlines():
                found.extend(part.strip() for part in _CHAIN.split(line) if part.strip())
    prose = _FENCE.sub("", markdown)
    found.extend(part.strip() for span in _SPAN.findall(prose) for part in _CHAIN.split(span))
    return found


def package_command(command: str) -> tuple[str, list[str]] | None:
    """``(program, arguments)`` when ``command`` runs one of the package's command lines, else None.
    Usage notation is read as a reader reads it: ``[--n N]`` is the option ``--n``, ``a|b`` one value."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value before the command
        words = words[1:]
    if not words:
        return None
    if Path(words[0]).name == "trajectory-judge":
        program, rest = "trajectory-judge", words[1:]
    elif re.fullmatch(r"python3?", Path(words[0]).name) and words[1:2] == ["-m"] and len(words) > 2:
        if words[2] not in PROGRAMS:
            return (words[2], []) if words[2].startswith("trajectory_judge") else None
        program, rest = words[2], words[3:]
    elif re.fullmatch(r"python3?", Path(words[0]).name) and words[1:2] and words[1] in PROGRAMS:  # python tools/X.py
        program, rest = words[1], words[2:]
    else:
        return None
    return program, [w.strip("[]") for w in rest if w.strip("[]") not in ("", "...", "…")]


def problems(program: str, args: list[str]) -> list[str]:
    """What a command names that its program does not have: a module, a verb, an option."""
    if program not in PROGRAMS:
        return [f"no command line {program}"]
    verb = args[0] if args and not args[0].startswith("-") else None
    if verb is not None and re.fullmatch(r"[A-Z][A-Z_]*:?", verb):  # a placeholder (`trajectory-judge VERB --help`)
        verb = None
    if verb is not None and verb not in verbs(program):
        return [f"{program} has no verb {verb!r}"]
    have = options(program, verb)
    named = {w.split("=")[0] for w in args if w.startswith("-") and not re.fullmatch(r"-\d.*", w)}
    return [f"{program} {verb or ''}: no option {o}".replace("  ", " ") for o in sorted(named - have)]


def page_commands(page: Path) -> list[tuple[str, list[str]]]:
    return [c for c in map(package_command, commands_in(page.read_text(encoding="utf-8"))) if c]


@pytest.mark.parametrize("page", [README, CONTRIBUTING, *GUIDE_PAGES], ids=lambda p: p.name)
def test_every_command_on_the_page_names_a_verb_and_options_its_command_line_has(page):
    bad = [f"{' '.join([p, *a])}: {m}" for p, a in page_commands(page) for m in problems(p, a)]
    assert not bad, f"{page.relative_to(ROOT)}: " + "; ".join(bad)


def test_the_command_check_catches_an_unknown_verb_option_or_module():
    text = (
        "```bash\ntrajectory-judge report --data mine/ --bogus 3\n```\n"
        "Then `trajectory-judge judge-all --data x` and `python -m trajectory_judge.nowhere go`, "
        "and `TJ_DATA=mine trajectory-judge run --data d --model m [--concurency N]`.\n"
    )
    found = [m for c in commands_in(text) if (pc := package_command(c)) for m in problems(*pc)]
    assert found == [
        "trajectory-judge report: no option --bogus",
        "trajectory-judge has no verb 'judge-all'",
        "no command line trajectory_judge.nowhere",
        "trajectory-judge run: no option --concurency",
    ]


def test_the_command_check_reads_usage_notation_and_real_commands_alike():
    assert package_command("trajectory-judge build-dataset [--n N] [--seed SEED] [--out DIR] [--force]") == (
        "trajectory-judge",
        ["build-dataset", "--n", "N", "--seed", "SEED", "--out", "DIR", "--force"],
    )
    assert package_command(".venv/bin/python -m trajectory_judge.book execute results") == (
        "trajectory_judge.book",
        ["execute", "results"],
    )
    assert package_command("inspect eval trajectory_judge/step_judge -T limit=40") is None
    assert commands_in("```bash\npython -m trajectory_judge.book execute && git diff --stat notebooks/\n```\n") == [
        "python -m trajectory_judge.book execute",
        "git diff --stat notebooks/",
    ]


def test_the_command_line_page_shows_every_verb_of_every_command_line():
    shown: dict[str, set[str]] = {}
    for program, args in page_commands(GUIDE / "cli.md") + page_commands(GUIDE / "local-server.md"):
        shown.setdefault(program, set()).update(args[:1])
    for program in ("trajectory-judge", "trajectory_judge.book"):
        assert verbs(program) <= shown.get(program, set()), (program, verbs(program) - shown.get(program, set()))
    assert "--version" in shown["trajectory-judge"]
    # the server recipe's actions: each shown as a command or named in the page's prose
    text = (GUIDE / "local-server.md").read_text(encoding="utf-8")
    assert all(f"`{action}`" in text or action in shown["tools/serve.py"] for action in verbs("tools/serve.py"))


def test_the_inspect_page_runs_tasks_the_package_defines_with_options_they_take():
    import inspect

    from trajectory_judge.inspect_tasks import tasks

    text = (GUIDE / "inspect.md").read_text(encoding="utf-8")
    defined = {"outcome_judge", "step_judge", "reply_judge", "selfcons_judge"}
    assert set(re.findall(r"^\| `(\w+)` \|", text, re.MULTILINE)) == defined  # the page's table of tasks
    runs = re.findall(r"inspect eval trajectory_judge/(\w+)(.*)", text)
    assert runs and {name for name, _ in runs} <= defined
    for name, rest in runs:
        params = set(inspect.signature(getattr(tasks, name)).parameters)
        assert set(re.findall(r"-T (\w+)=", rest)) <= params, (name, params)


# --- README -----------------------------------------------------------------------------------------
def test_readme_is_at_most_150_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_readme_links_every_guide_page_and_the_book():
    text = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((book/guide/[\w-]+\.md)\)", text))
    assert linked == {str(p.relative_to(ROOT)) for p in GUIDE_PAGES}
    assert "https://trajectory-judge.github.io/trajectory-judge/" in text


# --- no history in the product --------------------------------------------------------------------
HISTORY = re.compile(
    r"\b[Ii]ssues?\s+#?\d+|(?<![\w&#/])#\d{1,4}\b|\bload average|\bthis (?:edition's )?machine\b"
    r"|\bcommit(?:ted)?\s+(?:at\s+)?[0-9a-f]{7,40}\b|\b(?:at|since|before|after)\s+(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
)
"""How history reads in prose: an issue number, a load average, talk of the machine it was measured
on, or a commit named by its hash."""


def test_the_history_pattern_finds_history_and_leaves_checksums_and_colours_alone():
    for text in (
        "Issue 28 asks for 40 s",
        "as #28 said",
        "load average 1.1",
        "on this machine",
        "at commit a771662",
        "measured at fbaa8e7",
        "this edition's machine",
    ):
        assert HISTORY.search(text), text
    for text in ("sha256 cc324af070c2ecbf", "colour #0072B2", "the issue of cost", "at 1400 px", "before 2026"):
        assert not HISTORY.search(text), text


def product_prose() -> list[tuple[str, str]]:
    """(where, text) for README, every page of the book, every notebook's markdown cells and every
    docstring of the package."""
    out = [(p.name, p.read_text(encoding="utf-8")) for p in (README, CONTRIBUTING)]
    for page in sorted((ROOT / "book").rglob("*.md")):
        out.append((str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")))
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        nb = jupytext.read(md, fmt="md:myst")
        out.extend((f"{md.name} cell {i}", c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    for py in sorted((ROOT / "trajectory_judge").rglob("*.py")):
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    out.append((f"{py.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc))
    return out


def test_readme_pages_notebooks_and_docstrings_carry_no_history():
    hits = [f"{where}: {m.group(0)!r}" for where, text in product_prose() for m in HISTORY.finditer(text)]
    assert not hits, "history belongs in CHANGELOG.md: " + "; ".join(hits)


def test_the_changelog_exists_and_the_readme_points_at_it_and_at_the_contributors_page():
    assert (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").startswith("# Changelog")
    assert "CHANGELOG.md" in README.read_text(encoding="utf-8")
    assert "(CONTRIBUTING.md)" in README.read_text(encoding="utf-8") and CONTRIBUTING.exists()


_VERSION = re.compile(r"## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})")
_MEASUREMENT = re.compile(r"\d[\d,.]*\s*(?:s|ms|min|MB|GB|CPU-s|px)\b|\d\s*%")
"""A figure with a unit of time, memory or size, or a share: what the benchmarks page holds, not the changelog."""


def changelog_problems(text: str) -> list[str]:
    """What keeps ``text`` from being a changelog in versions: *Unreleased* first, then released versions, latest
    first, each in sections of Keep a Changelog's kinds, one line per entry, and no measurement."""
    found, versions, section = [], [], None
    heads = [ln for ln in text.splitlines() if ln.startswith("## ")]
    if not heads or heads[0] != "## [Unreleased]":
        found.append("the first version is not '## [Unreleased]'")
    for line in text.splitlines():
        if line.startswith("## "):
            section = None
            if line != "## [Unreleased]":
                m = _VERSION.fullmatch(line)
                versions.append(tuple(map(int, m[1].split("."))) + (m[2],) if m else found.append(f"heading {line!r}"))
        elif line.startswith("### "):
            section = line[4:]
            if section not in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"):
                found.append(f"section {line!r}")
        elif section and line.strip() and not line.startswith("- "):
            found.append(f"an entry over more than one line: {line.strip()[:60]!r}")
        if section and _MEASUREMENT.search(line):
            found.append(f"a measurement: {line.strip()[:60]!r}")
    if versions != sorted(versions, reverse=True):
        found.append("versions not latest first")
    return found


def test_the_changelog_is_in_released_versions_with_one_line_per_change_and_no_measurement():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert not changelog_problems(text)
    assert len(_VERSION.findall(text)) >= 2 and "### Fixed" in text


def test_the_changelog_check_finds_a_wrapped_entry_a_measurement_and_a_version_out_of_order():
    good = "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-12-07\n\n### Added\n- A verb.\n"
    assert changelog_problems(good) == []
    assert changelog_problems(good + "  wrapped onto a second line.\n")[0].startswith("an entry over more")
    assert changelog_problems(good.replace("A verb.", "A build in 9.4 s."))[0].startswith("a measurement")
    assert "versions not latest first" in changelog_problems(good + "\n## [0.3.0] - 2026-12-08\n")
    assert changelog_problems(good.replace("## [Unreleased]\n\n", ""))[0].startswith("the first version")
    assert changelog_problems(good.replace("### Added", "### New"))[0].startswith("section")


# --- the guide is a part of the book --------------------------------------------------------------
def test_the_guide_is_one_part_of_the_book_holding_every_guide_page():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    part = [p for p in toc["parts"] if p["caption"] == CAPTION]
    assert len(part) == 1
    files = [c["file"] for c in part[0]["chapters"]]
    assert files == sorted(set(files), key=files.index)  # none twice
    assert set(files) == {str(p.relative_to(ROOT).with_suffix("")) for p in GUIDE_PAGES}
    elsewhere = [c["file"] for p in toc["parts"] if p["caption"] != CAPTION for c in p["chapters"]]
    assert not [f for f in elsewhere if f.startswith("book/guide/")]


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=lambda p: p.name)
def test_a_guide_page_has_a_label_a_title_and_no_typed_number_in_its_prose(page):
    text = page.read_text(encoding="utf-8")
    first, second = text.splitlines()[:2]
    assert first == f"(guide-{page.stem})=" and second.startswith("# "), page.name
    assert not prose_digits(text), f"{page.name}: numbers typed in prose: {prose_digits(text)}"


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=lambda p: p.name)
def test_every_glue_reference_of_a_guide_page_resolves(page):
    missing = [(t.name, k) for t, k in glue_references(page) if not t.exists() or k not in glued_names(t)]
    assert not missing


# --- the layout page --------------------------------------------------------------------------------
def test_the_layout_page_says_where_matplotlib_is_imported_and_names_every_room_of_the_analysis():
    importers = set()
    for py in (ROOT / "trajectory_judge").rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "matplotlib" for n in names):
                importers.add(py.relative_to(ROOT / "trajectory_judge").parts[:2])
    assert importers and importers <= {("book", "render"), ("book", "chapters")}, importers
    text = " ".join((GUIDE / "layout.md").read_text(encoding="utf-8").split())
    book_room = text[text.index("`book/` :") : text.index("`run/`")]  # the map's entry for the book
    assert "matplotlib" in book_room and "`book/render/`" in book_room and "chapter helpers" in book_room
    assert "matplotlib" not in text.replace(book_room, "")  # said once, where it is imported
    rooms = {p.name for p in (ROOT / "trajectory_judge" / "analysis").iterdir() if (p / "__init__.py").exists()}
    assert rooms == {"core", "statistics", "paper"} and all(f"`analysis/{r}`" in text for r in rooms)


# --- benchmarks: figures from the file the benchmark writes ---------------------------------------
@pytest.fixture(scope="module")
def bench_speed():
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    try:
        import bench_speed

        yield bench_speed
    finally:
        sys.path.remove(str(ROOT / "tests" / "benchmarks"))


def test_the_benchmarks_page_shows_every_figure_the_benchmark_measures(bench_speed):
    assert tuple(appendix.BENCHMARK_FIGURES) == bench_speed.FIGURES
    keys = {k for _, k in glue_references(GUIDE / "benchmarks.md")}
    assert keys == {f"bench_{f}" for f in bench_speed.FIGURES} | {f"bench_at_{k}" for k in appendix.scale_sentences()}
    text = (GUIDE / "benchmarks.md").read_text(encoding="utf-8")
    assert f"bench_speed.py {' '.join(bench_speed.FIGURES)} --runs 5 --write {appendix.BENCHMARKS}" in text


def test_a_figure_written_by_the_benchmark_is_the_sentence_the_page_shows(bench_speed, tmp_path):
    ours = bench_speed.Variant("ours", ["true"], tmp_path, {}, walls=[1.5, 1.216, 0.9], cpus=[0.61, 0.58, 0.6])
    (tmp_path / "book").mkdir()
    (tmp_path / "_config.yml").write_text("title: x\n")
    path = tmp_path / appendix.BENCHMARKS
    earlier = bench_speed.figure_record(
        "tests", bench_speed.Variant("t", [], tmp_path, {}, walls=[99.0], cpus=[90.0]), 1
    )
    path.write_text(json.dumps({"tests": earlier}))
    bench_speed.write_figures(path, {"report": bench_speed.figure_record("report", ours, 3)})
    written = json.loads(path.read_text())
    assert written["tests"] == earlier  # a figure not measured this time is kept
    assert written["report"]["wall_s"] == {"median": 1.22, "min": 0.9, "max": 1.5}
    sentences = appendix.benchmark_sentences(tmp_path)
    # each figure's median, range and CPU time, at the precision the page prints, and how many runs
    for number in ("1.22 s", "0.90\u20131.50 s", "0.60 s", "3 runs"):
        assert number in sentences["report"], number
    for number in ("99.0 s", "90.0 s", "one run"):
        assert number in sentences["tests"], number
    assert "not measured yet" in sentences["build"] and "not measured yet" not in sentences["report"]


def test_the_scale_figures_name_each_size_its_cpu_time_memory_and_the_version_paired_with_by_date_not_hash(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "_config.yml").write_text("title: x\n")
    assert all("not measured yet" in s for s in appendix.scale_sentences(tmp_path).values())
    row = {
        "n": 4000,
        "judges": 5,
        "runner_ms_per_verdict": 0.3012,
        "wall_s": 5.0,
        "cpu_s": 4.56,
        "rss_mb": 288,
        "rc": 0,
    }
    big = {**row, "n": 100_000, "cpu_s": 120.4, "rss_mb": 3100, "runner_ms_per_verdict": 0.33}
    before = {"wall_s": 6.0, "cpu_s": 5.46, "rss_mb": 569, "rc": 0, "same_output": True}
    label = "the version of 1 December 2026"
    scale = {"resamples": 10_000, "before": "abc1234", "before_label": label, "cpus": 2, "version": "0.1.0"}
    scale["sizes"] = [{**row, "before": before}, big]
    (tmp_path / appendix.BENCHMARKS).write_text(json.dumps({"scale": scale}))
    got = appendix.scale_sentences(tmp_path)
    for part in ("4,000 trajectories", "4.56 s", "1.14 ms", "288 MB", f"{label}: 5.46 s and 569 MB", "the same output"):
        assert part in got["scale"], part
    for part in ("100,000 trajectories", "120.4 s", "1.20 ms", "3,100 MB", "that version not run", "B = 10,000"):
        assert part in got["scale"], part
    assert "abc1234" not in got["scale"]
    assert "0.30 ms at 20,000" in got["runner"] and "0.33 ms at 500,000" in got["runner"]


def test_with_no_benchmark_file_every_figure_says_it_was_not_measured(tmp_path):
    (tmp_path / "_config.yml").write_text("title: x\n")
    sentences = appendix.benchmark_sentences(tmp_path)
    assert list(sentences) == list(appendix.BENCHMARK_FIGURES)
    assert all("not measured yet" in s and "None" not in s for s in sentences.values())


def test_a_benchmark_with_a_failed_run_is_not_written(bench_speed, tmp_path):
    ours = bench_speed.Variant("ours", ["false"], tmp_path, {}, walls=[1.0], cpus=[1.0], failures=["exit 1: boom"])
    with pytest.raises(ValueError, match="report: 1 of the runs failed"):
        bench_speed.figure_record("report", ours, 1)


# --- benchmarks: earlier measurements from their data file (book/_ext/tj_benchmarks.py) ----------------
@pytest.fixture(scope="module")
def tj_benchmarks():
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import tj_benchmarks

        yield tj_benchmarks
    finally:
        sys.path.remove(str(ROOT / "book" / "_ext"))


def test_the_benchmarks_page_renders_every_earlier_measurement_from_the_history_file_latest_day_first(tj_benchmarks):
    assert "\n{{ benchmark_history }}\n" in (GUIDE / "benchmarks.md").read_text(encoding="utf-8")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "tj_benchmarks" in config["sphinx"]["local_extensions"]
    entries = json.loads((ROOT / tj_benchmarks.HISTORY).read_text(encoding="utf-8"))["entries"]
    lines = tj_benchmarks.history_markdown(ROOT).splitlines()
    items = [ln for ln in lines if ln.startswith("- ")]
    latest_first = sorted(entries, key=lambda e: e["date"], reverse=True)  # a day's entries in the file's order
    assert len(items) == len(entries)
    for e, line in zip(latest_first, items):
        moved = tj_benchmarks.figure_text(e["after"], e["unit"])
        if "before" in e:
            moved = f"{tj_benchmarks.figure_text(e['before'], e['unit'])} to {moved}"
        assert line.startswith(f"- {e['what']}: {moved}."), line
    days = [ln for ln in lines if ln.startswith("**")]
    assert days == [
        f"**{int(d[8:])} {dt.date.fromisoformat(d):%B %Y}**" for d in sorted({e["date"] for e in entries})[::-1]
    ]
    assert tj_benchmarks.figure_text([122, 126], "s") == "122\u2013126 s"
    assert tj_benchmarks.figure_text(3474, "MB") == "3,474 MB"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"date": "2026-12-01", "what": "x", "unit": "s"}, r"entry 1 \(x\): no after"),
        ({"date": "1 December", "what": "x", "unit": "s", "after": 1}, r"entry 1 \(x\): Invalid isoformat"),
        ({"date": "2026-12-01", "what": "x", "unit": "s", "after": "fast"}, r"entry 1 \(x\): 'fast' is not a number"),
    ],
)
def test_a_history_entry_without_a_figure_or_with_a_bad_date_or_figure_is_an_error_naming_it(
    tj_benchmarks, tmp_path, entry, message
):
    (tmp_path / "book").mkdir()
    (tmp_path / tj_benchmarks.HISTORY).write_text(json.dumps({"entries": [entry]}), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        tj_benchmarks.history_markdown(tmp_path)


def test_the_folders_the_guide_writes_a_users_results_and_inspect_logs_to_are_ignored_by_git():
    import subprocess

    from repo_tree import ignored, is_checkout

    text = "\n".join(p.read_text(encoding="utf-8") for p in GUIDE_PAGES)
    assert "--out mine/" in text and "logs/*.eval" in text  # the names the guide uses
    for name in ("mine/verdicts.jsonl", "logs/x.eval"):
        assert ignored(ROOT, name), f"{name} is not ignored by .gitignore"
        if is_checkout(ROOT):  # git agrees with the reading of .gitignore that a copy without .git relies on
            r = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, capture_output=True, timeout=30)
            assert r.returncode == 0, f"git does not ignore {name}"
    assert not ignored(ROOT, "notebooks/results.md") and not ignored(ROOT, "data/trajectories.jsonl")


def test_readmes_first_command_builds_the_book_and_then_prints_its_pdf():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.findall(r"```bash\n(.*?)\n```", readme, re.S)[0]
    steps = [s.strip() for s in first.split("&&")]
    build = next(i for i, s in enumerate(steps) if s.startswith(".venv/bin/jupyter-book build"))
    assert steps[build + 1 :] == [".venv/bin/python book/_ext/tj_pdf.py"]  # the PDF, from the build just made
