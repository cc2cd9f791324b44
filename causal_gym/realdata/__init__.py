"""Real tables for the `real` tier: covariates from real studies (tables.py), which
the hidden model of a real task resamples as its pre-treatment columns."""
