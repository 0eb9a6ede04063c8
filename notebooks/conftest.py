"""nbval collection for the book's notebooks: every chapter runs offline, the audit included.

The audit chapter reads the paper's verdicts from the committed projection (``data/release``), so
no notebook needs the fetched release; nothing is skipped.
"""
