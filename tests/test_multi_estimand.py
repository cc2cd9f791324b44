"""The multi-estimand families' truths, validation and scoring, checked against
independent computations: paired potential outcomes for the truths, hand-written
submissions for the validator."""

from __future__ import annotations

import numpy as np
import pytest

from causal_gym import make
from causal_gym.contracts.families import contract_of
from causal_gym.families.mediation.hooks import MEDIATOR_ID
from causal_gym.plan.effects import effect_prior
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm
from causal_gym.scm.sample import sample_clean
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.validate import validate_submission
from causal_gym.versions import GENERATOR_VERSION
from tests.conftest import cached_task

INTERVAL = {"estimate": 0.1, "ci_lower": 0.0, "ci_upper": 0.2}


def hidden_scm(task_id: str, default_key) -> Scm:
    """The SCM the accepted candidate of `task_id` was built from."""
    return make.hidden_scm(cached_task(task_id), default_key)[0]


def potential_outcomes(scm: Scm, n: int = 20_000) -> tuple[dict, dict]:
    """One test stream sampled twice, under do(T=1) and do(T=0): paired rows."""
    treated = sample_clean(scm, n, np.random.default_rng(11), {}, treatment=1).columns
    control = sample_clean(scm, n, np.random.default_rng(11), {}, treatment=0).columns
    return treated, control


@pytest.mark.parametrize("index", [0, 1, 2])
def test_cate_truth_is_each_levels_mean_paired_effect(default_key, index: int) -> None:
    task = cached_task(f"train:cate:{index}")
    scm = hidden_scm(task.public.task_id, default_key)
    treated, control = potential_outcomes(scm)
    effect = treated[OUTCOME_ID] - control[OUTCOME_ID]
    levels = treated[scm.modifier]
    truths = list(task.hidden.estimands.values())
    by_code = dict(zip(scm.level_effects(), range(len(truths)), strict=True))
    assert sorted(by_code) == sorted(e.value for e in truths)
    for value, code in by_code.items():
        assert np.allclose(effect[levels == code], value, atol=1e-9)  # exact, row by row


@pytest.mark.parametrize("index", [0, 1, 2])
def test_mediation_truths_are_the_natural_effects(default_key, index: int) -> None:
    """total: the paired effect of do(T); indirect: the effect of moving the mediator
    from M(0) to M(1), T held at 0 (the mediator's weight times M(1) - M(0));
    direct: the rest, the effect of T with the mediator held at M(0)."""
    task = cached_task(f"train:mediation:{index}")
    scm = hidden_scm(task.public.task_id, default_key)
    treated, control = potential_outcomes(scm)
    truth = {name: e.value for name, e in task.hidden.estimands.items()}
    total = treated[OUTCOME_ID] - control[OUTCOME_ID]
    assert np.allclose(total, truth["total"], atol=1e-9)
    slope = next(e.weights[0] for e in scm.in_edges(OUTCOME_ID) if e.parent == MEDIATOR_ID)
    indirect = slope * (treated[MEDIATOR_ID] - control[MEDIATOR_ID])
    assert np.allclose(indirect, truth["indirect"], atol=1e-9)
    assert truth["direct"] + truth["indirect"] == pytest.approx(truth["total"], abs=1e-12)
    assert abs(truth["indirect"]) <= 0.8  # generator 6's disclosed support


def test_obs_vs_rct_truth_is_the_paired_effect_in_both_classes(default_key) -> None:
    classes = set()
    for index in range(6):
        task = cached_task(f"train:obs_vs_rct:{index}")
        scm = hidden_scm(task.public.task_id, default_key)
        treated, control = potential_outcomes(scm)
        assert np.allclose(treated[OUTCOME_ID] - control[OUTCOME_ID], task.hidden.ate, atol=1e-9)
        classes.add(task.hidden.effect_class.value)
        hidden = [n.id for n in scm.nodes if n.role.value == "unobserved_confounder"]
        assert bool(hidden) == (task.hidden.effect_class.value == "confounded")
        assert all(TREATMENT_ID in {e.child for e in scm.edges if e.parent == h} for h in hidden)
    assert classes == {"confounded", "unconfounded"}


def test_cate_validation_names_missing_and_unknown_levels() -> None:
    public = cached_task("train:cate:4").public
    levels = public.estimands
    answer = {"effects": {level: INTERVAL for level in levels[1:]} | {"nowhere": INTERVAL}}
    checked = validate_submission(public.family, answer, public.columns, levels)
    assert not checked.ok
    assert any("unknown levels 'nowhere'" in e and levels[0] in e for e in checked.errors)
    assert any(f"missing levels {levels[0]!r}" in e for e in checked.errors)
    bad = {"effects": {level: {**INTERVAL, "ci_lower": 1.0} for level in levels}}
    errors = validate_submission(public.family, bad, public.columns, levels).errors
    assert len(errors) == len(levels)  # every level's reversed interval, each named
    assert all(e.startswith("effects.") and "ci_lower" in e for e in errors)
    placeholder = contract_of("cate").placeholder_answer(levels)
    assert validate_submission(public.family, placeholder, public.columns, levels).ok


def test_mediation_total_must_be_the_sum() -> None:
    public = cached_task("train:mediation:4").public
    answer = {"direct": INTERVAL, "indirect": INTERVAL, "total": {**INTERVAL, "estimate": 0.25}}
    checked = validate_submission(public.family, answer, public.columns, public.estimands)
    assert not checked.ok and "must equal direct.estimate + indirect.estimate" in checked.errors[0]
    fixed = {**answer, "total": {"estimate": 0.2, "ci_lower": 0.1, "ci_upper": 0.3}}
    assert validate_submission(public.family, fixed, public.columns, public.estimands).ok
    stray = validate_submission(
        public.family, {**fixed, "effects": {"x": INTERVAL}}, public.columns, public.estimands
    )
    assert stray.errors == ("effects: Extra inputs are not permitted",)  # no level talk
    missing = {"direct": INTERVAL}
    errors = validate_submission(public.family, missing, public.columns).errors
    assert {e.split(":")[0] for e in errors} == {"indirect", "total"}


def test_obs_vs_rct_probability_and_component() -> None:
    task = cached_task("train:obs_vs_rct:4")
    public = task.public
    answer = {**INTERVAL, "bias_probability": 1.5}
    errors = validate_submission(public.family, answer, public.columns).errors
    assert errors and errors[0].startswith("bias_probability")
    biased = task.hidden.effect_class.value == "confounded"
    right = score_answer(task, {**INTERVAL, "bias_probability": 1.0 if biased else 0.0})
    wrong = score_answer(task, {**INTERVAL, "bias_probability": 0.0 if biased else 1.0})
    prior = score_answer(task, {**INTERVAL, "bias_probability": 0.5})
    assert right is not None and wrong is not None and prior is not None
    assert (right.brier_skill, prior.brier_skill, wrong.brier_skill) == (1.0, 0.0, -3.0)
    assert right.estimand_reward == wrong.estimand_reward
    assert right.reward - wrong.reward == pytest.approx(0.1 * 4.0)  # the skill's weight


def test_a_multi_estimand_score_is_the_mean_of_its_estimands() -> None:
    task = cached_task("train:mediation:5")
    truth = {name: e.value for name, e in task.hidden.estimands.items()}
    exact = {
        name: {"estimate": v, "ci_lower": v - 0.01, "ci_upper": v + 0.01}
        for name, v in truth.items()
    }
    exact["total"]["estimate"] = exact["direct"]["estimate"] + exact["indirect"]["estimate"]
    record = score_answer(task, exact)
    assert record is not None and record.covered
    parts = [e.reward for e in record.estimands.values()]
    assert (
        record.estimand_reward == pytest.approx(sum(parts) / 3)
        and record.reward == record.estimand_reward
    )
    off = {**exact, "indirect": {"estimate": 5.0, "ci_lower": 4.9, "ci_upper": 5.1}}
    off["total"] = {**exact["total"], "estimate": exact["direct"]["estimate"] + 5.0}
    worse = score_answer(task, off)
    assert worse is not None and not worse.covered
    assert worse.estimands["direct"].reward == record.estimands["direct"].reward
    assert worse.estimands["indirect"].reward < record.estimands["indirect"].reward - 1


def test_obs_vs_rct_rejections_do_not_tell_the_class(default_key) -> None:
    """Rejection reasons can reach error messages, so an extract that breaks its
    class's confounding promise, whichever the class, fails in the same words: each
    class's hidden SCM certified against the other class's promise."""
    from causal_gym.scm.certify import CONFOUNDING_REASON, certify

    found = {}
    for index in range(10):
        task = cached_task(f"train:obs_vs_rct:{index}")
        found.setdefault(task.hidden.effect_class, hidden_scm(task.public.task_id, default_key))
    assert len(found) == 2
    for effect, scm in found.items():
        sample = sample_clean(scm, 2_000, np.random.default_rng(3), {})
        prior = effect_prior(effect, GENERATOR_VERSION)
        args = (scm, prior, sample.propensity, sample.columns[TREATMENT_ID])
        own = effect.value == "confounded"
        assert CONFOUNDING_REASON not in certify(*args, confounded=own).reasons
        assert CONFOUNDING_REASON in certify(*args, confounded=not own).reasons
        other = [r for r in certify(*args, confounded=not own).reasons if "confound" in r]
        assert other == [CONFOUNDING_REASON]
