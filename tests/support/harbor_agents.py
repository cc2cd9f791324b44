"""Harbor agents for tests/test_harbor.py (loaded by Harbor in .venv-harbor with
`-a tests.support.harbor_agents:NAME`): answers that are not answers."""

from __future__ import annotations

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext


class _Writes(BaseAgent):
    """Runs one shell command in the task's environment and stops."""

    command = "true"

    @staticmethod
    def name() -> str:
        return "causal-gym-test"

    def version(self) -> str:
        return "1"

    async def setup(self, environment: BaseEnvironment) -> None:
        pass

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        await environment.exec(self.command)


class GarbageAnswer(_Writes):
    """An answer file that is not JSON."""

    command = "printf '{\"estimate\": oops' > /workspace/answer.json"


class WrongShapeAnswer(_Writes):
    """JSON, but not the family's answer (an interval upside down, a stray field)."""

    command = (
        'printf \'{"estimate": 1, "ci_lower": 2, "ci_upper": 0, "extra": 1}\''
        " > /workspace/answer.json"
    )


class LinkedAnswer(_Writes):
    """The answer file is a link to a host file: it is not followed out."""

    command = "ln -s /etc/passwd /workspace/answer.json"
