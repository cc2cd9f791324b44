"""Validation of a submission and the calibrated reward (import the modules
themselves); the submission models and their schemas are the families' contracts'."""
