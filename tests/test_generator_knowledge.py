"""What knowing the generator is worth, and what the reward does about it (issue 24):
the posterior the null_detect reference and the bayes-prior probe answer with, the
effect-size hyperprior of generator version 3, the linear tiers' OLS anchor and the
audit's leakage and gain checks."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from causal_gym.audit.checks import Paired
from causal_gym.audit.knowledge import (
    BAYES_GAIN_TARGET,
    LEAKAGE_FEATURES,
    gain_check,
    leakage,
    leakage_check,
    staged_features,
)
from causal_gym.generate.draw import plan_task
from causal_gym.generate.ols_anchor import design_matrix, ols_anchor
from causal_gym.generate.pipeline import draw_scm
from causal_gym.hooks import hooks_of
from causal_gym.plan.effects import HALF_WIDTH_HIGH, effect_prior
from causal_gym.plan.task_plan import EffectClass
from causal_gym.reference.posterior import (
    NULL_DETECT_PRIOR,
    STANDARD_PRIOR,
    Posterior,
    hyperprior,
    posterior_answer,
)
from causal_gym.rng_keys.derive import derive_streams
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID
from causal_gym.scm.sample import sample_clean
from causal_gym.scoring.reward import PROPER_INTERVAL_ALPHA, estimand_score
from causal_gym.task_id import TaskId
from causal_gym.versions import generator_version
from tests.conftest import cached_task


def grid_posterior(prior, estimate: float, se: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The same posterior on a fine grid: (grid, density mass per point, atom)."""
    grid = np.linspace(-3.5, 3.5, 350_001)
    dens = np.zeros_like(grid)
    for weight, low, high in prior.pieces:
        dens += weight / (2 * (high - low)) * ((np.abs(grid) >= low) & (np.abs(grid) <= high))
    step = grid[1] - grid[0]
    mass = dens * np.exp(-0.5 * ((estimate - grid) / se) ** 2) * step
    atom = prior.atom * np.exp(-0.5 * (estimate / se) ** 2)
    total = mass.sum() + atom
    return grid, mass / total, atom / total


@pytest.mark.parametrize("prior", [NULL_DETECT_PRIOR, STANDARD_PRIOR, hyperprior(1.0, 3.0)])
@pytest.mark.parametrize(("estimate", "se"), [(0.02, 0.08), (0.15, 0.05), (-0.9, 0.12)])
def test_the_posterior_is_exact_and_its_answer_minimizes_the_expected_loss(
    prior, estimate: float, se: float
) -> None:
    post = Posterior(prior, estimate, se)
    grid, mass, atom = grid_posterior(prior, estimate, se)
    assert post.p_nonzero == pytest.approx(1 - atom, abs=2e-5)  # the grid's own error
    for x in (-0.3, 0.0, 0.1, 0.4):
        assert post.cdf(x) == pytest.approx(mass[grid <= x].sum() + atom * (x >= 0), abs=2e-4)
    floor = 2 * 1.6448536269514722 * se
    answer = posterior_answer(prior, estimate, se, floor)

    def expected_loss(m: float, lo: float, hi: float) -> float:
        def loss(truth: np.ndarray) -> np.ndarray:
            miss = 2 / PROPER_INTERVAL_ALPHA
            return (
                (hi - lo)
                + miss * np.maximum(0, lo - truth)
                + miss * np.maximum(0, truth - hi)
                + np.abs(m - truth)
                + 2 * max(0.0, floor - (hi - lo))
            )

        return float((loss(grid) * mass).sum() + atom * loss(np.zeros(1))[0])

    best = expected_loss(answer["estimate"], answer["ci_lower"], answer["ci_upper"])
    for dm, dl, dh in ((0.01, 0, 0), (-0.01, 0, 0), (0, 0.01, 0), (0, -0.01, 0), (0, 0, 0.01),
                       (0, 0, -0.01), (0, 0.01, 0.01), (0, -0.01, -0.01)):  # fmt: skip
        m, lo, hi = answer["estimate"] + dm, answer["ci_lower"] + dl, answer["ci_upper"] + dh
        assert expected_loss(m, lo, hi) >= best - 1e-6


def test_an_estimate_far_outside_the_prior_falls_back_to_the_likelihood() -> None:
    answer = posterior_answer(STANDARD_PRIOR, 40.0, 0.1, 0.33)
    assert answer["estimate"] == 40.0
    assert answer["ci_upper"] - answer["ci_lower"] == pytest.approx(0.33)


def test_generator_3_draws_the_same_scm_but_the_effect() -> None:
    """Version 3 reuses version 2's two draws, so the stream after them is the same;
    version 2's effect is exactly the old uniform |ATE| in [0.10, 1.50]."""
    v2, v3 = effect_prior(EffectClass.STANDARD, 2), effect_prior(EffectClass.STANDARD, 3)
    assert not v2.hyperprior and v3.hyperprior
    assert not effect_prior(EffectClass.HARD_NONNULL, 3).hyperprior  # null_detect keeps its
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    old = float(a.uniform(0.10, 1.50) * a.choice((-1.0, 1.0)))
    assert v2.draw(b, np.random.default_rng(0)) == old
    assert a.random() == b.random()  # both streams stand at the same place
    draws = [
        v3.draw(np.random.default_rng(i), np.random.default_rng(10_000 + i)) for i in range(4000)
    ]
    assert max(abs(d) for d in draws) <= HALF_WIDTH_HIGH and all(v3.admits(d) for d in draws)
    inside = np.mean([abs(d) < 1.0 for d in draws])  # flat up to 1: E[1/A] = (1 - 1/3)/ln 3
    assert inside == pytest.approx((1 - 1 / 3) / math.log(3), abs=0.03)
    assert not v2.admits(0.05) and v3.admits(0.05) and not v3.admits(0.0)


def test_frozen_splits_stay_at_generator_2_and_only_train_readmes_disclose_the_sizes() -> None:
    assert generator_version("train") == 6
    assert {generator_version(s) for s in ("eval-v1", "eval-v2", "eval-expert-v1")} == {2}
    line = "Effect size: the true ATE was drawn uniformly between -A and A"
    for task_id, disclosed in (
        ("train:ate:2", True),
        ("train:adjustment:2", True),
        ("train:null_detect:2", False),
        ("eval-v1:ate:2", False),
    ):
        readme = cached_task(task_id).public.files["README.md"].decode()
        assert (line in readme) is disclosed, task_id


@pytest.mark.parametrize("family", ["adjustment", "ate"])
def test_the_ols_anchor_is_the_variance_of_ols_on_the_optimal_set(family: str, default_key) -> None:
    """Against OLS on 300,000 fresh rows: the anchor's variance per row is the chosen
    set's (within Monte Carlo error), and no larger than the full declared set's."""
    plans = (plan_task(default_key, TaskId.parse(f"train:{family}:{i}")) for i in range(40))
    plan = next(p for p in plans if p.tier.value == "hard")  # instruments and decoys
    tid = plan.task_id
    streams = derive_streams(default_key, tid, 0)
    scm, naming = draw_scm(plan, streams)
    anchor = ols_anchor(scm, naming.marginals, streams.anchor)
    big = sample_clean(scm, 300_000, np.random.default_rng(11), naming.marginals)
    y, t = big.columns[OUTCOME_ID], big.columns[TREATMENT_ID].astype(float)

    def ols_variance(ids: tuple[str, ...]) -> float:
        x = np.column_stack([np.ones(len(y)), t, design_matrix(scm, big.columns, list(ids))])
        beta, *_ = np.linalg.lstsq(x, y, rcond=None)
        return float(np.var(y - x @ beta) * np.linalg.inv(x.T @ x / len(y))[1, 1])

    assert anchor.variance == pytest.approx(ols_variance(anchor.adjustment_set), rel=0.02)
    assert anchor.variance <= ols_variance(scm.pre_treatment_ids) * 1.02
    roles = {scm.node(i).role.value for i in anchor.adjustment_set}
    assert not roles & {"instrument", "irrelevant"}


def test_linear_truths_anchor_on_the_optimal_ols_at_the_proper_level() -> None:
    task = cached_task("train:ate:5")
    assert task.public.tier.value != "expert"
    truth = task.hidden.estimands["ate"]
    assert truth.interval_alpha == PROPER_INTERVAL_ALPHA
    assert truth.reference_se is not None
    own = 2 * 1.6448536269514722 * truth.reference_se
    assert 0.7 * own < truth.reference_width < 1.02 * own


def test_an_analyst_with_a_smaller_se_is_rewarded_for_it() -> None:
    """The issue's example: 0.981x the reference's SE, its own calibrated interval. In
    expectation over its own errors it must not score below the reference (it did by
    0.005 under reward version 1, where r was the reference's own width)."""
    rng = np.random.default_rng(2)
    se, scale, r = 0.1, 2.0, 2 * 1.6448536269514722 * 0.1 * 0.97  # the anchor below both
    ref, better = [], []
    for _ in range(40_000):
        e = rng.standard_normal()
        ref.append(estimand_score(0.0, se * e, se * (e - 1.645), se * (e + 1.645), r, scale, 0.10))
        s2 = 0.981 * se
        better.append(
            estimand_score(0.0, s2 * e, s2 * (e - 1.645), s2 * (e + 1.645), r, scale, 0.10)
        )
    gain = np.mean([b.reward - a.reward for a, b in zip(ref, better, strict=True)])
    assert gain > 0


def test_the_leakage_check_passes_noise_and_fails_a_real_leak() -> None:
    rng = np.random.default_rng(3)
    labels = [bool(v) for v in rng.random(1200) < 0.35]
    noise = rng.standard_normal((1200, 8)).tolist()
    assert leakage_check("x", leakage("a null", noise, labels), 3e-4).passed
    leaky = [[*row[:7], row[7] + 0.8 * label] for row, label in zip(noise, labels, strict=True)]
    found = leakage("a null", leaky, labels)
    assert found.auc > 0.65 and not leakage_check("x", found, 3e-4).passed


def test_staged_features_read_only_public_things() -> None:
    public = cached_task("train:null_detect:3").public
    features = staged_features(public)
    assert len(features) == len(LEAKAGE_FEATURES) and features[2] == public.n_rows
    assert features[7] == public.generation_attempts


def test_the_gain_check_fails_only_a_gain_shown_above_the_target() -> None:
    small = Paired(n=1200, mean=0.8, diff_mean=0.001, diff_sd=0.05)
    large = Paired(n=1200, mean=0.8, diff_mean=BAYES_GAIN_TARGET + 0.01, diff_sd=0.05)
    assert gain_check("ate", small, 3e-4).passed
    assert not gain_check("ate", large, 3e-4).passed


def test_a_calibrated_confounder_sets_the_bias_and_keeps_the_outcome_variance(
    default_key,
) -> None:
    """Generator 3's obs_vs_rct: the hidden confounder's weight on Y gives the drawn
    bias in combined SEs, and Y's own noise shrinks so that weight^2 + noise^2 is the
    noise variance the SCM drew (neither file's spread tells the classes apart)."""
    import copy

    from causal_gym.families.obs_vs_rct.bias import calibrated_confounder, omitted_bias_in_ses

    plans = (plan_task(default_key, TaskId.parse(f"train:obs_vs_rct:{i}")) for i in range(40))
    plan = next(p for p in plans if p.effect_class is EffectClass.CONFOUNDED)
    streams = derive_streams(default_key, plan.task_id, 0)
    scm, naming = draw_scm(plan, streams)
    data = copy.deepcopy(streams.data)
    first = sample_clean(scm, 6000, streams.data, naming.marginals)
    drawn = scm.node(OUTCOME_ID).noise_sd ** 2 + next(
        e.weights[0] ** 2 for e in scm.in_edges(OUTCOME_ID) if e.parent == "h0"
    )
    for target in (0.5, 2.0, 4.0):
        calibrated = calibrated_confounder(scm, first, target, 0.4)
        assert calibrated is not None
        again = sample_clean(calibrated, 6000, copy.deepcopy(data), naming.marginals)
        realized = omitted_bias_in_ses(calibrated, again, 0.4)
        assert realized == pytest.approx(target, rel=0.1, abs=0.1)  # the sample's own noise
        weight = next(e.weights[0] for e in calibrated.in_edges(OUTCOME_ID) if e.parent == "h0")
        noise = calibrated.node(OUTCOME_ID).noise_sd
        assert weight**2 + noise**2 == pytest.approx(scm.node(OUTCOME_ID).noise_sd ** 2, rel=1e-12)
        assert drawn > noise**2  # the confounder took its share of the noise


def test_obs_vs_rct_discloses_the_bias_size_and_its_reference_uses_it() -> None:
    from causal_gym.families.obs_vs_rct.contract import BIAS_PRIOR, BIAS_SPREAD
    from causal_gym.reference import estimands

    train = cached_task("train:obs_vs_rct:2").public.files["README.md"].decode()
    frozen = cached_task("eval-v2:obs_vs_rct:2").public.files["README.md"].decode()
    assert estimands.disclosed_spread(train) == BIAS_SPREAD
    assert estimands.disclosed_spread(frozen) is None  # generator 2: the plain rule
    assert estimands.CONFOUNDED_PRIOR == BIAS_PRIOR
    p = estimands.confounded_probability
    assert p(0.0, BIAS_SPREAD) < 0.5 < p(3.0, BIAS_SPREAD) < p(5.0, BIAS_SPREAD)
    assert p(-2.2, BIAS_SPREAD) == pytest.approx(p(2.2, BIAS_SPREAD))
    # against numerical integration over the bias's size
    rho = np.linspace(*BIAS_SPREAD, 20_001)
    z = 1.3
    biased = np.mean(0.5 * (np.exp(-0.5 * (z - rho) ** 2) + np.exp(-0.5 * (z + rho) ** 2)))
    clean = math.exp(-0.5 * z * z)
    assert p(z, BIAS_SPREAD) == pytest.approx(biased / (biased + clean), rel=1e-4)


@pytest.mark.parametrize(("estimate", "se"), [(0.0, 0.05), (0.12, 0.08), (-0.4, 0.1), (1.2, 0.2)])
def test_the_third_party_posterior_agrees_with_the_references(estimate: float, se: float) -> None:
    """Two implementations written apart (aipw.py on a grid, posterior.py exact) give the
    same null_detect answer for the same estimate and SE, to the grid's resolution."""
    from causal_gym.reference.aipw import AipwFit
    from causal_gym.reference.aipw import posterior_answer as grid_answer

    grid = grid_answer(AipwFit(estimate, se, 1000, 1.0), 13 / 20)
    exact = posterior_answer(NULL_DETECT_PRIOR, estimate, se, 2 * 1.6448536269514722 * se)
    for name in ("estimate", "ci_lower", "ci_upper"):
        assert grid[name] == pytest.approx(exact[name], abs=2e-3), name
    assert grid["effect_probability"] == pytest.approx(exact["effect_probability"], abs=2e-3)


def test_multi_estimand_readmes_disclose_their_effect_sizes_under_generator_3() -> None:
    """cate, mediation and obs_vs_rct train READMEs carry the effect-size line (the
    posterior reads its numbers back, and the bayes-prior probe tells the generator by
    it); the frozen eval-v2 split's do not."""
    from causal_gym.reference.posterior import disclosed_prior, discloses_effect_sizes

    for family in ("cate", "mediation", "obs_vs_rct"):
        train = cached_task(f"train:{family}:4").public.files["README.md"].decode()
        frozen = cached_task(f"eval-v2:{family}:4").public.files["README.md"].decode()
        assert discloses_effect_sizes(train) and not discloses_effect_sizes(frozen), family
        widths = sorted(high for _, _, high in disclosed_prior(train, family).pieces)
        assert 1.0 < widths[0] < widths[-1] < HALF_WIDTH_HIGH
        assert disclosed_prior(frozen, family) == STANDARD_PRIOR


def test_generator_6_draws_mediations_indirect_effect_without_a_gap(default_key) -> None:
    """The indirect effect is uniform on [-B, B], B log-uniform on [0.2, 0.8]: no gap
    around zero (generator 5 had |indirect| >= 0.15), no mass past 0.8, the README
    says so and the bayes-prior probe reads which prior it was (issue 41). A share
    near zero of 0.135 = 0.05 E[1/B] is expected; 2,000 SCMs put its SD at 0.008."""
    from causal_gym.reference.estimand_probes import estimand_priors

    values = {}
    for version in (5, 6):
        drawn = []
        for i in range(2000):
            tid = TaskId.parse(f"train:mediation:{10**8 + i}")
            plan = dataclasses.replace(plan_task(default_key, tid, 1000), generator_version=version)
            scm, _ = draw_scm(plan, derive_streams(default_key, tid, 0))
            drawn.append(hooks_of("mediation").estimand_values(scm, ())["indirect"])
        values[version] = np.abs(np.asarray(drawn))
    assert values[5].min() >= 0.15 - 1e-12  # the old gap
    assert values[6].max() <= 0.8
    assert np.mean(values[6] < 0.05) == pytest.approx(0.05 * 3.75 / math.log(4), abs=0.04)
    readme = cached_task("train:mediation:4").public.files["README.md"].decode()
    assert "The indirect effect was drawn uniformly between -B and B" in readme
    assert estimand_priors(readme, "mediation") != estimand_priors(
        cached_task("train:cate:4").public.files["README.md"].decode(), "mediation"
    )


def test_every_generator_3_extract_has_an_unobserved_cause_of_treatment(default_key) -> None:
    """Generator 2 gave only a confounded extract a latent parent of the treatment, so
    its treatment was less predictable from the declared columns and its candidates
    broke positivity more often (public generation attempts told the class with AUC
    0.65). Generator 3 gives both classes one, drawn the same way; only a confounded
    extract's reaches the outcome."""
    from causal_gym.scm.model import Role
    from tests.test_multi_estimand import hidden_scm

    seen = set()
    for index in range(12):
        task_id = f"train:obs_vs_rct:{index}"
        scm = hidden_scm(task_id, default_key)
        confounded = cached_task(task_id).hidden.effect_class is EffectClass.CONFOUNDED
        seen.add(confounded)
        latent = [e for e in scm.in_edges(TREATMENT_ID) if e.parent == "h0"]
        assert len(latent) == 1 and 1.0 <= abs(latent[0].weights[0]) <= 1.5, task_id
        to_outcome = [e for e in scm.in_edges(OUTCOME_ID) if e.parent == "h0"]
        assert bool(to_outcome) is confounded, task_id
        role = scm.node("h0").role
        assert role is (Role.HIDDEN_CONFOUNDER if confounded else Role.HIDDEN_TREATMENT_CAUSE)
    assert seen == {True, False}
    for index in range(10):  # the frozen split keeps generator 2's shape
        task_id = f"eval-v2:obs_vs_rct:{index}"
        scm = hidden_scm(task_id, default_key)
        confounded = cached_task(task_id).hidden.effect_class is EffectClass.CONFOUNDED
        assert ("h0" in scm.latent_ids) is confounded


@pytest.mark.slow
def test_the_committed_estimand_priors_are_what_the_generator_induces() -> None:
    """reference/estimand_priors.json (the bayes-prior probe's priors, in the sandbox
    kit) equals a fresh draw from the public generator, number for number."""
    import json
    from pathlib import Path

    from causal_gym.audit.effect_priors import priors_table
    from causal_gym.reference import estimand_probes

    committed = Path(estimand_probes.__file__).with_name(estimand_probes.PRIORS_FILE)
    assert json.loads(committed.read_text()) == json.loads(json.dumps(priors_table()))
