"""One task as a trainer's environment sees it: a sandbox holding its staged files,
the three tools, and the score of the one valid submission.

Every adapter wraps this, so a trainer's rollouts run the very tools the project's own
agents run (orchestrator/agents/tools.py: the same argument checks, output caps and
sandbox limits) and get their reward from the same scorer, through the task's source.
An invalid submission is answered with its schema errors and costs the agent a call;
the first valid one is final and scored once.

The reward a trainer is given is the clipped one (in [-1, 1]: the README's reward
section explains why an unbounded tail hurts policy gradients); the raw reward and its
components stay in `score` for the logs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from causal_gym.scoring.answer import NO_SUBMISSION_REWARD
from causal_gym.scoring.validate import Accepted
from causal_gym.wire import TaskWire
from orchestrator.agents.budgets import TOOL_OUTPUT_CHARS
from orchestrator.agents.episode import initial_messages
from orchestrator.agents.tools import run_sandbox_tool, run_submit, tool_specs
from orchestrator.errors import IntegrationError
from orchestrator.integrations.analyst_tools import (
    ANALYST_SYSTEM_PROMPT,
    AnalystTools,
    analyst_readme,
    analyst_tool_specs,
    kit_files,
)
from orchestrator.integrations.brief import BRIEF_SYSTEM_PROMPT, task_brief
from orchestrator.integrations.sources import TaskSource
from orchestrator.integrations.text_tools import parse_tool_calls
from orchestrator.sandbox import make_sandbox
from orchestrator.sandbox.base import Sandbox
from orchestrator.stream.types import StreamScore


@dataclass(frozen=True)
class SessionSettings:
    """The sandbox a session's tools run in and their budgets; the defaults are the
    project's agents' own."""

    sandbox: str = "local"
    image: str | None = None
    tool_timeout_s: float = 120.0
    tool_output_chars: int = TOOL_OUTPUT_CHARS
    #: "readme": the task prompt and the whole README, as the project's agents see it;
    #: "brief": the question, the columns and a summary of data.csv in a few hundred
    #: tokens (integrations/brief.py), for models too small to run an analysis;
    #: "analyst": the README's question and dictionary, and the tools fit and report,
    #: whose numbers the family's kit computes (integrations/analyst_tools.py).
    rendering: Literal["readme", "brief", "analyst"] = "readme"


class TaskSession:
    """Open with `start()`; call tools; `close()` (or use it as a context manager)."""

    def __init__(self, source: TaskSource, settings: SessionSettings | None = None) -> None:
        self.source = source
        self.settings = settings or SessionSettings()
        self.task: TaskWire | None = None
        self.handle: str | None = None
        self.sandbox: Sandbox | None = None
        self.score: StreamScore | None = None
        self.invalid_attempts = 0
        self.tool_calls = 0
        self.analyst: AnalystTools | None = None

    def start(self, task: TaskWire | None = None, handle: str | None = None) -> TaskWire:
        """A task (the next from the source, or one of a group this session answers
        under `handle`), its files in a fresh sandbox."""
        self.close()
        self.task = task or self.source.next_task()
        self.handle = handle or self.task.handle
        self.score, self.invalid_attempts, self.tool_calls = None, 0, 0
        analyst = self.settings.rendering == "analyst"
        if analyst:
            analyst_readme(self.task)  # refuses a family the toolset does not answer
        box = make_sandbox(self.settings.sandbox, image=self.settings.image)
        try:
            box.open({**(kit_files() if analyst else {}), **self.task.files})
        except BaseException:
            box.close()
            raise
        self.sandbox = box
        self.analyst = (
            AnalystTools(self.task, box, self.settings.tool_timeout_s) if analyst else None
        )
        return self.task

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The system and user messages: the project's agents' own, or with the brief
        as the user turn."""
        messages = initial_messages(self._task())
        if self.settings.rendering == "brief":
            messages[0] = {"role": "system", "content": BRIEF_SYSTEM_PROMPT}
            messages[1] = {"role": "user", "content": task_brief(self._task())}
        if self.settings.rendering == "analyst":
            messages[0] = {"role": "system", "content": ANALYST_SYSTEM_PROMPT}
            messages[1] = {"role": "user", "content": analyst_readme(self._task())}
        return messages

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function specs: bash, python and submit_answer (which
        carries the task's answer schema), or the analyst toolset's fit and report."""
        if self.settings.rendering == "analyst":
            return analyst_tool_specs()
        return tool_specs(self._task())

    @property
    def done(self) -> bool:
        """Whether a valid submission was scored, which ends the episode."""
        return self.score is not None

    def call(self, name: str, arguments: str | dict[str, Any]) -> str:
        """Run one tool call and return what the agent sees."""
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        task = self._task()
        self.tool_calls += 1
        if self.done:
            return "not run: a valid submission already ended the episode"
        if self.analyst is not None:
            return self._call_analyst(name, raw)
        if name == "submit_answer":
            outcome = run_submit(raw, task)
            if isinstance(outcome.validation, Accepted):
                submission = outcome.validation.submission.model_dump(mode="json")
                self.score = self.source.score(self.handle or task.handle, submission)
            else:
                self.invalid_attempts += 1
            return outcome.content
        if name in ("bash", "python"):
            assert self.sandbox is not None
            s = self.settings
            return run_sandbox_tool(
                name, raw, self.sandbox, s.tool_timeout_s, s.tool_output_chars
            ).content
        return f"error: unknown tool {name!r}; the tools are bash, python and submit_answer"

    def _call_analyst(self, name: str, raw: str) -> str:
        assert self.analyst is not None
        if name == "fit":
            return self.analyst.fit(raw)
        if name == "report":
            content, validation = self.analyst.report(raw)
            if isinstance(validation, Accepted):
                task = self._task()
                submission = validation.submission.model_dump(mode="json")
                self.score = self.source.score(self.handle or task.handle, submission)
            else:
                self.invalid_attempts += 1
            return content
        return f"error: unknown tool {name!r}; the tools are fit and report"

    def call_text(self, completion: str) -> list[str]:
        """Run the <tool_call> blocks of a text completion one after another (they
        share the sandbox); an unreadable block is answered with its error, not run."""
        return [c.error or self.call(c.name, c.arguments) for c in parse_tool_calls(completion)]

    @property
    def reward(self) -> float:
        """The clipped reward, what a trainer should optimize; -1 without a valid
        submission."""
        return self.score.clipped_reward if self.score is not None else NO_SUBMISSION_REWARD

    @property
    def raw_reward(self) -> float:
        """The scorer's unclipped reward, for the logs; -1 without a valid submission."""
        return self.score.reward if self.score is not None else NO_SUBMISSION_REWARD

    def close(self) -> None:
        """Remove the sandbox (the score stays); `start()` takes the next task."""
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None

    def _task(self) -> TaskWire:
        if self.task is None:
            raise IntegrationError("no task yet: call start() first")
        return self.task

    def __enter__(self) -> TaskSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
