"""The report's room: loading a folder, the metrics, the stratified paired bootstrap and its plan, paired
discrimination, the statistics drawn from the report's one resample (ranking, agreement), baselines and the
report itself. It imports neither :mod:`~trajectory_judge.analysis.statistics` nor
:mod:`~trajectory_judge.analysis.paper`."""
