"""The GPU-scale GRPO configurations under configs/gpu/ load in the libraries' own
config loaders: TRL's TrlParser builds GRPOConfig and ModelConfig from the TRL file,
hydra composes the verl file on verl's shipped ppo_trainer.yaml and verl's own
validate_config (what `verl.trainer.main_ppo` runs first) accepts it. The agent-loop
file's settings are the adapter's (AdapterSettings refuses a misspelt key).

This machine has no GPU, and transformers refuses bf16 without one; the test tells
that one hardware probe there is a GPU and changes nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.integrations.settings import AdapterSettings

pytestmark = [pytest.mark.torch]

GPU = Path(__file__).resolve().parents[1] / "configs" / "gpu"


def trl_config(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple[Any, Any]:
    import transformers.training_args as training_args
    from trl import GRPOConfig, ModelConfig, TrlParser

    monkeypatch.setattr(training_args, "is_torch_bf16_gpu_available", lambda: True)
    grpo, model = TrlParser((GRPOConfig, ModelConfig)).parse_args_and_config(
        ["--config", str(path)]
    )
    return grpo, model


def test_the_trl_configuration_loads_in_trls_parser(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    grpo, model = trl_config(monkeypatch, GPU / "trl-grpo-qwen2.5-7b.yaml")
    assert (grpo.use_vllm, grpo.vllm_mode, grpo.bf16) == (True, "server", True)
    assert model.model_name_or_path == "Qwen/Qwen2.5-7B-Instruct"
    # a GRPO group stays in one process: the adapter's rule (docs/pages/gpu-cluster.md)
    per_process = grpo.per_device_train_batch_size * grpo.steps_per_generation
    assert per_process % grpo.num_generations == 0
    assert grpo.beta > 0  # the KL to the start is logged, as in the CPU recipe
    # the parser is not a rubber stamp: a group that does not divide the batch is refused
    broken = tmp_path / "broken.yaml"
    text = (GPU / "trl-grpo-qwen2.5-7b.yaml").read_text()
    broken.write_text(text.replace("num_generations: 8", "num_generations: 3"))
    with pytest.raises(ValueError, match="num_generations"):
        trl_config(monkeypatch, broken)


def verl_config(name: str, *overrides: str) -> Any:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(GPU), version_base=None):
        return compose(name, overrides=list(overrides))


def test_the_verl_configuration_composes_and_passes_verls_validation() -> None:
    from verl.trainer.main_ppo import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    config = verl_config("verl-grpo-qwen2.5-7b")
    validate_config(config, need_reference_policy(config), need_critic(config))
    rollout = config.actor_rollout_ref.rollout
    assert config.algorithm.adv_estimator == "grpo" and rollout.n == 8
    assert (rollout.name, rollout.mode) == ("vllm", "async")
    assert rollout.agent.default_agent_loop == "causal_gym"
    # the agent loop's own rule: a group stays on one agent-loop worker
    assert config.data.train_batch_size % rollout.agent.num_workers == 0
    loops = yaml.safe_load((GPU.parents[1] / rollout.agent.agent_loop_config_path).read_text())
    [loop] = loops
    assert loop.pop("name") == "causal_gym"
    assert loop.pop("_target_") == "orchestrator.integrations.verl.CausalGymAgentLoop"
    AdapterSettings(**loop)  # every remaining key is one of the adapter's settings
    # and verl's validation does reject: 7 GPUs cannot split 64 x 8 trajectories evenly
    broken = verl_config("verl-grpo-qwen2.5-7b", "trainer.n_gpus_per_node=7")
    with pytest.raises(AssertionError, match="divisible"):
        validate_config(broken, need_reference_policy(broken), need_critic(broken))
