"""The real tier of the design families (generator 5): rdd's running variable and
covariates are rows of a real study, keyed; frozen design tasks are untouched."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from causal_gym import generate_task
from causal_gym.designs.spelling import TOKEN_SETS
from causal_gym.errors import RealDataError
from causal_gym.generate.draw import has_real_tier, plan_task, tier_train_ids
from causal_gym.plan.task_plan import DESIGN_REAL_TIER_VERSION
from causal_gym.plan.tiers import REAL_ROW_SHARE, Tier
from causal_gym.realdata.design_tables import design_families, design_sources, design_table
from causal_gym.task_id import TaskId
from causal_gym.versions import GENERATOR_VERSION

#: Every spelling of a blank cell a design task may use.
BLANKS = {token for tokens in TOKEN_SETS for token in tokens}


def staged(task_id: str, key) -> tuple[pd.DataFrame, str, str]:  # type: ignore[no-untyped-def]
    task = generate_task(task_id, key)
    frame = pd.read_csv(io.BytesIO(task.public.files["data.csv"]), dtype=str, keep_default_na=False)
    assert task.public.tier is Tier.REAL and task.public.source is not None
    return frame.apply(lambda c: c.str.strip()), task.public.source, task.public.prompt


def study_rows(source: str, names: list[str]) -> set[tuple[str, ...]]:
    table = design_table(source)
    everything = np.arange(table.n_rows)
    cells = [next(c for c in table.columns if c.name == n).cells(everything) for n in names]
    return set(zip(*cells, strict=True))


def test_the_design_source_is_pinned_and_declares_its_family() -> None:
    assert design_families() == ("rdd", "did")
    assert design_sources("rdd") == ("gov_transfers",) and design_sources("did") == ("castle",)
    table = design_table("gov_transfers")
    assert design_table("gov_transfers") is table  # once per process
    assert table.n_rows == 1897  # the complete rows of 1,948
    assert [c.role for c in table.columns] == ["running", "covariate", "covariate"]
    assert design_table("castle").n_rows == 550  # 50 states, 2000-2010
    with pytest.raises(RealDataError, match="accepted are gov_transfers, castle"):
        design_table("castle_doctrine")
    assert has_real_tier("rdd", GENERATOR_VERSION) and not has_real_tier("iv", GENERATOR_VERSION)
    assert not has_real_tier("rdd", DESIGN_REAL_TIER_VERSION - 1)


def test_staged_rows_are_the_studys_rows_and_the_key_picks_them(default_key, other_key) -> None:
    """Every complete staged row's (running variable, covariates) is a row of the
    study, jointly; another key stages other rows; the size is the disclosed share."""
    (first,) = tier_train_ids(default_key, "rdd", 1, Tier.REAL)
    (second,) = tier_train_ids(other_key, "rdd", 1, Tier.REAL)
    frames = []
    for key, task_id in ((default_key, first), (other_key, second)):
        frame, source, prompt = staged(task_id, key)
        names = [c.name for c in design_table(source).columns]
        numbers = frame[names].apply(pd.to_numeric, errors="coerce")
        complete = frame[names][numbers.notna().all(axis=1)]
        rows = study_rows(source, names)
        assert len(complete) > 0.8 * len(frame)
        assert all(tuple(r) in rows for r in complete.itertuples(index=False))
        plan = plan_task(key, TaskId.parse(task_id))
        low, high = REAL_ROW_SHARE
        assert round(low * 1897) <= plan.staged_rows <= round(high * 1897)
        frames.append(set(complete.itertuples(index=False)))
        # eligibility is the study's: a transfer coded 1 below the cutoff is the norm
        readme = generate_task(task_id, key).public.files["README.md"].decode()
        assert "Eligible side: at or below the cutoff" in readme and "## Source" in readme
        assert "Manacorda" in readme and not re.search(r"\brows? (id|index|number)", readme)
        assert "hidden model" not in prompt
    assert frames[0] != frames[1]


def test_did_stages_the_states_own_years_adoption_and_measures(default_key, other_key) -> None:
    """Each staged state-year carries the study's measures of that state and year, and
    the state's own adoption year (the year `post` switches on); another key chooses
    other states."""
    table = design_table("castle")
    by_name = {c.name: c for c in table.columns}
    everything = np.arange(table.n_rows)
    cells = {n: c.cells(everything) for n, c in by_name.items()}
    study = {(cells["sid"][i], cells["year"][i]): i for i in everything}
    first_on = {}
    for i in everything:
        if cells["post"][i] == "1":
            sid, year = cells["sid"][i], int(cells["year"][i])
            first_on[sid] = min(first_on.get(sid, year), year)
    chosen = []
    for key in (default_key, other_key):
        (task_id,) = tier_train_ids(key, "did", 1, Tier.REAL)
        frame, source, _ = staged(task_id, key)
        assert source == "castle"
        sid = frame["state_id"].str.upper().str.replace(r"[\s-]", "", regex=True)
        sid = sid.str.extract(r"^ST0*(\d+)$")[0]
        year = frame["year"].str.extract(r"^(?:FY)?(\d{4})$")[0]
        checked = 0
        for s_id, y, row in zip(sid, year, frame.itertuples(index=False), strict=True):
            if pd.isna(s_id) or pd.isna(y):
                continue
            i = study[(s_id, y)]
            for name in ("unemployrt", "poverty", "l_income"):
                value = getattr(row, name)
                assert value in BLANKS or value == cells[name][i]
            adopted = row.castle_law_year
            if adopted.isdigit():
                assert int(adopted) == first_on[s_id]
            checked += 1
        assert checked > 0.8 * len(frame)
        chosen.append(set(sid.dropna()))
        assert 0.6 * 50 - 1 <= len(chosen[-1]) <= 0.9 * 50 + 1
    assert chosen[0] != chosen[1]
