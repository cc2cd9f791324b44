"""The family contract: every registered family, checked the same way.

A new family passes this file or it is not a family: its declarations agree with
each other, its README tells the agent what its schema asks, the sandbox kit and the
verifiers taskset know its name, the reference answer validates and scores into the
family's declared estimands and components, and its frozen split holds its declared
count.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import get_args

import numpy as np
import pytest

from causal_gym.families import base
from causal_gym.families.null_detect import NULL_BLOCK_SIZE
from causal_gym.families.obs_vs_rct import BIAS_BLOCK_SIZE
from causal_gym.families.registry import REGISTRY, family_spec, registered
from causal_gym.reference import analyst, estimand_probes, probes
from causal_gym.scm.build import draw_counts
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.schemas import submission_json_schema
from causal_gym.scoring.validate import validate_submission
from causal_gym.spec.plan import EffectClass, effect_class_for
from causal_gym.spec.tiers import TIER_SPECS
from causal_gym.splits.manifest import load_manifest
from causal_gym.task_id import FAMILIES, Family, TaskId
from causal_gym.vf.taskset import FamilyName
from causal_gym.wire import TaskWire
from orchestrator.run.records import ScoredEpisode
from tests.conftest import cached_task

SPECS = registered()
IDS = [spec.name.value for spec in SPECS]


def test_the_registry_is_every_family_in_order() -> None:
    assert tuple(REGISTRY) == tuple(Family) and list(FAMILIES) == IDS
    assert list(get_args(FamilyName)) == IDS  # the verifiers taskset serves each one
    with pytest.raises(ValueError):
        family_spec("mediation_typo")


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_declarations_agree(spec: base.FamilySpec) -> None:
    spec.check()
    assert family_spec(spec.name.value) is spec
    assert spec.label and spec.estimands
    schema = submission_json_schema(spec.name)
    assert schema["title"] == f"{spec.name.value} submission"
    assert set(spec.placeholder_answer()) == set(schema["properties"])  # type: ignore[arg-type]
    # Records and streams carry each component under its own name.
    assert set(spec.components) <= set(ScoredEpisode.model_fields)
    # Its reference kit exists, and the kit's dispatch agrees with the declaration.
    folder = Path(analyst.__file__).parent
    assert all((folder / name).is_file() for name in spec.reference_kit)
    assert spec.multi_estimand == (spec.name.value in analyst.MULTI_ESTIMAND_FAMILIES)
    # Hack probes the family names exist in the sandbox kit.
    kit = estimand_probes.FAMILY_PROBES if spec.multi_estimand else vars(probes)
    assert all(callable(kit.get(name)) for name in spec.extra_probes)
    # The maxima never contradict the minima.
    assert all(spec.min_role_counts.get(k, 0) <= v for k, v in spec.max_role_counts.items())


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_the_sandbox_kit_reads_the_answer_type(spec: base.FamilySpec) -> None:
    readme = cached_task(f"train:{spec.name.value}:0").public.files["README.md"].decode()
    match = analyst._ANSWER.search(readme)
    assert match is not None and match.group(1) == spec.name.value


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_the_readme_states_the_family_section_and_schema(spec: base.FamilySpec) -> None:
    readme = cached_task(f"train:{spec.name.value}:1").public.files["README.md"].decode()
    # generator 3 discloses obs_vs_rct's bias size (a declared fact of train tasks)
    declared = {"bias_spread": "disclosed"} if spec.name.value == "obs_vs_rct" else {}
    for line in spec.readme_lines(declared):
        assert line in readme
    for field in submission_json_schema(spec.name)["properties"]:  # type: ignore[union-attr]
        assert f'"{field}"' in readme


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_the_reference_answer_scores_into_the_declared_components(
    spec: base.FamilySpec,
) -> None:
    for index in range(3):
        task = cached_task(f"train:{spec.name.value}:{index}")
        answer = analyst.files_answer(dict(task.public.files))
        names = tuple(task.hidden.estimands)
        assert names == task.public.estimands == task.public.to_wire("handle-0001").estimands
        if spec.per_level_estimands:  # one estimand per level the README lists
            readme = task.public.files["README.md"].decode()
            assert 3 <= len(names) <= 5 and all(f"`{name}`" in readme for name in names)
        else:
            assert names == spec.estimands
        for estimand in task.hidden.estimands.values():
            assert repr(estimand) == "Estimand(<redacted>)"
            with pytest.raises(TypeError, match="must not be pickled"):
                pickle.dumps(estimand)
        public = task.public
        assert validate_submission(spec.name, answer, public.columns, public.estimands).ok
        record = score_answer(task, answer)
        assert record is not None
        assert tuple(record.components) == spec.components
        assert tuple(record.estimands) == names
        assert record.estimand_reward == pytest.approx(
            sum(e.reward for e in record.estimands.values()) / len(names), abs=1e-12
        )
        assert record.reward == spec.total_reward(record.estimand_reward, record.components)
        flat = record.as_dict()
        assert all(flat[name] == record.components[name] for name in spec.components)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_effect_classes_and_eval_counts(spec: base.FamilySpec, default_key) -> None:
    classes = {
        effect_class_for(default_key, TaskId.parse(f"train:{spec.name.value}:{i}"))
        for i in range(2 * NULL_BLOCK_SIZE)
    }
    if spec.name is Family.NULL_DETECT:
        assert EffectClass.STANDARD not in classes and len(classes) == 3
        assert spec.eval_count % NULL_BLOCK_SIZE == 0  # whole blocks only
    elif spec.name is Family.OBS_VS_RCT:
        assert classes == {EffectClass.CONFOUNDED, EffectClass.UNCONFOUNDED}
        assert spec.eval_count % BIAS_BLOCK_SIZE == 0
    else:
        assert classes == {EffectClass.STANDARD}
    assert load_manifest(spec.eval_split).counts[spec.name.value] == spec.eval_count


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_role_count_minimums_hold_in_every_draw(spec: base.FamilySpec) -> None:
    rng = np.random.default_rng(np.random.PCG64(7))  # a test stream, not a task's
    for tier in TIER_SPECS.values():
        for _ in range(50):
            counts = draw_counts(tier, spec.name, rng)
            for name, least in spec.min_role_counts.items():
                assert getattr(counts, name) >= least
            for name, most in spec.max_role_counts.items():
                assert getattr(counts, name) <= most


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_tasks_stage_exactly_the_declared_files(spec: base.FamilySpec) -> None:
    public = cached_task(f"train:{spec.name.value}:2").public
    assert public.staged_files == spec.staged_files
    assert sorted(public.files) == sorted(spec.staged_files)
    assert list(public.metadata()["sha256"]) == list(spec.staged_files)
    wire = public.to_wire("handle-0001")
    short = {name: data for name, data in wire.files.items() if name != "data.csv"}
    with pytest.raises(ValueError, match=f"a {spec.name.value} task stages exactly"):
        TaskWire.model_validate({**wire.model_dump(), "files": short})
