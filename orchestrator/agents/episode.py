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

from pydantic import ValidationError

from causal_gym.scoring.validate import Accepted
from causal_gym.wire import TaskWire
from orchestrator.agents.budgets import MAX_TURN_RETRIES
from orchestrator.agents.policy import Policy
from orchestrator.agents.stored_text import cap_messages, cap_text
from orchestrator.agents.tools import ToolOutcome, run_sandbox_tool, run_submit, tool_specs
from orchestrator.agents.types import (
    AgentTurn,
    EpisodeConfig,
    EpisodeResult,
    EpisodeStatus,
    TurnReport,
    Usage,
)
from orchestrator.errors import ModelError, OrchestratorError
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


class EpisodeWatch:
    """Where an episode is right now, for a watchdog outside it: `policy` while the
    agent's turn (a model call, a user's code) runs, `tools` while a sandbox tool runs,
    None between them. A timeout is the agent's doing when its time ran out in its own
    turn or tools (episode.py ends it itself); only a loop that did not come back from
    a sandbox call or the runner is the runner's (episode_actor.py)."""

    def __init__(self) -> None:
        self.phase: str | None = None


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

    def __init__(
        self,
        task: TaskWire,
        policy: Policy,
        config: EpisodeConfig,
        clock: Clock,
        watch: EpisodeWatch | None = None,
    ) -> None:
        self.task, self.policy, self.config, self.clock = task, policy, config, clock
        self.watch = watch or EpisodeWatch()
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

    def count(self, turn: AgentTurn) -> str | None:
        """Add what the turn reports about itself (usage, retries) once it parses
        within bounds; otherwise the reason it does not."""
        retries = turn.retries
        if type(retries) is not int or not 0 <= retries <= MAX_TURN_RETRIES:
            return f"the policy reported {cap_text(repr(retries), 200)} retries"
        try:
            usage = TurnReport.model_validate(turn.usage) if turn.usage is not None else None
        except ValidationError as exc:
            problem = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in problem["loc"]) or "usage"
            return f"the policy reported usage that does not parse: {where}: {problem['msg']}"
        self.retries += retries
        if usage is not None:
            self.usage.prompt_tokens += usage.prompt_tokens
            self.usage.completion_tokens += usage.completion_tokens
            self.usage.total_tokens += usage.total_tokens
            self.usage.reported = True
        return None

    def result(self) -> EpisodeResult:
        timed_out = self.status is EpisodeStatus.TIMEOUT
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
            message=cap_text(self.message),
            transient=self.transient,
            timeout_cause="agent" if timed_out else None,
            agent_notes=cap_text(self.notes),
            transcript=cap_messages(self.messages),
            completions=self.completions,
        )


def run_episode(
    task: TaskWire,
    sandbox: Sandbox,
    policy: Policy,
    config: EpisodeConfig | None = None,
    clock: Clock = time.monotonic,
    watch: EpisodeWatch | None = None,
) -> EpisodeResult:
    """Run `policy` on `task` in an open `sandbox`. Never raises: whatever the agent,
    the model server or the sandbox does ends as a status in the returned record."""
    ep = _Episode(task, policy, config or EpisodeConfig(), clock, watch)
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
    ep.watch.phase = "policy"
    try:
        policy.begin(task, tools)
    except Exception as exc:  # a user policy may fail in any way
        ep.end(
            EpisodeStatus.AGENT_ERROR,
            clean_text(f"policy setup failed: {type(exc).__name__}: {exc}"),
        )
        return
    finally:
        ep.watch.phase = None
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
    ep.watch.phase = "policy"
    try:
        ep.policy.on_turn(ep.turns + 1, ep.config.max_turns)
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
        ep.watch.phase = None
    ep.turns += 1
    problem = ep.count(turn)
    if problem is not None:
        ep.end(EpisodeStatus.AGENT_ERROR, problem)
        return None
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
            ep.watch.phase = "tools"
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
                ep.watch.phase = None
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
