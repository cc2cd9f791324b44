"""One causal-gym task as a verifiers v1 Task: stage, submit, score.

TaskData is written verbatim into every trace, so it carries only public facts
(id, family, column names, prompt). The staged files and the hidden truth are
regenerated host-side from the key whenever they are needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

import verifiers.v1 as vf
from pydantic import Field, field_validator

from causal_gym.contracts.families import all_components
from causal_gym.errors import CausalGymError, KeyFormatError
from causal_gym.make import generate_task
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import EpisodeScore, episode_score
from causal_gym.task import Task
from causal_gym.vf.keys import check_env_key_name, refuse_unsafe_runtime, resolve_run_key
from causal_gym.vf.tools import CausalGymState, SubmitToolset

WORKDIR = "/workspace"
_PINS_IN_BOX = "/tmp/causal-gym-analyst-requirements.txt"
_INSTALL = (
    "set -e; F=" + _PINS_IN_BOX + "; "
    "if command -v uv >/dev/null 2>&1; then "
    "uv pip install --system --break-system-packages -q -r $F; "
    "elif python3 -m pip --version >/dev/null 2>&1; then "
    "python3 -m pip install -q --no-cache-dir --break-system-packages -r $F; "
    "else echo 'image has neither uv nor pip for the analyst wheels' >&2; exit 3; fi; "
    "rm -f $F"
)
_CACHE: dict[tuple[str, str], Task] = {}
_CACHE_LIMIT = 64


class CausalGymTaskConfig(vf.TaskConfig):
    env_key: str | None = None
    """Name of an environment variable holding the hex key (never the key itself).
    CAUSAL_GYM_KEY wins over it; with neither, the public DEFAULT_EVAL_KEY."""
    tools: vf.ToolsetConfig = vf.ToolsetConfig()

    @field_validator("env_key")
    @classmethod
    def _a_name_not_a_key(cls, value: str | None) -> str | None:
        """Checked while the config is parsed, before verifiers writes it anywhere."""
        try:
            return check_env_key_name(value)
        except KeyFormatError as exc:
            raise ValueError(str(exc)) from None


class CausalGymTaskData(vf.TaskData):
    family: str
    columns: list[str]
    #: What the submission answers: ["ate"], or a cate task's modifier levels.
    estimands: list[str] = Field(default_factory=lambda: ["ate"])


def generated(task_id: str, key: DerivationKey) -> Task:
    """The generated task, cached per process (load, setup and scoring share it)."""
    slot = (key.fingerprint, task_id)
    if slot not in _CACHE:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[slot] = generate_task(task_id, key)
    return _CACHE[slot]


def analyst_pins() -> bytes:
    return resources.files("causal_gym").joinpath("analyst-requirements.txt").read_bytes()


class CausalGymTask(vf.Task[CausalGymTaskData, CausalGymState, CausalGymTaskConfig]):
    @classmethod
    def toolsets(cls, config: CausalGymTaskConfig) -> list[vf.Toolset]:
        return [SubmitToolset(config.tools)]

    @property
    def key(self) -> str:
        return str(self.data.id)

    def _task(self) -> Task:
        return generated(str(self.data.id), resolve_run_key(self.config.env_key))

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        try:
            key = resolve_run_key(self.config.env_key)
            refuse_unsafe_runtime(runtime.type, key)
            task = generated(str(self.data.id), key)
        except CausalGymError as exc:
            raise vf.TaskError(str(exc)) from exc
        for name in task.public.staged_files:
            await runtime.write(name, task.public.files[name])  # relative: the workdir
        if runtime.type != "subprocess":
            await runtime.write(_PINS_IN_BOX, analyst_pins())
            done = await runtime.run(["sh", "-c", _INSTALL], {})
            if done.exit_code != 0:
                raise vf.TaskError(f"installing the analyst wheels failed: {done.stderr[-800:]}")
        trace.info["staged_sha256"] = {
            name: task.public.sha256(name) for name in task.public.staged_files
        }

    @vf.stop
    async def submitted(self, trace: vf.Trace) -> bool:
        return trace.state.submitted

    async def finalize(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        trace.info["submission"] = trace.state.submission
        trace.info["invalid_attempts"] = trace.state.invalid_attempts
        trace.info["status"] = "submitted" if trace.state.submitted else "no_submission"

    def _score(self, trace: vf.Trace) -> EpisodeScore:
        return episode_score(self._task(), trace.info.get("submission"))

    @vf.reward(weight=1.0)
    async def reward(self, trace: vf.Trace) -> float:
        return self._score(trace).reward

    @vf.metric
    async def causal_gym(self, trace: vf.Trace) -> Mapping[str, float]:
        values = self._score(trace).fields()
        metrics = {"invalid_attempts": float(trace.info.get("invalid_attempts", 0))}
        for name in (
            "reward_version",
            "submitted",
            "clipped_reward",
            "estimand_reward",
            "covered",
            "coverage",
            "width_ratio",
            *all_components(),
        ):
            value = values.get(name)
            if isinstance(value, int | float):  # bools too: covered is 1.0 or 0.0
                metrics[name] = float(value)
        return metrics
