"""The verifier of an exported Harbor task; its `tests/test.sh` runs this module.

    python3 -m causal_gym.harbor.verify /tests/task.json /workspace/answer.json /logs/verifier

It regenerates the task from its id under the public key (and checks the staged
files' digests against the export's, so a causal-gym that stages other bytes cannot
score it), validates the answer file with the project's schema and scores it with the
project's scorer, as every other entry point does (scoring/answer.py). It writes
`reward.json`, names to finite numbers (`reward` the scored total, -1 without a valid
submission; `clipped_reward`, `submitted` and the score's numeric components), and
`verdict.json` with the words (the schema errors an agent would have been shown, or
why there is no score). Every path writes a finite reward: no file, a file that is
not JSON or not an answer, a symlink or an oversized file, and a crash here.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import Any

from causal_gym.harbor.layout import MAX_ANSWER_BYTES, VERDICT_FILE
from causal_gym.scoring.answer import NO_SUBMISSION_REWARD


def read_answer(path: Path) -> tuple[bytes | None, str]:
    """The answer file's bytes, or None and why not; a symlink or a special file is
    not followed or opened for reading (the agent made it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, f"no submission: {path} does not exist"
    except OSError as exc:
        return None, f"no submission: {path} cannot be opened ({exc.strerror})"
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, f"no submission: {path} is not a regular file"
        data = handle.read(MAX_ANSWER_BYTES + 1)
    if len(data) > MAX_ANSWER_BYTES:
        return None, f"no submission: {path} is larger than {MAX_ANSWER_BYTES} bytes"
    return data, ""


def score(check: dict[str, Any], raw: bytes | None) -> tuple[dict[str, float], dict[str, Any]]:
    """reward.json's numbers and verdict.json's words for one answer."""
    from causal_gym.make import generate_task
    from causal_gym.rng_keys.keys import resolve_key
    from causal_gym.scoring.answer import episode_score
    from causal_gym.scoring.validate import Rejected, validate_submission
    from causal_gym.task_id import TaskId

    task = generate_task(TaskId.parse(check["task_id"]), resolve_key(None))
    staged = {name: task.public.sha256(name) for name in task.public.staged_files}
    if staged != check["staged_sha256"]:
        raise RuntimeError("this causal-gym does not stage the exported task's bytes")
    verdict: dict[str, Any] = {"task_id": check["task_id"]}
    if raw is not None:
        checked = validate_submission(
            task.public.family, raw, task.public.columns, task.public.estimands
        )
        if isinstance(checked, Rejected):
            verdict["errors"] = list(checked.errors)
    fields = episode_score(task, raw).fields()
    numbers = {
        name: float(value)
        for name, value in fields.items()
        if isinstance(value, int | float) and math.isfinite(float(value))
    }
    if "reward" not in numbers:  # a total that is not finite is no score
        numbers = {"reward": NO_SUBMISSION_REWARD, "clipped_reward": NO_SUBMISSION_REWARD}
        verdict["errors"] = ["the score is not a finite number"]
    return numbers, verdict


def verify(task_json: Path, answer: Path, logs: Path) -> dict[str, float]:
    """Score the answer file and write reward.json and verdict.json into `logs`."""
    raw, why = read_answer(answer)
    try:
        check = json.loads(task_json.read_text())
        numbers, verdict = score(check, raw)
    except Exception as exc:  # the verifier's own failure: still a finite reward
        numbers = {"reward": NO_SUBMISSION_REWARD, "clipped_reward": NO_SUBMISSION_REWARD}
        verdict = {"verifier_error": f"{type(exc).__name__}: {exc}"}
    numbers.setdefault("submitted", 0.0)
    if why:
        verdict["no_submission"] = why
    logs.mkdir(parents=True, exist_ok=True)
    (logs / VERDICT_FILE).write_text(json.dumps(verdict, indent=2) + "\n")
    (logs / "reward.json").write_text(json.dumps(numbers, sort_keys=True) + "\n")
    print(json.dumps({"rewards": numbers, **verdict}))
    return numbers


def main(argv: list[str] | None = None) -> int:
    """The command line (usage errors exit 2; everything else writes a reward)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m causal_gym.harbor.verify TASK_JSON ANSWER LOG_DIR", file=sys.stderr)
        return 2
    verify(Path(args[0]), Path(args[1]), Path(args[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
