"""Cheap ways to answer the multi-estimand families, for their audit and scripted agents.

Self-contained like probes.py (copied into sandboxes beside analyst.py and
estimands.py): each probe reads only the staged files, through `estimands.Analysis`,
and returns a submission dict. `python estimand_probes.py DIR --probe NAME`.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:  # inside the package
    from causal_gym.reference import analyst
    from causal_gym.reference.estimands import Analysis, EstimandFit, fit_obs_vs_rct
except ImportError:  # copied into a sandbox
    import analyst  # type: ignore[no-redef]
    from estimands import (  # type: ignore[no-redef,import-not-found]
        Analysis,
        EstimandFit,
        fit_obs_vs_rct,
    )

Answer = dict[str, object]
HUGE_INTERVAL_SCALES = 10.0
NARROW_INTERVAL_SCALE_SHARE = 0.01
PRIORS = {"obs_vs_rct": 0.5}


def map_intervals(answer: Answer, change: Callable[[dict], dict]) -> Answer:
    """The answer with every interval (top level, per level, or per effect) changed."""
    if "estimate" in answer:
        return {**answer, **change(answer)}
    if "effects" in answer:
        effects = answer["effects"]
        assert isinstance(effects, dict)
        return {"effects": {k: change(v) for k, v in effects.items()}}
    return {k: change(v) if isinstance(v, dict) else v for k, v in answer.items()}


def widened(answer: Answer, factor: float) -> Answer:
    """Every interval's half-width times `factor`, estimates unchanged."""

    def change(interval: dict) -> dict:
        half = factor * (interval["ci_upper"] - interval["ci_lower"]) / 2
        centre = interval["estimate"]
        return {"estimate": centre, "ci_lower": centre - half, "ci_upper": centre + half}

    return map_intervals(answer, change)


def honest(a: Analysis) -> Answer:
    return a.answer()


def at_level(a: Analysis, level: float) -> Answer:
    """The reference estimates with intervals for another nominal level."""
    from scipy.stats import norm

    return widened(a.answer(), float(norm.ppf(0.5 + level / 2)) / analyst.Z)


def halved(a: Analysis) -> Answer:
    return widened(a.answer(), 0.5)


def narrow(a: Analysis) -> Answer:
    """The reference estimates with intervals 1% of the outcome's scale wide."""
    half = NARROW_INTERVAL_SCALE_SHARE * a.scale / 2

    def change(interval: dict) -> dict:
        centre = interval["estimate"]
        return {"estimate": centre, "ci_lower": centre - half, "ci_upper": centre + half}

    return map_intervals(a.answer(), change)


def constant(a: Analysis) -> Answer:
    """Zero for everything with intervals ten scales wide on each side; a probability
    at the disclosed prior."""
    half = HUGE_INTERVAL_SCALES * a.scale
    zero = {"estimate": 0.0, "ci_lower": -half, "ci_upper": half}
    answer = map_intervals(a.answer(), lambda _interval: dict(zero))
    if a.dictionary.family in PRIORS:
        answer["bias_probability"] = PRIORS[a.dictionary.family]
    return answer


def pooled_for_every_level(a: Analysis) -> Answer:
    """cate: the pooled adjusted ATE and its interval, reported for every level."""
    pooled = analyst.fit_reference(a.frame, a.dictionary)
    interval = EstimandFit(pooled.estimate, pooled.se, 0, True).interval()
    return {"effects": {level: dict(interval) for level in a.fits}}


def per_level_difference_in_means(a: Analysis) -> Answer:
    """cate: within each level, treated mean minus control mean (no adjustment)."""
    d = a.dictionary
    clean = analyst.clean_rows(a.frame, d, (d.modifier,)).frame  # type: ignore[arg-type]
    effects = {}
    for level in a.fits:
        here = clean[clean[d.modifier].astype(str) == level]
        t = here["__t"].to_numpy(float) == 1.0
        y = here[d.outcome].to_numpy(float)
        gap = float(y[t].mean() - y[~t].mean())
        se = math.sqrt(
            float(np.var(y[t], ddof=1)) / t.sum() + float(np.var(y[~t], ddof=1)) / (~t).sum()
        )
        effects[level] = EstimandFit(gap, se, 0, True).interval()
    return {"effects": effects}


def _no_indirect(a: Analysis) -> dict[str, float]:
    """No indirect effect, with the honest indirect interval's width around zero."""
    half = analyst.Z * a.fits["indirect"].se
    return {"estimate": 0.0, "ci_lower": -half, "ci_upper": half}


def total_as_direct(a: Analysis) -> Answer:
    """mediation: the total effect reported as the direct one, no indirect effect."""
    total = a.fits["total"].interval()
    return {"direct": total, "indirect": _no_indirect(a), "total": dict(total)}


def mediator_as_confounder(a: Analysis) -> Answer:
    """mediation: the treatment coefficient adjusting for the mediator as if it were a
    confounder, reported as the total (and direct) effect."""
    direct = a.fits["direct"].interval()
    return {"direct": direct, "indirect": _no_indirect(a), "total": dict(direct)}


def _two_files(a: Analysis) -> tuple[EstimandFit, EstimandFit]:
    both = a.obs_rct or fit_obs_vs_rct(a.frame, a.trial, a.dictionary)
    return both.observational, both.trial


def observational_only(a: Analysis) -> Answer:
    """obs_vs_rct: the extract's adjusted estimate, trusted (bias probability 0)."""
    return {**_two_files(a)[0].interval(), "bias_probability": 0.0}


def trial_only(a: Analysis) -> Answer:
    """obs_vs_rct: the trial alone with its wide interval, the prior as probability."""
    return {**_two_files(a)[1].interval(), "bias_probability": PRIORS["obs_vs_rct"]}


def always_biased(a: Analysis) -> Answer:
    """obs_vs_rct: the trial alone, and the extract always called biased."""
    return {**_two_files(a)[1].interval(), "bias_probability": 1.0}


def prior_only(a: Analysis) -> Answer:
    """obs_vs_rct: the honest interval with the disclosed prior as the probability."""
    return {**a.answer(), "bias_probability": PRIORS["obs_vs_rct"]}


#: What a generator-6 mediation README says of its indirect effect (hooks.py writes it).
SMOOTH_INDIRECT_NOTE = "The indirect effect was drawn uniformly between -B and B"
#: The effect priors the public generator induces on each estimand, by generator
#: (scripts/estimand_priors.py writes it from causal_gym/audit/effect_priors.py).
PRIORS_FILE = "estimand_priors.json"


def _posterior() -> Any:
    """posterior.py, which only the bayes-prior agent copies into its sandbox."""
    try:
        from causal_gym.reference import posterior
    except ImportError:
        import posterior  # type: ignore[no-redef,import-not-found]
    return posterior


def estimand_priors(readme: str, family: str) -> dict[str, Any]:
    """Estimand kind ("level" for cate's levels, else the estimand's name) -> its
    prior (posterior.Prior) under the generator that made the task: 6 when a mediation
    README says its indirect effect was drawn between -B and B, 3 when the README
    carries the effect-size line, else 2 (the frozen eval-v2 split)."""
    posterior = _posterior()
    if SMOOTH_INDIRECT_NOTE in readme:
        generator = "generator-6"
    elif posterior.discloses_effect_sizes(readme):
        generator = "generator-3"
    else:
        generator = "generator-2"
    table = json.loads(Path(__file__).with_name(PRIORS_FILE).read_text("utf-8"))
    return {
        kind: posterior.Prior(0.0, tuple((w, lo, hi) for w, lo, hi in pieces))
        for kind, pieces in table[generator][family].items()
    }


def _posterior_interval(fit: EstimandFit, prior: Any) -> dict[str, float]:
    answer = _posterior().posterior_answer(prior, fit.estimate, fit.se, 2.0 * analyst.Z * fit.se)
    return {k: answer[k] for k in ("estimate", "ci_lower", "ci_upper")}


def bayes_prior(a: Analysis) -> Answer:
    """What knowing the generator is worth: each estimand's posterior under the prior
    the public generator induces on it, from the reference's estimate and SE.
    obs_vs_rct keeps the reference's bias probability; mediation's total estimate is
    the sum of the other two (the schema's rule) inside the total's interval."""
    family = a.dictionary.family
    priors = estimand_priors(a.readme, family)
    if family == "cate":
        return {"effects": {k: _posterior_interval(f, priors["level"]) for k, f in a.fits.items()}}
    if family == "mediation":
        answer = {name: _posterior_interval(a.fits[name], priors[name]) for name in a.fits}
        total = answer["total"]
        total["estimate"] = answer["direct"]["estimate"] + answer["indirect"]["estimate"]
        total["ci_lower"] = min(total["ci_lower"], total["estimate"])
        total["ci_upper"] = max(total["ci_upper"], total["estimate"])
        return dict(answer)
    return {**a.answer(), **_posterior_interval(a.fits["ate"], priors["ate"])}


#: Every family's probes; the audit runs the shared ones and the family's own.
SHARED_PROBES: dict[str, Callable[[Analysis], Answer]] = {
    "constant_zero_huge_interval": constant,
    "reference_halved_interval": halved,
}
FAMILY_PROBES: dict[str, Callable[[Analysis], Answer]] = {
    "pooled_for_every_level": pooled_for_every_level,
    "per_level_difference_in_means": per_level_difference_in_means,
    "total_as_direct": total_as_direct,
    "mediator_as_confounder": mediator_as_confounder,
    "observational_only": observational_only,
    "trial_only": trial_only,
    "always_biased": always_biased,
}
PROBES = {
    "honest": honest,
    "bayes_prior": bayes_prior,
    **SHARED_PROBES,
    **FAMILY_PROBES,
    # the names the seed families' probe agents use, for the probes every family has
    "constant": constant,
    "halved": halved,
    "narrow": narrow,
}
#: Which family each family-specific probe answers.
PROBE_FAMILY = {
    "pooled_for_every_level": "cate",
    "per_level_difference_in_means": "cate",
    "total_as_direct": "mediation",
    "mediator_as_confounder": "mediation",
    "observational_only": "obs_vs_rct",
    "trial_only": "obs_vs_rct",
    "always_biased": "obs_vs_rct",
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    name = args[2].replace("-", "_") if len(args) == 3 else ""
    if len(args) != 3 or args[1] != "--probe" or name not in PROBES:
        listed = ",".join(PROBES)
        print(f"usage: python estimand_probes.py DIR --probe {{{listed}}}", file=sys.stderr)
        return 2
    directory = Path(args[0])
    files = {p.name: p.read_bytes() for p in directory.iterdir() if p.suffix in (".csv", ".md")}
    analysis = Analysis.parse(files)
    family = analysis.dictionary.family
    if PROBE_FAMILY.get(name, family) != family:
        print(f"probe {name} answers {PROBE_FAMILY[name]} tasks, not {family}", file=sys.stderr)
        return 2
    print(json.dumps(PROBES[name](analysis)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
