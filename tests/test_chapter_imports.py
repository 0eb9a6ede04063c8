"""Every name a chapter imports from the package exists, so a clean-up that drops a re-export fails here,
in the fast tier, rather than inside a notebook."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(md: Path) -> list[tuple[str, str]]:
    text = md.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^from (trajectory_judge[\w.]*) import (\([^)]*\)|[^\n]*)", text, re.M):
        names = m.group(2).strip("()")
        for item in names.replace("\n", " ").split(","):
            name = item.split("#")[0].strip().split(" as ")[0].strip()
            if name:
                out.append((m.group(1), name))
    return out


@pytest.mark.parametrize("md", sorted((ROOT / "notebooks").glob("*.md")), ids=lambda p: p.stem)
def test_every_name_a_chapter_imports_exists(md):
    pairs = _imports(md)
    assert pairs, f"{md.name} imports nothing from the package"
    missing = [
        f"{mod}.{name}"
        for mod, name in pairs
        if not hasattr(importlib.import_module(mod), name) and importlib.util.find_spec(f"{mod}.{name}") is None
    ]
    assert not missing, f"{md.name} imports names the package does not have: {missing}"
