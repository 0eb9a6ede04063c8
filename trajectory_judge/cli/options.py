"""The options several verbs share, declared once: type, default and metavar here, the help where it is the same.

A verb adds them in the order its ``--help`` lists them (:func:`declare`), giving its own help where its
wording differs. Reading this module imports no judge, client or analysis.
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol

from trajectory_judge.cli import argtypes as A
from trajectory_judge.models import ENSEMBLE_FAMILY, LLM_VIEWS

JUDGE_FAMILIES: tuple[str, ...] = (*LLM_VIEWS, ENSEMBLE_FAMILY)
"""What ``--judges`` names (:data:`trajectory_judge.run.settings.JUDGE_FAMILIES`)."""

SELFCONS_TEMPERATURE, SELFCONS_SEEDS = 0.7, (7, 8, 9)
"""The self-consistency ensemble's defaults (:data:`trajectory_judge.judges.selfcons.TEMPERATURE` and
``SEEDS``, the paper's): written here so that reading the options does not import the judges."""


class Verbs(Protocol):
    """What ``ArgumentParser.add_subparsers`` returns: each verb is declared with ``add_parser``."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


REPIN = "(then re-pin it with `trajectory-judge manifest`)"

OPTIONS: dict[str, dict[str, Any]] = {
    "--data": {"default": None, "metavar": "DIR"},
    "--force": {"action": "store_true", "help": f"write into --data even if SHA256SUMS pins it {REPIN}"},
    "--judges": {
        "type": A.name_list(JUDGE_FAMILIES),
        "default": None,
        "help": f"comma-separated, from {','.join(JUDGE_FAMILIES)} (default outcome,step,reply; none with --prompt; "
        "selfcons with --prompt samples the template: selfconsK+NAME:MODEL)",
    },
    "--prompt": {"default": None, "metavar": "FILE"},
    "--view": {"choices": list(LLM_VIEWS), "default": None},
    "--backend": {"choices": ["ollama", "openai"], "default": "openai"},
    "--base-url": {"type": A.url, "default": "http://127.0.0.1:8080"},
    "--api-key-env": {"type": A.env_name, "default": None, "metavar": "NAME"},
    "--model": {"type": A.model_name, "required": True},
    "--judge-model-name": {"type": A.model_name, "default": None},
    "--limit": {"type": A.positive_int, "default": None},
    "--num-ctx": {"type": A.positive_int, "default": 8192},
    "--max-tokens": {"type": A.positive_int, "default": 512, "help": "output budget per request (default 512)"},
    "--temperature": {"type": A.nonnegative_float, "default": 0.0, "help": "single-pass temperature (default 0)"},
    "--seed": {"type": A.nonnegative_int, "default": 7},
    "--selfcons-temperature": {
        "type": A.nonnegative_float,
        "default": SELFCONS_TEMPERATURE,
        "metavar": "T",
        "help": f"the self-consistency members' temperature (default {SELFCONS_TEMPERATURE:g})",
    },
    "--selfcons-seeds": {
        "type": A.int_list,
        "default": SELFCONS_SEEDS,
        "metavar": "SEEDS",
        "help": "the self-consistency members' seeds, comma-separated, one member each: an odd number, 3 or more; "
        f"K in selfconsK is their count (default {','.join(map(str, SELFCONS_SEEDS))})",
    },
    "--timeout": {"type": A.positive_float, "default": 600.0, "help": "seconds per request (default 600)"},
    "--retries": {"type": A.nonnegative_int, "default": 3},
    "--retry-budget": {"type": A.nonnegative_float, "default": 600.0, "metavar": "SECONDS"},
    "--resamples": {"type": A.resamples, "default": 10_000, "help": "bootstrap replicates (default 10000)"},
    "--quiet": {"action": "store_true"},
}
"""Each shared option's declaration (``add_argument``'s keywords)."""


def declare(p: argparse.ArgumentParser, *names: str, **helps: Any) -> None:
    """Add the shared options ``names`` to ``p``, in that order; ``helps`` (by destination, ``num_ctx=...``) gives an
    option the verb's own help (None: none)."""
    for name in names:
        dest = name.lstrip("-").replace("-", "_")
        p.add_argument(name, **{**OPTIONS[name], **({"help": helps[dest]} if dest in helps else {})})


def judge_options(p: argparse.ArgumentParser, **helps: Any) -> None:
    """The decoding options of ``run`` and ``export-requests``, after ``--limit``: ``--max-tokens`` to ``--selfcons-seeds``."""
    declare(p, "--max-tokens", "--temperature", "--seed", "--selfcons-temperature", "--selfcons-seeds", **helps)


def check_judge_options(args: argparse.Namespace) -> None:
    """What ``run`` and ``export-requests`` check between their options (:func:`trajectory_judge.run.settings.check_judge_options`)."""
    from trajectory_judge.run.settings import check_judge_options

    check_judge_options(args)
