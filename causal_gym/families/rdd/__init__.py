"""The `rdd` design family (contracts/designs.py): its contract, hooks and model."""
