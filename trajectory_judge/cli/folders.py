"""The verbs that change a data folder's verdicts: ``forget``, ``import-inspect`` and ``merge``."""

from __future__ import annotations

import argparse
import sys

from trajectory_judge.cli.options import REPIN, Verbs, declare


def add_forget(sub: Verbs) -> None:
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


def add_import_inspect(sub: Verbs) -> None:
    """Declare ``trajectory-judge import-inspect``."""
    p = sub.add_parser("import-inspect", help="turn inspect_ai eval logs of our tasks into verdicts and run records")
    p.add_argument(
        "logs", nargs="+", metavar="LOG", help="eval logs (.eval or .json) of trajectory_judge's inspect tasks"
    )
    declare(
        p,
        "--data",
        "--force",
        "--judge-model-name",
        data="folder with trajectories.jsonl; verdicts and run records are appended there (required)",
        judge_model_name="model name used in judge ids (default: the name the server was sent, as run --model takes "
        "it: gpt-4o-mini for the log's openai/gpt-4o-mini, m for openai-api/SERVICE/m)",
    )
    p.set_defaults(func=run_import_inspect)


def run_import_inspect(args: argparse.Namespace) -> int:
    """``trajectory-judge import-inspect``: import each log, one summary line per log on stderr.

    ``--data`` is required, and a folder pinned by ``SHA256SUMS`` is refused without ``--force``
    (:func:`~trajectory_judge.provenance.pins.writable_folder`), before anything is written; so is a log
    whose judge has another fingerprint than its id has on record (:func:`check_logs`): every log is read
    and checked before the first is written.
    """
    try:
        from trajectory_judge.inspect_tasks.logs import check_logs, read_log, write_log
    except ImportError as exc:
        raise ValueError(
            f"needs inspect_ai ({exc.name} is not installed): pip install 'trajectory-judge[inspect]'"
        ) from None
    from trajectory_judge.provenance.pins import broken_pins_note, writable_folder
    from trajectory_judge.run.store import data_dir_lock

    data = writable_folder(args.data, what="verdicts and run records", force=args.force)
    try:
        logs = [read_log(path, data, judge_model_name=args.judge_model_name) for path in args.logs]
        with data_dir_lock(data):
            check_logs(logs, data)  # every log before any is written
            results = [write_log(r, data) for r in logs]
        for path, r in zip(args.logs, results):
            errored = (
                f"; {r.errored} samples errored in the log (`inspect eval-retry {path}` redoes them)"
                if r.errored
                else ""
            )
            print(
                f"trajectory-judge: {path}: {r.written} written, {r.skipped} already on disk, "
                f"{r.unparseable} unparseable{errored}",
                file=sys.stderr,
            )
    finally:
        if note := broken_pins_note(data):
            print(note, file=sys.stderr)
    return 0


def add_merge(sub: Verbs) -> None:
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
    """``trajectory-judge merge FOLDER... --out DIR [--force]``."""
    import os
    from pathlib import Path

    from trajectory_judge.models import DataError
    from trajectory_judge.provenance.pins import broken_pins_note, is_pinned, pinned_refusal
    from trajectory_judge.run.merge import collect_and_write, summary
    from trajectory_judge.run.store import TRAJECTORIES, data_dir_lock

    out = Path(args.out)
    sources = [Path(s) for s in args.folders]
    exists = out.exists()
    if exists and not out.is_dir():
        raise DataError(f"{out}: exists and is not a folder; --out names a new folder or a data folder")
    if exists and is_pinned(out) and not args.force:
        raise pinned_refusal(out, "merged verdicts")
    if exists and any(out.iterdir()):
        if not (out / TRAJECTORIES).is_file():
            raise DataError(f"{out}: not empty and holds no {TRAJECTORIES}; --out names a new folder or a data folder")
        if not any(os.path.samefile(out, s) for s in sources if s.exists()):
            print(
                f"trajectory-judge merge: note: {out} already holds data; it is merged as the first folder",
                file=sys.stderr,
            )
            sources.insert(0, out)
    elif exists:
        out.rmdir()  # an empty folder: built beside and renamed into place like a new one
        exists = False
    if exists:  # no writer may append to it between reading and writing
        with data_dir_lock(out):
            merged = collect_and_write(sources, out, exists=True)
    else:
        merged = collect_and_write(sources, out, exists=False)
    print(summary(merged, len(sources), out), file=sys.stderr)
    if exists and (note := broken_pins_note(out)):
        print(note, file=sys.stderr)
    return 0
