"""``build-dataset`` and ``build-counterfactual``: write a folder's labelled trajectories.

Both write ``DIR/trajectories.jsonl`` under the same guards (:func:`trajectory_judge.testbed.dataset.write_trajectories`):
never over verdicts that name trajectories it would change, nor over bytes a ``SHA256SUMS`` pins, unless ``--force``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import REPIN, Verbs

FORCE = (
    "replace trajectories.jsonl even if verdicts in --out refer to trajectories it changes, "
    f"or SHA256SUMS pins other bytes {REPIN}"
)


def _seed_out_force(p: argparse.ArgumentParser, handler: Callable[[argparse.Namespace], int], **out: Any) -> None:
    """The options both verbs end with, ``--out`` as ``out`` declares it, and the verb's handler."""
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help="generation seed (default 7)")
    p.add_argument("--out", metavar="DIR", **out)
    p.add_argument("--force", action="store_true", help=FORCE)
    p.set_defaults(func=handler)


def add_dataset(sub: Verbs) -> None:
    """Declare ``trajectory-judge build-dataset``."""
    p = sub.add_parser("build-dataset", help="generate the labelled trajectories")
    p.add_argument("--n", type=A.multiple_of_8, default=400, help="number of trajectories (default 400)")
    _seed_out_force(p, run_build_dataset, default=None, help="output folder (required)")


def run_build_dataset(args: argparse.Namespace) -> int:
    """``trajectory-judge build-dataset --n N --seed S --out DIR [--force]``.

    ``--out`` is required. In a folder pinned by ``SHA256SUMS`` the trajectories are written only
    when they are the bytes it pins (a rebuild), or with ``--force``; nothing is written before a refusal.
    Beside them goes ``design.json``, which declares the folder a planted design.
    """
    from trajectory_judge.provenance.pins import broken_pins_note
    from trajectory_judge.testbed.dataset import build_dataset, declare_design, write_trajectories

    out, trajs, seconds = write_trajectories(args.out, lambda: build_dataset(args.n, args.seed), force=args.force)
    print(f"wrote {len(trajs)} trajectories to {out} in {seconds:.2f} s", file=sys.stderr)
    if note := declare_design(out.parent, force=args.force):
        print(note, file=sys.stderr)
    if note := broken_pins_note(out.parent):
        print(note, file=sys.stderr)
    return 0


def add_counterfactual(sub: Verbs) -> None:
    """Declare ``trajectory-judge build-counterfactual``."""
    p = sub.add_parser(
        "build-counterfactual", help="plant the same fault at every step of the same instances (position set)"
    )
    p.add_argument("--instances", type=A.positive_int, default=60, help="number of instances (default 60)")
    _seed_out_force(p, run_build_counterfactual, required=True, help="output folder, e.g. data/counterfactual/")


def run_build_counterfactual(args: argparse.Namespace) -> int:
    """``trajectory-judge build-counterfactual --instances N --seed S --out DIR [--force]``."""
    from trajectory_judge.provenance.pins import broken_pins_note
    from trajectory_judge.testbed.counterfactual import build_counterfactual
    from trajectory_judge.testbed.dataset import write_trajectories

    out, trajs, seconds = write_trajectories(
        args.out, lambda: build_counterfactual(args.instances, args.seed), force=args.force
    )
    n_inst = len({t.instance_id for t in trajs})
    print(
        f"wrote {len(trajs)} trajectories ({n_inst} instances, each clean and with the fault at every step) "
        f"to {out} in {seconds:.2f} s",
        file=sys.stderr,
    )
    if note := broken_pins_note(out.parent):
        print(note, file=sys.stderr)
    return 0
