"""The paths and names the Harbor export, its verifier and the bubblewrap environment
provider (orchestrator/integrations/harbor_env.py) agree on; one place for each."""

from __future__ import annotations

#: The agent's working directory: the staged files are there, and so is its answer.
WORKSPACE = "/workspace"
#: Where the agent writes its one JSON answer; the only artifact the verifier gets.
ANSWER_PATH = f"{WORKSPACE}/answer.json"
#: Harbor's verifier log folder (reward.json is read from it, on the host).
VERIFIER_LOGS = "/logs/verifier"
#: The verifier's own files inside its environment (bundled into its image).
TESTS_DIR = "/tests"
#: What the verifier writes beside reward.json: the words behind the numbers.
VERDICT_FILE = "verdict.json"
#: A Dockerfile's role in an exported task, as a LABEL the environment provider reads.
ROLE_LABEL = "org.causal-gym.harbor.role"
AGENT_ROLE, VERIFIER_ROLE = "agent", "verifier"
#: The folder of the staged files inside environment/ (the Dockerfile copies it).
STAGED_DIR = "workspace"
#: The non-root user the agent runs as in the Docker image.
AGENT_USER = "agent"
#: Harbor's organisation part of task and dataset names.
ORG = "causal-gym"
#: Seconds: the agent's budget (the runner's episode budget) and the verifier's.
AGENT_TIMEOUT_S = 600.0
VERIFIER_TIMEOUT_S = 300.0
#: The answer file the verifier reads at most (a larger one is not an answer).
MAX_ANSWER_BYTES = 1 << 20


def folder_name(task_id: str) -> str:
    """`eval-v1:ate:0` -> `eval-v1-ate-0` (a Harbor task name part has no colon)."""
    return task_id.replace(":", "-")
