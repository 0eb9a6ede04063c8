"""A folder's own failure types: their descriptions in ``fault_types.json``, and what ``check`` says about them.

The schema lets a label name any failure type (:data:`~trajectory_judge.models.records.FAILURE_TYPE_PATTERN`);
the testbed's six are one vocabulary. A folder may describe its types in ``fault_types.json``, a JSON object of
type name -> one-line description, which the book's captions quote.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from trajectory_judge.models.jsonl import DataError, read_text
from trajectory_judge.models.records import (
    FAILURE_TYPE_PATTERN,
    OUTCOME_ONLY,
    TESTBED_FAILURE_TYPES,
    Trajectory,
    type_order,
)

FAULT_TYPES_FILE = "fault_types.json"
"""Where a folder describes its own failure types: a JSON object, type name -> one-line description."""


def load_fault_types(directory: str | Path) -> dict[str, str]:
    """The descriptions ``DIR/fault_types.json`` gives the folder's failure types ({} without the file).

    Raises :class:`DataError` naming the file when it is not a JSON object of type names (letters, digits,
    ``_`` and ``-``) to one-line descriptions.
    """
    path = Path(directory) / FAULT_TYPES_FILE
    if not path.is_file():
        return {}
    try:
        raw = json.loads(read_text(path))
    except ValueError as exc:
        raise DataError(f"{path}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected an object of failure type -> one-line description")
    for name, text in raw.items():
        if not re.fullmatch(FAILURE_TYPE_PATTERN, name):
            raise DataError(f"{path}: {name!r} is no failure type name (letters, digits, _ and -)")
        if not isinstance(text, str) or not text.strip() or "\n" in text.strip():
            raise DataError(f"{path}: the description of {name!r} must be one non-empty line of text")
    return {name: text.strip() for name, text in raw.items()}


def type_counts(trajectories: Sequence[Trajectory]) -> dict[str, int]:
    """Faults per failure type in table order (:func:`type_order`), then under ``outcome only`` the faults
    labelled by their outcome only; types with no fault are left out."""
    counts = Counter(
        t.label.failure_type or OUTCOME_ONLY for t in trajectories if t.label is not None and t.label.faulty
    )
    order = [*type_order(k for k in counts if k != OUTCOME_ONLY), OUTCOME_ONLY]
    return {k: counts[k] for k in order if counts[k]}


def fault_types_lines(trajectories: Sequence[Trajectory], described: Mapping[str, str]) -> list[str]:
    """What ``check`` prints about a folder's failure types: the types found with their counts, then one warning
    per type seen once (a typo of another, or too few faults to read a recall from), per type
    ``fault_types.json`` describes that no label names, and per type of its own it does not describe."""
    counts = type_counts(trajectories)
    typed = {k: n for k, n in counts.items() if k != OUTCOME_ONLY}
    if not counts:
        return ["failure types: none (no trajectory is labelled faulty)"]
    found = ", ".join(f"{k} ({n})" for k, n in counts.items())
    lines = [f"failure types: {found}"]
    lines += [
        f"warning: failure type {k!r} is seen once: a typo of another type, or one fault, too few to read a recall from"
        for k, n in typed.items()
        if n == 1
    ]
    lines += [f"warning: {FAULT_TYPES_FILE} describes {k!r}, which no label names" for k in described if k not in typed]
    if described:
        lines += [
            f"warning: failure type {k!r} has no description in {FAULT_TYPES_FILE}"
            for k in typed
            if k not in described and k not in TESTBED_FAILURE_TYPES
        ]
    return lines
