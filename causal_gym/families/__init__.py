"""The task families, one folder each (`families/<name>/`): its light contract
(`contract.py`: name, submission model, estimands, staged files, splits), its hooks
(`hooks.py`: how tasks are drawn, worded and scored) and every module only it uses.

Nothing outside a family's folder imports it by name: the registry
(causal_gym/contracts/families.py) names each contract by an entry-point string, the
contract names its hooks the same way, and shared code asks `contract_of(name)` or
`hooks_of(name)`. `conformance.py` checks any registered family against the contract.
This package root stays empty so that importing one family's contract does not load
the others.
"""
