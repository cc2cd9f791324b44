"""A design task names one estimand; a bad answer to it is refused in one line per
problem (issue 36: a LATE where an ATT is asked, a missing field, an interval upside
down), and only the named estimand is ever scored."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from causal_gym.contracts.designs import DesignContract
from causal_gym.contracts.families import contract_of, family_names
from causal_gym.make import generate_task
from causal_gym.reference.designs import files_answer
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.validate import validate_submission
from causal_gym.task_id import Family

#: Every family registered with a design contract.
DESIGNS = tuple(f for f in family_names() if isinstance(contract_of(f), DesignContract))
KEY = DerivationKey(bytes.fromhex("07" * 32), "test")
KIT = Path(__file__).resolve().parents[1] / "causal_gym" / "reference"


def errors(family: str, raw: object, asked: tuple[str, ...]) -> tuple[str, ...]:
    result = validate_submission(Family(family), raw, (), asked)  # type: ignore[arg-type]
    assert result.ok == (not result.errors)
    assert all("\n" not in e for e in result.errors)
    return result.errors


def answer(estimand: str, lower: float = 0.1, upper: float = 0.9) -> dict[str, object]:
    return {"estimand": estimand, "estimate": 0.5, "ci_lower": lower, "ci_upper": upper}


@pytest.mark.parametrize("family", DESIGNS)
def test_every_estimand_of_a_design_family_is_accepted_when_asked(family: str) -> None:
    contract = contract_of(family)
    assert isinstance(contract, DesignContract)
    for name in contract.estimands:
        assert errors(family, answer(name), (name,)) == ()
        intervals = contract.intervals(contract.submission_model.model_validate(answer(name)))
        assert intervals == {name: (0.5, 0.1, 0.9)}


def test_another_estimand_of_the_family_is_refused_naming_the_asked_one() -> None:
    assert errors("iv", answer("late"), ("ate",)) == (
        "estimand: this task asks for 'ate' (README.md's Design section), not 'late'",
    )
    assert errors("rdd", answer("effect_at_cutoff"), ("complier_effect_at_cutoff",)) == (
        "estimand: this task asks for 'complier_effect_at_cutoff' (README.md's Design "
        "section), not 'effect_at_cutoff'",
    )


def test_an_estimand_of_another_family_is_refused_listing_the_accepted_names() -> None:
    (line,) = errors("did", answer("late"), ("att",))
    assert line == "estimand: Input should be 'att'"


def test_missing_fields_and_an_upside_down_interval_are_each_one_line() -> None:
    assert errors("iv", {"estimate": 0.5, "ci_lower": 0.1, "ci_upper": 0.9}, ("late",)) == (
        "estimand: Field required",
    )
    missing = errors("did", {"estimand": "att", "estimate": 0.5}, ("att",))
    assert missing == ("ci_lower: Field required", "ci_upper: Field required")
    flipped = errors("rdd", answer("effect_at_cutoff", 0.9, 0.1), ("effect_at_cutoff",))
    assert flipped == ("submission: ci_lower (0.9) must be <= ci_upper (0.1)",)


def test_both_problems_are_listed_when_the_estimand_and_the_interval_are_wrong() -> None:
    found = errors("iv", answer("late", 2.0, 1.0), ("ate",))
    assert len(found) == 2
    assert any(e.startswith("estimand: this task asks for 'ate'") for e in found)
    assert any("ci_lower (2.0) must be <= ci_upper (1.0)" in e for e in found)


@pytest.mark.parametrize("family", DESIGNS)
def test_a_task_regenerates_and_its_kit_runs_from_a_sandbox_copy(
    family: str, tmp_path: Path
) -> None:
    """The same id and key give the same bytes; the family's kit files alone, copied
    beside the staged ones and run in isolated mode (`python -I designs.py task`),
    print the library's answer, which the scorer scores."""
    task = generate_task(f"train:{family}:2", KEY)
    assert generate_task(f"train:{family}:2", KEY).public.files == task.public.files
    for name in contract_of(family).reference_kit:
        if name != "answer.py":
            shutil.copy(KIT / name, tmp_path / name)
    (tmp_path / "task").mkdir()
    for name, data in task.public.files.items():
        (tmp_path / "task" / name).write_bytes(data)
    out = subprocess.run(
        [sys.executable, "-I", "designs.py", "task"], cwd=tmp_path, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    answer = json.loads(out.stdout)
    assert answer == pytest.approx(files_answer(dict(task.public.files)), rel=1e-9)
    record = score_answer(task, answer)
    assert record is not None and record.reward > 0


def test_the_eval_v3_baselines_run_the_reference_and_every_design_probe() -> None:
    """configs/baselines-v3.toml names the reference and each probe every design
    contract declares, each probe on its own family, and the committed table
    (docs/baselines/eval-v3/baselines.json) holds a row for each, every episode submitted: a probe
    added to a contract without a baseline fails here."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "configs" / "baselines-v3.toml").read_text())
    declared = {
        probe.replace("_", "-"): family for family in DESIGNS
        for probe in contract_of(family).extra_probes
    }  # fmt: skip
    runs = {a["agent"]: a.get("run", {}).get("families") for a in config["agents"]}
    assert runs == {"reference": None, **{p: [f] for p, f in declared.items()}}
    table = json.loads((root / "docs" / "baselines" / "eval-v3" / "baselines.json").read_text())
    assert {a["agent"] for a in table["agents"]} == set(runs)
    assert all(set(a["final_status"]) == {"submitted"} for a in table["agents"])
