"""Frozen splits (eval-v1) and their manifest."""
