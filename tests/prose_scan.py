"""Find tests that pin a literal English sentence: a string constant of 40 characters or more used in
``assert ... in``, ``==``/``!=``, a ``match=`` keyword or the parameters of ``pytest.mark.parametrize``.

Run ``python tests/prose_scan.py [files...]`` (default ``tests/*.py``) to list them and print their count;
tests/test_prose.py holds the few that remain to the sentences that are the point.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

MIN_CHARS = 40


@dataclass(frozen=True)
class Hit:
    """One literal sentence a test pins."""

    path: str
    """The test file, relative to the repository."""
    line: int
    """Its line."""
    how: str
    """``in``, ``==``, ``match=`` or ``parametrize``."""
    text: str
    """The literal (joined, for an implicit concatenation or an f-string's constant parts)."""

    @property
    def sentence(self) -> bool:
        """Whether the literal reads as English prose rather than markup, a URL, a path or an identifier."""
        return reads_as_sentence(self.text)


_MARKUP = re.compile(r"\S+://\S+|<[^>]+>|`[^`]*`|\S*[/_.:=]\S*")
_WORD = re.compile(r"\b[A-Za-z][a-z']+\b")


def reads_as_sentence(text: str, words: int = 5) -> bool:
    """At least ``words`` English words once URLs, tags, code and dotted, slashed or snake-case tokens are gone."""
    return len(_WORD.findall(_MARKUP.sub(" ", text))) >= words


def _literal(node: ast.AST) -> str | None:
    """The text of a string constant, or the constant parts of an f-string; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        return "".join(parts)
    return None


def _long(node: ast.AST) -> str | None:
    text = _literal(node)
    return text if text is not None and len(text) >= MIN_CHARS else None


def _asserted_literals(test: ast.AST) -> list[tuple[str, str]]:
    """Long literals compared by ``in``/``not in``/``==``/``!=`` anywhere inside an assert's test."""
    found = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            how = {ast.In: "in", ast.NotIn: "in", ast.Eq: "==", ast.NotEq: "=="}.get(type(op))
            if how is None:
                continue
            # `"text" in page` pins the left operand; `x == "text"` either side
            sides = [operands[i]] if how == "in" else [operands[i], operands[i + 1]]
            for side in sides:
                text = _long(side)
                if text is not None:
                    found.append((how, text))
    return found


def scan_file(path: Path, root: Path) -> list[Hit]:
    """Every long literal sentence pinned in one test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    hits: list[Hit] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            hits += [Hit(rel, node.lineno, how, text) for how, text in _asserted_literals(node.test)]
        elif isinstance(node, ast.keyword) and node.arg == "match":
            text = _long(node.value)
            if text is not None:
                hits.append(Hit(rel, node.value.lineno, "match=", text))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "parametrize" and len(node.args) > 1:
            # expected values handed to the test as parameters
            for sub in ast.walk(node.args[1]):
                text = _long(sub)
                if text is not None and not isinstance(sub, ast.JoinedStr):
                    hits.append(Hit(rel, sub.lineno, "parametrize", text))
    return sorted(set(hits), key=lambda h: (h.path, h.line, h.text))


def scan(paths: list[Path], root: Path) -> list[Hit]:
    """Every long literal sentence pinned in the given test files."""
    return [hit for p in sorted(paths) for hit in scan_file(p, root)]


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    paths = [Path(a).resolve() for a in argv] or sorted((root / "tests").glob("*.py"))
    hits = scan(paths, root)
    for h in hits:
        print(f"{h.path}:{h.line}: {h.how} {'sentence' if h.sentence else 'markup  '} {h.text[:100]!r}")
    files = {h.path for h in hits}
    prose = [h for h in hits if h.sentence]
    print(
        f"{len(hits)} literals of {MIN_CHARS}+ characters pinned in {len(files)} of {len(paths)} test files; "
        f"{len(prose)} of them read as English sentences, in {len({h.path for h in prose})} files"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
