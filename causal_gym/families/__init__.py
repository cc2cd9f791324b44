"""Task families: each one a light contract (its module here: name, submission model,
estimands, staged files, splits) and hooks loaded by entry point (its `_hooks` module:
how tasks are drawn, worded and scored). `registry.py` lists them, one line each, and
everything that differs by family asks `registry.contract_of(name)` or
`hooks.hooks_of(name)`. This package root stays empty so that importing one family's
contract does not load the others."""
