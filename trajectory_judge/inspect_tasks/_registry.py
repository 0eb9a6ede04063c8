"""The ``inspect_ai`` entry point (pyproject ``[project.entry-points.inspect_ai]``): registers the tasks."""

from trajectory_judge.inspect_tasks.tasks import outcome_judge, reply_judge, selfcons_judge, step_judge  # noqa: F401
