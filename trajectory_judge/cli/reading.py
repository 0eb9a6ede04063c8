"""The verbs that read a folder's verdicts: ``report``, ``misses`` and ``prevalence``.

The report's text and files are written by :mod:`.report`, which this module imports only when ``report``
runs, after choosing how numpy loads (:func:`_one_blas_thread`).
"""

from __future__ import annotations

import argparse
import os
import sys

from trajectory_judge.analysis.statistics.abstention import DELTA as ABSTAIN_DELTA
from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import Verbs, declare

DATA_HELP = "directory with trajectories.jsonl and verdicts.jsonl"


CLUSTER_GONE = (
    "--cluster instance is now --resample instances (a sample: whole instances) or --resample design-instances "
    "(a design: whole instances within groups of the same make-up)"
)
"""What ``report --cluster`` says, for one release, instead of drawing whole instances."""


def add_report(sub: Verbs) -> None:
    """Declare ``trajectory-judge report``."""
    p = sub.add_parser("report", help="compute every metric, interval and delta from raw verdicts")
    p.add_argument("--data", default="data/", help=DATA_HELP)
    p.add_argument("--json", default=None, help="write the machine-readable report here")
    p.add_argument("--markdown", default=None, help="write the tables as Markdown here")
    declare(p, "--resamples", "--seed", seed="bootstrap seed (default 7)")
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
        help="replaced by --resample instances (a sample) or --resample design-instances (a design)",
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
    p.set_defaults(func=run_report, check_args=check_report_args)


def check_report_args(args: argparse.Namespace) -> None:
    """Refuse ``--cluster`` (:data:`CLUSTER_GONE`)."""
    if args.cluster is not None:
        raise ValueError(CLUSTER_GONE)


def run_report(args: argparse.Namespace) -> int:
    _one_blas_thread()
    from trajectory_judge.cli.report import cli_report

    return cli_report(args)


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


def add_misses(sub: Verbs) -> None:
    """Declare ``trajectory-judge misses``."""
    p = sub.add_parser("misses", help="list a judge's misses and false alarms, as the judge saw them")
    p.add_argument("--data", default="data/", help=DATA_HELP)
    p.add_argument("--judge", required=True, metavar="JUDGE_ID", help="the judge, e.g. step:qwen2.5:14b")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--limit",
        type=A.positive_int,
        default=None,
        metavar="N",
        help="show at most N misses and N false alarms as text (default all; --json has all)",
    )
    p.set_defaults(func=run_misses)


def run_misses(args: argparse.Namespace) -> int:
    """``trajectory-judge misses``: print a judge's misses and false alarms (as text, or JSON with ``--json``)."""
    import json
    from pathlib import Path

    from trajectory_judge.analysis.core.loading import load_data
    from trajectory_judge.analysis.core.misses import find_mistakes, read_transcripts
    from trajectory_judge.models import DataError

    data = load_data(args.data)
    try:
        found = find_mistakes(data.trajectories, data.verdicts, args.judge, read_transcripts(args.data))
    except ValueError as exc:
        raise DataError(f"{Path(args.data) / 'verdicts.jsonl'}: {exc}") from None
    if args.json:
        print(json.dumps(found.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(found.to_text(limit=args.limit))
    return 0


def add_prevalence(sub: Verbs) -> None:
    """Declare ``trajectory-judge prevalence``."""
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
    declare(p, "--resamples", "--seed", seed="bootstrap seed (default 7)")
    p.set_defaults(func=run_prevalence)


def run_prevalence(args: argparse.Namespace) -> int:
    """``trajectory-judge prevalence --judge J --calibration DIR --verdicts FILE [--labels FILE] [--json OUT]``."""
    import json
    from pathlib import Path

    from trajectory_judge.analysis.statistics.prevalence import ASSUMPTION, prevalence_from_files, summary_lines
    from trajectory_judge.fileio import atomic_write_text
    from trajectory_judge.provenance.outputs import guard_output

    inputs = [args.verdicts, str(Path(args.calibration) / "verdicts.jsonl")] + ([args.labels] if args.labels else [])
    if args.json:
        guard_output(args.json, inputs=inputs)
    p = prevalence_from_files(
        args.judge, args.calibration, args.verdicts, labels=args.labels, resamples=args.resamples, seed=args.seed
    )
    print("\n".join(summary_lines(p, args.calibration, args.verdicts)))
    if args.json:
        record = {
            **p.to_dict(),
            "inputs": {"calibration": args.calibration, "verdicts": args.verdicts, "labels": args.labels},
            "assumes": ASSUMPTION,
        }
        atomic_write_text(args.json, json.dumps(record, indent=2, allow_nan=False) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
