"""The ``trajectory-judge`` command line.

Each verb's arguments are declared here, in its own block; its work is done by a
``cli_*`` function in the module of the paper concept it belongs to.

Errors take one path (:func:`main`): a bad argument, bad data (:class:`DataError`), a file
the system cannot read or write (:class:`OSError`) or an invalid value (:class:`ValueError`)
becomes one line ``trajectory-judge VERB: error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from trajectory_judge import __version__
from trajectory_judge.analysis.statistics.abstention import DELTA as ABSTAIN_DELTA
from trajectory_judge.models import DataError
from trajectory_judge.run import argtypes as A

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


def _build_dataset(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build-dataset", help="generate the labelled trajectories")
    p.add_argument("--n", type=A.multiple_of_8, default=400, help="number of trajectories (default 400)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help="generation seed (default 7)")
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (required)")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace trajectories.jsonl even if verdicts in --out refer to trajectories it changes, "
        "or SHA256SUMS pins other bytes (then re-pin it with `trajectory-judge manifest`)",
    )
    p.set_defaults(func=lambda a: __import__("trajectory_judge.testbed.dataset", fromlist=["x"]).cli_build_dataset(a))


def _build_counterfactual(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-counterfactual", help="plant the same fault at every step of the same instances (position set)"
    )
    p.add_argument("--instances", type=A.positive_int, default=60, help="number of instances (default 60)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help="generation seed (default 7)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder, e.g. data/counterfactual/")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace trajectories.jsonl even if verdicts in --out refer to trajectories it changes, "
        "or SHA256SUMS pins other bytes (then re-pin it with `trajectory-judge manifest`)",
    )
    p.set_defaults(
        func=lambda a: __import__("trajectory_judge.testbed.counterfactual", fromlist=["x"]).cli_build_counterfactual(a)
    )


def _check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="validate trajectories and run the rule checker over them")
    p.add_argument("file", metavar="FILE|DIR", help="a trajectories JSONL file, or a folder holding trajectories.jsonl")
    p.add_argument("--out", default=None, help="write one programmatic verdict per trajectory here")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.judges.programmatic", fromlist=["x"]).cli_check(a))


# --- schema (the data formats) --------------------------------------------------------------
def _schema(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of trajectories, labels or verdicts")
    p.add_argument(
        "kind",
        choices=("trajectories", "labels", "verdicts"),
        help="one line of trajectories.jsonl, the label inside a trajectory, or one line of verdicts.jsonl",
    )
    p.add_argument("--out", default=None, metavar="FILE", help="write the schema to FILE instead of printing it")
    p.set_defaults(func=_cli_schema)


def _cli_schema(args: argparse.Namespace) -> int:
    """``trajectory-judge schema KIND [--out FILE]``: the JSON Schema generated from the data model."""
    import json

    from trajectory_judge.fileio import atomic_write_text
    from trajectory_judge.models import json_schema
    from trajectory_judge.provenance.outputs import guard_output

    text = json.dumps(json_schema(args.kind), indent=2, ensure_ascii=False) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return 0
    guard_output(args.out, inputs=[])
    atomic_write_text(args.out, text)
    return 0


# --- report (analysis) ---------------------------------------------------------------
def _report(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="compute every metric, interval and delta from raw verdicts")
    p.add_argument("--data", default="data/", help="directory with trajectories.jsonl and verdicts.jsonl")
    p.add_argument("--json", default=None, help="write the machine-readable report here")
    p.add_argument("--markdown", default=None, help="write the tables as Markdown here")
    p.add_argument("--resamples", type=A.resamples, default=10_000, help="bootstrap replicates (default 10000)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help="bootstrap seed (default 7)")
    p.add_argument(
        "--reference",
        default=None,
        metavar="JUDGE",
        help="also compare every judge with this one (paired deltas judge - JUDGE)",
    )
    p.add_argument(
        "--all-pairs",
        action="store_true",
        help="paired deltas for every pair of judges (default: views of one model, one view across models)",
    )
    p.add_argument(
        "--resample",
        choices=("design", "trajectories", "instances", "design-instances"),
        default=None,
        help="what the bootstrap resamples: the design's cells (default for a folder with design.json, as "
        "build-dataset writes), the trajectories (default otherwise: a sample), whole instances, or whole "
        "instances within groups of the same make-up (a design whose runs share a base)",
    )
    p.add_argument(
        "--cluster",
        choices=("instance",),
        default=None,
        help="draw whole instances (a base run and every trajectory made from it): on a design, within groups of "
        "instances of the same numbers of clean and faulty runs (design-instances); on a sample, instances",
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="also AUROC, AUPRC, kappa, MCC, balanced accuracy, AURC and selective recall, with intervals "
        "(from the same resamples; about as long again)",
    )
    p.add_argument(
        "--prevalence",
        type=A.open_fraction,
        default=None,
        metavar="P",
        help="also precision, F1, kappa, MCC and AUPRC at a share P of faulty runs (a deployment's), from each judge's "
        "recall and false-alarm rate and its ranking, with intervals; the report's own are at the folder's share",
    )
    p.add_argument(
        "--abstain",
        type=A.open_fraction,
        default=None,
        metavar="ALPHA",
        help="also each judge's lowest confidence threshold whose kept verdicts are wrong at most a share ALPHA of "
        f"the time, with {round(100 * (1 - ABSTAIN_DELTA))}%% confidence, on runs drawn as these were (fixed-sequence testing); "
        "below it, escalate",
    )
    p.set_defaults(func=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    _one_blas_thread()
    return __import__("trajectory_judge.analysis.report_cli", fromlist=["x"]).cli_report(args)


def _one_blas_thread() -> None:
    """Load numpy with one OpenBLAS thread, unless it is loaded or ``OPENBLAS_NUM_THREADS`` chooses.

    The report's products are small, and OpenBLAS's idle threads spin on the other cores: on two
    cores, a fifth of the report's CPU time, and no faster. The numbers do not depend on it (every
    sum the products make is of integers, exact in any order). The variable is removed again, so nothing
    this process starts inherits it.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def _misses(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("misses", help="list a judge's misses and false alarms, as the judge saw them")
    p.add_argument("--data", default="data/", help="directory with trajectories.jsonl and verdicts.jsonl")
    p.add_argument("--judge", required=True, metavar="JUDGE_ID", help="the judge, e.g. step:qwen2.5:14b")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--limit",
        type=A.positive_int,
        default=None,
        metavar="N",
        help="show at most N misses and N false alarms as text (default all; --json has all)",
    )
    p.set_defaults(func=lambda a: __import__("trajectory_judge.analysis.core.misses", fromlist=["x"]).cli_misses(a))


def _needs_arguments(sub: argparse._SubParsersAction, verb: str) -> bool:
    """Whether ``verb``'s arguments must be declared: only when it is the verb invoked (``main`` notes
    it on ``sub``), so that ``--help`` and the other verbs do not import the runner and its clients."""
    return getattr(sub, "invoked", verb) == verb


# --- prevalence (what a judge's flags mean on unlabelled traces) ---------------------------
def _prevalence(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("prevalence", help="estimate the true fault rate of unlabelled traces from a judge's flags")
    p.add_argument("--judge", required=True, metavar="JUDGE_ID", help="the judge whose flags to correct")
    p.add_argument(
        "--calibration",
        required=True,
        metavar="DIR",
        help="labelled folder (trajectories.jsonl, verdicts.jsonl) holding the judge's verdicts",
    )
    p.add_argument(
        "--verdicts", required=True, metavar="FILE", help="the judge's verdicts on your unlabelled traces (JSONL)"
    )
    p.add_argument(
        "--labels",
        default=None,
        metavar="FILE",
        help='labels of a few of those traces, JSONL {"trajectory_id": ..., "faulty": true|false}: '
        "adds the prediction-powered estimate",
    )
    p.add_argument("--json", default=None, metavar="OUT", help="also write the estimate and its inputs here")
    p.add_argument("--resamples", type=A.resamples, default=10_000, help="bootstrap replicates (default 10000)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help="bootstrap seed (default 7)")
    p.set_defaults(
        func=lambda a: __import__("trajectory_judge.analysis.statistics.prevalence", fromlist=["x"]).cli_prevalence(a)
    )


# --- run (LLM judges) ----------------------------------------------------------------
def _run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run LLM judges against a model server, resumably")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.cli_run", fromlist=["x"]).cli_run(a))
    if not _needs_arguments(sub, "run"):
        return
    from trajectory_judge.run.cli_run import add_run_arguments

    add_run_arguments(p)


# --- agent (organic episodes) ---------------------------------------------------------
def _agent(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("agent", help="let an LLM drive the support desk; label episodes with the rule checker")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.organic", fromlist=["x"]).cli_agent(a))
    if not _needs_arguments(sub, "agent"):
        return
    from trajectory_judge.run.organic import add_agent_arguments

    add_agent_arguments(p)


# --- batches: export requests, answer them anywhere, import the answers -----------------------
def _export_requests(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-requests", help="write the LLM judges' requests in the OpenAI Batch API's input format")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.batch", fromlist=["x"]).cli_export_requests(a))
    if not _needs_arguments(sub, "export-requests"):
        return
    from trajectory_judge.run.batch import add_export_arguments

    add_export_arguments(p)


def _import_results(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import-results", help="turn Batch API results of exported requests into verdicts")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.batch", fromlist=["x"]).cli_import_results(a))
    if not _needs_arguments(sub, "import-results"):
        return
    from trajectory_judge.run.batch import add_import_arguments

    add_import_arguments(p)


def _run_requests(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run-requests", help="answer exported requests on one or more endpoints (threads or Ray)")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.engines", fromlist=["x"]).cli_run_requests(a))
    if not _needs_arguments(sub, "run-requests"):
        return
    from trajectory_judge.run.engines import add_arguments

    add_arguments(p)


# --- fetch-release -------------------------------------------------------------------
def _fetch_release(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fetch-release", help="download and verify the published raw data")
    p.add_argument("--dir", default=None, help="cache directory (default: TJ_RELEASE_DIR or a user cache)")
    p.add_argument("--base-url", type=A.url, default=None, help="fetch the three files from this mirror instead")
    p.add_argument(
        "--project",
        default=None,
        metavar="OUT",
        help="also (re)write the numbers-only projection of the release into OUT (e.g. data/release)",
    )
    p.set_defaults(
        func=lambda a: __import__("trajectory_judge.provenance.projection", fromlist=["x"]).cli_fetch_release(a)
    )


# --- manifest ------------------------------------------------------------------------
def _manifest(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("manifest", help="write (or --check) the checksum manifest of a data directory")
    p.add_argument("--data", default="data/", help="data directory (default data/)")
    p.add_argument("--check", action="store_true", help="verify instead of writing")
    p.set_defaults(func=lambda a: __import__("trajectory_judge.provenance.manifest", fromlist=["x"]).cli_manifest(a))


# --- import-inspect ------------------------------------------------------------------
def _import_inspect(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import-inspect", help="turn inspect_ai eval logs of our tasks into verdicts and run records")
    p.add_argument(
        "logs", nargs="+", metavar="LOG", help="eval logs (.eval or .json) of trajectory_judge's inspect tasks"
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="folder with trajectories.jsonl; verdicts and run records are appended there (required)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into --data even if SHA256SUMS pins it (then re-pin it with `trajectory-judge manifest`)",
    )
    p.add_argument(
        "--judge-model-name",
        type=A.model_name,
        default=None,
        help="model name used in judge ids (default: the name the server was sent, as run --model takes it: "
        "gpt-4o-mini for the log's openai/gpt-4o-mini, m for openai-api/SERVICE/m)",
    )
    p.set_defaults(func=_cli_import_inspect)


def _cli_import_inspect(args: argparse.Namespace) -> int:
    try:
        from trajectory_judge.inspect_tasks.logs import cli_import_inspect
    except ImportError as exc:
        raise ValueError(
            f"needs inspect_ai ({exc.name} is not installed): pip install 'trajectory-judge[inspect]'"
        ) from None
    return cli_import_inspect(args)


# --- forget ---------------------------------------------------------------------------
def _forget(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("forget", help="remove a judge's verdicts from a data directory (kept in forgotten.jsonl)")
    p.add_argument("--data", required=True, metavar="DIR", help="data folder holding verdicts.jsonl")
    p.add_argument("--judge", required=True, metavar="JUDGE_ID", help="the judge whose verdicts to remove")
    p.add_argument(
        "--force",
        action="store_true",
        help="forget even if SHA256SUMS pins --data (then re-pin it with `trajectory-judge manifest`)",
    )
    p.add_argument(
        "--trajectories",
        default=None,
        metavar="ID,ID,...",
        help="remove only its verdicts on these trajectories (default: all of them)",
    )
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.forget", fromlist=["x"]).cli_forget(a))


# --- merge ----------------------------------------------------------------------------------
def _merge(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="merge data folders of the same trajectories into one")
    p.add_argument("folders", nargs="+", metavar="FOLDER", help="data folders holding the same trajectories.jsonl")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="the merged folder: a new one, or a data folder of the same trajectories (then merged with them)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into --out even if SHA256SUMS pins it (then re-pin it with `trajectory-judge manifest`)",
    )
    p.set_defaults(func=lambda a: __import__("trajectory_judge.run.merge", fromlist=["x"]).cli_merge(a))


VERBS = [
    _build_dataset,
    _build_counterfactual,
    _check,
    _schema,
    _report,
    _misses,
    _prevalence,
    _run,
    _agent,
    _export_requests,
    _run_requests,
    _import_results,
    _fetch_release,
    _manifest,
    _forget,
    _import_inspect,
    _merge,
]


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


VERB_NAMES = frozenset(
    {
        "build-dataset",
        "build-counterfactual",
        "check",
        "schema",
        "report",
        "misses",
        "prevalence",
        "run",
        "agent",
        "export-requests",
        "run-requests",
        "import-results",
        "fetch-release",
        "manifest",
        "forget",
        "import-inspect",
        "merge",
    }
)

READING_VERBS = frozenset({"check", "schema", "report", "misses", "prevalence"})
"""Verbs whose output is for reading, often through ``head`` or ``less``: stdout closing early is not an error."""


def _verb_prog(prog: str, argv: Sequence[str]) -> str:
    # argparse reports unrecognised arguments from the top-level parser; name the verb anyway
    verb = next((a for a in argv if a in VERB_NAMES), None)
    return f"{PROG} {verb}" if prog == PROG and verb else prog


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (2 and one line on stderr for any ordinary mistake)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _Parser(prog=PROG, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True)
    sub.invoked = next((a for a in argv if a in VERB_NAMES), None)  # type: ignore[attr-defined]
    for add in VERBS:
        add(sub)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"{_verb_prog(exc.prog, argv)}: error: {one_line(exc)}", file=sys.stderr)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
