"""The Jupyter Book edition: one module of helpers per chapter, a shared style, data paths, execution.

Each chapter's notebook imports its tables and figures from the module named after it
(``notebooks/results.md`` from :mod:`trajectory_judge.book.results`, and so on). Plotting
libraries are imported only inside this package.
"""
