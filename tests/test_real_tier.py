"""The real tier: real rows under real names, keyed, pinned, and telling nothing of
the hidden model or of which rows were taken."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from causal_gym import generate_task
from causal_gym.errors import RealDataError
from causal_gym.generate.draw import plan_task, tier_train_ids
from causal_gym.plan.tiers import REAL_ROW_SHARE, REAL_TRAIN_SHARE, Tier
from causal_gym.realdata.tables import real_table, source_bytes, source_names
from causal_gym.task_id import REAL_FAMILIES, TaskId
from tests.conftest import cached_task

#: Words that would name the hidden model's parts (the columns' roles) in a README.
ROLE_WORDS = ("confounder", "instrument", "collider", "decoy", "mediator", "irrelevant",
              "latent_population", "predictor")  # fmt: skip


def staged_frame(task_id: str, key) -> tuple[pd.DataFrame, str]:  # type: ignore[no-untyped-def]
    task = generate_task(task_id, key)
    frame = pd.read_csv(io.BytesIO(task.public.files["data.csv"]), dtype=str, keep_default_na=False)
    assert task.public.source is not None
    return frame, task.public.source


def real_columns(frame: pd.DataFrame, source: str) -> list[str]:
    return [c.name for c in real_table(source).columns if c.name in frame.columns]


def table_rows(source: str, names: list[str]) -> set[tuple[str, ...]]:
    """The table's rows over `names`, spelled as data.csv spells them."""
    table = real_table(source)
    spelled = []
    for name in names:
        column = table.column(name)
        if column.levels:
            spelled.append([column.levels[int(v)] for v in column.values])
        elif column.value_kind is None:
            spelled.append([str(int(v)) for v in column.values])
        else:
            raw = np.round(column.mean + column.sd * column.values, column.decimals)
            spelled.append([f"{v:.{column.decimals}f}" for v in raw])
    return set(zip(*spelled, strict=True))


def test_the_sources_are_pinned_and_load_once() -> None:
    assert source_names() == ("nhefs", "card", "mroz")
    for name in source_names():
        table = real_table(name)
        assert real_table(name) is table  # once per process
        assert table.n_rows >= 700 and len(table.columns) >= 7
        for column in table.columns:
            assert len(column.values) == table.n_rows and np.isfinite(column.values).all()
    with pytest.raises(RealDataError, match="not the pinned"):
        source_bytes("Mroz/Mroz.csv", "0" * 64)
    with pytest.raises(RealDataError, match="accepted are nhefs, card, mroz"):
        real_table("nsw")


def test_every_staged_row_of_the_table_columns_is_a_row_of_the_table(default_key) -> None:
    """Rows resampled jointly: each staged row's table columns (blanks aside, which
    the mess adds) equal some row of the source, so the correlations are the study's."""
    for family in REAL_FAMILIES:
        (task_id,) = tier_train_ids(default_key, family, 1, Tier.REAL)
        frame, source = staged_frame(task_id, default_key)
        names = real_columns(frame, source)
        rows = table_rows(source, names)
        complete = frame[names][(frame[names] != "").all(axis=1)]
        assert len(complete) > 0.8 * len(frame)
        missing = [r for r in complete.itertuples(index=False) if tuple(r) not in rows]
        assert not missing, (task_id, missing[:3])


def test_the_key_decides_the_rows(default_key, other_key) -> None:
    """The same id under another key draws other rows (and the same key the same)."""
    task_id = "eval-real-v1:ate:0"
    first, source = staged_frame(task_id, default_key)
    again, _ = staged_frame(task_id, default_key)
    assert first.equals(again)
    found = next(
        f"train:ate:{i}"
        for i in range(400)
        if plan_task(other_key, TaskId.parse(f"train:ate:{i}")).source == source
    )
    other, _ = staged_frame(found, other_key)
    shared = [c for c in real_columns(first, source) if c in other.columns]
    assert shared
    a = sorted(tuple(r) for r in first[shared].itertuples(index=False))
    b = sorted(tuple(r) for r in other[shared].itertuples(index=False))
    assert a != b


def test_the_real_share_and_sizes_are_the_disclosed_ones(default_key) -> None:
    """A fifth of the real families' train ids are real (exact binomial band at 1e-6),
    none of another family's; a real task stages its table's share of rows."""
    plans = [plan_task(default_key, TaskId.parse(f"train:ate:{i}")) for i in range(1500)]
    real = [p for p in plans if p.tier is Tier.REAL]
    sd = (len(plans) * REAL_TRAIN_SHARE * (1 - REAL_TRAIN_SHARE)) ** 0.5
    assert abs(len(real) - len(plans) * REAL_TRAIN_SHARE) < 4.9 * sd
    for plan in real:
        assert plan.source is not None
        low, high = REAL_ROW_SHARE
        n = real_table(plan.source).n_rows
        assert round(low * n) <= plan.staged_rows <= round(high * n)
        assert not plan.nonlinear or real_table(plan.source).nonlinear
    others = (plan_task(default_key, TaskId.parse(f"train:cate:{i}")) for i in range(200))
    assert all(p.tier is not Tier.REAL for p in others)
    assert all(p.tier is not Tier.REAL for p in (
        plan_task(default_key, TaskId.parse(f"eval-v1:ate:{i}")) for i in range(50)
    ))  # fmt: skip


@pytest.mark.parametrize("task_id", ["eval-real-v1:ate:3", "eval-real-v1:adjustment:10",
                                     "eval-real-v1:null_detect:21"])  # fmt: skip
def test_nothing_staged_names_the_rows_or_the_model(task_id: str) -> None:
    """No identifier of the source's rows is staged (no id column, no index), no README
    line or prompt names a role, and the truth's graph stays hidden."""
    task = cached_task(task_id)
    public = task.public
    assert public.source is not None
    table = real_table(public.source)
    header = public.files["data.csv"].split(b"\n", 1)[0].decode().split(",")
    pools = {e["name"] for pool in table.pools.values() for e in pool}
    allowed = {c.name for c in table.columns} | pools
    assert set(header) <= allowed, set(header) - allowed
    assert not {"seqn", "id", "unitid", "Unnamed: 0", "index", "row"} & set(header)
    text = (public.files["README.md"].decode() + public.prompt).lower()
    assert not [w for w in ROLE_WORDS if w in text]
    assert not re.search(r"\brows? (id|index|number)", text)


def test_null_detect_is_real_by_whole_blocks(default_key) -> None:
    """Each block of 20 null_detect train ids is real or not as a whole, so the real
    tier keeps the family's class mix (7 nulls, 7 hard, 6 wide per block)."""
    blocks = []
    for block in range(40):
        ids = [TaskId.parse(f"train:null_detect:{20 * block + i}") for i in range(20)]
        tiers = {plan_task(default_key, tid).tier is Tier.REAL for tid in ids}
        assert len(tiers) == 1, block
        blocks.append(tiers.pop())
    assert 0 < sum(blocks) < len(blocks)


def test_a_column_the_study_did_not_record_can_play_any_part(default_key) -> None:
    """The model's own pre-treatment columns (named from the study's pool) are roots in
    any role in some tasks and a latent's proxy or a decoy in others, so such a name
    does not tell its role; the table's columns are roots, never caused."""
    seen: set[str] = set()
    for family in ("ate", "adjustment"):
        for task_id in tier_train_ids(default_key, family, 40, Tier.REAL):
            task = generate_task(task_id, default_key)
            assert task.public.source is not None
            table = real_table(task.public.source)
            pool = {entry["name"] for entry in table.pools["continuous"]}
            real = {c.name for c in table.columns}
            for name in task.hidden.pre_treatment:
                if name in pool:
                    seen.add(task.hidden.roles[name])
                elif name in real:
                    assert not any(child == name for _, child in task.hidden.edges
                                   if _ != "latent_population"), name  # fmt: skip
    assert {"latent_blocker", "collider_decoy"} & seen
    assert {"confounder", "instrument", "outcome_predictor", "irrelevant"} & seen


def test_nonlinear_terms_are_centered_over_the_table(default_key) -> None:
    """A nonlinear real task's terms are centered by their mean over the table's rows
    (times a simulated root's own mean): over 400,000 rows drawn from that population
    the effect shift averages zero within 4.5 SEs (false alarm 7e-6 per task)."""
    from causal_gym.generate.pipeline import draw_scm
    from causal_gym.rng_keys.derive import derive_streams
    from causal_gym.scm.sample import sample_clean

    checked = 0
    for index in range(400):
        task_id = TaskId.parse(f"train:ate:{index}")
        plan = plan_task(default_key, task_id)
        if not (plan.tier is Tier.REAL and plan.nonlinear):
            continue
        scm, naming = draw_scm(plan, derive_streams(default_key, task_id, 0))
        assert scm.nonlinear is not None and scm.real is not None
        rng = np.random.default_rng(np.random.PCG64(11))  # a check's stream, not a task's
        sample = sample_clean(scm, 400_000, rng, naming.marginals, until_propensity=True)
        for weights in (scm.nonlinear.effect, scm.nonlinear.outcome):
            shift = scm.nonlinear._sum(weights, sample.columns)
            assert abs(shift.mean()) < 4.5 * shift.std() / np.sqrt(len(shift)), task_id
        checked += 1
        if checked == 4:
            break
    assert checked == 4
