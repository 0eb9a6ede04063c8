"""The ``trajectory-judge`` command line.

Each verb is declared in a module of this package (a family of verbs in one), with the options several
verbs share declared once (:mod:`.options`); its handler reads the arguments and calls the package.

Errors take one path (:func:`main`): a bad argument, bad data (:class:`DataError`), a file
the system cannot read or write (:class:`OSError`) or an invalid value (:class:`ValueError`)
becomes one line ``trajectory-judge VERB: error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Collection, Sequence
from typing import NoReturn

from trajectory_judge import __version__
from trajectory_judge.cli import agent, batch, build, data, folders, reading, run
from trajectory_judge.cli.options import Verbs
from trajectory_judge.models import DataError

PROG = "trajectory-judge"

DESCRIPTION = (
    "Build labelled agent trajectories, run judges on them, and report what each judge "
    "catches and misses. `trajectory-judge VERB --help` describes a verb."
)


class UsageError(Exception):
    """A command-line mistake found by argparse, with the parser's program name."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are raised (one line, no usage block), not printed and exited."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


VERBS: tuple[Callable[[Verbs], None], ...] = (
    build.add_dataset,
    build.add_counterfactual,
    data.add_check,
    data.add_schema,
    reading.add_report,
    reading.add_misses,
    reading.add_prevalence,
    run.add,
    agent.add,
    batch.add_export,
    batch.add_run_requests,
    batch.add_import,
    data.add_fetch_release,
    data.add_manifest,
    folders.add_forget,
    folders.add_import_inspect,
    folders.add_merge,
)
"""Each verb's declaration, in the order ``--help`` lists them."""


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (an OS error as ``PATH: reason``)."""
    if isinstance(exc, UnicodeDecodeError):
        text = f"input is not UTF-8 text ({exc.reason} at byte offset {exc.start})"
    elif isinstance(exc, OSError) and exc.strerror:
        paths = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        text = f"{paths}: {exc.strerror}" if paths else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


READING_VERBS = frozenset({"check", "schema", "report", "misses", "prevalence"})
"""Verbs whose output is for reading, often through ``head`` or ``less``: stdout closing early is not an error."""


def _verb_prog(prog: str, argv: Sequence[str], verbs: Collection[str]) -> str:
    # argparse reports unrecognised arguments from the top-level parser; name the verb anyway
    verb = next((a for a in argv if a in verbs), None)
    return f"{PROG} {verb}" if prog == PROG and verb else prog


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (2 and one line on stderr for any ordinary mistake)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _Parser(prog=PROG, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True)
    for add in VERBS:
        add(sub)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"{_verb_prog(exc.prog, argv, sub.choices)}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    try:
        if getattr(args, "check_args", None) is not None:
            args.check_args(args)
        return int(args.func(args) or 0)
    except BrokenPipeError as exc:
        if args.verb not in READING_VERBS:
            print(f"{PROG} {args.verb}: error: {one_line(exc)}", file=sys.stderr)
            return 2
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # its reader (head, less) stopped reading
        return 0
    except (DataError, OSError, ValueError) as exc:
        print(f"{PROG} {args.verb}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{PROG} {args.verb}: error: out of memory (report: a smaller --resamples needs less)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a verb that writes whole files leaves the previous file and no partial one
        print(f"{PROG} {args.verb}: interrupted; no file was left half-written", file=sys.stderr)
        return 130
