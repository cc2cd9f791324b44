"""What an adapter configured from a trainer's own config file is told: where its tasks
come from, which sandbox runs the tools, how many turns an episode gets.

SkyRL passes it as `env_config`, verl as the keys of its agent-loop YAML; both arrive
here as a dict (or an OmegaConf node) and are checked once, with one line naming what
is accepted. A stream is named by `stream_url` plus a consumer token (`token_file`,
or `token`); with neither, the adapter generates tasks in its own process under a
fresh key (LocalSource: one machine, nobody else to keep the key from).
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from orchestrator.errors import IntegrationError
from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES
from orchestrator.integrations.sources import (
    DEFAULT_FAMILIES,
    LocalSource,
    StreamSource,
    TaskSource,
)


class AdapterSettings(BaseModel):
    """An adapter's settings as its trainer's config gives them; a misspelt key is refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stream_url: str | None = None
    token_file: str | None = None
    token: str | None = Field(None, repr=False)
    families: tuple[str, ...] = DEFAULT_FAMILIES
    sandbox: str = "local"
    max_turns: int = Field(8, ge=1, le=1000)
    #: Rollouts that answer one task (GRPO's group), for trainers that do not say:
    #: SkyRL's generator.n_samples_per_prompt. verl's is rollout.n.
    group_size: int = Field(1, ge=1, le=1024)
    #: "readme": the README and the tools bash, python and submit_answer; "analyst":
    #: the analyst toolset (integrations/analyst_tools.py: fit and report, the
    #: family's kit computing the numbers), for the seed families.
    rendering: Literal["readme", "analyst"] = "readme"

    @model_validator(mode="after")
    def _families_fit_the_rendering(self) -> Self:
        if self.rendering == "analyst":
            if "families" not in self.model_fields_set:
                object.__setattr__(self, "families", ANALYST_FAMILIES)
            other = [f for f in self.families if f not in ANALYST_FAMILIES]
            if other:
                raise ValueError(
                    f"the analyst rendering answers {', '.join(ANALYST_FAMILIES)}, "
                    f"not {', '.join(other)}"
                )
        return self

    def session_settings(self) -> Any:
        """The TaskSession settings these name (sandbox and rendering)."""
        from orchestrator.integrations.session import SessionSettings

        return SessionSettings(sandbox=self.sandbox, rendering=self.rendering)

    def source(self) -> TaskSource:
        """The source these settings name: a stream with its consumer token, or with
        neither a LocalSource; IntegrationError for a token without a stream or a stream
        without a token."""
        if self.stream_url is None:
            if self.token or self.token_file:
                raise IntegrationError("a token needs stream_url: the stream it is for")
            return LocalSource(self.families)
        if self.token_file:
            return StreamSource.from_token_file(self.stream_url, self.token_file)
        if self.token:
            return StreamSource(self.stream_url, self.token)
        raise IntegrationError("stream_url needs token_file (or token): a consumer token")


def adapter_settings(config: Any) -> AdapterSettings:
    """Settings from a dict, an OmegaConf node or None (every default)."""
    if config is None:
        return AdapterSettings()
    if isinstance(config, AdapterSettings):
        return config
    if not isinstance(config, dict):  # an OmegaConf DictConfig from the trainer's config
        from omegaconf import OmegaConf

        config = OmegaConf.to_container(config, resolve=True)
    try:
        return AdapterSettings.model_validate(config)
    except ValidationError as exc:
        fields = ", ".join(AdapterSettings.model_fields)
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        raise IntegrationError(
            f"causal-gym settings: {where}: {first['msg']} (accepted keys: {fields})"
        ) from None
