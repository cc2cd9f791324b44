"""One run from start to report: check everything, start Ray, dispatch, publish.

Order matters: every bad input (config, split size, run folder, cluster, head
resource) is reported before any episode runs; the key is in a 0600 file and out of
the environment before Ray starts; the key file is removed however the run ends.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from rich.console import Console

from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.task_id import FAMILIES
from causal_gym.versions import reward_version
from orchestrator.agents.loader import check_agent_loads
from orchestrator.errors import RunFolderError
from orchestrator.host.private_files import dump_json
from orchestrator.records.layout import RunIdentity, check_folder, create_folder
from orchestrator.records.read_back import REJECTED_FILE, read_back, reanchor, set_aside
from orchestrator.records.report import write_outputs
from orchestrator.records.summary import RunSummary
from orchestrator.records.types import Progress
from orchestrator.run.cluster import connect, disconnect
from orchestrator.run.config import RunConfig
from orchestrator.run.dispatcher import Dispatcher, Tally
from orchestrator.run.display import LiveView, say
from orchestrator.run.head_key import remove_key_file, write_key_file
from orchestrator.run.leftovers import reap_dead_runs


def sample_label(config: RunConfig, count: int) -> str:
    """What a run covered, for tables: the split, and how much of it (families are
    named when they are not all of the split's)."""
    from causal_gym.contracts.families import split_counts

    split = config.split
    whole = FAMILIES if split == "train" else tuple(split_counts(split))
    chosen = tuple(f.value for f in config.families)
    families = "" if chosen == whole else f" ({', '.join(chosen)})"
    if split == "train":
        return f"train, {count} fresh ids from index {config.start}{families}"
    if config.per_family is not None:
        return f"{split}, {config.per_family} per family from position {config.start}{families}"
    if count == sum(split_counts(split).values()) and config.start == 0 and not families:
        return split
    return f"{split}, {count} tasks from position {config.start}{families}"


def execute(
    config: RunConfig,
    key: DerivationKey,
    resume: bool,
    console: Console,
) -> tuple[RunSummary, Path]:
    """Run it; returns the summary and the run folder."""
    task_ids = config.task_ids()
    run_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    if "{run_id}" in str(config.out):  # a fresh folder per run
        if resume:
            raise RunFolderError("--resume needs the --out of the run to finish, not a pattern")
        config = config.model_copy(update={"out": Path(str(config.out).format(run_id=run_id))})
    identity = RunIdentity(
        run_id=run_id,
        config_digest=config.identity_digest(),
        key_fingerprint=key.fingerprint,
        task_ids=tuple(task_ids),
        config=config.describe(),
        reward_version=reward_version(config.split),
    )
    check_agent_loads(config.agent, (key.raw.hex(),))
    identity = check_folder(config.out, identity, resume)
    reap_dead_runs()  # whatever an earlier runner killed with SIGKILL left
    done: dict[str, int] = {}
    attempts: dict[str, int] = {}
    if resume:
        back = read_back(config.out, identity)
        done, attempts = back.finished(), back.attempts()
        if back.refused:
            set_aside(config.out, back)
            say(console, f"resume: {back.refusals()}; kept in:", config.out / REJECTED_FILE)
        if back.broken:  # genuine lines are missing: running their tasks again would re-roll
            raise RunFolderError(
                f"--resume refused: {back.broken}; refused lines are kept in "
                f"{config.out / REJECTED_FILE}"
            )
        reanchor(identity.run_id, back)
    todo = [t for t in task_ids if t not in done]
    if resume:
        console.print(f"resuming {identity.run_id}: {len(done)} done, {len(todo)} to run")
    key_path = write_key_file(key)
    try:
        cluster = connect(config.address, timeout_s=config.connect_timeout_s)
        dispatcher: Dispatcher | None = None
        try:
            identity = create_folder(config.out, identity)
            view = LiveView(console, len(task_ids), f"{config.agent} on {config.split}")

            def on_progress(tally: Tally, progress: Progress | None) -> None:
                tally_view = Tally(
                    total=len(task_ids),
                    done=tally.done + len(done),
                    running=tally.running,
                    retried=tally.retried,
                    failed=tally.failed,
                    reward_sum=tally.reward_sum,
                )
                view.update(tally_view, progress)

            dispatcher = Dispatcher(
                config,
                identity.run_id,
                str(key_path),
                key.fingerprint,
                identity.config_digest,
                todo,
                attempts,
                on_progress,
            )
            placed = dispatcher.wait_ready()
            dump_json(Path(config.out) / "placement.json", placed)
            say(
                console,
                f"run {identity.run_id}: {len(todo)} tasks, {len(placed['workers'])} sandbox "
                f"actors on {cluster.nodes} node(s), output in:",
                config.out,
            )
            with view:
                dispatcher.run()
        finally:
            if dispatcher is not None:
                dispatcher.shutdown()
            disconnect(cluster)
            reap_dead_runs()  # what killed actors left (their sandboxes)
    finally:
        remove_key_file(key_path)
    back = read_back(Path(config.out), identity)
    if back.refused:  # written during this run: someone else is writing the folder
        console.print(f"warning: {back.refusals()}; the report leaves them out")
    records = list(back.records)
    meta = {
        "run_id": identity.run_id,
        "agent": config.agent,
        "model": config.model_label or (config.openai.model if config.openai else config.agent),
        "provider": config.provider_label or ("OpenAI-compatible" if config.openai else "scripted"),
        "sample": sample_label(config, len(task_ids)),
        "split": config.split,
        "sandbox": config.sandbox,
        "tool_choice": config.openai.tool_choice if config.openai else None,
        "key_fingerprint": key.fingerprint,
        "config_digest": identity.config_digest,
        "reward_version": identity.reward_version,
    }
    return write_outputs(records, meta, Path(config.out)), Path(config.out)
