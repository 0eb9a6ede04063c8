"""The book's guarantees: paired notebooks agree, execution is deterministic, drift fails nbval.

These pin the edition's reproducibility claims (book/reproducibility.md): the .md a reader edits and
the .ipynb nbval checks hold the same cells; re-executing rewrites the same bytes; and changing one
label in a copy of the data makes nbval fail on the testbed notebook.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from trajectory_judge import load_trajectories, load_verdicts, write_jsonl
from trajectory_judge.book import paths
from trajectory_judge.book.building import execute_notebooks as execute
from trajectory_judge.provenance.manifest import write_manifest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))
MAX_CELL_LINES = 15


def _ids(paths):
    return [p.stem for p in paths]


@pytest.mark.parametrize("md", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_md_and_ipynb_hold_identical_cells(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} missing: run `python -m trajectory_judge.book execute {md.stem}`"
    src = jupytext.read(md, fmt="md:myst")
    executed = nbformat.read(ipynb, as_version=4)
    assert [(c.cell_type, c.source) for c in src.cells] == [(c.cell_type, c.source) for c in executed.cells], (
        f"{md.name} and {ipynb.name} differ: re-run `python -m trajectory_judge.book execute {md.stem}`"
    )


@pytest.mark.parametrize("md", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_paired_with_jupytext(md):
    nb = jupytext.read(md, fmt="md:myst")
    assert nb.metadata["jupytext"]["formats"] == execute.PAIRING
    assert nb.metadata["kernelspec"]["name"] == execute.KERNEL


def _only_imports(source: str) -> bool:
    """A cell of import statements only (its length is a list of names, not logic)."""
    tree = ast.parse(source)
    return bool(tree.body) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)


@pytest.mark.parametrize("md", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_no_code_cell_is_longer_than_fifteen_lines(md):
    nb = jupytext.read(md, fmt="md:myst")
    long = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and not _only_imports(c.source) and len(c.source.splitlines()) > MAX_CELL_LINES
    ]
    assert not long, f"{md.name}: code cells {long} exceed {MAX_CELL_LINES} lines; move the logic into the package"


# Spans of prose where digits are allowed: roles ({glue:text}`x:.3f`, {cite}`k2026`, {numref}`...`),
# inline code, labels, section references (§3), directive options, the metric name F1, and names
# that carry digits: model sizes (14B, 1.5B), sha256, Python 3.11.
_ALLOWED = re.compile(
    r"\{[\w:-]+\}`[^`]*`|`[^`]*`|^\(.*\)=$|§\s?\d+(\.\d+)*|^:\w+:.*$|\bF1\b|\b\d+(\.\d+)?B\b|\bsha256\b|Qwen\d(\.\d)?|Python 3\.\d+"
    r"|\b(Tables?|Figures?|Appendix|Appendices)\s[A-Z\d]+((\s(to|and)|–)\s?[A-Z\d]+)?",
    re.M,
)
_DIGIT = re.compile(r"\d")


def prose_digits(markdown: str) -> list[str]:
    """Lines of markdown prose that still contain a digit once the allowed spans are removed."""
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)  # fenced blocks and directives
    text = re.sub(r"^:::.*?^:::", "", text, flags=re.M | re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", "", text, flags=re.S)  # math
    return [ln for ln in _ALLOWED.sub("", text).splitlines() if _DIGIT.search(ln)]


def test_prose_digit_check_allows_glue_and_section_numbers_but_not_typed_numbers():
    assert prose_digits("See §3 and {glue:text}`f1:.3f` in {numref}`fig-2` {cite}`a2026`.\n(sec-1)=\n") == []
    assert prose_digits("Typing is scored as macro-F1.") == []
    assert prose_digits("Steps $s_0, \\dots, s_{T-1}$ and\n$$\nx_1\n$$\n") == []
    assert prose_digits("Recall was 0.84 on loud faults.") == ["Recall was 0.84 on loud faults."]
    assert prose_digits("```{code-cell}\nx = 400\n```\n") == []


@pytest.mark.parametrize("page", sorted((ROOT / "book").glob("*.md")), ids=lambda p: p.name)
def test_no_number_is_typed_in_the_prose_pages(page):
    bad = prose_digits(page.read_text(encoding="utf-8"))
    assert not bad, f"book/{page.name}: numbers typed in prose (glue them from a notebook instead): {bad}"


@pytest.mark.parametrize("md", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_no_number_is_typed_in_notebook_prose(md):
    nb = jupytext.read(md, fmt="md:myst")
    bad = [ln for c in nb.cells if c.cell_type == "markdown" for ln in prose_digits(c.source)]
    assert not bad, f"{md.name}: numbers typed in prose (glue them instead): {bad}"


def test_data_dir_defaults_to_data_and_follows_tj_data(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.DATA_ENV, raising=False)
    assert paths.data_dir() == ROOT / "data"
    monkeypatch.setenv(paths.DATA_ENV, str(tmp_path))
    assert paths.data_dir() == tmp_path.resolve()
    monkeypatch.setenv(paths.DATA_ENV, "data")
    assert paths.data_dir() == ROOT / "data"


def test_data_dir_that_does_not_exist_is_an_error_naming_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match=r"nowhere does not exist \(set TJ_DATA"):
        paths.data_dir()


def test_unknown_notebook_name_is_an_error():
    with pytest.raises(FileNotFoundError, match="no notebook source"):
        execute.notebook_sources(["no-such-chapter"])


@pytest.mark.parametrize("md", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_the_committed_execution_is_of_the_committed_data_and_code_so_the_build_executes_nothing(md, tmp_path):
    """The build renders a committed notebook only when it records the digest of the data the build names,
    its code key holds (the package modules it imported are as they were) and it holds the code of its
    ``.md`` as myst-nb reads it; then jupyter-cache matches it, so the book's build on ``data/`` executes
    no chapter (a changed ``.md``, data file or imported module without ``execute`` fails here)."""
    from jupyter_cache import get_cache
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from tj_notebook_cache import with_outputs

    committed = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    digest = execute.data_digest(execute.data_folders(ROOT, ROOT / "data"))
    assert execute.recorded_digest(committed) == digest, (
        f"{md.name}: run python -m trajectory_judge.book execute {md.stem}"
    )
    key = execute.read_code_keys(md.parent).get(md.stem)
    assert key is not None and key.holds(ROOT), (
        f"{md.name}: a module it imports changed since it executed; run python -m trajectory_judge.book execute"
    )
    text = md.read_text(encoding="utf-8")
    read = create_nb_reader(str(md), MdParserConfig(), NbParserConfig(), text).read(text)
    merged = with_outputs(read, committed)
    assert merged is not None, f"{md.name}: its code differs from the committed execution's"
    cache = get_cache(str(tmp_path / "cache"))
    from jupyter_cache.base import CacheBundleIn

    record = cache.cache_notebook_bundle(CacheBundleIn(merged, str(md)), check_validity=False)
    assert cache.match_cache_notebook(read).pk == record.pk  # myst-nb's own match: a hit, nothing executed
    assert execute.recorded_records(committed).get("kernel.json"), "the records the pages need travel with it"


def test_the_data_digest_follows_the_contents_not_where_the_folders_are(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "v.jsonl").write_text("{}\n")
    assert execute.data_digest([("$TJ_DATA", a)]) == execute.data_digest([("$TJ_DATA", b)])
    (b / "sub" / "v.jsonl").write_text("{} \n")
    assert execute.data_digest([("$TJ_DATA", a)]) != execute.data_digest([("$TJ_DATA", b)])
    (b / "sub" / "v.jsonl").write_text("{}\n")
    (b / "sub" / "w.jsonl").write_text("")  # a new file, even empty, is other data
    assert execute.data_digest([("$TJ_DATA", a)]) != execute.data_digest([("$TJ_DATA", b)])


@pytest.mark.slow  # executes a chapter in a kernel of its own
def test_execute_reports_a_failing_cell_briefly_and_keeps_the_old_ipynb(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    with open(data / "verdicts.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")  # any change breaks the checksum
    md = tmp_path / "paired.md"
    shutil.copy(ROOT / "notebooks" / "paired.md", md)
    (tmp_path / "paired.ipynb").write_text("old", encoding="utf-8")
    assert execute.main(["execute", str(md), "--data", str(data)]) == 1
    err = capsys.readouterr().err
    assert f"{md}: a cell failed" in err and "checksum mismatch" in err and len(err.splitlines()) <= 3
    assert (tmp_path / "paired.ipynb").read_text(encoding="utf-8") == "old"


def _nbval(notebook: Path, data: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, paths.DATA_ENV: str(data)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", str(notebook)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def data_copy(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("data")
    shutil.copytree(ROOT / "data", d, dirs_exist_ok=True)
    return d


@pytest.mark.slow  # nbval over a whole chapter in a subprocess
def test_drift_guard_one_flipped_verdict_fails_nbval(data_copy, tmp_path):
    """Flip one committed verdict (the rules judge now flags a wrong_tool mutant): nbval must fail.

    The manifest of the copy is rewritten, so what fails is the computed book, not the checksum.
    """
    drifted = tmp_path / "drifted"
    shutil.copytree(data_copy, drifted)
    trajs = {t.trajectory_id: t for t in load_trajectories(drifted / "trajectories.jsonl")}
    verdicts = load_verdicts(drifted / "verdicts.jsonl")
    victim = next(
        v
        for v in verdicts
        if v.judge_id == "programmatic" and trajs[v.trajectory_id].label.failure_type == "wrong_tool"
    )
    victim.faulty, victim.failure_type, victim.failure_step = True, "wrong_tool", 2
    write_jsonl(drifted / "verdicts.jsonl", verdicts)
    write_manifest(drifted)
    res = _nbval(ROOT / "notebooks" / "results.ipynb", drifted)
    assert res.returncode != 0, "nbval passed on drifted data: the book would not notice a changed verdict"
    # nbval's diff: '-' is the fresh run; the rules judge's wrong_tool recall moved off zero
    assert "Cell outputs differ" in res.stdout or "differ" in res.stdout, res.stdout[-3000:]


_GLUE_REF = re.compile(r"\{glue:[a-z]+\}`([^`]+)`")


def glued_names(ipynb: Path) -> set[str]:
    """Names glued by the executed notebook in cells that are rendered (a remove-cell drops its glue)."""
    nb = nbformat.read(ipynb, as_version=4)
    return {
        out.get("metadata", {}).get("scrapbook", {}).get("name")
        for cell in nb.cells
        if cell.cell_type == "code" and "remove-cell" not in cell.metadata.get("tags", [])
        for out in cell.get("outputs", [])
    } - {None}


def glue_references(md: Path) -> list[tuple[Path, str]]:
    """(executed notebook, key) for every glue role in ``md``; ``path::key`` points at another page."""
    refs = []
    for ref in _GLUE_REF.findall(md.read_text(encoding="utf-8")):
        path, _, key = ref.rpartition("::")
        target = (md.parent / path).with_suffix(".ipynb") if path else md.with_suffix(".ipynb")
        refs.append((target.resolve(), key.split(":")[0]))
    return refs


@pytest.mark.parametrize("page", [*NOTEBOOKS, *sorted((ROOT / "book").glob("*.md"))], ids=lambda p: p.name)
def test_every_glue_reference_resolves_to_a_rendered_glue(page):
    """myst-nb renders an unresolvable cross-page glue as empty text without a warning: catch it here."""
    missing = [(t.name, k) for t, k in glue_references(page) if not t.exists() or k not in glued_names(t)]
    assert not missing, f"{page.name}: glue references with nothing rendered behind them: {missing}"


_TEXT_GLUE = re.compile(r"\{glue:text\}`([^`]+)`")


@pytest.mark.parametrize("page", sorted((ROOT / "book").glob("*.md")), ids=lambda p: p.name)
def test_a_text_glue_from_another_page_names_its_format(page):
    """myst-nb splits a text glue's format off at its last ``:``, so ``path::key`` without a format is read as the
    key ``path:`` (a warning that fails the ``-W`` build): another page's key needs one, ``path::key:s``."""
    bare = [ref for ref in _TEXT_GLUE.findall(page.read_text(encoding="utf-8")) if ":" not in ref.rpartition("::")[2]]
    assert not bare, f"{page.name}: {bare}"


def test_book_reads_the_data_of_its_own_folder_not_of_the_installed_package(tmp_path, monkeypatch):
    # a second clone sharing this environment: its notebooks run inside it and must read its data
    clone = tmp_path / "clone"
    (clone / "notebooks").mkdir(parents=True)
    (clone / "data").mkdir()
    (clone / "_config.yml").write_text("title: x\n")
    monkeypatch.delenv(paths.DATA_ENV, raising=False)
    monkeypatch.chdir(clone / "notebooks")
    assert paths.data_dir() == (clone / "data").resolve()
    assert paths.repo_root() == clone.resolve()


def test_outside_any_book_the_data_directory_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv(paths.DATA_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="no _config.yml at or above"):
        paths.data_dir()


def _published_literals() -> set[str]:
    """Every number of ``published.py`` printed with three or more decimals, as typed there."""
    import ast

    tree = ast.parse((ROOT / "trajectory_judge" / "analysis" / "paper" / "published.py").read_text(encoding="utf-8"))
    floats = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)}
    return {f"{x:.3f}" for x in floats if len(repr(x).split(".")[1]) >= 3}


def test_no_published_number_is_typed_outside_published_py():
    """Chapters, pages and the book's helpers compute the paper's numbers; only published.py (read by the audit) types them."""
    literals = _published_literals()
    assert {"0.923", "0.766", "0.393", "0.036"} <= literals  # the check has something to find
    pattern = re.compile(r"(?<![\d.])(" + "|".join(re.escape(s) for s in sorted(literals)) + r")(?!\d)")
    sources = [
        *(ROOT / "trajectory_judge" / "book").glob("*.py"),
        *(ROOT / "notebooks").glob("*.md"),
        *(ROOT / "book").glob("*.md"),
    ]
    hits = [
        f"{p.relative_to(ROOT)}: {m.group(0)}"
        for p in sources
        if p.name != "published.py"
        for m in pattern.finditer(p.read_text(encoding="utf-8"))
    ]
    assert not hits, f"published numbers typed outside published.py: {hits}"


@pytest.mark.slow  # executes a chapter in a kernel of its own
def test_executing_a_chapter_prints_no_kernel_warning(tmp_path):
    # the kernel talks over private local sockets, so it has no unencrypted-TCP warning to print
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    shutil.copytree(ROOT / "data", tmp_path / "data")
    md = tmp_path / "tiny.md"
    head = (ROOT / "notebooks" / "seeds.md").read_text(encoding="utf-8").split("---", 2)
    md.write_text("---" + head[1] + "---\n\n# Tiny\n\n```{code-cell} ipython3\n1 + 1\n```\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "trajectory_judge.book", "execute", str(md)]
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "tiny.ipynb").exists()
    assert "WARNING" not in run.stderr and "TCP" not in run.stderr


def test_a_chapter_re_executed_on_new_code_replaces_its_cached_execution_of_the_old_code(tmp_path):
    """Re-executing a chapter after a change in a module it imports leaves its code cells as they were, so
    jupyter-cache still matches the older entry; the entry's code key, which no longer holds, tells them
    apart, and the build renders the newer committed outputs under the key beside them."""
    from jupyter_cache import get_cache
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from tj_notebook_cache import _cache, _cached_or_committed, with_outputs

    md = tmp_path / "metrics.md"
    shutil.copy(ROOT / "notebooks" / "metrics.md", md)
    data = execute.data_digest(execute.data_folders(ROOT, ROOT / "data"))
    text = md.read_text(encoding="utf-8")
    read = create_nb_reader(str(md), MdParserConfig(), NbParserConfig(), text).read(text)
    cache = get_cache(str(tmp_path / "cache"))
    old = nbformat.read(ROOT / "notebooks" / "metrics.ipynb", as_version=4)
    old_code = execute.CodeKey(("__init__.py",), "0" * 64)  # the package has changed since: it does not hold
    _cache(cache, with_outputs(read, old), md, "committed", None, old_code)
    newer = nbformat.read(ROOT / "notebooks" / "metrics.ipynb", as_version=4)
    cell = next(c for c in newer.cells if c.cell_type == "code" and c.outputs)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="re-executed\n")]
    nbformat.write(newer, md.with_suffix(".ipynb"))
    assert _cached_or_committed(cache, read, md, data, ROOT) is None  # no key beside the committed notebook
    execute.write_code_keys(tmp_path, {"metrics": execute.CodeKey.of(["__init__.py"], ROOT)})
    second = _cached_or_committed(cache, read, md, data, ROOT)
    assert second is not None
    shown = [o.get("text") for c in second[1].cells if c.cell_type == "code" for o in c.outputs]
    assert "re-executed\n" in shown
    assert _cached_or_committed(cache, read, md, data, ROOT)[0].pk == second[0].pk  # then the new entry is kept
    assert _cached_or_committed(cache, read, md, "other data", ROOT) is None  # shown on its own data only


@pytest.mark.parametrize("ipynb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_committed_output_is_a_python_repr(ipynb):
    """No output is an object's repr alone: an empty ``Markdown`` leaves nothing but its repr for the page to show."""
    nb = json.loads(ipynb.read_text())
    reprs = [
        text
        for cell in nb["cells"]
        for out in cell.get("outputs", [])
        if not any("".join(v).strip() for k, v in out.get("data", {}).items() if k != "text/plain")
        and re.fullmatch(
            r"<[\w.]+ object( at 0x[0-9a-f]+)?>", text := "".join(out.get("data", {}).get("text/plain", "")).strip()
        )
    ]
    assert not reprs, f"{ipynb.name} shows {reprs}"
