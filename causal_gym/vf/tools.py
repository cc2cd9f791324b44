"""Host-side `submit_answer` tool for verifiers runs (`python -m causal_gym.vf.tools`).

It runs on the host, never in the agent's sandbox, and validates with the same
schemas as every other entry point. The first valid submission is final; invalid
ones get the validation errors back and are counted. Ending the episode is the
task's `@vf.stop`, which watches `state.submitted`.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from causal_gym.scoring.validate import Accepted, validate_submission
from causal_gym.task_id import Family


class CausalGymState(vf.State):
    submission: dict[str, Any] | None = None
    submitted: bool = False
    invalid_attempts: int = 0
    last_errors: list[str] = Field(default_factory=list)


def answer_text(errors: tuple[str, ...]) -> str:
    listed = "\n".join(f"- {e}" for e in errors)
    return (
        f"Submission rejected, not scored ({len(errors)} problem(s)):\n{listed}\n"
        "Fix them and call submit_answer again; the first valid submission is final."
    )


class SubmitToolset(vf.Toolset[vf.ToolsetConfig, CausalGymState]):
    TOOL_PREFIX = None  # the model sees exactly `submit_answer`

    async def setup_task(self, task: Any) -> None:
        self.family = Family(task.family)
        self.columns = tuple(task.columns)
        self.estimands = tuple(task.estimands)

    @vf.tool
    async def submit_answer(self, answer: Any) -> str:
        """Submit your final answer: one JSON object matching the schema in README.md
        (an object, or the same object as a JSON string). Invalid submissions are
        answered with every problem and cost a turn; the first valid one is final."""
        if self.state.submitted:
            return "A valid submission is already recorded; it is final and was not changed."
        raw = answer if isinstance(answer, str | dict) else {"answer": answer}
        checked = validate_submission(self.family, raw, self.columns, self.estimands)
        if not isinstance(checked, Accepted):
            self.state.invalid_attempts += 1
            self.state.last_errors = list(checked.errors)
            return answer_text(checked.errors)
        self.state.submission = checked.submission.model_dump(mode="json")
        self.state.submitted = True
        return "Submission accepted. It is final; the episode ends here."


if __name__ == "__main__":
    SubmitToolset.run()
