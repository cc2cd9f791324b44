"""The `ate` family: one contract (contract.py); its tasks use the default hooks.

Empty on purpose: the registry loads the contract by its entry point, and importing
the contract must not load the hooks."""
