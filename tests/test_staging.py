"""Contract tests over every family: the staged files are messy in the documented ways."""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest

from causal_gym.contracts.families import contract_of
from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.reference.analyst import parse_readme
from causal_gym.task_id import Family
from tests.conftest import FAMILIES, cached_task

IDS = [
    f"{ns}:{family}:{i}"
    for family in FAMILIES
    for ns in ("train", next(iter(contract_of(family).splits)))
    for i in (1, 2)
]
#: (task id, staged csv): obs_vs_rct's trial.csv is as messy as its data.csv.
CSVS = [(tid, "data.csv") for tid in IDS] + [
    (tid, "trial.csv") for tid in IDS if ":obs_vs_rct:" in tid
]


def frame_of(task_id: str, name: str = "data.csv") -> pd.DataFrame:
    data = cached_task(task_id).public.files[name]
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


@pytest.mark.parametrize(("task_id", "name"), CSVS)
def test_messiness_is_present_and_documented(task_id: str, name: str) -> None:
    task = cached_task(task_id)
    readme = task.public.files["README.md"].decode()
    dictionary = parse_readme(readme)
    frame = frame_of(task_id, name)
    assert frame.duplicated().sum() >= 1
    assert (frame == "").to_numpy().any()
    codes = set(frame[dictionary.treatment]) - {""}
    assert codes == set(dictionary.treated_codes) | set(dictionary.control_codes)
    assert set(dictionary.treated_codes).isdisjoint(dictionary.control_codes)
    y = pd.to_numeric(frame[dictionary.outcome].replace("", None)).dropna()
    robust = 1.4826 * (y - y.median()).abs().median()
    assert ((y - y.median()).abs() > 8 * robust).sum() >= 1  # gross outliers were injected
    assert sorted(dictionary.types) == sorted(frame.columns)
    assert list(dictionary.types) != list(frame.columns)  # CSV column order is shuffled
    if name == "data.csv":
        assert len(frame) == task.public.n_rows
    else:
        assert f"{name}: {len(frame)} rows" in readme and f"{name} ({len(frame)} rows)" in (
            task.public.prompt
        )


@pytest.mark.parametrize(("task_id", "name"), CSVS)
def test_floats_use_a_fixed_format_per_column(task_id: str, name: str) -> None:
    frame = frame_of(task_id, name)
    dictionary = parse_readme(cached_task(task_id).public.files["README.md"].decode())
    for column in frame.columns:
        kind = dictionary.types[column]
        cells = frame[column][frame[column] != ""]
        if kind.startswith(("count", "integer")):
            assert all(re.fullmatch(r"\d+", v) for v in cells), column
        elif kind.startswith(("number", "positive number")):
            decimals = {len(v.split(".")[1]) for v in cells}
            assert len(decimals) == 1, column
            assert all(re.fullmatch(r"-?\d+\.\d+", v) for v in cells), column
        else:
            assert kind in ("binary", "categorical", "coded"), kind
            if kind == "binary":
                assert set(cells) <= {"0", "1"}


@pytest.mark.parametrize("family", FAMILIES)
def test_readme_states_everything_the_agent_needs(family: str) -> None:
    task = cached_task(f"train:{family}:6")
    readme = task.public.files["README.md"].decode()
    dictionary = parse_readme(readme)
    assert dictionary.family == family
    assert list(dictionary.pre_treatment) == list(task.hidden.pre_treatment)
    assert list(dictionary.post_treatment) == list(task.hidden.post_treatment)
    if family == "mediation":  # declared in the table and named in the question's context
        assert dictionary.mediator and f"Mediator: `{dictionary.mediator}`" in readme
    if family == "cate":
        assert dictionary.modifier in dictionary.pre_treatment
        assert dictionary.types[dictionary.modifier] == "categorical"
    assert (dictionary.treatment, dictionary.outcome) == (
        task.hidden.treatment,
        task.hidden.outcome,
    )
    for phrase in (
        "average treatment effect",
        "90%",
        "Consistency",
        "Positivity",
        "pre-treatment",
        "post-treatment",
        "ignorability" if "ignorab" in readme else "No unobserved confounding",
    ):
        assert phrase in readme
    schema_block = readme.split("```json\n")[1].split("```")[0]
    assert json.loads(schema_block) == submission_json_schema(Family(family))
    assert json.loads(schema_block)["title"] == f"{family} submission"
    assert ("13/20" in readme) == (family == "null_detect")
    assert "/workspace" in task.public.prompt and "submit_answer" in task.public.prompt


def test_wording_varies_with_the_prompt_stream() -> None:
    intros = {
        cached_task(f"train:ate:{i}").public.files["README.md"].decode().split("\n")[2]
        for i in range(12)
    }
    assert len({re.sub(r"\d+", "N", line)[:25] for line in intros}) >= 2


def test_themes_cover_at_least_four_domains() -> None:
    titles = set()
    for i in range(40):
        readme = cached_task(f"train:ate:{i}").public.files["README.md"].decode()
        titles.add(readme.split("\n")[0])
    from causal_gym.staging.naming import load_themes

    themes = load_themes()
    assert len(themes) >= 4
    settings = {t.setting for t in themes}
    used = {s for s in settings if any(s.lower() in title.lower() for title in titles)}
    assert len(used) >= 4


def test_every_theme_can_name_the_largest_task_with_parents_kept_continuous() -> None:
    """Columns with parents take only real, positive or bounded names; every theme must
    have enough of them for the hardest tier, or generation would fail for it."""
    from causal_gym.plan.tiers import TIER_SPECS
    from causal_gym.staging.naming import affine, load_themes

    derived = max(s.blockers[1] + s.decoys[1] + s.irrelevant[1] for s in TIER_SPECS.values())
    post = max(s.mediators[1] + s.descendants[1] for s in TIER_SPECS.values())
    for theme in load_themes():
        assert len(affine(theme.continuous)) >= derived, theme.key
        assert len(affine(theme.post)) >= post + 1, theme.key  # + mediation's mediator
        assert affine(theme.outcome) == theme.outcome, theme.key
        # cate's modifier: a name no other pool uses, five levels, more than one choice
        others = {
            e["name"] for pool in (theme.continuous, theme.binary, theme.categorical) for e in pool
        }
        assert len(theme.modifier) >= 2, theme.key
        for entry in theme.modifier:
            assert entry["name"] not in others and len(set(entry["levels"])) >= 5, theme.key
