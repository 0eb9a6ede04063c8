"""Rendering: how the book writes judges, numbers, tables, figures and sentences; records in, HTML and SVG out."""
