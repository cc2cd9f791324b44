"""Episode mode's settings as the operator gives them: the trainer's model server (where
its API key comes from) and how to sample and batch."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, StrictInt, model_validator

from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.errors import StreamError
from orchestrator.stream.secrets import EndpointSecrets


class Endpoint(BaseModel):
    """The trainer's model server, as the operator gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(pattern=r"^https?://")
    model: str = Field(min_length=1)
    api_key: SecretStr | None = None
    #: The name of a file in the stream's endpoint-secrets folder (`stream start
    #: --endpoint-secrets DIR`, default its state folder) holding the API key: a bare
    #: name, no path (read once, when configured; the rules are secrets.py's).
    api_key_file: str | None = Field(None, min_length=1, max_length=128)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: StrictInt | None = Field(None, gt=0)
    logprobs: bool | None = None
    top_logprobs: StrictInt | None = Field(None, ge=0, le=20)
    extra_body: dict[str, Any] | None = None
    request_timeout_s: float = Field(300.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _one_key(self) -> Endpoint:
        if self.api_key is not None and self.api_key_file is not None:
            raise ValueError("give api_key or api_key_file, not both")
        return self

    def policy_config(self, secrets: EndpointSecrets | None) -> OpenAIPolicyConfig:
        key = self.api_key
        if self.api_key_file is not None:
            if secrets is None:
                raise StreamError("this stream reads no key files: give api_key by value")
            key = SecretStr(secrets.read(self.api_key_file))
        fields = self.model_dump(exclude={"api_key", "api_key_file"})
        return OpenAIPolicyConfig(**fields, api_key=key, api_key_env=None)


class EpisodeSettings(BaseModel):
    """Episode mode: where the trainer serves its policy and how to sample from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: Endpoint
    policy_version: StrictInt = Field(0, ge=0)
    batch_size: StrictInt = Field(8, ge=1, le=4096)
    #: In-flight plus buffered episodes never exceed buffer_factor x batch_size.
    buffer_factor: float = Field(2.0, ge=1.0, le=100.0)
    max_turns: StrictInt = Field(30, ge=1, le=1000)
    episode_timeout_s: float = Field(600.0, gt=0, le=86_400)

    @property
    def bound(self) -> int:
        return max(1, int(self.buffer_factor * self.batch_size))
