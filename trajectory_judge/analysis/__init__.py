"""The analysis: every number the book prints is computed here, once, into a record the chapters render.

Three rooms: :mod:`.core` (loading, metrics, the bootstrap, the report), :mod:`.statistics` (what goes
beyond the paper) and :mod:`.paper` (the published numbers, the audit and the claims register). Works on
trajectories and verdicts only, never on plotting or the book.
"""
