"""The run-level guard: settled before any episode starts.

Resolves the key once (a bad key fails the run, not each rollout), refuses a secret
key on runtimes that cannot hide the host from the agent, and cuts the network to
framework-only on container runtimes left at their unrestricted default, so the
agent never reaches the internet after the analyst wheels are installed.
"""

from __future__ import annotations

import verifiers.v1 as vf
from verifiers.v1.configs.runtime import NetworkPolicyConfig

from causal_gym.vf.keys import refuse_unsafe_runtime, resolve_run_key


class CausalGymEnv(vf.SingleAgentEnv):
    def __init__(self, config: vf.SingleAgentEnvConfig) -> None:
        runtime = config.agent.runtime
        key = resolve_run_key(config.taskset.task.env_key)
        refuse_unsafe_runtime(runtime.type, key)
        if isinstance(runtime, NetworkPolicyConfig) and not runtime.network_restricted:
            cut = runtime.model_copy(update={"allow": [], "block": ["*"]})
            config = config.model_copy(
                update={"agent": config.agent.model_copy(update={"runtime": cut})}
            )
        super().__init__(config)
