"""The notebook toolchain is used through its public extension points only.

No module of the package, the Sphinx extensions, the tests or the notebooks' conftest assigns into a
module (or an object) of myst_nb, jupyter_client, nbclient, nbval or ipykernel, patches one with
``setattr``/``monkeypatch.setattr``, or subclasses one of their classes to override a ``_private``
method. Read from the source with :mod:`ast`, so an alias (``import nbval.kernel as k``) is followed.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LIBRARIES = ("myst_nb", "jupyter_client", "nbclient", "nbval", "ipykernel", "jupyter_cache")
"""The libraries that execute and check the chapters."""

SOURCES = ("trajectory_judge", "book/_ext", "tests", "notebooks")


def _is_library(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in LIBRARIES


def _bound(tree: ast.AST) -> set[str]:
    """Names bound to a module or an object of one of the libraries by an import."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _is_library(a.name):
                    names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and _is_library(node.module):
            names.update(a.asname or a.name for a in node.names)
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


@functools.cache
def private_method_names() -> frozenset[str]:
    """Every ``_private`` (not dunder) method name a class of :data:`LIBRARIES` defines, read from their
    installed source: a class of ours defining one overrides it, whatever its base is bound to at run time."""
    names = set()
    for lib in LIBRARIES:
        spec = importlib.util.find_spec(lib)
        if spec is None or spec.origin is None:
            continue
        for f in Path(spec.origin).parent.rglob("*.py"):
            try:
                tree = ast.parse(f.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    names.update(
                        i.name
                        for i in node.body
                        if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and i.name.startswith("_")
                        and not i.name.endswith("__")
                    )
    return frozenset(names)


def violations(source: str, where: str = "<string>") -> list[str]:
    """Each place in ``source`` that patches one of :data:`LIBRARIES` or overrides a private method of theirs."""
    tree = ast.parse(source)
    bound = _bound(tree)
    found = []
    for node in ast.walk(tree):
        found += [
            f"{where}:{line}" for line in _assignments(node, bound) + _setattrs(node, bound) + _overrides(node, bound)
        ]
    return found


def _assignments(node: ast.AST, bound) -> list[str]:
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    return [
        f"{node.lineno}: assigns into {ast.unparse(t)}"
        for t in targets
        if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in bound
    ]


def _setattrs(node: ast.AST, bound) -> list[str]:
    if not isinstance(node, ast.Call):
        return []
    name = ast.unparse(node.func)
    if not (name == "setattr" or name.endswith(".setattr")) or not node.args:
        return []
    first = node.args[0]
    text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    if _root(first) in bound or (text is not None and _is_library(text)):
        return [f"{node.lineno}: {name}({ast.unparse(first)}, ...)"]
    return []


def _overrides(node: ast.AST, bound) -> list[str]:
    if not isinstance(node, ast.ClassDef):
        return []
    theirs = any(_root(b) in bound for b in node.bases)
    return [
        f"{item.lineno}: {node.name} overrides the private {item.name}"
        for item in node.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
        and item.name.startswith("_")
        and not (item.name.startswith("__") and item.name.endswith("__"))
        and (theirs or item.name in private_method_names())
    ]


def _files() -> list[Path]:
    return sorted(p for folder in SOURCES for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def test_the_checker_finds_an_assignment_a_patch_and_a_private_override_through_an_alias():
    sample = """
import myst_nb.core.execute.direct as direct
from nbval import kernel
from jupyter_client import KernelManager as KM
direct.single_nb_execution = lambda *a: None
kernel.KernelManager = object
setattr(direct, "x", 1)
monkeypatch.setattr("nbclient.client.NotebookClient.execute", None)
class Forked(KM):
    async def _async_launch_kernel(self, cmd, **kw): ...
    def start_kernel(self, **kw): ...
"""
    found = violations(sample)
    assert len(found) == 5, found
    assert any("overrides the private _async_launch_kernel" in f for f in found)
    dynamic = "def launching(base):\n    class Fork(base):\n        async def _async_launch_kernel(self, cmd): ...\n"
    assert violations(dynamic) == ["<string>:3: Fork overrides the private _async_launch_kernel"]  # base unknown here
    assert not violations("from nbclient import NotebookClient\nclient = NotebookClient(nb)\nclient.execute()\n")


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_patches_the_notebook_toolchain_or_overrides_its_private_methods(path):
    if path == Path(__file__):
        return  # this file's sample is the checker's control
    assert violations(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []
