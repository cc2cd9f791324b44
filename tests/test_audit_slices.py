"""The per-slice audit and the model-based check (issue 41 parts 3 and 4).

A planted edge: a generator variant, built here, whose hard tier draws the effect
from a disclosed prior with a gap at zero and sharp edges (|effect| uniform on
[0.3, 0.8]) while its other tiers disclose nothing (their generator-aware answer is
the reference's). At the audit's size per tier the per-slice check flags the hard
tier, while the family's pooled check, which the committed audits made before slices,
does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.knowledge import BAYES_GAIN_TARGET, gain_check
from causal_gym.audit.model_gain import expected_estimand_gain, posterior_points
from causal_gym.audit.policies import SWEEP_LEVELS
from causal_gym.audit.slices import slice_checks, summarize_slices
from causal_gym.audit.suite import suite
from causal_gym.audit.summary import paired
from causal_gym.estimand import Estimand
from causal_gym.reference.posterior import (
    NULL_DETECT_ATOM,
    NULL_DETECT_PIECES,
    Posterior,
    Prior,
    posterior_answer,
)
from causal_gym.scoring.reward import estimand_score
from tests.support.audit_checks import assert_only_this_check_fails

Z90 = 1.6448536269514722
#: The planted edge: the hard tier's disclosed prior, its estimate's SE and scale.
GAPPED = Prior(0.0, ((1.0, 0.3, 0.8),))
HARD_SE, SCALE = 0.1, 5.0
#: Tasks per tier, as the estimand audit draws them (400 a family and key, 3 keys,
#: three tiers).
PER_TIER = 400


@dataclass(frozen=True)
class Row:
    family: str
    tier: str
    reward: float
    bayes_reward: float
    model_gain: float
    covered: bool
    sweep_estimand: tuple[float, ...]
    sweep_covered: tuple[bool, ...]


def _row(tier: str, reward: float, bayes: float, model: float, covered: bool) -> Row:
    levels = len(SWEEP_LEVELS)
    return Row(
        "planted", tier, reward, bayes, model, covered, (reward,) * levels, (covered,) * levels
    )


def _hard_row(rng: np.random.Generator) -> Row:
    theta = rng.uniform(0.3, 0.8) * rng.choice((-1.0, 1.0))
    estimate = theta + HARD_SE * rng.standard_normal()
    r = 2.0 * Z90 * HARD_SE  # the task's anchor: the efficient estimator's 90% width
    truth = Estimand(
        value=theta,
        reference_estimate=estimate,
        reference_se=HARD_SE,
        reference_width=r,
        scale=SCALE,
        interval_alpha=0.10,
    )
    ref = (estimate, estimate - Z90 * HARD_SE, estimate + Z90 * HARD_SE)
    answer = posterior_answer(GAPPED, estimate, HARD_SE, r)
    probe = (answer["estimate"], answer["ci_lower"], answer["ci_upper"])
    scored = estimand_score(theta, *ref, r, SCALE, 0.10)
    bayes = estimand_score(theta, *probe, r, SCALE, 0.10)
    model = expected_estimand_gain(GAPPED, estimate, HARD_SE, probe, ref, truth)
    return _row("hard", scored.reward, bayes.reward, model, scored.covered)


def _quiet_row(tier: str, rng: np.random.Generator) -> Row:
    """A tier that discloses nothing: the generator-aware answer is the reference's."""
    reward = 0.8 + 0.1 * rng.standard_normal()
    return _row(tier, reward, reward, 0.0, bool(rng.uniform() < NOMINAL_COVERAGE))


def test_the_quadrature_points_are_the_posteriors_quantiles() -> None:
    for estimate, se in ((0.1, 0.05), (1.45, 0.05), (-0.3, 0.2), (0.0, 0.01)):
        post = Posterior(Prior(NULL_DETECT_ATOM, NULL_DETECT_PIECES), estimate, se)
        points = posterior_points(post, 64)
        exact = [post.quantile((i + 0.5) / 64) for i in range(64)]
        assert np.max(np.abs(points - np.asarray(exact))) < 1e-9


def test_a_planted_edge_is_caught_in_its_slice_and_missed_pooled() -> None:
    alpha = suite("estimand").load_committed().per_check_alpha
    rng = np.random.default_rng(20261207)
    rows = [_quiet_row(t, rng) for t in ("easy", "medium") for _ in range(PER_TIER)]
    rows += [_hard_row(rng) for _ in range(PER_TIER)]

    slices = summarize_slices(rows, lambda r: {"interval": r.covered})
    assert sorted(slices) == ["planted/easy", "planted/hard", "planted/medium"]
    verdicts = {c.name: c.passed for c in slice_checks(slices, alpha)}
    at_most = f"knowing the generator gains at most {BAYES_GAIN_TARGET} a task"
    assert not verdicts[f"{at_most} (planted/hard, expected under its posterior)"]
    for tier in ("easy", "medium"):
        assert verdicts[f"{at_most} (planted/{tier})"]
        assert verdicts[f"{at_most} (planted/{tier}, expected under its posterior)"]

    pooled = gain_check(
        "planted", paired([r.bayes_reward for r in rows], [r.reward for r in rows]), alpha
    )
    pooled_model = gain_check(
        "planted", paired([r.model_gain for r in rows], [0.0] * len(rows)), alpha
    )
    assert pooled.passed and pooled_model.passed

    # With the prior the probe assumes being the generator's, the expected gain is an
    # unbiased estimate of the scored one, with a smaller spread.
    hard = slices["planted/hard"]
    assert hard.model_gain is not None
    scored_se = hard.bayes_prior.diff_sd / math.sqrt(hard.n)
    assert abs(hard.bayes_prior.diff_mean - hard.model_gain.diff_mean) < 4.0 * scored_se
    assert hard.model_gain.diff_sd < hard.bayes_prior.diff_sd


@pytest.mark.parametrize("name", ["seed", "estimand", "design"])
def test_every_public_slice_of_a_committed_report_is_checked(name: str) -> None:
    """Each family audited on several tiers has a slice per tier, and the report's
    checks (recomputed from the file by the suite test) include every slice's."""
    report = suite(name).load_committed()
    assert report.slices, f"{name}: the committed report has no slices"
    for family in {s.family for s in report.slices.values()}:
        tiers = {s.tier for s in report.slices.values() if s.family == family}
        assert len(tiers) > 1
        whole = [s for s in report.slices.values() if s.family == family and s.estimand is None]
        assert sum(s.n for s in whole) == report.bayes_prior[family].n
    names = {c.name for c in report.checks}
    for key in report.slices:
        assert any(f"({key})" in n or f"({key}, " in n for n in names), key


def _raised(parts: dict[str, Any], name: str, field: str) -> dict[str, Any]:
    """The report's numbers with one slice's gain (scored or expected) at +0.03."""
    chosen = parts["slices"][name]
    gain = getattr(chosen, field).model_copy(update={"diff_mean": 0.03})
    slices = {**parts["slices"], name: chosen.model_copy(update={field: gain})}
    return {**parts, "slices": slices}


@pytest.mark.parametrize(
    ("slice_key", "field", "suffix"),
    [
        ("mediation/hard/indirect", "model_gain", ", expected under its posterior"),
        ("mediation/hard", "bayes_prior", ""),
    ],
)
def test_a_slice_check_fails_alone_when_its_gain_is_bad(
    slice_key: str, field: str, suffix: str
) -> None:
    chosen = suite("estimand")
    check = f"knowing the generator gains at most {BAYES_GAIN_TARGET} a task ({slice_key}{suffix})"
    parts = chosen.load_committed().parts()
    assert_only_this_check_fails(
        chosen.evaluate, parts, lambda p: _raised(p, slice_key, field), check
    )
