"""The `null_detect` family: its contract (contract.py) and hooks (hooks.py).

Empty on purpose: the registry loads the contract by its entry point, and importing
the contract must not load the hooks."""
