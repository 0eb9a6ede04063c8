"""``build-dataset`` and ``build-counterfactual``: write a folder's labelled trajectories.

Both write ``DIR/trajectories.jsonl`` under the same guards (:func:`trajectory_judge.testbed.dataset.write_trajectories`):
never over verdicts that name trajectories it would change, nor over bytes a ``SHA256SUMS`` pins, unless ``--force``.
"""

from __future__ import annotations

import argparse
import sys

from trajectory_judge.cli import argtypes as A
from trajectory_judge.cli.options import REPIN

FORCE = (
    "replace trajectories.jsonl even if verdicts in --out refer to trajectories it changes, "
    f"or SHA256SUMS pins other bytes {REPIN}"
)
SEED = "generation seed (default 7)"


def add_dataset(sub: argparse._SubParsersAction) -> None:
    """Declare ``trajectory-judge build-dataset``."""
    p = sub.add_parser("build-dataset", help="generate the labelled trajectories")
    p.add_argument("--n", type=A.multiple_of_8, default=400, help="number of trajectories (default 400)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help=SEED)
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (required)")
    p.add_argument("--force", action="store_true", help=FORCE)
    p.set_defaults(func=run_build_dataset)


def run_build_dataset(args: argparse.Namespace) -> int:
    """``trajectory-judge build-dataset --n N --seed S --out DIR [--force]``.

    ``--out`` is required. In a folder pinned by ``SHA256SUMS`` the trajectories are written only
    when they are the bytes it pins (a rebuild), or with ``--force``; nothing is written before a refusal.
    Beside them goes ``design.json``, which declares the folder a planted design.
    """
    from trajectory_judge.provenance.pins import broken_pins_note
    from trajectory_judge.testbed.dataset import build_dataset, declare_design, write_trajectories

    out, trajs, seconds = write_trajectories(args, lambda: build_dataset(args.n, args.seed))
    print(f"wrote {len(trajs)} trajectories to {out} in {seconds:.2f} s", file=sys.stderr)
    if note := declare_design(out.parent, force=args.force):
        print(note, file=sys.stderr)
    if note := broken_pins_note(out.parent):
        print(note, file=sys.stderr)
    return 0


def add_counterfactual(sub: argparse._SubParsersAction) -> None:
    """Declare ``trajectory-judge build-counterfactual``."""
    p = sub.add_parser(
        "build-counterfactual", help="plant the same fault at every step of the same instances (position set)"
    )
    p.add_argument("--instances", type=A.positive_int, default=60, help="number of instances (default 60)")
    p.add_argument("--seed", type=A.nonnegative_int, default=7, help=SEED)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder, e.g. data/counterfactual/")
    p.add_argument("--force", action="store_true", help=FORCE)
    p.set_defaults(func=run_build_counterfactual)


def run_build_counterfactual(args: argparse.Namespace) -> int:
    """``trajectory-judge build-counterfactual --instances N --seed S --out DIR [--force]``."""
    from trajectory_judge.provenance.pins import broken_pins_note
    from trajectory_judge.testbed.counterfactual import build_counterfactual
    from trajectory_judge.testbed.dataset import write_trajectories

    out, trajs, seconds = write_trajectories(args, lambda: build_counterfactual(args.instances, args.seed))
    n_inst = len({t.instance_id for t in trajs})
    print(
        f"wrote {len(trajs)} trajectories ({n_inst} instances, each clean and with the fault at every step) "
        f"to {out} in {seconds:.2f} s",
        file=sys.stderr,
    )
    if note := broken_pins_note(out.parent):
        print(note, file=sys.stderr)
    return 0
