"""The key under which tests/conftest.py keeps what a session collected, before any marker deselected it
(tests/test_tiers.py reads it)."""

from __future__ import annotations

import pytest

COLLECTED = pytest.StashKey[list]()
