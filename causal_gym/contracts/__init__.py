"""The light layer: what a family is to everyone who does not generate its tasks.

Its contract (contract.py), the answer models the families share (submissions.py) and
the registry of families (families.py). Below everything that generates: it imports
pydantic, the namespaces and the registry helper, nothing numeric, so the worker side,
the command lines' start-up and a stream's client can read it. Empty on purpose: import
the module you need.
"""
