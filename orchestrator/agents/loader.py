"""Agent names -> policies: `openai`, the scripted agents, or a user's class."""

from __future__ import annotations

from orchestrator.agents.openai_policy import OpenAIPolicy, OpenAIPolicyConfig
from orchestrator.agents.policy import Policy
from orchestrator.agents.process_policy import PolicyProcessError, ProcessPolicy
from orchestrator.agents.scripted import (
    EscapePolicy,
    ProbePolicy,
    ReferencePolicy,
    SimulatedPolicy,
)
from orchestrator.errors import OrchestratorError

#: The seed families' probes (constant and narrow answer every family; linear-ols is
#: the honest reference on linear tasks and the expert tier's foil; bayes-prior is
#: the posterior under the generator's disclosed effect sizes), then the
#: multi-estimand families' own (reference/estimand_probes.py).
PROBE_AGENTS = (
    "bayes-prior",
    "diff-in-means",
    "post-treatment",
    "linear-ols",
    "constant",
    "narrow",
    "pooled-for-every-level",
    "per-level-difference-in-means",
    "total-as-direct",
    "mediator-as-confounder",
    "observational-only",
    "trial-only",
    "always-biased",
)
BUILTIN_AGENTS = ("openai", "reference", *PROBE_AGENTS, "escape")
USER_AGENT_FORMAT = "python:PATH_OR_MODULE:ClassName"
SIMULATED_FORMAT = "simulated:TURN_SECONDS:TURNS"


class AgentSpecError(OrchestratorError, ValueError):
    """Raised while resolving an --agent value that names no usable policy."""


def check_agent_spec(spec: str) -> None:
    """Raise AgentSpecError unless `spec` names a policy (nothing is loaded or started:
    a run checks its agent before any work)."""
    if spec in BUILTIN_AGENTS:
        return
    if spec.startswith("simulated:"):
        _simulated(spec)
        return
    if spec.startswith("python:"):
        if spec.count(":") != 2 or not all(spec.split(":")):
            raise AgentSpecError(f"user agents are given as {USER_AGENT_FORMAT}, got {spec!r}")
        return
    raise AgentSpecError(
        f"unknown agent {spec!r}: accepted agents are "
        f"{', '.join(BUILTIN_AGENTS)}, {SIMULATED_FORMAT} or {USER_AGENT_FORMAT}"
    )


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
    if spec == "openai":
        if openai_config is None:
            raise AgentSpecError("the openai agent needs --base-url and --model")
        return OpenAIPolicy(openai_config)
    if spec == "reference":
        return ReferencePolicy()
    if spec in PROBE_AGENTS:
        return ProbePolicy(spec)
    if spec == "escape":
        return EscapePolicy()
    if spec.startswith("simulated:"):
        return _simulated(spec)
    check_agent_spec(spec)  # a python: spec in the right format, or an error
    try:
        return ProcessPolicy(spec, hidden_values)
    except PolicyProcessError as exc:
        raise AgentSpecError(str(exc)) from exc


def _simulated(spec: str) -> SimulatedPolicy:
    try:
        _, seconds, turns = spec.split(":")
        turn_s, count = float(seconds), int(turns)
    except ValueError:
        raise AgentSpecError(
            f"simulated agents are given as {SIMULATED_FORMAT}, got {spec!r}"
        ) from None
    if not (0 <= turn_s <= 3600 and 1 <= count <= 1000):
        raise AgentSpecError(f"{spec!r}: turn seconds in [0, 3600] and turns in [1, 1000]")
    return SimulatedPolicy(turn_s, count)
