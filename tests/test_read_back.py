"""Reading a run's records back: each of read_back's checks refuses what it should and
only that, with the folder's own secret (tests/test_run_integrity.py attacks the same
checks end to end, the way someone without the secret would)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run.read_back import REJECTED_FILE, read_back, set_aside
from orchestrator.run.record_mac import load_secret, mac_of, sealed_line
from orchestrator.run.records import ScoredEpisode
from orchestrator.run.results import RESULTS_FILE, RunIdentity, create_folder

TASKS = ("eval-v1:ate:0", "eval-v1:ate:1", "eval-v1:ate:2")


def identity(run_id: str = "run-a") -> RunIdentity:
    return RunIdentity(
        run_id=run_id, config_digest="cfg", key_fingerprint="kfp", task_ids=TASKS, config={}
    )


def record(task_id: str, attempt: int = 0, final: bool = True, **fields: Any) -> ScoredEpisode:
    values: dict[str, Any] = {
        "run_id": "run-a", "config_digest": "cfg", "task_id": task_id, "family": "ate",
        "tier": "easy", "attempt": attempt, "final": final, "key_fingerprint": "kfp",
        "sandbox": "local", "agent": "constant", "status": "submitted",
        "failure_class": None, "retryable": False, "submitted": True, "reward": 0.5,
        "clipped_reward": 0.5, "loss": 1.0, "covered": True, "wall_s": 1.0,
    }  # fmt: skip
    return ScoredEpisode(**{**values, **fields})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    create_folder(out, identity())
    return out


def secret_of(out: Path) -> bytes:
    secret = load_secret(out)
    assert secret is not None
    return secret


def forged(fields: dict[str, Any], secret: bytes) -> str:
    """A line with a MAC that holds: what only a holder of the secret could write."""
    body = {k: v for k, v in fields.items() if k != "mac"}
    return json.dumps({**body, "mac": mac_of(body, secret)})


def write(out: Path, lines: list[str]) -> None:
    (out / RESULTS_FILE).write_text("".join(line + "\n" for line in lines))


def test_the_folder_is_private_from_the_start(folder: Path) -> None:
    assert folder.stat().st_mode & 0o777 == 0o700
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_genuine_lines_are_accepted_with_retries_in_order(folder: Path) -> None:
    secret = secret_of(folder)
    failed = record(
        TASKS[0], 0, False, status="sandbox_error", failure_class="sandbox_error",
        retryable=True, submitted=False, reward=-1.0, clipped_reward=-1.0, loss=None, covered=None,
    )  # fmt: skip
    lines = [
        sealed_line(failed, secret),
        sealed_line(record(TASKS[1]), secret),
        sealed_line(record(TASKS[0], 1, True), secret),
    ]  # fmt: skip
    write(folder, lines)
    back = read_back(folder)
    assert back.refused == () and len(back.records) == 3
    assert back.finished() == {TASKS[0]: 2, TASKS[1]: 1}
    assert back.attempts() == {TASKS[0]: 2, TASKS[1]: 1}


def test_each_check_refuses_its_kind_and_nothing_else(folder: Path) -> None:
    secret = secret_of(folder)
    good = sealed_line(record(TASKS[0]), secret)
    base = json.loads(good)
    other_secret = os.urandom(32)
    cases = {
        "not JSON": good[: len(good) // 2],
        "bad MAC": json.dumps({**base, "attempt": 1}),  # edited, MAC not redone
        "bad MAC ": forged(base, other_secret),  # another run's secret
        "out of range": forged({**base, "reward": 1e308, "clipped_reward": 1e308}, secret),
        "out of range ": forged({**base, "reward": 0.5, "clipped_reward": 0.7}, secret),
        "out of range  ": forged(
            {**base, "usage": {**base["usage"], "prompt_tokens": -21}}, secret
        ),
        "another run": forged({**base, "run_id": "run-b"}, secret),
        "another run ": forged({**base, "key_fingerprint": "other"}, secret),
        "another run  ": forged({**base, "config_digest": "other"}, secret),
        "not in this run": forged({**base, "task_id": "eval-v1:ate:9"}, secret),
        "after the final record": good,  # a genuine line, repeated
        "out of order": forged({**base, "task_id": TASKS[1], "attempt": 3}, secret),
    }
    write(folder, [good, *cases.values()])
    back = read_back(folder)
    assert [r.task_id for r in back.records] == [TASKS[0]]
    assert [r.reason.split(":")[0] for r in back.refused] == [k.strip() for k in cases]
    assert [r.number for r in back.refused] == list(range(2, 2 + len(cases)))
    assert back.refusals().startswith(f"{len(cases)} lines of results.jsonl refused")


def test_set_aside_keeps_every_refused_line_and_the_accepted_file_reads_clean(
    folder: Path,
) -> None:
    secret = secret_of(folder)
    good = [sealed_line(record(TASKS[0]), secret), sealed_line(record(TASKS[1]), secret)]
    bad = ['{"torn": ', good[0]]
    write(folder, [good[0], bad[0], good[1], bad[1]])
    back = read_back(folder)
    set_aside(folder, back)
    kept = [json.loads(line) for line in (folder / REJECTED_FILE).read_text().splitlines()]
    assert [(k["line"], k["text"]) for k in kept] == [(2, bad[0]), (4, bad[1])]
    assert (folder / RESULTS_FILE).read_text().splitlines() == good
    again = read_back(folder)
    assert again.refused == () and len(again.records) == 2
    for name in (RESULTS_FILE, REJECTED_FILE):
        assert (folder / name).stat().st_mode & 0o777 == 0o600


def test_a_line_over_the_size_bound_is_refused_without_being_loaded(folder: Path) -> None:
    secret = secret_of(folder)
    good = sealed_line(record(TASKS[0]), secret)
    write(folder, ["x" * (3 << 20), good])
    back = read_back(folder)
    assert [r.task_id for r in back.records] == [TASKS[0]]
    assert len(back.refused) == 1 and back.refused[0].reason.startswith("not JSON")


def test_a_folder_without_a_secret_cannot_be_verified(folder: Path) -> None:
    (folder / "run.secret").unlink()
    from orchestrator.errors import RunFolderError

    with pytest.raises(RunFolderError, match="no run secret"):
        read_back(folder)
