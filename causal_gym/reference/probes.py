"""Cheap ways to answer a task, for the anti-hack audit and the scripted hack agents.

Self-contained like analyst.py (it is copied into sandboxes beside it): each probe
reads only the staged files and returns a submission dict. The audit runs them
host-side on parsed files; scripted agents run `python probes.py DIR --probe NAME`
inside a sandbox and submit what it prints.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

try:  # inside the package
    from causal_gym.reference import analyst, answer, posterior
except ImportError:  # copied into a sandbox next to analyst.py
    import analyst  # type: ignore[no-redef]
    import answer  # type: ignore[no-redef,import-not-found]
    import posterior  # type: ignore[no-redef,import-not-found]

EFFECT_PRIOR = 13 / 20
HUGE_INTERVAL_SCALES = 10.0
NARROW_INTERVAL_SCALE_SHARE = 0.01


@dataclass(frozen=True)
class Staged:
    """One task's staged files, parsed once and shared by every probe."""

    dictionary: analyst.DataDictionary
    frame: object  # pandas.DataFrame
    scale: float
    reference: analyst.ReferenceFit
    #: The effect-size prior the README and the generator disclose (posterior.py).
    effect_prior: posterior.Prior

    @classmethod
    def parse(cls, csv_bytes: bytes, readme_text: str, linear: bool = False) -> Staged:
        """`linear` takes the adjusted OLS fit as the reference whatever the README says
        (the expert audit then puts in the flexible fit generation already made)."""
        dictionary = analyst.parse_readme(readme_text)
        frame = analyst.read_staged(csv_bytes, dictionary)
        fit = analyst.fit_reference if linear else answer.honest_fit
        return cls(
            dictionary,
            frame,
            analyst.outcome_scale(frame, dictionary.outcome),
            fit(frame, dictionary),
            posterior.disclosed_prior(readme_text, dictionary.family),
        )

    @classmethod
    def from_directory(cls, directory: Path) -> Staged:
        return cls.parse(
            (directory / "data.csv").read_bytes(),
            (directory / "README.md").read_text(encoding="utf-8"),
        )


def interval(estimate: float, half_width: float) -> dict[str, object]:
    return {
        "estimate": estimate,
        "ci_lower": estimate - half_width,
        "ci_upper": estimate + half_width,
    }


def with_family(
    answer: dict[str, object], staged: Staged, adjustment: list[str], probability: float
) -> dict[str, object]:
    family = staged.dictionary.family
    if family == "adjustment":
        return {**answer, "adjustment_set": adjustment}
    if family == "null_detect":
        return {**answer, "effect_probability": probability}
    return answer


def probability_from(answer: dict[str, object]) -> float:
    zero_inside = answer["ci_lower"] <= 0.0 <= answer["ci_upper"]  # type: ignore[operator]
    return (
        analyst.NULL_PROBABILITY_IF_ZERO_INSIDE
        if zero_inside
        else analyst.NULL_PROBABILITY_IF_ZERO_OUTSIDE
    )


def honest(staged: Staged) -> dict[str, object]:
    return answer.reference_submission(staged.reference, staged.dictionary)


def at_level(staged: Staged, level: float) -> dict[str, object]:
    """The reference estimate with an interval for another nominal level."""
    from scipy.stats import norm  # loaded only by the width sweep

    z = float(norm.ppf(0.5 + level / 2))
    answer = interval(staged.reference.estimate, z * staged.reference.se)
    return with_family(
        answer, staged, list(staged.dictionary.pre_treatment), probability_from(answer)
    )


def fitted(staged: Staged, covariates: tuple[str, ...], adjustment: list[str]) -> dict[str, object]:
    fit = analyst.fit_reference(staged.frame, staged.dictionary, covariates)
    answer = interval(fit.estimate, analyst.Z * fit.se)
    return with_family(answer, staged, adjustment, probability_from(answer))


def diff_in_means(staged: Staged) -> dict[str, object]:
    """Cleans the data like the reference but adjusts for nothing."""
    return fitted(staged, (), [])


def post_treatment(staged: Staged) -> dict[str, object]:
    """Adjusts for every column it can, post-treatment ones included."""
    columns = staged.dictionary.pre_treatment + staged.dictionary.post_treatment
    return fitted(staged, columns, list(columns))


def linear_ols(staged: Staged) -> dict[str, object]:
    """Adjusted OLS on every declared pre-treatment column: the honest reference of a
    linear task, and on an expert task the method the tier exists to punish."""
    columns = staged.dictionary.pre_treatment
    return fitted(staged, columns, list(columns))


def constant_zero(staged: Staged) -> dict[str, object]:
    """Claims no effect and hides behind an interval ten scales wide on each side."""
    return with_family(interval(0.0, HUGE_INTERVAL_SCALES * staged.scale), staged, [], EFFECT_PRIOR)


def halved(staged: Staged) -> dict[str, object]:
    """The reference estimate with half the honest width (overconfidence)."""
    answer = interval(staged.reference.estimate, analyst.Z * staged.reference.se / 2)
    return with_family(
        answer, staged, list(staged.dictionary.pre_treatment), probability_from(answer)
    )


def narrow(staged: Staged) -> dict[str, object]:
    """The reference estimate with a 1%-of-scale interval (extreme overconfidence)."""
    answer = interval(staged.reference.estimate, NARROW_INTERVAL_SCALE_SHARE * staged.scale / 2)
    return with_family(
        answer, staged, list(staged.dictionary.pre_treatment), probability_from(answer)
    )


def narrow_null(staged: Staged) -> dict[str, object]:
    """An oracle that knows the effect is zero: 0 with a 1%-of-scale interval."""
    answer = interval(0.0, NARROW_INTERVAL_SCALE_SHARE * staged.scale / 2)
    return with_family(answer, staged, list(staged.dictionary.pre_treatment), 0.0)


def prior_only(staged: Staged) -> dict[str, object]:
    """The honest interval with the disclosed prior as the effect probability."""
    return {**honest(staged), "effect_probability": EFFECT_PRIOR}


def bayes_prior(staged: Staged) -> dict[str, object]:
    """What knowing the generator is worth: the posterior answer (posterior.py) under
    the effect sizes the public source discloses, from the reference's estimate and
    standard error. On null_detect that is the honest reference itself."""
    if staged.dictionary.family == "null_detect":
        return honest(staged)
    fit = staged.reference
    answer = posterior.posterior_answer(staged.effect_prior, fit.estimate, fit.se, fit.width)
    del answer["effect_probability"]
    return with_family(dict(answer), staged, list(staged.dictionary.pre_treatment), EFFECT_PRIOR)


PROBES = {
    "honest": honest,
    "bayes-prior": bayes_prior,
    "diff-in-means": diff_in_means,
    "post-treatment": post_treatment,
    "linear-ols": linear_ols,
    "constant": constant_zero,
    "halved": halved,
    "narrow": narrow,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3 or args[1] != "--probe" or args[2] not in PROBES:
        print(f"usage: python probes.py DIR --probe {{{','.join(PROBES)}}}", file=sys.stderr)
        return 2
    print(json.dumps(PROBES[args[2]](Staged.from_directory(Path(args[0])))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
