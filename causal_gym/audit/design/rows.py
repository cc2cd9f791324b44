"""The audit of a design task (iv, did, rdd): the reference's answer and its coverage,
the width sweep, every probe the family's contract names, the generator-aware probe,
and the staged features the leakage check reads.

The sweep rescales the reference's own interval about its estimate, each side by
z(level) / z(0.90), so an asymmetric interval (iv's posterior) keeps its shape. The
rows are plain floats like every suite's (runner.py forks them); the summary and the
checks are in report.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import norm

from causal_gym.audit.design.priors import DISCLOSED, posterior_answer, posterior_grid
from causal_gym.audit.knowledge import staged_features
from causal_gym.audit.model_gain import task_gain, weighted_gain
from causal_gym.audit.policies import SWEEP_LEVELS
from causal_gym.audit.rows import TaskRow, row_start, scored_answer
from causal_gym.contracts.families import contract_of
from causal_gym.reference.designs import (
    ESTIMAND,
    Z90,
    DesignFit,
    design_fit,
    parse_design_readme,
)
from causal_gym.scoring.reward import ScoreRecord
from causal_gym.task import Task

#: The hidden subtiers that share a tier and that only the model tells apart, as (tier,
#: first, second): the leakage check asks whether staged metadata tells the second
#: from the first among that tier's tasks (across tiers the row counts differ, and
#: the tier is public).
#: (iv's strength is its tier, which is public; rdd's sharp or fuzzy design is a
#: README fact and its curvature follows the tier; did's easy tier mixes one adoption
#: date with staggered ones, which the data show by design.)
HIDDEN_PAIRS: dict[str, tuple[str, str, str]] = {
    "did": ("medium", "staggered_constant", "staggered_mild")
}


def _answer(estimand: str, estimate: float, lower: float, upper: float) -> dict[str, object]:
    return {"estimand": estimand, "estimate": estimate, "ci_lower": lower, "ci_upper": upper}


def _at_level(fit: DesignFit, level: float) -> tuple[float, float, float]:
    factor = float(norm.isf((1.0 - level) / 2.0)) / Z90
    low = fit.estimate - (fit.estimate - fit.ci_lower) * factor
    high = fit.estimate + (fit.ci_upper - fit.estimate) * factor
    return fit.estimate, low, high


@dataclass(frozen=True)
class DesignRow(TaskRow):
    subtier: str
    covered: bool
    sweep_estimand: tuple[float, ...]
    sweep_covered: tuple[bool, ...]
    probes: dict[str, float]
    probes_covered: dict[str, bool]
    #: The generator-aware probe's reward (priors.py; iv's is the reference's).
    bayes_reward: float
    leak_features: tuple[float, ...]
    #: The generator-aware probe's expected gain under its own posterior (model_gain.py;
    #: 0 where the probe is the reference).
    model_gain: float = 0.0


def _expected_gain(task: Task, fit: DesignFit, ref: ScoreRecord) -> float:
    """The generator-aware answer's expected gain over the reference's under the
    probe's grid posterior (priors.py)."""
    family, tier = task.public.family.value, task.public.tier.value
    found = None if family in DISCLOSED else posterior_grid(family, tier, fit)
    if found is None:
        return 0.0
    [(name, truth)] = task.hidden.estimands.items()
    probe = posterior_answer(family, tier, fit)
    reference = (fit.estimate, fit.ci_lower, fit.ci_upper)
    return task_gain(task, ref, {name: weighted_gain(*found, probe, reference, truth)})


def audit_design_task(task: Task, key_label: str) -> DesignRow:
    files = dict(task.public.files)
    family = task.public.family.value
    estimand = parse_design_readme(files["README.md"].decode("utf-8"))[ESTIMAND]
    fit = design_fit(files)
    ref = scored_answer(task, _answer(estimand, fit.estimate, fit.ci_lower, fit.ci_upper))
    sweep = [scored_answer(task, _answer(estimand, *_at_level(fit, lv))) for lv in SWEEP_LEVELS]
    probes, covered = {}, {}
    for name in contract_of(family).extra_probes:
        probe = design_fit(files, name)
        record = scored_answer(
            task, _answer(estimand, probe.estimate, probe.ci_lower, probe.ci_upper)
        )
        probes[name], covered[name] = record.reward, record.covered
    bayes = (
        ref
        if family in DISCLOSED
        else scored_answer(
            task, _answer(estimand, *posterior_answer(family, task.public.tier.value, fit))
        )
    )
    model = _expected_gain(task, fit, ref)
    return DesignRow(
        **row_start(task, key_label, ref),
        subtier=task.hidden.subtier or "",
        covered=ref.covered,
        sweep_estimand=tuple(s.estimand_reward for s in sweep),
        sweep_covered=tuple(s.covered for s in sweep),
        probes=probes,
        probes_covered=covered,
        bayes_reward=bayes.reward,
        leak_features=staged_features(task.public),
        model_gain=model,
    )
