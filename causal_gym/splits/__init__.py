"""The frozen splits (eval-v1, eval-v2, eval-expert-v1, eval-v3): their manifests (manifest.py)
and freezing and verifying them (freeze.py)."""
