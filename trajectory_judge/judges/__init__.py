"""Judges: the rule engine, the LLM views, and self-consistency."""
