"""The Jupyter Book edition, in three rooms.

- :mod:`~trajectory_judge.book.chapters`: one module of helpers per chapter (``notebooks/results.md``
  imports :mod:`trajectory_judge.book.chapters.results`); each calls :mod:`trajectory_judge.analysis`
  for its numbers and hands the records to the renderers.
- :mod:`~trajectory_judge.book.render`: how judges, numbers, tables, figures and sentences are written.
- :mod:`~trajectory_judge.book.building`: executing the notebooks and what the Sphinx extensions in
  ``book/_ext`` put on the pages (provenance, downloads, the execution page, the citation).

Plotting libraries are imported only inside this package.
"""
