"""The testbed: the support desk, its oracle, the fault injector, the rule checker, the dataset, and the organic agent.

Layer 2 of the package (above :mod:`trajectory_judge.models` and the model backends): nothing
here knows about judges or metrics.
"""
