"""The frozen splits (every namespace but train, causal_gym/namespaces.py): their
manifests (manifest.py) and freezing and verifying them (freeze.py)."""
