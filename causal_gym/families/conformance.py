"""Does a registered family keep the contract every stage relies on? `check_family`
answers for any family, built-in or registered by a package of its own (the way
Gymnasium's `check_env` answers for an environment): tests/test_families.py runs it
over every registered family, and tests/test_extending.py over a toy family built by
the recipe in docs/pages/extending.md.

It generates a few train tasks and checks: the declarations agree (contract and
hooks), generation is byte-deterministic, the staged files are the declared ones and
hide every truth, the README carries the family's answer section and schema, the
sandbox kit's honest answer validates and scores into the declared estimands and
components, the hidden parts refuse to be printed or pickled, and the role-count
bounds hold in every draw. A family with a real tier is checked on its first real
train tasks too, and they must be real: their rows from the named table, its study
named in the README, the table's columns under their own names. Each failure is a
FamilyConformanceError naming the check.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from causal_gym.contracts.families import contract_of
from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.errors import FamilyConformanceError
from causal_gym.generate.build import draw_counts
from causal_gym.generate.draw import tier_train_ids
from causal_gym.hooks import FamilyHooks, hooks_of
from causal_gym.make import generate_task
from causal_gym.plan.tiers import TIER_SPECS, Tier
from causal_gym.realdata.design_tables import design_sources, design_table
from causal_gym.realdata.tables import real_table
from causal_gym.reference import analyst, answer
from causal_gym.rng_keys.keys import DerivationKey, resolve_key
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.validate import validate_submission
from causal_gym.task_id import Family


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise FamilyConformanceError(what)


def check_family(name: str, key: DerivationKey | None = None, tasks: int = 3) -> None:
    """Check the family `name` on its first `tasks` train tasks under `key` (default:
    the public key); return None when it conforms."""
    contract = contract_of(name)
    hooks = hooks_of(name)
    contract.check()
    hooks.check()
    _check_declarations(name)
    key = key or resolve_key(environ={})
    for index in range(tasks):
        _check_task(name, f"train:{name}:{index}", key)
    if contract.real_tier or design_sources(name):
        for task_id in tier_train_ids(key, name, tasks, Tier.REAL):
            _check_task(name, task_id, key)
            _check_real(task_id, key)
    if type(hooks).design_candidate is FamilyHooks.design_candidate:
        _check_role_counts(name)  # (a design family draws no shared SCM)


def _check_real(task_id: str, key: DerivationKey) -> None:
    task = generate_task(task_id, key)
    public = task.public
    _expect(public.tier is Tier.REAL and public.source is not None, f"{task_id}: not real")
    assert public.source is not None
    design = public.source in design_sources(public.family.value)
    table = design_table(public.source) if design else real_table(public.source)
    readme = public.files["README.md"].decode("utf-8")
    _expect("\n## Source\n\n" in readme, f"{task_id}: the README has no Source section")
    _expect(table.title in readme, f"{task_id}: the README does not name its study")
    staged = set(public.columns) if design else set(public.pre_treatment_columns)
    real = {c.name for c in table.columns} & staged
    _expect(bool(real), f"{task_id}: no column of {table.key} is staged")
    _expect(public.metadata().get("source") == table.key, f"{task_id}: metadata's source")


def _check_declarations(name: str) -> None:
    contract, hooks = contract_of(name), hooks_of(name)
    _expect(hooks.contract is contract, f"{name}: its hooks hold another contract")
    _expect(bool(contract.label) and bool(contract.estimands), f"{name}: label and estimands")
    schema = submission_json_schema(name)
    _expect(schema["title"] == f"{name} submission", f"{name}: the schema's title")
    properties = schema["properties"]
    fields = set(properties) if isinstance(properties, dict) else set()
    _expect(set(contract.placeholder_answer()) == fields, f"{name}: placeholder vs schema")
    kit = Path(analyst.__file__).parent
    missing = [f for f in contract.reference_kit if not (kit / f).is_file()]
    _expect(
        not missing, f"{name}: reference kit files missing from causal_gym/reference: {missing}"
    )
    _expect(contract.reference_kit[-1:] == ("answer.py",), f"{name}: the kit must end in answer.py")
    bounds = hooks.max_role_counts.items()
    _expect(
        all(hooks.min_role_counts.get(k, 0) <= v for k, v in bounds),
        f"{name}: a role's maximum is below its minimum",
    )


def _check_task(name: str, task_id: str, key: DerivationKey) -> None:
    contract, hooks = contract_of(name), hooks_of(name)
    task = generate_task(task_id, key)
    again = generate_task(task_id, key)
    _expect(dict(task.public.files) == dict(again.public.files), f"{task_id}: not deterministic")
    public = task.public
    _expect(public.staged_files == contract.staged_files, f"{task_id}: staged files")
    _expect(sorted(public.files) == sorted(contract.staged_files), f"{task_id}: files staged")
    readme = public.files["README.md"].decode("utf-8")
    _expect(f"Answer type: `{name}`" in readme, f"{task_id}: the README's answer type")
    for line in hooks.readme_lines({}):  # the opening words (declared facts vary the rest)
        _expect(line[:60] in readme, f"{task_id}: the README lacks the family's section")
    properties = submission_json_schema(name)["properties"]
    for field in properties if isinstance(properties, dict) else ():
        _expect(f'"{field}"' in readme, f"{task_id}: the README's schema lacks {field}")
    truths = [repr(e.value) for e in task.hidden.estimands.values() if e.value != 0.0]
    staged = b"".join(public.files.values())
    _expect(
        not any(t.encode() in staged for t in truths), f"{task_id}: a truth in the staged bytes"
    )
    names = tuple(task.hidden.estimands)
    _expect(names == public.estimands, f"{task_id}: public and hidden estimands differ")
    if contract.task_named_estimand:
        _expect(
            len(names) == 1 and names[0] in contract.estimands,
            f"{task_id}: a design task names one of {contract.estimands}",
        )
        _expect(
            f"\n- Estimand: {names[0]}\n" in readme, f"{task_id}: the Design section's estimand"
        )
    elif not contract.per_level_estimands:
        _expect(names == contract.estimands, f"{task_id}: estimands are not the declared ones")
    submission = answer.files_answer(dict(public.files))
    checked = validate_submission(public.family, submission, public.columns, public.estimands)
    _expect(checked.ok, f"{task_id}: the kit's honest answer does not validate: {checked}")
    record = score_answer(task, submission)
    _expect(record is not None, f"{task_id}: the honest answer was not scored")
    assert record is not None
    _expect(tuple(record.components) == contract.components, f"{task_id}: score components")
    _expect(tuple(record.estimands) == names, f"{task_id}: scored estimands")
    total = hooks.total_reward(record.estimand_reward, record.components)
    _expect(record.reward == total, f"{task_id}: the reward is not the family's total")
    _expect(np.isfinite(record.reward), f"{task_id}: the honest reward is not finite")
    _expect(repr(task.hidden) == "HiddenTruth(<redacted>)", f"{task_id}: the truth prints")
    try:
        pickle.dumps(task.hidden)
    except TypeError:
        pass
    else:
        raise FamilyConformanceError(f"{task_id}: the hidden truth pickles")


def _check_role_counts(name: str, draws: int = 20) -> None:
    hooks = hooks_of(name)
    rng = np.random.default_rng(np.random.PCG64(7))  # a check's stream, not a task's
    for tier in TIER_SPECS.values():
        for _ in range(draws):
            counts = draw_counts(tier, Family(name), rng)
            for role, least in hooks.min_role_counts.items():
                _expect(getattr(counts, role) >= least, f"{name}: fewer {role} than declared")
            for role, most in hooks.max_role_counts.items():
                _expect(getattr(counts, role) <= most, f"{name}: more {role} than declared")
