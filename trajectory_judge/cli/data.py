"""The verbs about a folder's files: ``check``, ``schema``, ``fetch-release`` and ``manifest``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import Verbs


def add_check(sub: Verbs) -> None:
    """Declare ``trajectory-judge check``."""
    p = sub.add_parser("check", help="validate trajectories and run the rule checker over them")
    p.add_argument("file", metavar="FILE|DIR", help="a trajectories JSONL file, or a folder holding trajectories.jsonl")
    p.add_argument("--out", default=None, help="write one programmatic verdict per trajectory here")
    p.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    """``trajectory-judge check FILE|DIR [--out VERDICTS]`` (a folder: its ``trajectories.jsonl``)."""
    from trajectory_judge.judges.programmatic import ProgrammaticJudge, foreign_tools_note, load_any
    from trajectory_judge.models import OUTCOME_ONLY, DataError, fault_types_lines, load_fault_types, write_jsonl
    from trajectory_judge.provenance.outputs import guard_output
    from trajectory_judge.testbed.checker import checker_table

    if Path(args.file).is_dir():
        if not (Path(args.file) / "trajectories.jsonl").is_file():
            raise DataError(
                f"{args.file}: a folder that holds no trajectories.jsonl; give a trajectories file or a data folder"
            )
        args.file = str(Path(args.file) / "trajectories.jsonl")
    if args.out:
        guard_output(args.out, inputs=[args.file])
    trajs = load_any(args.file)  # raises DataError naming file and line; nothing written
    if note := foreign_tools_note(trajs):
        print(note, file=sys.stderr)
    folder = Path(args.file).parent
    for line in fault_types_lines(trajs, load_fault_types(folder)):  # the folder's own types, and what looks amiss
        print(line, file=sys.stderr if line.startswith("warning:") else sys.stdout)
    print(f"{'type':<24}{'n':>6}{'flagged':>10}{'typed':>8}")
    for kind, n, flagged, typed in checker_table(trajs):
        print(
            f"{kind:<24}{n:>6}{flagged / n:>10.3f}{typed / n if kind not in ('clean', 'unlabelled', OUTCOME_ONLY) else float('nan'):>8.3f}"
        )
    if args.out:
        judge = ProgrammaticJudge()
        write_jsonl(args.out, [judge.judge(t) for t in trajs])
        print(f"wrote {len(trajs)} programmatic verdicts to {args.out}", file=sys.stderr)
    return 0


def add_schema(sub: Verbs) -> None:
    """Declare ``trajectory-judge schema``."""
    p = sub.add_parser("schema", help="print the JSON Schema of trajectories, labels or verdicts")
    p.add_argument(
        "kind",
        choices=("trajectories", "labels", "verdicts"),
        help="one line of trajectories.jsonl, the label inside a trajectory, or one line of verdicts.jsonl",
    )
    p.add_argument("--out", default=None, metavar="FILE", help="write the schema to FILE instead of printing it")
    p.set_defaults(func=run_schema)


def run_schema(args: argparse.Namespace) -> int:
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


def add_fetch_release(sub: Verbs) -> None:
    """Declare ``trajectory-judge fetch-release``."""
    p = sub.add_parser("fetch-release", help="download and verify the published raw data")
    p.add_argument("--dir", default=None, help="cache directory (default: TJ_RELEASE_DIR or a user cache)")
    p.add_argument("--base-url", type=A.url, default=None, help="fetch the three files from this mirror instead")
    p.add_argument(
        "--project",
        default=None,
        metavar="OUT",
        help="also (re)write the numbers-only projection of the release into OUT (e.g. data/release)",
    )
    p.set_defaults(func=run_fetch_release)


def run_fetch_release(args: argparse.Namespace) -> int:
    """``trajectory-judge fetch-release [--dir DIR] [--base-url URL] [--project OUT]``: exit 1 when the release cannot
    be fetched or does not verify, 2 when its projection cannot be written."""
    from trajectory_judge.models import DataError
    from trajectory_judge.provenance.projection import project_release
    from trajectory_judge.provenance.release import ReleaseError, fetch_release

    out = None if args.project is None else Path(args.project)
    if out is not None and out.exists() and not out.is_dir():
        print(f"trajectory-judge fetch-release: error: --project {out}: exists and is not a directory", file=sys.stderr)
        return 2
    try:
        source = fetch_release(args.dir, base_url=args.base_url)
    except (ReleaseError, OSError) as exc:
        if out is None and not isinstance(exc, ReleaseError):
            raise  # without --project, an unwritable cache is one line and exit 2, as every verb's
        print(f"trajectory-judge: fetch-release failed: {exc}", file=sys.stderr)
        return 1
    print(f"release verified in {source}")
    if out is None:
        print(f"use it with: export TJ_RELEASE_DIR={source}")
        return 0
    try:
        project_release(source, out)
    except (ReleaseError, DataError, OSError) as exc:
        print(f"trajectory-judge fetch-release: error: {exc}", file=sys.stderr)
        return 2
    print(f"projection written to {out}")
    return 0


def add_manifest(sub: Verbs) -> None:
    """Declare ``trajectory-judge manifest``."""
    p = sub.add_parser("manifest", help="write (or --check) the checksum manifest of a data directory")
    p.add_argument("--data", default="data/", help="data directory (default data/)")
    p.add_argument("--check", action="store_true", help="verify instead of writing")
    p.set_defaults(func=run_manifest)


def run_manifest(args: argparse.Namespace) -> int:
    """``trajectory-judge manifest --data DIR [--check]``."""
    from trajectory_judge.models import DataError
    from trajectory_judge.provenance.manifest import DATA_FILES, check_manifest, write_manifest

    if args.check:
        return check_manifest(args.data)
    if not Path(args.data).is_dir():
        raise DataError(f"{args.data}: no such directory")
    if not any((Path(args.data) / n).is_file() for n in DATA_FILES):
        raise DataError(f"{args.data}: none of {', '.join(DATA_FILES)} is there; nothing to list")
    path = write_manifest(args.data)
    print(f"wrote {path}", file=sys.stderr)
    return 0
