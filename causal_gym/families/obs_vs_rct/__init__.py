"""The `obs_vs_rct` family: its contract (contract.py), hooks (hooks.py) and the
generation only it uses: the confounding bias of its extracts (bias.py) and its
randomized trial file (trial.py).

Empty on purpose: the registry loads the contract by its entry point, and importing
the contract must not load the hooks."""
