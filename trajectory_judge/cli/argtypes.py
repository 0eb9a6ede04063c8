"""Typed converters for command-line arguments: each checks a range and says what it expected.

argparse calls a converter on the argument's text; an :class:`argparse.ArgumentTypeError` it
raises becomes the one-line ``trajectory-judge VERB: error: argument --X: ...`` message.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from trajectory_judge.models import check_name


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _ranged(parse: Callable[[str], Any], ok: Callable[[Any], bool], need: str, doc: str) -> Callable[[str], Any]:
    """A converter: ``parse`` the text, then require ``ok(value)`` ("must be <need>, got <text>")."""

    def convert(text: str) -> Any:
        value = parse(text)
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {need}, got {text.strip()}")
        return value

    convert.__doc__ = doc
    return convert


positive_int = _ranged(_int, lambda v: v >= 1, "at least 1", "An integer >= 1.")
nonnegative_int = _ranged(_int, lambda v: v >= 0, "0 or more", "An integer >= 0.")
multiple_of_8 = _ranged(
    _int,
    lambda v: v >= 8 and v % 8 == 0,
    "a positive multiple of 8 (a quarter clean, six equal fault types)",
    "A positive multiple of 8 (a quarter clean, six equal fault types).",
)
positive_float = _ranged(_float, lambda v: v > 0, "greater than 0", "A finite number > 0.")
nonnegative_float = _ranged(_float, lambda v: v >= 0, "0 or more", "A finite number >= 0.")
open_fraction = _ranged(
    _float, lambda v: 0 < v < 1, "between 0 and 1 (exclusive)", "A number strictly between 0 and 1."
)
MAX_RESAMPLES = 100_000
"""The most bootstrap replicates ``report`` draws: all are held in memory (indices and statistics),
about 0.5 GB at 10,000 on 400 trajectories and 15 judges, so ten times that is the ceiling."""
resamples = _ranged(
    _int,
    lambda v: 1 <= v <= MAX_RESAMPLES,
    f"from 1 to {MAX_RESAMPLES} (every replicate is held in memory; 10000, the default, puts the "
    "Monte Carlo error of an interval's end well below its last printed digit)",
    "Bootstrap replicates, 1-100000.",
)
port = _ranged(_int, lambda v: 1 <= v <= 65535, "a port number from 1 to 65535", "A TCP port, 1-65535.")


def int_list(text: str) -> tuple[int, ...]:
    """Comma-separated integers, each 0 or more (``7,8,9``), as a tuple; at least one."""
    parts = [p.strip() for p in text.split(",")]
    if not any(parts) or "" in parts:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 7,8,9, got {text!r}")
    return tuple(nonnegative_int(p) for p in parts)


def url(text: str) -> str:
    """A non-empty ``http://`` or ``https://`` URL (an empty value is an error, not the default)."""
    value = text.strip()
    if not value:
        raise argparse.ArgumentTypeError("must not be empty (leave the option out to use the default)")
    if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// URL, got {text!r}")
    return value


def model_name(text: str) -> str:
    """A model name usable inside a judge id: see :func:`trajectory_judge.models.check_name` (and no spaces)."""
    try:
        check_name(text, "model name")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"model name {text!r} must not contain spaces (it becomes part of judge ids)")
    return text


def env_name(text: str) -> str:
    """The name of an environment variable (letters, digits and ``_``, not starting with a digit)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        # the text is not echoed: it may be the key itself, given by mistake
        raise argparse.ArgumentTypeError(
            "expected the name of an environment variable holding the key "
            "(letters, digits and _, such as OPENAI_API_KEY), not the key itself"
        )
    return text


def name_list(known: Sequence[str]) -> Callable[[str], str]:
    """A converter for a comma-separated list drawn from ``known``, each at most once, at least one.

    Returns the list as normalised text (``"step,reply"``), the form the handlers split.
    """

    def convert(text: str) -> str:
        names = [n.strip() for n in text.split(",")]
        if not any(names):
            raise argparse.ArgumentTypeError(f"name at least one of {', '.join(known)}")
        if "" in names:
            raise argparse.ArgumentTypeError(f"empty name in {text!r}; expected some of {', '.join(known)}")
        unknown = [n for n in names if n not in known]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(map(repr, unknown))}; expected some of {', '.join(known)}"
            )
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise argparse.ArgumentTypeError(f"{', '.join(map(repr, repeated))} named more than once")
        return ",".join(names)

    convert.__name__ = "judge list"
    return convert
