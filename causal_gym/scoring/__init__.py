"""Submission schemas, validation and the reward (import the modules themselves)."""
