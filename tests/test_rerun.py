"""Rerunning the book anywhere: the lock, Binder's plan, the Colab set-up cell, the publishing workflow.

The two end-to-end checks (``-m rerun``: a Binder-like install that reproduces every chapter, and a
chapter copied alone onto a Colab-like runtime) install whole environments; they run when
``TJ_RERUN_CHECKS=1`` (``.ci/run`` sets it) and are skipped, with that reason, otherwise.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import venv
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from trajectory_judge.book.building.execute_notebooks import is_colab_setup, name_repository, read_source
from trajectory_judge.book.building.hosting import colab_cell, hosting

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / ".ci" / "requirements.lock"
BOOK_LOCK = ROOT / ".ci" / "book.lock"
"""The book's lock: what Binder installs to read, execute and check the chapters."""
DEV_ONLY = {"ray", "mypy", "pytest-xdist", "ruff", "playwright", "uv", "inspect-ai", "jupyter-repo2docker"}
"""Tools of the development lock that the book's lock must not hold."""
RERUNNING = ROOT / "book" / "guide" / "rerunning.md"
"""The guide's page on rebuilding and rerunning the book: the lock, Binder, repo2docker."""
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
RERUN = pytest.mark.skipif(
    os.environ.get("TJ_RERUN_CHECKS") != "1", reason="installs whole environments: set TJ_RERUN_CHECKS=1 (.ci/run does)"
)


def locked(lock: Path = LOCK) -> dict[str, str]:
    """A lock's pins, by canonical name."""
    pins = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#", "-")):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def declared() -> list[Requirement]:
    """Every requirement of pyproject.toml: the package's own and those of its extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return [r for r in map(Requirement, reqs) if canonicalize_name(r.name) != "trajectory-judge"]


# --- the lock ----------------------------------------------------------------------------------
def test_lock_pins_every_declared_requirement_within_its_range():
    pins = locked()
    for req in declared():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in the lock"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"lock has {req.name}=={pins[name]}, pyproject says {req}"
        )


def test_this_environment_is_the_lock():
    """README's commands and CI install from the lock, so every locked version is the installed one."""
    wrong = {}
    for name, version in locked().items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have != version and name not in ("pip", "setuptools", "wheel"):
            wrong[name] = (version, have)
    assert not wrong, f"installed versions differ from the lock (locked, installed): {wrong}"
    check = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


def header(lock: Path) -> str:
    """The command a lock's header says made it."""
    return lock.read_text(encoding="utf-8").splitlines()[1].lstrip("# ").strip()


@pytest.mark.parametrize("lock", [LOCK, BOOK_LOCK], ids=["development", "book"])
def test_each_lock_says_the_command_that_makes_it_at_a_fixed_index_date_and_the_guide_gives_it(lock):
    command = header(lock)
    assert command.startswith("uv pip compile pyproject.toml") and "--python-version 3.11" in command
    assert re.search(r"--exclude-newer \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", command)  # a UTC instant, not a local date
    assert command.endswith(f"-o {lock.relative_to(ROOT)}")
    assert command in RERUNNING.read_text(encoding="utf-8")


def test_the_books_lock_is_the_development_locks_versions_without_its_tools():
    book, dev = locked(BOOK_LOCK), locked(LOCK)
    assert {"jupyter-book", "myst-nb", "pandas", "numpy", "nbval", "scikit-learn"} <= set(book)
    assert not DEV_ONLY & set(book), f"the book's lock holds development tools: {sorted(DEV_ONLY & set(book))}"
    assert {name: v for name, v in book.items() if dev.get(name) != v} == {}
    assert set(dev) >= DEV_ONLY  # the check has something to find


@RERUN
@pytest.mark.rerun
def test_both_locks_are_what_the_commands_in_their_headers_make_byte_for_byte(tmp_path):
    """The header's command, run as in a clone (the lock it writes already there), in a copy holding only
    what it reads: a lock that is not a resolution of pyproject.toml at the index's date, or whose text is
    not uv's, comes back different."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    (tmp_path / ".ci").mkdir()
    for lock in (LOCK, BOOK_LOCK):
        shutil.copy(lock, tmp_path / lock.relative_to(ROOT))
    uv = Path(sys.executable).with_name("uv")
    for lock in (LOCK, BOOK_LOCK):  # the book's lock is compiled under the development lock's versions
        run = subprocess.run(
            [str(uv), *shlex.split(header(lock))[1:], "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr[-3000:]
        made = tmp_path / lock.relative_to(ROOT)
        assert made.read_bytes() == lock.read_bytes(), f"{lock.name} is not what its header's command makes"


def test_readme_installs_from_the_lock():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = re.findall(r"pip install [^\n&]*", readme)
    book = [line for line in installs if '-e ".[dev]"' in line]
    assert book and all("-r .ci/requirements.lock" in line for line in book)
    assert "-r .ci/requirements.lock" in (ROOT / "Makefile").read_text(encoding="utf-8")  # make install, which CI runs


# --- Binder ------------------------------------------------------------------------------------
def binder_pip_lines() -> list[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    return next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))


def test_binder_installs_from_the_lock_after_copying_the_repository():
    assert binder_pip_lines()[0] == "-r .ci/book.lock"
    r2d = Path(sys.executable).with_name("repo2docker")
    plan = subprocess.run(
        [str(r2d), "--no-build", "--debug", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    out = plan.stdout + plan.stderr
    assert plan.returncode == 0, out[-2000:]
    copy = (
        out.find("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
        if "COPY --chown=1000:1000 src/" in out
        else out.find("src/ ${REPO_DIR}/")
    )
    update = out.find('env update -p ${NB_PYTHON_PREFIX} --file "environment.yml"')
    assert copy != -1 and update != -1, out[-2000:]
    assert copy < update, "repo2docker installs environment.yml before it copies the repository"


def guide_repo2docker_commands() -> list[list[str]]:
    """Every repo2docker command of the guide's ``bash`` blocks on rerunning, as its arguments (comments dropped)."""
    page = RERUNNING.read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", page, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if "repo2docker" not in line:
                continue
            words = shlex.split(line, comments=True)
            if words and Path(words[0]).name in ("repo2docker", "jupyter-repo2docker"):
                commands.append(words[1:])
    return commands


def repo2docker_help() -> str:
    r2d = Path(sys.executable).with_name("jupyter-repo2docker")
    done = subprocess.run([str(r2d), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def unlisted_options(argv: list[str], help_text: str) -> list[str]:
    """The options of a repo2docker command, before its repository (what follows the repository is the
    command run in the image), that ``repo2docker --help`` does not list by their full name
    (argparse would take an abbreviation; a later repo2docker need not)."""
    from repo2docker.__main__ import get_argparser

    args = get_argparser().parse_args(argv)
    options = argv[: len(argv) - len(args.cmd) - 1]
    assert argv[len(options)] == args.repo, argv
    listed = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", help_text))
    return [w.split("=")[0] for w in options if w.startswith("-") and w.split("=")[0] not in listed]


def test_guide_repo2docker_commands_use_only_options_repo2docker_has(monkeypatch):
    """The guide's commands that build and run Binder's image locally are not run by the tests (no
    Docker), but each uses only options the installed repo2docker lists, and repo2docker accepts the
    whole command."""
    from repo2docker.__main__ import make_r2d

    commands = guide_repo2docker_commands()
    assert ["--no-build", "--debug", "."] in commands and len(commands) >= 4, commands
    help_text = repo2docker_help()
    monkeypatch.chdir(ROOT)  # --editable needs the repository to be a folder from here
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # repo2docker refuses to run a container as root
    for argv in commands:
        assert unlisted_options(argv, help_text) == [], argv
        r2d = make_r2d(argv)
        assert r2d.repo == "." and (r2d.dry_run or r2d.output_image_spec == "trajectory-judge-binder"), argv
    runs = [make_r2d(argv).run_cmd for argv in commands]
    assert ["python", "-m", "pytest", "-q", "notebooks/results.ipynb"] in runs
    assert ["jupyter-book", "build", ".", "--all", "-W"] in runs


def test_an_option_repo2docker_does_not_list_is_caught():
    help_text = repo2docker_help()
    assert unlisted_options(["--image", "x", "."], help_text) == ["--image"]  # argparse accepts the abbreviation
    assert unlisted_options(["--no-build", ".", "pytest", "--bogus"], help_text) == []  # the command's own options


# --- Colab -------------------------------------------------------------------------------------
def test_every_chapter_opens_with_the_colab_setup_for_the_configured_repository():
    cell = colab_cell(hosting(ROOT))
    source = cell.split("\n\n", 1)[1].removesuffix("```\n").rstrip("\n")
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        first = next(c for c in read_source(md).cells if c.cell_type == "code")
        assert first.source == source and first.metadata["tags"] == ["remove-cell"], md.name
        nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
        first = next(c for c in nb.cells if c.cell_type == "code")
        assert is_colab_setup(first) and first.source == source and first.outputs == [], md.with_suffix(".ipynb").name


def test_readme_badges_open_the_configured_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    where = hosting(ROOT)
    assert f"(https://mybinder.org/badge_logo.svg)]({where.binder()})" in readme
    assert f"(https://colab.research.google.com/assets/colab-badge.svg)]({where.colab()})" in readme


def test_colab_setup_does_nothing_and_prints_nothing_outside_colab(tmp_path):
    code = next(c for c in read_source(ROOT / "notebooks" / "results.md").cells if c.cell_type == "code").source
    run = subprocess.run(
        [sys.executable, "-c", code + "\nprint(os.getcwd())"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and run.stderr == "" and run.stdout == f"{tmp_path}\n"
    assert list(tmp_path.iterdir()) == []


def mini_book(root: Path) -> Path:
    """A copy of the book's config and two chapters, to rename."""
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    shutil.copy(ROOT / "README.md", root / "README.md")
    for name in ("testbed.md", "testbed.ipynb", "metrics.md", "metrics.ipynb"):
        shutil.copy(ROOT / "notebooks" / name, root / "notebooks" / name)
    return root


def test_one_command_renames_the_hosting_repository_everywhere(tmp_path):
    book = mini_book(tmp_path)
    written = name_repository("https://github.com/someone/fork.git/", "trunk", book=book)
    assert sorted(p.name for p in written) == [
        "README.md",
        "_config.yml",
        "metrics.ipynb",
        "metrics.md",
        "testbed.ipynb",
        "testbed.md",
    ]
    readme = (book / "README.md").read_text(encoding="utf-8")
    assert "https://mybinder.org/v2/gh/someone/fork/trunk?" in readme and "/github/someone/fork/blob/trunk/" in readme
    assert (hosting(book).url, hosting(book).branch) == ("https://github.com/someone/fork", "trunk")
    for name in ("testbed", "metrics"):
        text = (book / "notebooks" / f"{name}.md").read_text(encoding="utf-8")
        assert (
            text.count("# Colab set-up") == 1
            and '"https://github.com/someone/fork")' in text
            and '"-b", "trunk"' in text
        )
        nb = nbformat.read(book / "notebooks" / f"{name}.ipynb", as_version=4)
        assert '"https://github.com/someone/fork")' in nb.cells[0].source
        assert nb.cells[1:] == nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).cells[1:]
    assert name_repository("https://github.com/someone/fork", "trunk", book=book) == []


def test_config_verb_rejects_a_branch_that_is_not_a_branch_name(capsys, tmp_path, monkeypatch):
    from trajectory_judge.book.building.execute_notebooks import main

    monkeypatch.chdir(mini_book(tmp_path))
    assert main(["config", "--repository", "https://github.com/a/b", "--branch=no branch"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "trajectory-judge book config: error: --branch 'no branch': expected a git branch name such as main"
    )
    assert hosting(tmp_path).url == hosting(ROOT).url  # nothing was rewritten


# --- the publishing workflow ------------------------------------------------------------------
def test_publishing_workflow_tests_and_builds_before_it_deploys_from_the_default_branch():
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = flow["jobs"]["build"]["steps"]
    uses = {s["uses"].split("@")[0]: int(s["uses"].split("@v")[1]) for s in steps if "uses" in s}
    assert uses["actions/checkout"] >= 5 and uses["actions/setup-python"] >= 6  # Node 24 runners
    runs = [s.get("run", "").strip() for s in steps]
    install, test, build = runs.index("make install"), runs.index("make test"), runs.index("make book")
    assert install < test < build
    assert "github.event.repository.default_branch" in flow["jobs"]["deploy"]["if"]
    assert flow["jobs"]["deploy"]["needs"] == "build"


# --- end to end, as a reader takes each path ------------------------------------------------------
def record(step: str, seconds: float) -> None:
    """Keep a measured time in ``$TJ_RERUN_TIMES`` (a JSON object), when that is set: the
    reproducibility chapter quotes the committed ``book/rerun-times.json``."""
    path = os.environ.get("TJ_RERUN_TIMES")
    if path:
        times = json.loads(Path(path).read_text()) if Path(path).exists() else {}
        times[step] = round(seconds, 1)
        Path(path).write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")


def fresh_venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    return where / "bin" / "python"


def pip(python: Path, *args: str, cwd: Path = ROOT) -> None:
    run = subprocess.run(
        # --no-compile: the install is what is proven, not bytecode (the chapters' kernels compile what they import)
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert run.returncode == 0, run.stderr[-3000:]


def uv_pip(python: Path, *args: str, cwd: Path = ROOT) -> None:
    """``uv pip install`` into ``python``'s environment: the lock's exact pins, each checked against its
    dependencies as pip checks them, from uv's cache (a lock of pinned versions installs the same files either
    way; uv links them where pip would unpack every wheel again)."""
    uv = Path(sys.executable).with_name("uv")
    run = subprocess.run(
        [str(uv), "pip", "install", "-q", "--python", str(python), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert run.returncode == 0, run.stderr[-3000:]


@RERUN
@pytest.mark.rerun
def test_binder_like_install_reproduces_a_sample_of_chapters(tmp_path):
    """environment.yml's pip section, installed from the repository root as repo2docker does (its pins installed by
    uv, then ``pip check``), then nbval over a sample of chapters executed from notebooks/ against their committed
    outputs. The install is what this proves; every chapter is checked by nbval in README's test command, in the
    development lock's environment, whose versions are the book lock's."""
    start = time.monotonic()
    python = fresh_venv(tmp_path / "binder")
    uv_pip(python, *[a for line in binder_pip_lines() for a in line.split(None, 1)])
    record("binder_install_s", time.monotonic() - start)
    check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr  # what pip would have refused, uv installed nothing of
    # Binder installs into the environment that runs its Jupyter server: the lock must leave that server whole
    pip(python, "--dry-run", "-c", str(BOOK_LOCK), *binder_server())
    start = time.monotonic()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TJ_DATA", "TJ_PAPER_DATA", "VIRTUAL_ENV"))}
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *BINDER_SAMPLE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stdout[-4000:]
    assert re.search(r"\d+ passed", run.stdout) and " failed" not in run.stdout
    assert not (DEV_ONLY & {canonicalize_name(n) for n in _installed(python)}), (
        "Binder's environment holds development tools"
    )
    record("binder_nbval_s", time.monotonic() - start)


BINDER_SAMPLE = ("notebooks/statistics.ipynb",)
"""The chapter the Binder-like install checks: the one that needs the statistics extra (the Colab check executes the
headline chapter, and README's test command every chapter in the same versions)."""


def _installed(python: Path) -> list[str]:
    done = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True, timeout=120
    )
    return [line.split("==")[0] for line in done.stdout.splitlines() if "==" in line]


def binder_server() -> list[str]:
    """The Jupyter server packages of repo2docker's own Python 3.11 image, at the versions of its lock."""
    import repo2docker

    lock = Path(repo2docker.__file__).parent / "buildpacks" / "conda" / "environment.py-3.11-linux-64.lock"
    found = dict(re.findall(r"/(jupyterlab|jupyter_server|notebook|jupyterhub-base)-([0-9][^-]*)-", lock.read_text()))
    assert set(found) == {"jupyterlab", "jupyter_server", "notebook", "jupyterhub-base"}, found
    return [f"{name.removesuffix('-base')}=={version}" for name, version in sorted(found.items())]


COLAB_STAND_IN = '"""A stand-in for Colab\'s module, imported at kernel start as Colab does."""\n'


@RERUN
@pytest.mark.rerun
def test_a_chapter_copied_alone_runs_top_to_bottom_on_a_colab_like_runtime(tmp_path):
    """One .ipynb in an empty folder, a venv with only Jupyter, ``google.colab`` loaded at kernel
    start, and the set-up cell cloning a local clone of this repository."""
    clone = tmp_path / "hosted"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    python = fresh_venv(tmp_path / "colab")
    pip(python, "nbclient", "ipykernel", "nbformat")
    stand_in = tmp_path / "stand-in"
    (stand_in / "google" / "colab").mkdir(parents=True)
    (stand_in / "google" / "__init__.py").write_text("")
    (stand_in / "google" / "colab" / "__init__.py").write_text(COLAB_STAND_IN)
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text("import google.colab\n")
    alone = tmp_path / "content"
    alone.mkdir()
    shutil.copy(ROOT / "notebooks" / "results.ipynb", alone / "results.ipynb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TJ_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(PYTHONPATH=str(stand_in), IPYTHONDIR=str(tmp_path / "ipython"), TJ_REPOSITORY_URL=str(clone))
    script = (
        "import sys, nbformat; from nbclient import NotebookClient\n"
        "nb = nbformat.read('results.ipynb', as_version=4)\n"
        "NotebookClient(nb, timeout=900, kernel_name='python3', resources={'metadata': {'path': '.'}}).execute()\n"
        "nbformat.write(nb, 'executed.ipynb')\n"
    )
    start = time.monotonic()
    run = subprocess.run([str(python), "-c", script], cwd=alone, env=env, capture_output=True, text=True, timeout=2400)
    record("colab_results_s", time.monotonic() - start)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    done = nbformat.read(alone / "executed.ipynb", as_version=4)
    errors = [o for c in done.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert (alone / "trajectory-judge" / "notebooks" / "results.md").exists()  # it ran in the clone
    committed = nbformat.read(ROOT / "notebooks" / "results.ipynb", as_version=4)
    names = lambda nb: [
        o["metadata"]["scrapbook"]["name"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("metadata", {}).get("scrapbook")
    ]
    assert names(done) == names(committed) and names(committed)  # every number of the chapter computed
