"""Verdict coercion: turn a model's raw response text into a :class:`~trajectory_judge.models.Verdict`.

The rules (paper, Appendix D):

- ``confidence`` is clamped to [0.5, 1.0];
- ``failure_type`` is kept only when the verdict is faulty *and* the string is one of the six
  types, so "flagged but untyped" is recorded as ``None`` (the confusion matrix's missed column);
- ``failure_step`` is kept only when the verdict is faulty and the index names a step of the
  trajectory; an out-of-range step is discarded (``None``), which removes the verdict from the
  localisation denominator;
- a response that cannot be parsed (not JSON, not an object, ``faulty`` not a boolean,
  ``confidence`` not a finite number) votes **clean at confidence 0.5** with the problem recorded
  in ``error``. It is never dropped (dropping would flatter whichever judge fails most) and never
  silently retried.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from trajectory_judge.models import TESTBED_FAILURE_TYPES, Verdict

CONFIDENCE_MIN = 0.5


CONFIDENCE_MAX = 1.0


def _parse(text: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        return None, f"unparseable response: not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, f"unparseable response: expected a JSON object, got {type(obj).__name__}"
    if not isinstance(obj.get("faulty"), bool):
        return None, "unparseable response: 'faulty' missing or not a boolean"
    conf = obj.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not math.isfinite(conf):
        return None, "unparseable response: 'confidence' missing or not a finite number"
    return obj, None


def coerce(
    text: str,
    *,
    trajectory_id: str,
    judge_id: str,
    step_indices: Iterable[int],
    latency_s: float = 0.0,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    note: str | None = None,
) -> Verdict:
    """Coerce one raw response into a verdict (see the module docstring for the rules).

    ``step_indices`` are the step indices of the judged trajectory (the valid range for
    ``failure_step``); ``note`` is an extra problem to record (for example a truncated output).
    """
    ids: dict[str, Any] = dict(trajectory_id=trajectory_id, judge_id=judge_id)
    cost: dict[str, Any] = dict(latency_s=latency_s, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    obj, error = _parse(text)
    if obj is None:
        error = f"{error}; {note}" if note else error
        return Verdict(**ids, faulty=False, confidence=CONFIDENCE_MIN, rationale=str(text)[:2000], error=error, **cost)
    faulty: bool = obj["faulty"]
    confidence = min(CONFIDENCE_MAX, max(CONFIDENCE_MIN, float(obj["confidence"])))
    ftype = obj.get("failure_type")
    failure_type = ftype if faulty and ftype in TESTBED_FAILURE_TYPES else None
    step = obj.get("failure_step")
    valid = set(step_indices)
    failure_step = step if faulty and isinstance(step, int) and not isinstance(step, bool) and step in valid else None
    reasoning = obj.get("reasoning")
    return Verdict(
        **ids,
        faulty=faulty,
        failure_step=failure_step,
        failure_type=failure_type,
        confidence=confidence,
        rationale=reasoning if isinstance(reasoning, str) else "",
        error=note,
        **cost,
    )
