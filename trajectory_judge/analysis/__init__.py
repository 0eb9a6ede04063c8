"""The analysis: metrics, the stratified paired bootstrap, paired discrimination, the report, compute spent.

Works on trajectories and verdicts only (never on plotting or the book); the published numbers
the audit compares against are in :mod:`trajectory_judge.analysis.published`.
"""
