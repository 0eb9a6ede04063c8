"""Which trajectories did a judge get wrong: its misses and false alarms, as it saw them.

A *miss* is a faulty trajectory the judge called clean; a *false alarm* a clean trajectory it
called faulty. Each comes with the label, the verdict and the text of the trajectory in the judge's
view (:func:`trajectory_judge.judges.views.render_view`): an outcome judge is shown only the goal
and the final answer, so a miss it could not have seen reads as such. A verdict imported from an
inspect_ai eval log also names its transcript (log file, sample id, epochs; ``transcripts.jsonl``),
which ``inspect view`` opens.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from trajectory_judge.judges.views import VIEWS, render_view
from trajectory_judge.models import DataError, JudgeSpec, Label, Trajectory, Verdict, stratum

KINDS: tuple[str, ...] = ("miss", "false alarm")
"""The two kinds of mistake, in the order they are listed."""


TRANSCRIPTS = "transcripts.jsonl"
"""Where an imported verdict's transcript is: one line per (trajectory, judge) with log, sample id, epochs."""


def read_transcripts(data_dir: str | Path) -> dict[tuple[str, str], str]:
    """``(trajectory_id, judge_id) -> "LOG, sample ID, epoch E"`` from ``DIR/transcripts.jsonl`` ({} when absent)."""
    path = Path(data_dir) / TRANSCRIPTS
    if not path.exists():
        return {}
    out = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            epochs = ", ".join(map(str, rec["epochs"]))
            out[(rec["trajectory_id"], rec["judge_id"])] = (
                f"{rec['log']}, sample {rec['sample_id']}, epoch{'s' if len(rec['epochs']) > 1 else ''} {epochs}"
            )
        except (ValueError, KeyError, TypeError):
            raise DataError(
                f"{path}:{lineno}: not a transcript record (trajectory_id, judge_id, log, sample_id, epochs)"
            ) from None
    return out


@dataclass(frozen=True)
class Mistake:
    """One trajectory a judge got wrong."""

    kind: str
    """``miss`` (faulty, judged clean) or ``false alarm`` (clean, judged faulty)."""
    trajectory: Trajectory
    """The trajectory, with its label."""
    verdict: Verdict
    """The judge's verdict on it."""
    seen: str
    """The trajectory as the judge was shown it (its view)."""
    transcript: str | None = None
    """Where the judge's transcript is (an inspect_ai eval log, sample and epochs), when it came from one."""

    @property
    def label(self) -> Label:
        assert self.trajectory.label is not None
        return self.trajectory.label

    def truth(self) -> str:
        """The label in words: ``clean``, or ``silent fault: TYPE at step K``."""
        lab = self.label
        if not lab.faulty:
            return "clean"
        at = f" at step {lab.failure_step}" if lab.failure_step is not None else ""
        return f"{stratum(lab)} fault: {lab.failure_type}{at}"

    def said(self) -> str:
        """The verdict in words: ``clean (confidence 0.80)`` or ``faulty: TYPE at step K (confidence 0.90)``."""
        v = self.verdict
        what = "faulty" if v.faulty else "clean"
        if v.faulty and v.failure_type:
            what += f": {v.failure_type}"
        if v.faulty and v.failure_step is not None:
            what += f" at step {v.failure_step}"
        return f"{what} (confidence {v.confidence:.2f})"


@dataclass(frozen=True)
class Mistakes:
    """A judge's misses and false alarms on a data directory."""

    judge_id: str
    """The judge."""
    view: str
    """The view it reads (``outcome``, ``step`` or ``reply``; the full trajectory is ``step``)."""
    judged: int
    """Trajectories it has a verdict on."""
    faults: int
    """Faulty trajectories among them."""
    clean: int
    """Clean trajectories among them."""
    misses: tuple[Mistake, ...]
    """Faulty trajectories judged clean, in file order."""
    false_alarms: tuple[Mistake, ...]
    """Clean trajectories judged faulty, in file order."""

    def summary(self) -> str:
        """One sentence: what the judge judged and how often it was wrong each way."""
        missed = f"missed {_of(len(self.misses), self.faults, 'fault')}"
        raised = _count(len(self.false_alarms), "false alarm") if self.false_alarms else "no false alarm"
        alarms = (
            f"raised {raised} on its {_count(self.clean, 'clean run')}"
            if self.clean
            else "had no clean runs to raise a false alarm on"
        )
        spec = JudgeSpec.parse(self.judge_id)
        reads = f"{self.view} view" if spec.family in VIEWS else "reads the full trajectory"
        return f"{self.judge_id} ({reads}) judged {_count(self.judged, 'trajectory')}: it {missed} and {alarms}."

    def to_frame(self) -> pd.DataFrame:
        """One row per mistake: kind, trajectory, truth, verdict and confidence."""
        rows = [
            (m.kind, m.trajectory.trajectory_id, m.truth(), m.said(), m.verdict.confidence)
            for m in (*self.misses, *self.false_alarms)
        ]
        return pd.DataFrame(rows, columns=["kind", "trajectory", "truth", "verdict", "confidence"]).set_index(
            "trajectory"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: counts, then every mistake with its label, verdict and the text the judge saw."""

        def item(m: Mistake) -> dict[str, Any]:
            return {
                "trajectory_id": m.trajectory.trajectory_id,
                "truth": m.truth(),
                "label": m.label.model_dump(mode="json"),
                "verdict": m.verdict.model_dump(mode="json"),
                "seen": m.seen,
                "transcript": m.transcript,
            }

        return {
            **{k: getattr(self, k) for k in ("judge_id", "view", "judged", "faults", "clean")},
            "misses": [item(m) for m in self.misses],
            "false_alarms": [item(m) for m in self.false_alarms],
        }

    def to_text(self, limit: int | None = None, width: int = 100) -> str:
        """For a terminal: the summary, then each mistake (at most ``limit`` of each kind) with what the judge saw."""
        out = [self.summary()]
        for title, items in (("Misses", self.misses), ("False alarms", self.false_alarms)):
            shown = items if limit is None else items[:limit]
            more = f" (the first {len(shown)})" if len(shown) < len(items) else ""
            out.append(f"\n{title}: {len(items)}{more}")
            for i, m in enumerate(shown, 1):
                out.append(f"\n--- {m.kind} {i} of {len(items)}: {m.trajectory.trajectory_id} ---")
                out.append(f"truth:   {m.truth()}")
                out.append(f"verdict: {m.said()}")
                if m.transcript:
                    out.append(
                        f"transcript: {m.transcript} (inspect view --log-dir {Path(m.transcript.split(', sample ')[0]).parent})"
                    )
                if m.verdict.rationale:
                    out.append(
                        textwrap.fill(
                            m.verdict.rationale, width, initial_indent="because: ", subsequent_indent="         "
                        )
                    )
                out.append("what the judge saw:")
                out.extend(
                    textwrap.fill(line, width, initial_indent="  | ", subsequent_indent="  |     ")
                    for line in m.seen.splitlines()
                )
        return "\n".join(out)


def _count(n: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


def _of(k: int, n: int, word: str) -> str:
    if n == 0:
        return f"nothing (it judged no {word}s)"
    if k == 0:
        return f"none of its {_count(n, word)}"
    if k == n:
        return f"all of its {_count(n, word)}" if n > 1 else f"its one {word}"
    return f"{k} of its {_count(n, word)}"


def find_mistakes(
    trajectories: Sequence[Trajectory],
    verdicts: Sequence[Verdict],
    judge_id: str,
    transcripts: dict[tuple[str, str], str] | None = None,
) -> Mistakes:
    """The misses and false alarms of ``judge_id``; ValueError listing the judges present when it has no verdicts.

    ``transcripts`` (:func:`read_transcripts`) names where each verdict's transcript is, if known.
    """
    mine = {v.trajectory_id: v for v in verdicts if v.judge_id == judge_id}
    if not mine:
        present = list(dict.fromkeys(v.judge_id for v in verdicts))
        raise ValueError(f"no verdicts of judge {judge_id!r}; judges present: {', '.join(present)}")
    view = JudgeSpec.parse(judge_id).rendered_view
    judged = [t for t in trajectories if t.trajectory_id in mine and t.label is not None]
    found: dict[str, list[Mistake]] = {k: [] for k in KINDS}
    for t in judged:
        v = mine[t.trajectory_id]
        assert t.label is not None
        if v.faulty != t.label.faulty:
            kind = "miss" if t.label.faulty else "false alarm"
            found[kind].append(
                Mistake(kind, t, v, render_view(view, t), (transcripts or {}).get((t.trajectory_id, judge_id)))
            )
    faults = sum(1 for t in judged if t.label is not None and t.label.faulty)
    return Mistakes(
        judge_id, view, len(judged), faults, len(judged) - faults, tuple(found["miss"]), tuple(found["false alarm"])
    )
