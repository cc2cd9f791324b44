"""Reading a run's records back: each of read_back's checks refuses what it should and
only that, with the run's own key (tests/test_run_integrity.py attacks the same checks
end to end, the way someone without the head's secret would)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from orchestrator.records.chain import GENESIS, ChainTip, sealed_line, write_anchor
from orchestrator.records.layout import RESULTS_FILE, RunIdentity, create_folder
from orchestrator.records.mac import mac_of, run_key
from orchestrator.records.read_back import REJECTED_FILE, read_back, set_aside
from orchestrator.records.types import ScoredEpisode

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
def folder(tmp_path: Path, state_dir: Path) -> Path:
    out = tmp_path / "run"
    create_folder(out, identity())
    return out


def secret_of(out: Path) -> bytes:
    return run_key("run-a")


def chain(records: list[ScoredEpisode], key: bytes) -> list[str]:
    """The lines a recorder writes for `records`, each chained to the one before, with
    the head's anchor moved to the last (as the recorder does)."""
    lines, prev = [], GENESIS
    for item in records:
        line, prev = sealed_line(item, key, prev)
        lines.append(line)
    write_anchor("run-a", ChainTip(len(lines), prev))
    return lines


def forged(fields: dict[str, Any], secret: bytes) -> str:
    """A line with a MAC that holds: what only a holder of the key could write."""
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
    lines = chain([failed, record(TASKS[1]), record(TASKS[0], 1, True)], secret)
    write(folder, lines)
    back = read_back(folder)
    assert back.refused == () and len(back.records) == 3 and not back.broken
    assert back.finished() == {TASKS[0]: 2, TASKS[1]: 1}
    assert back.attempts() == {TASKS[0]: 2, TASKS[1]: 1}


def test_each_check_refuses_its_kind_and_nothing_else(folder: Path) -> None:
    secret = secret_of(folder)
    [good] = chain([record(TASKS[0])], secret)
    base = json.loads(good)
    other_secret = os.urandom(32)
    next_in_chain = {**base, "prev": base["mac"]}
    cases = {
        "not JSON": good[: len(good) // 2],
        "bad MAC": json.dumps({**base, "attempt": 1}),  # edited, MAC not redone
        "bad MAC ": forged(base, other_secret),  # another run's secret
        "broken chain": good,  # a genuine line, repeated: it follows nothing here
        "broken chain ": forged({**base, "prev": "1" * 64}, secret),
        "out of range": forged({**next_in_chain, "reward": 1e308, "clipped_reward": 1e308}, secret),
        "out of range ": forged({**next_in_chain, "reward": 0.5, "clipped_reward": 0.7}, secret),
        "out of range  ": forged(
            {**next_in_chain, "usage": {**base["usage"], "prompt_tokens": -21}}, secret
        ),
        "another run": forged({**next_in_chain, "run_id": "run-b"}, secret),
        "another run ": forged({**next_in_chain, "key_fingerprint": "other"}, secret),
        "another run  ": forged({**next_in_chain, "config_digest": "other"}, secret),
        "not in this run": forged({**next_in_chain, "task_id": "eval-v1:ate:9"}, secret),
        "after the final record": forged(next_in_chain, secret),
        "out of order": forged({**next_in_chain, "task_id": TASKS[1], "attempt": 3}, secret),
    }
    write(folder, [good, *cases.values()])
    back = read_back(folder)
    assert [r.task_id for r in back.records] == [TASKS[0]]
    assert [r.reason.split(":")[0] for r in back.refused] == [k.strip() for k in cases]
    assert [r.number for r in back.refused] == list(range(2, 2 + len(cases)))
    assert back.refusals().startswith(f"{len(cases)} lines of results.jsonl refused")
    assert not back.broken  # every genuine line is there: the refused ones change nothing


def test_set_aside_keeps_every_refused_line_and_the_accepted_file_reads_clean(
    folder: Path,
) -> None:
    secret = secret_of(folder)
    good = chain([record(TASKS[0]), record(TASKS[1])], secret)
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
    [good] = chain([record(TASKS[0])], secret)
    write(folder, ["x" * (3 << 20), good])
    back = read_back(folder)
    assert [r.task_id for r in back.records] == [TASKS[0]]
    assert len(back.refused) == 1 and back.refused[0].reason.startswith("not JSON")


def test_deleted_moved_or_cut_lines_break_the_chain_with_their_position(folder: Path) -> None:
    key = secret_of(folder)
    lines = chain([record(task) for task in TASKS], key)
    for damaged, where in (
        ([lines[0], lines[2]], "line 2 does not follow"),  # the middle task's line deleted
        ([lines[1], lines[0], lines[2]], "line 1 does not follow"),  # moved
        (lines[:2], "results.jsonl chains 2 lines, but this head recorded 3"),  # cut
        ([], "results.jsonl chains 0 lines, but this head recorded 3"),  # emptied
    ):
        write(folder, damaged)
        back = read_back(folder)
        assert where in back.broken, (where, back.broken)
    write(folder, lines)
    assert not read_back(folder).broken


def test_the_key_is_not_in_the_folder_and_a_copy_elsewhere_cannot_be_checked(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.errors import RunFolderError

    lines = chain([record(TASKS[0])], secret_of(folder))
    write(folder, lines)
    assert sorted(p.name for p in folder.iterdir()) == ["results.jsonl", "run.json"]
    for path in folder.iterdir():  # neither the head secret nor the run's key
        assert secret_of(folder).hex() not in path.read_text()
    monkeypatch.setenv("CAUSAL_GYM_STATE_DIR", str(tmp_path / "another-head"))
    with pytest.raises(RunFolderError, match="not written by a run of this user on this head"):
        read_back(folder)


def test_a_folder_of_an_older_version_is_refused(folder: Path) -> None:
    """Before version 3 run.json had no MAC and the key sat in the folder."""
    from orchestrator.errors import RunFolderError

    text = json.loads((folder / "run.json").read_text())
    del text["mac"]
    (folder / "run.json").write_text(json.dumps(text))
    (folder / "run.secret").write_text("ab" * 32)
    with pytest.raises(RunFolderError, match="before records version 3"):
        read_back(folder)
