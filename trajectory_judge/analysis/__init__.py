"""The analysis: every number the book prints is computed here, once, into a record the chapters render.

Metrics, the stratified paired bootstrap and the report (:mod:`.report`); paired discrimination
(:mod:`.paired`) and its detail and camera-ready quantities (:mod:`.paired_detail`); the audit of the
published numbers (:mod:`.audit`) and the claims register (:mod:`.register`); the organic episodes
(:mod:`.organic`); compute spent (:mod:`.cost`); the procedure as the metrics chapter shows it
(:mod:`.procedure`). Works on trajectories and verdicts only (never on plotting or the book); the
published numbers the audit compares against are in :mod:`trajectory_judge.analysis.published`.
"""
