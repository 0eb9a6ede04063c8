"""The package's layers hold: imports flow downward only, plotting stays in the book, modules stay small."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "trajectory_judge"
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture()
def scratch(tmp_path):
    """A scratch copy of the package and its contracts, to break on purpose."""
    shutil.copytree(PKG, tmp_path / "trajectory_judge", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_import_contracts_hold():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout or "broken" not in r.stdout.split("Contracts:")[-1].split("\n")[0]


def test_an_upward_import_breaks_the_layers_contract(scratch):
    metrics = scratch / "trajectory_judge" / "analysis" / "core" / "metrics.py"
    metrics.write_text(metrics.read_text() + "\nfrom trajectory_judge.book.render import style  # noqa: E402\n")
    r = lint(scratch)
    assert r.returncode == 1
    assert "Layers depend downward only BROKEN" in r.stdout
    assert "trajectory_judge.analysis.core.metrics -> trajectory_judge.book.render.style" in r.stdout


@pytest.mark.parametrize("room", ["statistics.prevalence", "paper.claims"])
def test_the_analysis_core_importing_another_room_breaks_its_contract(scratch, room):
    report = scratch / "trajectory_judge" / "analysis" / "core" / "report.py"
    report.write_text(report.read_text() + f"\nimport trajectory_judge.analysis.{room}  # noqa: E402\n")
    r = lint(scratch)
    assert r.returncode == 1
    assert "core imports neither the statistics beyond the paper nor the paper's audit BROKEN" in " ".join(
        r.stdout.split()
    )


def test_plotting_outside_the_book_breaks_the_forbidden_contract(scratch):
    report = scratch / "trajectory_judge" / "analysis" / "core" / "report.py"
    report.write_text(report.read_text() + "\nimport matplotlib  # noqa: E402\n")
    r = lint(scratch)
    assert r.returncode == 1 and "Plotting and notebook libraries only in the book BROKEN" in r.stdout


def _modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_chapter_imports_its_helpers_module_which_names_it():
    """Each notebook imports one module of ``book/chapters`` whose docstring names the notebook."""
    chapters = PKG / "book" / "chapters"
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        text = md.read_text()
        mine = [
            m
            for m in re.findall(r"from trajectory_judge\.book\.chapters\.(\w+) import", text)
            if f"notebooks/{md.stem}.md" in (ast.get_docstring(ast.parse((chapters / f"{m}.py").read_text())) or "")
        ]
        assert mine, f"{md.name} imports no module of trajectory_judge/book/chapters whose docstring names it"


BOOK_FORBIDDEN = (
    "trajectory_judge.analysis.core.bootstrap",
    "trajectory_judge.analysis.core.metrics",
    "trajectory_judge.analysis.core.plan",
    "trajectory_judge.analysis.paper.estimates",
)
"""What the book never imports: the bootstrap and the metrics' internals (it renders the analysis's records)."""


def test_a_book_import_of_the_bootstrap_breaks_the_records_contract(scratch):
    style = scratch / "trajectory_judge" / "book" / "render" / "style.py"
    style.write_text(style.read_text() + "\nfrom trajectory_judge.analysis.core import bootstrap  # noqa: E402,F401\n")
    r = lint(scratch)
    assert r.returncode == 1
    assert (
        "BROKEN" in r.stdout
        and "trajectory_judge.book.render.style -> trajectory_judge.analysis.core.bootstrap"
        in " ".join(r.stdout.split())
    )


def test_no_notebook_imports_the_bootstrap_or_the_metrics_internals():
    pattern = re.compile(
        r"^\s*(?:from\s+(trajectory_judge\.analysis(?:\.\w+){0,2})\s+import\s+([\w, ]+)|import\s+(trajectory_judge\.analysis(?:\.\w+){1,2}))",
        re.M,
    )
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        for frm, names, imp in pattern.findall(md.read_text()):
            mods = [imp] if imp else [frm] + [f"{frm}.{n.strip()}" for n in names.split(",")]
            bad = [m for m in mods if m in BOOK_FORBIDDEN]
            assert not bad, f"{md.name} imports {', '.join(bad)}: route it through a record of the analysis"
