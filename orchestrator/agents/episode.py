"""One agent on one staged task: the host-side tool-calling loop.

The loop owns everything that must not be left to the agent: the turn and wall-clock
budgets, per-tool deadlines, output caps, host-side validation of submit_answer and
the classification of how the episode ended. Policies (a model or a script) only
produce turns, so every agent is measured by exactly the same rules.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from causal_gym.scoring.validate import Accepted
from causal_gym.wire import TaskWire
from orchestrator.agents.policy import ModelError, Policy
from orchestrator.agents.tools import ToolOutcome, run_sandbox_tool, run_submit, tool_specs
from orchestrator.agents.types import (
    AgentTurn,
    EpisodeConfig,
    EpisodeResult,
    EpisodeStatus,
    Usage,
)
from orchestrator.errors import OrchestratorError
from orchestrator.sandbox.base import Sandbox

SYSTEM_PROMPT = (
    "You are a careful applied statistician. You work in a sandbox with no network: "
    "/workspace holds data.csv and README.md. Use the bash and python tools to inspect and "
    "analyse the data, then call submit_answer exactly once with the JSON object the README "
    "asks for. Invalid submissions cost a turn; the first valid one is final."
)
NUDGE = (
    "No tool was called. Analyse the data with bash or python, then call submit_answer "
    "with your final answer."
)
Clock = Callable[[], float]


def initial_messages(task: TaskWire) -> list[dict[str, Any]]:
    readme = task.readme
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{task.prompt}\n\nHere is README.md:\n\n{readme}"},
    ]


def clean_text(text: str) -> str:
    """The text with lone surrogates replaced (U+FFFD): whatever an agent or a model
    server sends, the record stays valid UTF-8 and serializes to JSON."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _assistant_message(turn: AgentTurn) -> dict[str, Any]:
    text = turn.text if isinstance(turn.text, str) else None
    message: dict[str, Any] = {"role": "assistant", "content": clean_text(text or "")}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": clean_text(str(c.id)),
                "type": "function",
                "function": {
                    "name": clean_text(str(c.name)),
                    "arguments": clean_text(str(c.arguments)),
                },
            }
            for c in turn.tool_calls
        ]
    return message


class _Episode:
    """Mutable bookkeeping of one run; `result()` freezes it into an EpisodeResult."""

    def __init__(self, task: TaskWire, policy: Policy, config: EpisodeConfig, clock: Clock):
        self.task, self.policy, self.config, self.clock = task, policy, config, clock
        self.started = clock()
        self.deadline = self.started + config.episode_timeout_s
        self.messages = initial_messages(task)
        self.status = EpisodeStatus.NO_SUBMISSION
        self.message: str | None = None
        self.submission: dict[str, Any] | None = None
        self.turns = self.invalid = self.retries = 0
        self.usage = Usage()
        self.model_s = self.tool_s = 0.0
        self.notes: str | None = None
        self.transient = False
        self.completions: list[dict[str, Any]] = []

    def remaining(self) -> float:
        return self.deadline - self.clock()

    def end(self, status: EpisodeStatus, message: str | None = None) -> None:
        self.status, self.message = status, message

    def add_usage(self, usage: dict[str, int] | None) -> None:
        if usage:
            self.usage.prompt_tokens += int(usage.get("prompt_tokens", 0) or 0)
            self.usage.completion_tokens += int(usage.get("completion_tokens", 0) or 0)
            self.usage.total_tokens += int(usage.get("total_tokens", 0) or 0)
            self.usage.reported = True

    def result(self) -> EpisodeResult:
        return EpisodeResult(
            handle=self.task.handle,
            agent=self.policy.name,
            status=self.status,
            submission=self.submission,
            turns=self.turns,
            invalid_attempts=self.invalid,
            usage=self.usage,
            model_retries=self.retries,
            wall_s=self.clock() - self.started,
            model_s=self.model_s,
            tool_s=self.tool_s,
            message=self.message,
            transient=self.transient,
            agent_notes=self.notes,
            transcript=self.messages,
            completions=self.completions,
        )


def run_episode(
    task: TaskWire,
    sandbox: Sandbox,
    policy: Policy,
    config: EpisodeConfig | None = None,
    clock: Clock = time.monotonic,
) -> EpisodeResult:
    """Run `policy` on `task` in an open `sandbox`. Never raises: whatever the agent,
    the model server or the sandbox does ends as a status in the returned record."""
    ep = _Episode(task, policy, config or EpisodeConfig(), clock)
    try:
        _loop(ep, sandbox)
    except Exception as exc:  # the last line of defence: a record, never a crash
        ep.end(
            EpisodeStatus.SANDBOX_ERROR, clean_text(f"runner error: {type(exc).__name__}: {exc}")
        )
    return ep.result()


def _loop(ep: _Episode, sandbox: Sandbox) -> None:
    task, policy = ep.task, ep.policy
    tools = tool_specs(task)
    try:
        policy.begin(task, tools)
    except Exception as exc:  # a user policy may fail in any way
        ep.end(
            EpisodeStatus.AGENT_ERROR,
            clean_text(f"policy setup failed: {type(exc).__name__}: {exc}"),
        )
        return
    while ep.status is EpisodeStatus.NO_SUBMISSION and ep.submission is None:
        if ep.turns >= ep.config.max_turns:
            ep.message = (
                f"turn budget of {ep.config.max_turns} exhausted without a valid submission"
            )
            break
        if ep.remaining() <= 0:
            ep.end(EpisodeStatus.TIMEOUT, "episode deadline reached")
            break
        turn = _next_turn(ep)
        if turn is None:
            break
        _run_tools(ep, turn, sandbox)
    if ep.submission is not None:
        ep.end(EpisodeStatus.SUBMITTED, ep.message)


def _next_turn(ep: _Episode) -> AgentTurn | None:
    started = ep.clock()
    try:
        turn = ep.policy.next_turn(copy.deepcopy(ep.messages), ep.remaining())
    except ModelError as exc:
        ep.retries += exc.retries
        ep.transient = exc.transient
        ep.end(EpisodeStatus.MODEL_ERROR, clean_text(str(exc)))
        return None
    except TimeoutError as exc:
        ep.end(EpisodeStatus.TIMEOUT, f"episode deadline reached during the model call: {exc}")
        return None
    except Exception as exc:  # the agent itself broke
        ep.end(EpisodeStatus.AGENT_ERROR, clean_text(f"{type(exc).__name__}: {exc}"))
        return None
    finally:
        ep.model_s += ep.clock() - started
    ep.turns += 1
    ep.retries += turn.retries
    ep.add_usage(turn.usage)
    if ep.config.record_completions and turn.raw:
        ep.completions.append(turn.raw)
    if isinstance(turn.text, str) and turn.text:
        ep.notes = clean_text(turn.text)
    ep.messages.append(_assistant_message(turn))
    if not turn.tool_calls:
        ep.messages.append({"role": "user", "content": NUDGE})
    return turn


def _run_tools(ep: _Episode, turn: AgentTurn, sandbox: Sandbox) -> None:
    for call in turn.tool_calls:
        if ep.submission is not None:
            outcome = ToolOutcome("not run: a valid submission already ended the episode")
        elif ep.remaining() <= 0:
            ep.end(EpisodeStatus.TIMEOUT, "episode deadline reached during tool calls")
            return
        elif call.name == "submit_answer":
            outcome = run_submit(call.arguments, ep.task)
            if isinstance(outcome.validation, Accepted):
                ep.submission = outcome.validation.submission.model_dump(mode="json")
            else:
                ep.invalid += 1
        elif call.name in ("bash", "python"):
            started = ep.clock()
            try:
                outcome = run_sandbox_tool(
                    call.name,
                    call.arguments,
                    sandbox,
                    min(ep.config.tool_timeout_s, ep.remaining()),
                    ep.config.tool_output_chars,
                )
            except OrchestratorError as exc:
                ep.end(
                    EpisodeStatus.SANDBOX_ERROR,
                    clean_text(f"{call.name} failed in the sandbox: {exc}"),
                )
                return
            finally:
                ep.tool_s += ep.clock() - started
        else:
            outcome = ToolOutcome(
                f"error: unknown tool {call.name!r}; the tools are bash, python and submit_answer"
            )
        ep.messages.append(
            {
                "role": "tool",
                "tool_call_id": clean_text(str(call.id)),
                "content": clean_text(outcome.content),
            }
        )
