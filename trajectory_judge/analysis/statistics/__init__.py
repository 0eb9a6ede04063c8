"""What goes beyond the paper: selective prediction and abstention, transport to a deployment's prevalence,
prevalence estimation, dependence between runs of one base, variance over seeds, the position of a fault, the
organic episodes and simultaneous bands. Built on :mod:`~trajectory_judge.analysis.core`."""
