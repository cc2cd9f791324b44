"""Task families as declarations: `registry.family_spec(name)` answers everything that
differs by family. Import `causal_gym.families.registry` (this package root stays
empty so that importing one family module does not load the others)."""
