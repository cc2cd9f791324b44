"""The family contract: every registered family, checked the same way.

A new family passes this file or it is not a family: its declarations agree with
each other, its README tells the agent what its schema asks, the sandbox kit and the
verifiers taskset know its name, the reference answer validates and scores into the
family's declared estimands and components, and its frozen split holds its declared
count.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from causal_gym.contracts.contract import FamilyContract
from causal_gym.contracts.designs import DesignContract
from causal_gym.contracts.families import contract_of, contracts, family_names
from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.families.conformance import check_family
from causal_gym.families.null_detect.contract import NULL_BLOCK_SIZE
from causal_gym.families.obs_vs_rct.contract import BIAS_BLOCK_SIZE
from causal_gym.generate.draw import effect_class_for
from causal_gym.hooks import hooks_of
from causal_gym.namespaces import Namespace
from causal_gym.plan.task_plan import EffectClass
from causal_gym.reference import analyst, designs, estimand_probes, probes
from causal_gym.reference import answer as reference_answer
from causal_gym.splits.manifest import load_manifest
from causal_gym.task_id import FAMILIES, TaskId
from causal_gym.vf.taskset import FamilyName
from causal_gym.wire import TaskWire
from orchestrator.records.types import ScoredEpisode
from tests.conftest import cached_task

SPECS = contracts()
IDS = [spec.name for spec in SPECS]


def test_the_registry_is_every_family_in_order() -> None:
    assert family_names() == FAMILIES and list(FAMILIES) == IDS
    assert list(get_args(FamilyName)) == IDS  # the verifiers taskset serves each one
    with pytest.raises(ValueError, match="accepted families are ate, adjustment"):
        contract_of("mediation_typo")


@pytest.mark.parametrize("name", IDS)
def test_every_family_conforms(name: str) -> None:
    """The conformance check any family must pass (causal_gym/families/conformance.py:
    determinism, staged files and hidden truths, README, the kit's honest answer
    scored into the declared estimands and components, role counts)."""
    check_family(name)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_declarations_agree(spec: FamilyContract) -> None:
    spec.check()
    hooks = hooks_of(spec.name)
    assert contract_of(spec.name) is spec and hooks.contract is spec
    assert spec.label and spec.estimands
    schema = submission_json_schema(spec.name)
    assert schema["title"] == f"{spec.name} submission"
    assert set(spec.placeholder_answer()) == set(schema["properties"])  # type: ignore[arg-type]
    # Records and streams carry each component under its own name.
    assert set(spec.components) <= set(ScoredEpisode.model_fields)
    # Its reference kit exists, and the kit's dispatch agrees with the declaration.
    folder = Path(analyst.__file__).parent
    assert all((folder / name).is_file() for name in spec.reference_kit)
    assert spec.multi_estimand == (spec.name in reference_answer.MULTI_ESTIMAND_FAMILIES)
    # Hack probes the family names exist in the sandbox kit (a design family's in its
    # own kit module, which lists them).
    if isinstance(spec, DesignContract):
        module = designs.family_module(spec.name)
        assert f"design_{spec.name}.py" in spec.reference_kit
        assert set(spec.extra_probes) == set(module.PROBES) and callable(module.probe)
    else:
        kit = estimand_probes.FAMILY_PROBES if spec.multi_estimand else vars(probes)
        assert all(callable(kit.get(name)) for name in spec.extra_probes)
    # The maxima never contradict the minima.
    assert all(hooks.min_role_counts.get(k, 0) <= v for k, v in hooks.max_role_counts.items())


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_the_sandbox_kit_reads_the_answer_type(spec: FamilyContract) -> None:
    readme = cached_task(f"train:{spec.name}:0").public.files["README.md"].decode()
    match = analyst._ANSWER.search(readme)
    assert match is not None and match.group(1) == spec.name


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_effect_classes_and_eval_counts(spec: FamilyContract, default_key) -> None:
    classes = {
        effect_class_for(default_key, TaskId.parse(f"train:{spec.name}:{i}"))
        for i in range(2 * NULL_BLOCK_SIZE)
    }
    if spec.name == "null_detect":
        assert EffectClass.STANDARD not in classes and len(classes) == 3
        assert all(count % NULL_BLOCK_SIZE == 0 for count in spec.splits.values())  # blocks
    elif spec.name == "obs_vs_rct":
        assert classes == {EffectClass.CONFOUNDED, EffectClass.UNCONFOUNDED}
        assert all(count % BIAS_BLOCK_SIZE == 0 for count in spec.splits.values())
    else:
        assert classes == {EffectClass.STANDARD}
    # Every family is in a frozen split; the design families in eval-v3 alone.
    assert spec.splits
    assert (Namespace.EVAL_V3 in spec.splits) == isinstance(spec, DesignContract)
    for split, count in spec.splits.items():
        assert load_manifest(split).counts[spec.name] == count


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_tasks_stage_exactly_the_declared_files(spec: FamilyContract) -> None:
    public = cached_task(f"train:{spec.name}:2").public
    assert public.staged_files == spec.staged_files
    assert sorted(public.files) == sorted(spec.staged_files)
    assert list(public.metadata()["sha256"]) == list(spec.staged_files)
    wire = public.to_wire("handle-0001")
    short = {name: data for name, data in wire.files.items() if name != "data.csv"}
    with pytest.raises(ValueError, match=f"a {spec.name} task stages exactly"):
        TaskWire.model_validate({**wire.model_dump(), "files": short})
