"""Chapter helpers: one module per chapter of the book, each computing nothing itself but calling the analysis and handing records to the renderers."""
