"""Scripts run from a checkout (`python scripts/NAME.py`); a package so that tests import
their shared constants as `scripts.NAME` even where another distribution installs a
top-level `scripts` package (verl 0.9.1's wheel ships one, and a regular package would
otherwise win over this folder as a namespace package)."""
