"""Import costs are a property of the code: the CLIs and the package roots load no
heavy library until a command needs it (scripts/bench_cli.py times the result)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import get_args

HEAVY = ("numpy", "pandas", "scipy", "statsmodels", "networkx", "pydantic", "openai", "verifiers")


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys; {statement}; "
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def test_cli_modules_and_package_roots_load_nothing_heavy() -> None:
    assert loaded_after("import causal_gym, orchestrator, causal_gym.cli, orchestrator.cli") == []
    assert loaded_after("import causal_gym.rng_keys, orchestrator.agents") == []


def test_the_family_registry_and_the_wire_load_no_numeric_library() -> None:
    """Workers import the registry (a family's submission model is their submit tool):
    every family module keeps numpy, pandas and networkx inside the methods that need
    them."""
    loaded = loaded_after("import causal_gym.contracts.families, causal_gym.wire")
    assert not set(loaded) & {"numpy", "pandas", "scipy", "statsmodels", "networkx"}, loaded


def test_public_names_still_resolve_on_first_use() -> None:
    assert loaded_after("from causal_gym import generate_task") != []
    assert "numpy" not in loaded_after("from causal_gym import DerivationKey, resolve_key")


def test_written_out_constants_match_their_sources() -> None:
    from scipy.stats import norm

    from causal_gym.contracts.designs import DesignContract
    from causal_gym.contracts.families import contracts
    from causal_gym.reference.analyst import Z
    from causal_gym.task_id import FAMILIES
    from causal_gym.vf.taskset import FamilyName
    from orchestrator.agents.registry import entries
    from orchestrator.cli.common import AGENT_HELP

    assert float(norm.ppf(0.95)) == Z  # to the last bit
    assert tuple(get_args(FamilyName)) == FAMILIES
    listed = AGENT_HELP.rstrip(".").split(", ")
    # --help lists every agent but the design probes, which it names by kind (listing
    # them loads the contracts); those are exactly the design contracts' probes.
    assert listed[:-1] == [e.pattern or e.name for e in entries() if e.family is None]
    assert listed[-1] == "and each design family's probes (named in its contract)"
    design = {(e.family, e.name) for e in entries() if e.family is not None}
    assert design == {
        (c.name, p.replace("_", "-"))
        for c in contracts()
        if isinstance(c, DesignContract)
        for p in c.extra_probes
    }
