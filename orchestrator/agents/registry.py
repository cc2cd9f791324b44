"""The agents an `--agent` value may name, one registration each: a name (or a prefix
for the agents that take parameters), what it is, and the entry point that makes its
policy ("module:callable", imported only when an agent is loaded, so listing the
agents for `--help` loads no agent code).

A factory takes the whole `--agent` value, the OpenAI settings (the `openai` agent's)
and the secret values a user's process must never see in its environment. An agent of
another package is found by installing it, under the entry-point group
`causal_gym.agents` (`name = "package.module:ENTRY"`, an `AgentEntry`), or registered
at run time with `register_agent` (causal_gym.registries.Registry, like every plug-in
kind).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from causal_gym.registries import Registry, load_entry_point
from orchestrator.errors import AgentSpecError


@dataclass(frozen=True)
class AgentEntry:
    """One agent's registration: the name an `--agent` value matches, the line `--help`
    shows, and the entry point of the factory that makes its policy."""

    #: The exact name, or for a parametrized agent its prefix ("simulated:").
    name: str
    description: str
    factory: str
    #: A parametrized agent's format ("simulated:TURN_SECONDS:TURNS"), and the entry
    #: point that checks a value of it without starting anything.
    pattern: str | None = None
    check: str | None = None
    #: The design family whose named probe this agent is (registered from its contract).
    family: str | None = None


def _accept(name: str, loaded: Any) -> AgentEntry:
    if not isinstance(loaded, AgentEntry) or loaded.name != name:
        raise AgentSpecError(f"agent {name!r}: {loaded!r} is not its AgentEntry")
    return loaded


AGENTS: Registry[AgentEntry] = Registry(
    "agent", "agents", AgentSpecError, group="causal_gym.agents", accept=_accept
)


def register_agent(entry: AgentEntry) -> AgentEntry:
    """Add an agent now (a name, or a parametrized agent's prefix, is registered once)."""
    AGENTS.register(entry.name, entry)
    return entry


@functools.cache
def _register_design_probes() -> None:
    """Each design family's probes are agents, named by its contract's extra_probes
    (hyphenated). Registered on first lookup, not at import: the contracts load
    pydantic, which listing the agents for `--help` must not."""
    from causal_gym.contracts.designs import DesignContract
    from causal_gym.contracts.families import contracts

    for contract in contracts():
        if isinstance(contract, DesignContract):
            for probe in contract.extra_probes:
                name, what = probe.replace("_", "-"), f"hack probe: {contract.name}'s {probe}"
                factory = "orchestrator.agents.factories:probe"
                register_agent(AgentEntry(name, what, factory, family=contract.name))


def entries() -> tuple[AgentEntry, ...]:
    """Every registered agent, in registry order (their factories stay unloaded)."""
    _register_design_probes()
    return AGENTS.values()


def find(spec: str) -> AgentEntry | None:
    """The entry an `--agent` value names (exactly, or by its prefix)."""
    _register_design_probes()
    if spec in AGENTS.names() and AGENTS.get(spec).pattern is None:
        return AGENTS.get(spec)
    for entry in entries():
        if entry.pattern is not None and spec.startswith(entry.name):
            return entry
    return None


def accepted(*, light: bool = False) -> str:
    """Every name and pattern, for errors; `light` (for `--help`, built at import)
    names the design families' probes by kind instead of loading the contracts."""
    if light:
        names = [e.pattern or e.name for e in AGENTS.values() if e.family is None]
        return ", ".join(names) + ", and each design family's probes (named in its contract)"
    return ", ".join(e.pattern or e.name for e in entries())


def load(entry_point: str) -> Any:
    """What an agent's entry point names (imported only now)."""
    return load_entry_point(entry_point, AgentSpecError)


def _builtin(name: str, description: str, factory: str) -> None:
    register_agent(AgentEntry(name, description, f"orchestrator.agents.factories:{factory}"))


_builtin("openai", "a model behind an OpenAI-compatible endpoint", "openai")
_builtin("reference", "the honest reference analysis (the family's sandbox kit)", "reference")
for _probe, _what in (
    ("bayes-prior", "the posterior under the generator's disclosed effect sizes"),
    ("diff-in-means", "difference in means, no adjustment"),
    ("post-treatment", "adjusting for post-treatment columns too"),
    ("linear-ols", "OLS on the declared set (the expert tier's foil)"),
    ("constant", "constant 0 with a huge interval"),
    ("narrow", "the reference with a 1%-of-scale interval"),
    ("pooled-for-every-level", "cate: the pooled ATE for every level"),
    ("per-level-difference-in-means", "cate: a difference in means per level"),
    ("total-as-direct", "mediation: the total effect as direct, no indirect"),
    ("mediator-as-confounder", "mediation: the mediator adjusted for"),
    ("observational-only", "obs_vs_rct: the extract alone, never biased"),
    ("trial-only", "obs_vs_rct: the trial alone"),
    ("always-biased", "obs_vs_rct: the trial alone, always biased"),
):
    _builtin(_probe, f"hack probe: {_what}", "probe")
_builtin("escape", "tries the network, the key and host files; reports what it found", "escape")
register_agent(
    AgentEntry(
        "simulated:",
        "waits per turn (a model's latency) and submits a fixed answer: load tests",
        "orchestrator.agents.factories:simulated",
        pattern="simulated:TURN_SECONDS:TURNS",
        check="orchestrator.agents.factories:check_simulated",
    )
)
register_agent(
    AgentEntry(
        "python:",
        "a user's Policy class, run in its own process",
        "orchestrator.agents.factories:user_policy",
        pattern="python:PATH_OR_MODULE:ClassName",
        check="orchestrator.agents.factories:check_user_policy",
    )
)
