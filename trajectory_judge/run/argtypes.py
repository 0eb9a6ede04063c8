"""Typed converters for command-line arguments: each checks a range and says what it expected.

argparse calls a converter on the argument's text; an :class:`argparse.ArgumentTypeError` it
raises becomes the one-line ``trajectory-judge VERB: error: argument --X: ...`` message.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable, Sequence

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


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def multiple_of_8(text: str) -> int:
    """A positive multiple of 8 (a quarter clean, six equal fault types)."""
    value = _int(text)
    if value < 8 or value % 8:
        raise argparse.ArgumentTypeError(f"must be a positive multiple of 8 (a quarter clean, six equal fault types), got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def port(text: str) -> int:
    """A TCP port, 1-65535."""
    value = _int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, got {value}")
    return value


def url(text: str) -> str:
    """A non-empty ``http://`` or ``https://`` URL (an empty value is an error, not the default)."""
    value = text.strip()
    if not value:
        raise argparse.ArgumentTypeError("must not be empty (leave the option out to use the default)")
    if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// URL, got {text!r}")
    return value


def model_name(text: str) -> str:
    """A model name usable inside a judge id: see :func:`trajectory_judge.models.check_name`."""
    try:
        return check_name(text, "model name")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
            raise argparse.ArgumentTypeError(f"unknown {', '.join(map(repr, unknown))}; expected some of {', '.join(known)}")
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise argparse.ArgumentTypeError(f"{', '.join(map(repr, repeated))} named more than once")
        return ",".join(names)

    convert.__name__ = "judge list"
    return convert
