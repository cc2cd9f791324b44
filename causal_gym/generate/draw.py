"""Draw a task's plan from its id and the key: tier and size from the plan stream,
the effect class from the family's hooks, the generator version from the namespace."""

from __future__ import annotations

from causal_gym.contracts.families import contract_of
from causal_gym.hooks import hooks_of
from causal_gym.plan.task_plan import (
    DESIGN_REAL_TIER_VERSION,
    REAL_TIER_VERSION,
    EffectClass,
    TaskPlan,
    _closed,
    is_expert,
    is_real,
    jittered_rows,
)
from causal_gym.plan.tiers import (
    REAL_NONLINEAR_SHARE,
    REAL_ROW_SHARE,
    TIER_ORDER,
    TIER_SPECS,
    TRAIN_JITTER,
    Tier,
)
from causal_gym.realdata.design_tables import design_sources, design_table
from causal_gym.realdata.tables import real_table, source_names
from causal_gym.rng_keys.derive import derive_plan_rng, derive_real_block_rng
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.task_id import REAL_FAMILIES, Namespace, TaskId
from causal_gym.versions import generator_version


def effect_class_for(key: DerivationKey, task_id: TaskId) -> EffectClass:
    return hooks_of(task_id.family).effect_class(key, task_id)


def plan_task(key: DerivationKey, task_id: TaskId, staged_rows: int | None = None) -> TaskPlan:
    """Draw tier and size from the plan stream; `staged_rows` pins the size (eval manifest)."""
    rng = derive_plan_rng(key, task_id)
    tier = TIER_ORDER[int(rng.integers(len(TIER_ORDER)))]
    low, high = TIER_SPECS[tier].staged_rows
    base_rows = int(rng.integers(low, high + 1))
    factor = hooks_of(task_id.family).rows_factor
    if factor != 1.0:  # (the seed's families keep their exact draw)
        base_rows = round(base_rows * factor)
    jitter = float(rng.uniform(*TRAIN_JITTER))
    # The expert draw comes after the others, so a task that is not expert keeps the
    # tier and size it had before the expert tier existed.
    expert_draw = float(rng.uniform())
    expert_rows = int(rng.integers(*_closed(TIER_SPECS[Tier.EXPERT].staged_rows)))
    if is_expert(task_id, expert_draw):
        tier, base_rows = Tier.EXPERT, expert_rows
    version = generator_version(task_id.namespace.value)
    # The real draws come last too (generator version 4): every other task keeps the
    # plan it had. A task drawn real is real even where it drew expert (so that a
    # block family's blocks are real as a whole); its rows are a share of its table's,
    # in every namespace.
    real_draw = float(rng.uniform())
    block_size = contract_of(task_id.family).block_size
    if block_size > 1:  # whole blocks are real or not: the class mix stays whole
        block = task_id.index // block_size
        ns = task_id.namespace.value
        real_draw = float(derive_real_block_rng(key, ns, block, task_id.family.value).uniform())
    # a design family draws from its own tables (generator 5); the others from the
    # covariate sources, with the draws they had at generator 4
    design = design_sources(task_id.family.value)
    sources = design or source_names()
    source = sources[int(rng.integers(len(sources)))]
    share = float(rng.uniform(*REAL_ROW_SHARE))
    nonlinear_draw = float(rng.uniform())
    real = is_real(task_id, real_draw, has_real_tier(task_id.family.value, version))
    nonlinear = tier is Tier.EXPERT
    if real and design:
        tier, base_rows = Tier.REAL, round(share * design_table(source).n_rows)
    elif real:
        table = real_table(source)
        tier, base_rows = Tier.REAL, round(share * table.n_rows)
        nonlinear = table.nonlinear and nonlinear_draw < REAL_NONLINEAR_SHARE
    if staged_rows is not None:
        rows = staged_rows
    elif task_id.namespace is Namespace.TRAIN and not real:
        rows = jittered_rows(base_rows, jitter)
    else:
        rows = base_rows
    effect = effect_class_for(key, task_id)
    return TaskPlan(
        task_id, tier, base_rows, rows, effect, version,
        source=source if real else None, nonlinear=nonlinear,
    )  # fmt: skip


def tier_train_ids(key: DerivationKey, family: str, count: int, tier: Tier) -> list[str]:
    """The first `count` train ids of `family` whose plan is of `tier` (the expert or
    the real tier, each a disclosed share of them): the tier as streams serve it, at
    the newest generator version. Only the plan is drawn for the others, which costs
    an HMAC and a few draws."""
    found: list[str] = []
    index = 0
    while len(found) < count:
        task_id = f"train:{family}:{index}"
        if plan_task(key, TaskId.parse(task_id)).tier is tier:
            found.append(task_id)
        index += 1
    return found


def has_real_tier(family: str, generator_version: int) -> bool:
    """Whether a family's train tasks include a real tier at a generator version: the
    covariate families from version 4, the design families with a real table
    (realdata/sources.toml) from version 5."""
    if family in REAL_FAMILIES:
        return generator_version >= REAL_TIER_VERSION
    return bool(design_sources(family)) and generator_version >= DESIGN_REAL_TIER_VERSION
