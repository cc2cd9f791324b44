"""An agent backed by any OpenAI-compatible chat-completions server (vLLM, SGLang,
OpenRouter, ...): tool calling, configurable sampling, bounded retries.

Errors are classified by what they are, not by their status code alone. A refusal
the same request would meet again (a 4xx other than 408/409/425/429, or any status
whose message reads as validation: llama.cpp's server answers a schema error with
HTTP 500) fails the turn at once as a model error. Rate limits, other 5xx, timeouts
and connection failures are retried with exponential backoff, within both a count
and a time budget; when either is spent the turn fails as a transient model error.
No request may outlive the episode's remaining wall time.
"""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Any, Literal, cast

import openai
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from causal_gym.wire import TaskWire
from orchestrator.agents.policy import Policy
from orchestrator.agents.types import AgentTurn, ToolCall
from orchestrator.errors import ModelError

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

#: Statuses that say "try again" even in the 4xx range.
_TRANSIENT_4XX = frozenset({408, 409, 425, 429})
#: Messages of deterministic refusals, whatever status carries them.
_DETERMINISTIC = re.compile(
    r"validation error|field required|input should be|extra inputs are not permitted"
    r"|unprocessable|not supported|unsupported|invalid[_ ]request"
    r"|invalid (?:value|type|argument|parameter|message|role|schema)|unknown (?:field|parameter)"
    r"|context (?:length|window)|maximum context|too many tokens",
    re.IGNORECASE,
)


def is_deterministic(exc: openai.APIStatusError) -> bool:
    """Would the same request fail the same way again?"""
    if 400 <= exc.status_code < 500 and exc.status_code not in _TRANSIENT_4XX:
        return True
    return bool(_DETERMINISTIC.search(str(exc)))


#: How the agent asks for tool calls. "auto": the model decides every turn (what a
#: capable model is scored under). "required": every turn must call some tool.
#: "submit_last": "auto", except that the last turn names submit_answer, so the
#: server constrains that reply to the answer schema. A forced call changes what a
#: score means (a model that never learned to call tools still submits), so the
#: choice goes into the run's config, its report and the baseline table.
ToolChoice = Literal["auto", "required", "submit_last"]
TOOL_CHOICES: tuple[str, ...] = ("auto", "required", "submit_last")


class OpenAIPolicyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    model: str
    #: The variable holding the API key (a run's operator names it in their own
    #: environment), or None to read none.
    api_key_env: str | None = "OPENAI_API_KEY"
    #: The API key itself, for a stream's episode mode (its operator gives the value
    #: or a file); it prints and serializes as '**********'.
    api_key: SecretStr | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = Field(None, gt=0)
    seed: int | None = None
    #: Ask for per-token logprobs (trainers need them); `extra_body` passes server-
    #: specific options through untouched (vLLM's return_token_ids, say).
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    extra_body: dict[str, Any] | None = None
    max_retries: int = Field(4, ge=0)
    backoff_s: float = Field(1.0, ge=0)
    #: Wall time a turn may spend waiting out transient failures.
    retry_budget_s: float = Field(120.0, ge=0)
    request_timeout_s: float = Field(300.0, gt=0)
    #: llama.cpp's chatml-function-calling handler takes "auto" and a named tool
    #: (submit_last), not "required"; vLLM and OpenAI take all three.
    tool_choice: ToolChoice = "auto"

    def sampling(self) -> dict[str, Any]:
        values = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "logprobs": self.logprobs,
            "top_logprobs": self.top_logprobs,
            "extra_body": self.extra_body,
        }
        return {k: v for k, v in values.items() if v is not None}


class OpenAIPolicy(Policy):
    name = "openai"

    def __init__(self, config: OpenAIPolicyConfig) -> None:
        self.config = config
        # The key is read here: from the config (a stream's operator gave it) or by name
        # from the environment; it is never a log line or a dumped config value.
        if config.api_key is not None:
            api_key = config.api_key.get_secret_value() or "EMPTY"
        else:
            api_key = (
                os.environ.get(config.api_key_env) if config.api_key_env else None
            ) or "EMPTY"
        self.client = openai.OpenAI(base_url=config.base_url, api_key=api_key, max_retries=0)
        self.tools: list[dict[str, Any]] = []
        self.last_turn = False

    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:
        self.tools = tools

    def on_turn(self, turn: int, max_turns: int) -> None:
        self.last_turn = turn >= max_turns

    def tool_choice(self) -> str | dict[str, Any]:
        """What this turn's request sends as tool_choice."""
        choice = self.config.tool_choice
        if choice == "submit_last":
            if self.last_turn:
                return {"type": "function", "function": {"name": "submit_answer"}}
            return "auto"
        return choice

    def close(self) -> None:
        """Drop the connections: a request blocked in another thread fails at once."""
        self.client.close()

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        started = time.monotonic()
        end = started + deadline_s
        attempt = 0
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no time left for another model request")
            try:
                # The conversation is plain JSON dicts; the SDK's TypedDicts describe
                # the same shapes, so the casts only tell the type checker so.
                response = self.client.chat.completions.create(
                    model=self.config.model,
                    messages=cast("list[ChatCompletionMessageParam]", messages),
                    tools=cast("list[ChatCompletionToolParam]", self.tools),
                    tool_choice=cast("Any", self.tool_choice()),
                    timeout=min(remaining, self.config.request_timeout_s),
                    **self.config.sampling(),
                )
                return _turn(response, attempt)
            except openai.APITimeoutError as exc:
                if time.monotonic() >= end:
                    raise TimeoutError(
                        "the model did not answer before the episode deadline"
                    ) from exc
                failure: Exception = exc
            except openai.APIConnectionError as exc:
                failure = exc
            except openai.APIStatusError as exc:
                if is_deterministic(exc):
                    raise ModelError(
                        f"model server refused the request (not retried: the same request "
                        f"would be refused again): HTTP {exc.status_code}: {_short(exc)}",
                        attempt,
                    ) from exc
                failure = exc
            except openai.OpenAIError as exc:
                raise ModelError(f"model request failed: {_short(exc)}", attempt) from exc
            delay = self.config.backoff_s * 2**attempt
            spent = time.monotonic() - started
            if attempt >= self.config.max_retries or spent + delay > self.config.retry_budget_s:
                raise ModelError(
                    f"model server failed after {attempt} retries in {spent:.1f} s: "
                    f"{type(failure).__name__}: {_short(failure)}",
                    attempt,
                    transient=True,
                )
            attempt += 1
            time.sleep(max(0.0, min(delay, end - time.monotonic())))


def _short(exc: Exception) -> str:
    return str(exc).replace("\n", " ")[:300]


def _turn(response: Any, retries: int) -> AgentTurn:
    if not getattr(response, "choices", None):
        raise ModelError("model response has no choices", retries)
    message = response.choices[0].message
    calls = tuple(
        ToolCall(id=c.id or f"call_{i}", name=c.function.name, arguments=c.function.arguments or "")
        for i, c in enumerate(message.tool_calls or [])
    )
    usage = response.usage.model_dump() if getattr(response, "usage", None) else None
    raw = response.model_dump(mode="json") if hasattr(response, "model_dump") else {}
    return AgentTurn(text=message.content, tool_calls=calls, usage=usage, retries=retries, raw=raw)
