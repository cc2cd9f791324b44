"""`--agent` values -> policies, through the agent registry (agents/registry.py): a
value is a registered name (`openai`, `reference`, a hack probe, `escape`) or a
parametrized one (`simulated:...`, `python:...`). Checking a value loads nothing;
loading it imports the agent's factory only then."""

from __future__ import annotations

from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.agents.policy import Policy
from orchestrator.agents.registry import accepted, entries, find, load
from orchestrator.errors import AgentSpecError

#: The registered agents that take no parameter.
BUILTIN_AGENTS: tuple[str, ...] = tuple(e.name for e in entries() if e.pattern is None)


def check_agent_spec(spec: str) -> None:
    """Raise AgentSpecError unless `spec` names a policy (nothing is loaded or started:
    a run checks its agent before any work)."""
    entry = find(spec)
    if entry is None:
        raise AgentSpecError(f"unknown agent {spec!r}: accepted agents are {accepted()}")
    if entry.check is not None:
        load(entry.check)(spec)


def check_agent_loads(spec: str, hidden_values: tuple[str, ...] = ()) -> None:
    """Raise AgentSpecError unless `spec` names a policy that loads: a user's class is
    loaded once in its own isolated process (its file exists, it imports, the class is
    a Policy), then that process is stopped. A run calls this before any work."""
    check_agent_spec(spec)
    if spec.startswith("python:"):
        load_policy(spec, hidden_values=hidden_values).close()


def load_policy(
    spec: str,
    openai_config: OpenAIPolicyConfig | None = None,
    hidden_values: tuple[str, ...] = (),
) -> Policy:
    """The policy an --agent value names. A user's class (`python:...`) runs in its
    own process (process_policy.py); `hidden_values` are secrets (the key's hex) that
    must not reach that process's environment under any variable name."""
    check_agent_spec(spec)
    entry = find(spec)
    assert entry is not None
    policy: Policy = load(entry.factory)(spec, openai_config, hidden_values)
    return policy
