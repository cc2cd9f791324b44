"""The head boundary as a property of the code: what may leave the head, what may not,
and what the worker side can import. Plain classes, no Ray."""

from __future__ import annotations

import copy
import json
import os
import pickle
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ray import cloudpickle

from causal_gym.generate.build import build_scm
from causal_gym.plan.effects import effect_prior
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import TIER_SPECS, Tier
from causal_gym.rng_keys import parse_key_hex
from causal_gym.scm.certify import certify
from causal_gym.scoring.answer import episode_score
from causal_gym.task_id import Family
from causal_gym.wire import TaskWire
from orchestrator.agents import AgentTurn, EpisodeConfig, EpisodeStatus, Policy
from orchestrator.records.chain import GENESIS, read_anchor
from orchestrator.records.layout import RESULTS_FILE
from orchestrator.records.mac import mac_holds, run_key
from orchestrator.records.types import Attempt, FailureClass, ScoredEpisode, read_record
from orchestrator.run.episode_actor import EpisodeSpec, EpisodeWorker
from orchestrator.run.head_actors import Recorder, TaskGenerator
from orchestrator.run.head_key import key_from_moved_file, remove_key_file, write_key_file
from tests.conftest import cached_task

WORKER_MODULES = (
    "orchestrator.agents",
    "orchestrator.agents.episode",
    "orchestrator.agents.loader",
    "orchestrator.sandbox",
    "orchestrator.sandbox.bubblewrap",
    "orchestrator.sandbox.docker_backend",
    "orchestrator.run.episode_actor",
    "causal_gym.wire",
)
FORBIDDEN_ON_WORKERS = (
    "causal_gym.generate",
    "causal_gym.scm",
    "causal_gym.rng_keys",
    "causal_gym.plan",
    "causal_gym.staging",
    "causal_gym.task",
    "causal_gym.splits",
    "causal_gym.reference",
)


def test_the_worker_side_imports_no_generator_scm_or_key_module() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for m in {WORKER_MODULES!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN_ON_WORKERS)]
    assert bad == []
    assert "causal_gym.wire" in loaded  # (the check above is not vacuous)


def sealed_values() -> list[Any]:
    task = cached_task("train:ate:3")
    score = episode_score(task, {"estimate": 0.1, "ci_lower": -1.0, "ci_upper": 1.0})
    record = ScoredEpisode(
        run_id="r", config_digest="c", task_id="train:ate:3", family="ate", tier="easy",
        attempt=0, final=True, key_fingerprint="k", sandbox="local", agent="a", status="submitted",
        failure_class=None, retryable=False, **score.fields(),
    )  # fmt: skip
    return [task, task.hidden, score, score.record, record]


def test_hidden_values_refuse_to_travel_and_print_redacted() -> None:
    hidden = cached_task("train:ate:3").hidden
    for value in sealed_values():
        for dumps in (pickle.dumps, cloudpickle.dumps):
            with pytest.raises(TypeError, match="must not be pickled"):
                dumps(value)
        text = repr(value) + str(value) + f"{value}"
        assert "<redacted>" in text
        assert repr(hidden.ate) not in text and hidden.treatment not in text
        assert copy.deepcopy(value) is value  # immutable: copies are the object itself


def test_the_wire_format_is_public_and_travels() -> None:
    task = cached_task("train:adjustment:3")
    wire = task.public.to_wire("handle-0123456789")
    assert cloudpickle.loads(cloudpickle.dumps(wire)) == wire
    assert TaskWire.model_validate_json(wire.model_dump_json()) == wire
    assert set(TaskWire.model_fields) == {
        "wire_version", "handle", "family", "files", "prompt", "columns",
        "submission_schema", "n_rows", "estimands",
    }  # fmt: skip
    text = wire.model_dump_json()
    assert task.public.task_id not in text and repr(task.hidden.ate) not in text
    with pytest.raises(ValueError, match="pattern"):
        task.public.to_wire("train:adjustment:3")  # a task id is not a handle


def test_rejection_reasons_name_no_value_of_the_hidden_scm() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    spec = TIER_SPECS[Tier.EASY]
    scm = build_scm(spec, Family("ate"), effect_prior(EffectClass.STANDARD, 3), rng, rng)
    n = 500
    propensity = np.full(n, 0.5)
    treatment = (rng.random(n) < 0.5).astype(int)
    # certified against another effect class: the reason must not say what the effect is
    null = effect_prior(EffectClass.STRUCTURAL_NULL, 3)
    reasons = certify(scm, null, propensity, treatment).reasons
    assert reasons == ("the effect is not the planned one",)
    assert f"{abs(scm.total_effect()):.4f}" not in " ".join(reasons)


def test_the_key_file_is_private_and_the_moved_key_leaves_no_trace(tmp_path: Path) -> None:
    key = parse_key_hex("3c" * 32, "test")
    path = write_key_file(key)
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    finally:
        remove_key_file(path)
    assert not path.parent.exists()
    code = (
        "import os, sys\n"
        "from orchestrator.run.head_key import key_from_moved_file, take_key_from_environment\n"
        "if 'CAUSAL_GYM_KEY' in os.environ:\n"
        "    take_key_from_environment([sys.executable, '-c', sys.argv[1], sys.argv[1]])\n"
        "moved = key_from_moved_file()\n"
        "environ = open('/proc/self/environ', 'rb').read()\n"
        "names = ('CAUSAL_GYM_KEY', 'CAUSAL_GYM_KEY_FILE_FROM_ENV')\n"
        "print(moved == '4d' * 32, b'4d4d4d4d' in environ, any(n in os.environ for n in names))\n"
    )
    env = {**os.environ, "CAUSAL_GYM_KEY": "4d" * 32}
    done = subprocess.run(
        [sys.executable, "-c", code, code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "False", "False"], done.stderr
    assert key_from_moved_file() is None


class Hangs(Policy):
    """Ignores its deadline: the in-actor watchdog must stop it from outside."""

    def __init__(self) -> None:
        self.closed = False

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        while not self.closed:
            time.sleep(0.05)
        raise RuntimeError("closed from outside")

    def close(self) -> None:
        self.closed = True


def test_the_sandbox_actor_stops_a_policy_that_ignores_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("orchestrator.run.episode_actor.WIND_DOWN_S", 1.0)
    policy = Hangs()
    monkeypatch.setattr("orchestrator.run.episode_actor.load_policy", lambda *a, **k: policy)
    spec = EpisodeSpec(run_id="t", agent="hangs", episode=EpisodeConfig(episode_timeout_s=2))
    wire = cached_task("train:ate:4").public.to_wire("handle-hangs-0001")
    started = time.monotonic()
    result = EpisodeWorker(spec).run(wire)
    assert time.monotonic() - started < 2 + 1 + 2
    assert result.status is EpisodeStatus.TIMEOUT and "stopped from outside" in (
        result.message or ""
    )
    assert policy.closed


def test_a_generator_scores_against_the_truth_it_kept_and_the_recorder_seals_it(
    tmp_path: Path, state_dir: Path
) -> None:
    """The generator that made a task scores its attempt against the truth it kept
    (dropping it then), re-derives a truth it never kept, and hands out public numbers
    only; the recorder appends each record durably with its MAC."""
    key = parse_key_hex("8d061ed1e9cc86988c5664b1b2001666f47a58d68b8d60b82161a1d1806ffeb9", "t")
    path = write_key_file(key)
    try:
        generator = TaskGenerator(str(path), key.fingerprint)
        recorder = Recorder(
            key.fingerprint, str(tmp_path), "run-x", "digest", "local", str(state_dir)
        )
        task = cached_task("train:null_detect:2")
        handle, wire = generator.generate("train:null_detect:2", "h" * 12)
        assert handle == wire.handle == "h" * 12 and generator.kept() == 1
        from orchestrator.agents.types import EpisodeResult

        answer = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0, "effect_probability": 0.5}
        result = EpisodeResult(
            handle="h" * 12, agent="a", status=EpisodeStatus.SUBMITTED, submission=answer
        )
        scored = generator.score("train:null_detect:2", answer)
        assert generator.kept() == 0  # the truth is dropped once the attempt is scored
        again = generator.score("train:null_detect:2", answer)  # re-derived
        assert again == scored and scored.tier == task.public.tier.value
        assert "HiddenTruth" not in repr(scored) and "estimands" not in scored.model_dump_json()
        progress = recorder.record(
            Attempt("train:null_detect:2", 0, None, False, result, "a"), scored
        )
        lost_score = generator.score("train:null_detect:3", None)
        lost = recorder.record(
            Attempt("train:null_detect:3", 0, FailureClass.LOST, True, None, "a"), lost_score
        )
        node = recorder.record(
            Attempt("train:null_detect:4", 0, FailureClass.NODE_LOST, True, None, "a"), None
        )
        recorder.close()
    finally:
        remove_key_file(path)
    lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
    first, second, third = (read_record(line) for line in lines)
    secret = run_key("run-x")
    assert all(mac_holds(json.loads(line), secret) for line in lines)
    # a chain: each line names the MAC of the one before, and the head's anchor the last
    assert [json.loads(line)["prev"] for line in lines] == [
        GENESIS,
        *(json.loads(line)["mac"] for line in lines[:2]),
    ]
    assert read_anchor("run-x").lines == 3
    assert read_anchor("run-x").mac == json.loads(lines[2])["mac"]
    assert first.config_digest == "digest" and first.run_id == "run-x"
    assert oct((tmp_path / RESULTS_FILE).stat().st_mode & 0o777) == "0o600"
    assert first.reward == pytest.approx(episode_score(task, answer).reward)
    assert progress.reward == first.reward and progress.final
    assert (second.status, second.reward, second.final) == ("lost", -1.0, False)
    assert not lost.final and lost.failure_class is FailureClass.LOST
    assert (third.status, third.failure_class, third.tier) == ("node_lost", "node_lost", "unknown")
    assert not node.final
