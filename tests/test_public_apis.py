"""The notebook toolchain is used through its public extension points only.

No module of the package, the Sphinx extensions, the tests or the notebooks' conftest assigns into a
module (or an object) of myst_nb, jupyter_client, nbclient, nbval or ipykernel, patches one with
``setattr``/``monkeypatch.setattr``, or subclasses one of their classes to override a ``_private``
method. Read from the source with :mod:`ast`, so an alias (``import nbval.kernel as k``) is followed.

The product (the package and the book's Sphinx extensions) goes further, for every third-party package
it imports: it reads no ``_private`` attribute of their modules or of the objects reached from them
(what they return, what their annotations type, what Sphinx hands an extension's handlers), imports no
private name of theirs, names none in a string, patches none and writes into none of their modules.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
import sys
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


# --- the product reaches no library's private parts ------------------------------------------------
# The package and the book's Sphinx extensions read no ``_private`` attribute of any third-party
# module or of an object one of them made or handed over, import no private name of theirs, patch
# none of them, and write into no module of theirs. Tests may patch their own fakes, so this part
# reads the product only. Dunder names (``__version__``, ``__name__``) are public.

PRODUCT = ("trajectory_judge", "book/_ext")
"""The folders whose modules ship: the package and the book's Sphinx extensions."""

EXPECTED_LIBRARIES = {"httpx", "httpcore", "sphinx", "docutils", "matplotlib", "pandas", "numpy", "scipy", "pydantic"}
"""Libraries the product is known to import: the derived set must hold them (a control on the derivation)."""

_PATCHERS = ("setattr", "delattr", "patch", "patch.object", "patch.dict", "patch.multiple")
_PASS_ON = frozenset({"getattr", "next", "iter", "list", "tuple", "sorted", "reversed", "vars", "type"})
"""Builtins whose result is (or holds) what they are given."""
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _product_files() -> list[Path]:
    return sorted(p for folder in PRODUCT for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _imported_modules(tree: ast.AST) -> list[str]:
    mods = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods.append(node.module)
    return mods


def _foreign(tree: ast.AST) -> set[str]:
    """Top-level names of the third-party packages ``tree`` imports (not the standard library's, not ours)."""
    local = {"trajectory_judge", "__future__", *(p.stem for p in (ROOT / "book" / "_ext").glob("*.py"))}
    tops = {mod.split(".")[0] for mod in _imported_modules(tree)}
    return {t for t in tops if t not in local and t not in sys.stdlib_module_names}


@functools.cache
def third_party() -> frozenset[str]:
    """Top-level names of every third-party package the product imports (and the notebook toolchain's)."""
    names = set(LIBRARIES)
    for path in _product_files():
        names |= _foreign(ast.parse(path.read_text(encoding="utf-8")))
    return frozenset(names)


def _on_self(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == "self"


def _parts(node: ast.AST) -> ast.AST | list[ast.expr] | None:
    """What ``node``'s value comes from: the one expression it is reached through, the expressions it
    may be any of, or None (a literal, an operation: nothing of theirs)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PASS_ON:
        return list(node.args)
    if isinstance(node, ast.Call):
        return node.func
    if isinstance(node, (ast.Attribute, ast.Subscript, ast.Await, ast.Starred)):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    return None


class _Reaches:
    """One module's reaches into ``libraries``: what it binds to them, what it derives from those, and
    each private read, private import, patch or write found on the way."""

    def __init__(self, tree: ast.Module, libraries: frozenset[str], extension: bool) -> None:
        self.tree, self.libraries = tree, libraries
        self.imported: dict[str, str] = {}  # a name an import binds -> the dotted path it stands for
        self.theirs: set[str] = set()  # names bound to a module or an object of theirs
        self.self_attrs: set[str] = set()  # ``self.x`` holding an object of theirs
        self.domains: set[str] = set()  # names holding a Sphinx domain (``env.get_domain(...)``)
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.found: list[str] = []
        self._bind_imports()
        if extension and "setup" in self.functions:  # Sphinx calls an extension's setup(app)
            self._taint_params(self.functions["setup"])
        self._spread()

    # -- what is theirs --------------------------------------------------------------------------
    def _lib(self, module: str | None) -> bool:
        return module is not None and module.split(".")[0] in self.libraries

    def _bind_imports(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if self._lib(a.name):
                        name = a.asname or a.name.split(".")[0]
                        self.imported[name] = a.name if a.asname else name
                        if any(_private(part) for part in a.name.split(".")):
                            self.found.append(f"{node.lineno}: imports the private module {a.name}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and self._lib(node.module):
                assert node.module is not None
                private_module = any(_private(part) for part in node.module.split("."))
                for a in node.names:
                    self.imported[a.asname or a.name] = f"{node.module}.{a.name}"
                    if private_module or _private(a.name):
                        self.found.append(f"{node.lineno}: imports the private {node.module}.{a.name}")
        self.theirs.update(self.imported)

    def tainted(self, node: ast.AST | None) -> bool:
        """Whether ``node`` evaluates to a module of theirs or an object reached from one."""
        while node is not None:
            if isinstance(node, ast.Name):
                return node.id in self.theirs
            if isinstance(node, ast.Attribute) and _on_self(node) and node.attr in self.self_attrs:
                return True
            parts = _parts(node)
            if parts is None:
                return False
            if isinstance(parts, list):
                return any(self.tainted(p) for p in parts)
            node = parts
        return False

    def _taint_params(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, positions: set[int | str] | None = None
    ) -> bool:
        params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        names = {p.arg for i, p in enumerate(params) if positions is None or i in positions or p.arg in positions}
        new = names - self.theirs - {"self", "cls"}
        self.theirs |= new
        return bool(new)

    def _bind(self, target: ast.AST) -> bool:
        if isinstance(target, ast.Name) and target.id not in self.theirs:
            self.theirs.add(target.id)
            return True
        if isinstance(target, (ast.Tuple, ast.List)):
            return any([self._bind(t) for t in target.elts])
        if isinstance(target, ast.Starred):
            return self._bind(target.value)
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and target.attr not in self.self_attrs
        ):
            self.self_attrs.add(target.attr)
            return True
        return False

    def _spread_one(self, node: ast.AST) -> bool:
        changed = False
        if isinstance(node, ast.Assign) and self.tainted(node.value):
            changed = any([self._bind(t) for t in node.targets])
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
            value, annotation = node.value, getattr(node, "annotation", None)
            if self.tainted(value) or self.tainted(annotation):
                changed = self._bind(node.target)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and self.tainted(node.iter):
            changed = self._bind(node.target)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None and self.tainted(node.context_expr):
            changed = self._bind(node.optional_vars)
        elif isinstance(node, ast.arg) and node.annotation is not None and self.tainted(node.annotation):
            changed = node.arg not in self.theirs and not self.theirs.add(node.arg)
        elif isinstance(node, ast.Call):
            changed = self._spread_call(node)
        if isinstance(node, ast.Assign) and ast.unparse(node.value).split("(")[0].endswith(".get_domain"):
            self.domains.update(t.id for t in node.targets if isinstance(t, ast.Name))
        return changed

    def _spread_call(self, node: ast.Call) -> bool:
        """An object of theirs passed to a function of this module taints its parameter; a function
        connected to one of their events (``app.connect(event, fn)``) gets their objects."""
        changed = False
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "connect" and self.tainted(func.value):
            for a in node.args[1:]:
                if isinstance(a, ast.Name) and a.id in self.functions:
                    changed |= self._taint_params(self.functions[a.id])
        if isinstance(func, ast.Name) and func.id in self.functions:
            positions: set[int | str] = {i for i, a in enumerate(node.args) if self.tainted(a)}
            keywords = {k.arg for k in node.keywords if k.arg and self.tainted(k.value)}
            if positions or keywords:
                changed |= self._taint_params(self.functions[func.id], positions | keywords)
        return changed

    def _spread(self) -> None:
        nodes = list(ast.walk(self.tree))
        while any([self._spread_one(n) for n in nodes]):
            pass

    # -- what reaches into them ------------------------------------------------------------------
    def check(self) -> list[str]:
        for node in ast.walk(self.tree):
            self.found += self._read(node) + self._write(node) + self._string(node) + self._override(node)
        return sorted(set(self.found), key=lambda f: (int(f.split(":")[0]), f))

    def _read(self, node: ast.AST) -> list[str]:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if _private(node.attr) and self.tainted(node.value):
                return [f"{node.lineno}: reads their private {ast.unparse(node)}"]
            if node.attr == "domaindata" and self.tainted(node.value):
                return [f"{node.lineno}: reads Sphinx's internal domain data {ast.unparse(node)}"]
            on_domain = isinstance(node.value, ast.Name) and node.value.id in self.domains
            from_domain = isinstance(node.value, ast.Call) and ast.unparse(node.value.func).endswith("get_domain")
            if node.attr == "data" and (on_domain or from_domain):
                return [f"{node.lineno}: reads a Sphinx domain's internal data {ast.unparse(node)}"]
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("getattr", "hasattr") and len(node.args) >= 2:
            name = node.args[1]
            private = isinstance(name, ast.Constant) and isinstance(name.value, str) and _private(name.value)
            if private and self.tainted(node.args[0]):
                return [f"{node.lineno}: reads their private {ast.unparse(node)}"]
        return []

    def _write(self, node: ast.AST) -> list[str]:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        found = []
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in self.imported:
                found.append(f"{node.lineno}: writes into their module {ast.unparse(t)}")
            elif isinstance(t, ast.Attribute) and _private(t.attr) and self.tainted(t.value):
                found.append(f"{node.lineno}: writes their private {ast.unparse(t)}")
        if isinstance(node, ast.Call) and node.args:
            name = ast.unparse(node.func)
            if any(name == p or name.endswith("." + p) for p in _PATCHERS):
                first = node.args[0]
                text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
                if _root(first) in self.imported or (text is not None and self._lib(text)):
                    found.append(f"{node.lineno}: patches them with {name}({ast.unparse(first)}, ...)")
        return found

    def _string(self, node: ast.AST) -> list[str]:
        """A dotted path into a private part of theirs written as text (an import by name, a patch target)."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return []
        return [
            f"{node.lineno}: names their private {path}"
            for path in _DOTTED.findall(node.value)
            if self._lib(path) and any(_private(part) for part in path.split("."))
        ]

    def _override(self, node: ast.AST) -> list[str]:
        """A private method defined in a subclass of theirs that their class (or a base) defines too."""
        if not isinstance(node, ast.ClassDef):
            return []
        bases = [self._resolve(b) for b in node.bases if _root(b) in self.imported]
        found = []
        for item in node.body:
            if not (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name)):
                continue
            if any(base is None or any(item.name in vars(k) for k in base.__mro__) for base in bases):
                found.append(f"{item.lineno}: {node.name} overrides their private {item.name}")
        return found

    def _resolve(self, node: ast.expr) -> type | None:
        """The class a base expression names, imported for real (None when it cannot be found)."""
        parts = ast.unparse(node).split(".")
        path = [*self.imported[parts[0]].split("."), *parts[1:]]
        for cut in range(len(path), 0, -1):
            try:
                obj: object = importlib.import_module(".".join(path[:cut]))
            except ImportError:
                continue
            try:
                for attr in path[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                return None
            return obj if isinstance(obj, type) else None
        return None


def private_reaches(source: str, where: str = "<string>", *, extension: bool = False) -> list[str]:
    """Each place in ``source`` that reads, imports, patches or writes a private part of a third-party
    package: one of :func:`third_party` or one ``source`` imports itself (``extension``: the source is a
    Sphinx extension, whose ``setup`` gets Sphinx's application)."""
    tree = ast.parse(source)
    reaches = _Reaches(tree, third_party() | _foreign(tree), extension)
    return [f"{where}:{line}" for line in reaches.check()]


def test_the_libraries_are_read_from_the_products_imports():
    found = third_party()
    assert found >= EXPECTED_LIBRARIES | set(LIBRARIES), EXPECTED_LIBRARIES - found
    assert not found & {"trajectory_judge", "json", "os", "tj_assets", "__future__"}


def test_the_guard_catches_a_read_of_a_private_part_of_httpx():
    sample = """
import httpx
from httpx._config import DEFAULT_LIMITS
import httpx._transports.default as default

def make(client: httpx.Client):
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)
        pool._network_backend = object()
    importlib.import_module("httpx._utils")
    return httpx.__version__, client.timeout
"""
    found = private_reaches(sample)
    assert [f.split(": ", 1)[1] for f in found] == [
        "imports the private httpx._config.DEFAULT_LIMITS",
        "imports the private module httpx._transports.default",
        "reads their private client._mounts",
        "reads their private client._transport",
        "reads their private getattr(transport, '_pool', None)",
        "writes their private pool._network_backend",
        "names their private httpx._utils",
    ], found


def test_the_guard_catches_a_read_of_sphinx_private_data_through_its_handlers():
    sample = """
def _page(app, pagename, templatename, context, doctree):
    math = app.env.get_domain("math")
    own = math.data.get("has_equations", {}).get(pagename, False)
    also = app.env.domaindata["math"]
    context["script_files"] = [js for js in context["script_files"] if _keep(app, js)]

def _keep(app, js):
    return app.registry._private_table or js.filename

def setup(app):
    app.connect("html-page-context", _page)
"""
    found = [f.split(": ", 1)[1] for f in private_reaches(sample, extension=True)]
    assert found == [
        "reads a Sphinx domain's internal data math.data",
        "reads Sphinx's internal domain data app.env.domaindata",
        "reads their private app.registry._private_table",
    ], found


def test_the_guard_catches_patches_of_seaborn_and_passes_public_use_and_our_own_privates():
    patched = """
from unittest import mock
import seaborn.matrix
with mock.patch.object(seaborn.matrix, "_draw_figure", lambda fig: None):
    pass
mock.patch("seaborn.matrix._draw_figure", None)
seaborn.matrix.heatmap = None
"""
    found = [f.split(": ", 1)[1] for f in private_reaches(patched)]
    assert found == [
        "patches them with mock.patch.object(seaborn.matrix, ...)",
        "names their private seaborn.matrix._draw_figure",
        "patches them with mock.patch('seaborn.matrix._draw_figure', ...)",
        "writes into their module seaborn.matrix.heatmap",
    ], found
    public = """
import httpcore
import httpx

class Transport(httpx.BaseTransport):
    def __init__(self):
        self._pool = httpcore.ConnectionPool()

    def _ours(self):
        return self._pool.handle_request

class Backend(httpcore.NetworkBackend):
    def _track(self, stream):
        return stream.get_extra_info("socket")

print(httpx.__version__, httpx.Client().timeout)
"""
    assert private_reaches(public) == []


@pytest.mark.parametrize("path", _product_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_product_module_reaches_into_a_private_part_of_a_library(path):
    extension = path.parent == ROOT / "book" / "_ext"
    assert private_reaches(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), extension=extension) == []
