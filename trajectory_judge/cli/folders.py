"""The verbs that change a data folder's verdicts: ``forget``, ``import-inspect`` and ``merge``."""

from __future__ import annotations

import argparse
import sys

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import REPIN


def add_forget(sub: argparse._SubParsersAction) -> None:
    """Declare ``trajectory-judge forget``."""
    p = sub.add_parser("forget", help="remove a judge's verdicts from a data directory (kept in forgotten.jsonl)")
    p.add_argument("--data", required=True, metavar="DIR", help="data folder holding verdicts.jsonl")
    p.add_argument("--judge", required=True, metavar="JUDGE_ID", help="the judge whose verdicts to remove")
    p.add_argument("--force", action="store_true", help=f"forget even if SHA256SUMS pins --data {REPIN}")
    p.add_argument(
        "--trajectories",
        default=None,
        metavar="ID,ID,...",
        help="remove only its verdicts on these trajectories (default: all of them)",
    )
    p.set_defaults(func=run_forget)


def run_forget(args: argparse.Namespace) -> int:
    """``trajectory-judge forget --data DIR --judge ID [--trajectories ID,...] [--force]``.

    A folder pinned by ``SHA256SUMS`` is refused without ``--force``, before anything is written.
    """
    from trajectory_judge.provenance.pins import broken_pins_note, writable_folder
    from trajectory_judge.run.forget import forget_verdicts

    data = writable_folder(args.data, what="a shorter verdicts.jsonl", force=args.force)
    scope = None
    if args.trajectories is not None:
        scope = [t.strip() for t in args.trajectories.split(",") if t.strip()]
        if not scope:
            raise ValueError("--trajectories: give one or more trajectory ids, separated by commas")
    r = forget_verdicts(data, args.judge, scope)
    members = f" and {r.members} member verdict{'s' if r.members != 1 else ''}" if r.members else ""
    links = f", {r.transcripts} transcript link{'s' if r.transcripts != 1 else ''}" if r.transcripts else ""
    runs = f", its part of {r.runs} run record{'s' if r.runs != 1 else ''}" if r.runs else ""
    print(
        f"trajectory-judge: forgot {r.verdicts} verdict{'s' if r.verdicts != 1 else ''}{members}{links}{runs} "
        f"of {args.judge!r}; the lines are kept in {r.backup}; `trajectory-judge run` judges them again",
        file=sys.stderr,
    )
    if note := broken_pins_note(data):
        print(note, file=sys.stderr)
    return 0


def add_import_inspect(sub: argparse._SubParsersAction) -> None:
    """Declare ``trajectory-judge import-inspect``."""
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
    p.add_argument("--force", action="store_true", help=f"write into --data even if SHA256SUMS pins it {REPIN}")
    p.add_argument(
        "--judge-model-name",
        type=A.model_name,
        default=None,
        help="model name used in judge ids (default: the name the server was sent, as run --model takes it: "
        "gpt-4o-mini for the log's openai/gpt-4o-mini, m for openai-api/SERVICE/m)",
    )
    p.set_defaults(func=run_import_inspect)


def run_import_inspect(args: argparse.Namespace) -> int:
    try:
        from trajectory_judge.inspect_tasks.logs import cli_import_inspect
    except ImportError as exc:
        raise ValueError(
            f"needs inspect_ai ({exc.name} is not installed): pip install 'trajectory-judge[inspect]'"
        ) from None
    return cli_import_inspect(args)


def add_merge(sub: argparse._SubParsersAction) -> None:
    """Declare ``trajectory-judge merge``."""
    p = sub.add_parser("merge", help="merge data folders of the same trajectories into one")
    p.add_argument("folders", nargs="+", metavar="FOLDER", help="data folders holding the same trajectories.jsonl")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="the merged folder: a new one, or a data folder of the same trajectories (then merged with them)",
    )
    p.add_argument("--force", action="store_true", help=f"write into --out even if SHA256SUMS pins it {REPIN}")
    p.set_defaults(func=run_merge)


def run_merge(args: argparse.Namespace) -> int:
    from trajectory_judge.run.merge import cli_merge

    return cli_merge(args)
