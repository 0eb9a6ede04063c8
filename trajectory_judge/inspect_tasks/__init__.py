"""The testbed as inspect_ai tasks, and eval logs read back as this project's verdicts.

Needs the ``inspect`` extra (``pip install -e ".[inspect]"``). :mod:`.tasks` holds one ``@task``
per view (``outcome_judge``, ``step_judge``, ``reply_judge``) and the self-consistency ensemble
(``selfcons_judge``); :mod:`.samples` turns trajectories into samples (the same prompt and response
schema ``trajectory-judge run`` sends), :mod:`.scoring` parses and scores the verdicts, and
:mod:`.logs` imports eval logs into a data folder (``trajectory-judge import-inspect``).
"""

from __future__ import annotations

from trajectory_judge.inspect_tasks.tasks import outcome_judge, reply_judge, selfcons_judge, step_judge

__all__ = ["outcome_judge", "reply_judge", "selfcons_judge", "step_judge"]
