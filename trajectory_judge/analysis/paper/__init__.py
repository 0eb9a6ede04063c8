"""The paper's own numbers and claims: the published numbers, the audit that recomputes them, the claims
register and the rule that reads it, its robustness and the changes made to it. Built on
:mod:`~trajectory_judge.analysis.core`."""
