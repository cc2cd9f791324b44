"""The analyst toolset's kit: a fit of the columns and estimator an analyst chose, and
the family's answer built from the analyst's other choices (how wide, whether to
shrink toward the README's disclosed effect sizes, how sure an effect exists).

The analyst toolset (orchestrator/integrations/analyst_tools.py) lets a model make an
analyst's decisions while this file computes the numbers, so a small model is judged
on its choices, not on its arithmetic. Every choice is a public one: columns are the
dictionary's, the prior is the one the README discloses, and the fit reads only the
staged files.

Self-contained like analyst.py (numpy, pandas, statsmodels, scikit-learn; analyst.py,
flexible.py and posterior.py beside it): it is copied into sandboxes and run there as

    python decisions.py DIR '{"adjust_for": ["pre_treatment"], "estimator": "ols"}'

which prints the fit as one JSON object, or {"error": ...} for a choice the task
cannot take (an unknown column, an estimator it does not offer).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

try:  # inside the package
    from causal_gym.reference import analyst, posterior
except ImportError:  # copied into a sandbox next to analyst.py
    import analyst  # type: ignore[no-redef]
    import posterior  # type: ignore[no-redef,import-not-found]

#: Names that stand for a group of the dictionary's columns in `adjust_for`.
PRE_TREATMENT = "pre_treatment"
POST_TREATMENT = "post_treatment"
GROUPS = (PRE_TREATMENT, POST_TREATMENT)
#: "ols": regression adjustment; "aipw": flexible.py's cross-fitted doubly robust fit.
ESTIMATORS = ("ols", "aipw")
#: The reported interval as a multiple of the fit's own 90% interval.
WIDTHS = {"narrow": 0.5, "standard": 1.0, "wide": 2.0}
#: Families whose answer this kit builds (one ATE from data.csv).
FAMILIES = ("ate", "adjustment", "null_detect")
#: Columns one fit may name, past which the call is refused (the largest seed task has
#: about 30 columns; anything longer is not an adjustment set but a flood).
MAX_NAMES = 64


class ChoiceError(ValueError):
    """Raised for a choice the task cannot take; its message is what the model reads."""


@dataclass(frozen=True)
class FitChoice:
    """Which columns to adjust for and with which estimator."""

    columns: tuple[str, ...]
    estimator: str


def resolve_columns(adjust_for: object, d: analyst.DataDictionary) -> tuple[str, ...]:
    """The columns `adjust_for` names, groups expanded, in the dictionary's order.

    Accepted: a list of column names and group names (pre_treatment, post_treatment);
    a single string is read as a one-item list."""
    items = [adjust_for] if isinstance(adjust_for, str) else adjust_for
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ChoiceError("adjust_for is a list of column names or groups (pre_treatment)")
    if len(items) > MAX_NAMES:
        raise ChoiceError(f"adjust_for names at most {MAX_NAMES} columns")
    known = (*d.pre_treatment, *d.post_treatment)
    chosen: set[str] = set()
    for item in items:
        if item == PRE_TREATMENT:
            chosen.update(d.pre_treatment)
        elif item == POST_TREATMENT:
            chosen.update(d.post_treatment)
        elif item in known:
            chosen.add(item)
        elif item in (d.treatment, d.outcome):
            raise ChoiceError(f"{item!r} is the treatment or the outcome, not a covariate")
        else:
            shown = item[:40] if item.isprintable() else ascii(item[:40])
            raise ChoiceError(
                f"unknown column {shown!r}: name columns of the README's table or the "
                f"groups {', '.join(GROUPS)}"
            )
    return tuple(c for c in known if c in chosen)


def parse_choice(raw: dict[str, object], d: analyst.DataDictionary) -> FitChoice:
    """A fit's choices from the tool's arguments; ChoiceError names what is accepted."""
    unknown = sorted(set(raw) - {"adjust_for", "estimator"})
    if unknown:
        raise ChoiceError(f"fit takes adjust_for and estimator, not {', '.join(unknown)}")
    estimator = raw.get("estimator", "ols")
    if estimator not in ESTIMATORS:
        raise ChoiceError(f"estimator is one of {', '.join(ESTIMATORS)}")
    return FitChoice(resolve_columns(raw.get("adjust_for", []), d), str(estimator))


def fit_choice(
    staged: object, d: analyst.DataDictionary, choice: FitChoice
) -> analyst.ReferenceFit:
    """The fit of the chosen columns with the chosen estimator (analyst.py's cleaning)."""
    if choice.estimator == "aipw":
        try:  # inside the package
            from causal_gym.reference.flexible import fit_flexible
        except ImportError:  # copied into a sandbox next to flexible.py
            from flexible import fit_flexible  # type: ignore[no-redef,import-not-found]
        return fit_flexible(staged, d, choice.columns)
    return analyst.fit_reference(staged, d, choice.columns)


def fit_report(fit: analyst.ReferenceFit) -> dict[str, float | int | list[float] | None]:
    """What the fit tool prints (the host shows it rounded and builds the answer from
    it): the estimate, its SE and 90% interval, the z statistic's two-sided p-value
    and the rows used; None where the fit is not estimable."""
    if not (math.isfinite(fit.estimate) and math.isfinite(fit.se) and fit.se > 0):
        return {"estimate": None, "se": None, "rows_used": fit.n_used}
    z = abs(fit.estimate) / fit.se
    return {
        "estimate": fit.estimate,
        "se": fit.se,
        "ci90": [fit.ci_lower, fit.ci_upper],
        "p_value": math.erfc(z / math.sqrt(2.0)),
        "rows_used": fit.n_used,
    }


def build_answer(
    family: str,
    estimate: float,
    se: float,
    columns: tuple[str, ...],
    width: str,
    effect_probability: float | None,
    shrink_to: posterior.Prior | None,
) -> dict[str, object]:
    """The family's answer from a fit's estimate and SE and the analyst's choices:
    the interval `width` times the fit's 90% one, or with `shrink_to` the posterior
    under that prior (its median and loss-optimal interval, no narrower than the
    widened fit's); the adjustment set is the fit's columns; the effect probability
    is the analyst's own."""
    if family not in FAMILIES:
        raise ChoiceError(f"the analyst toolset answers {', '.join(FAMILIES)}")
    if width not in WIDTHS:
        raise ChoiceError(f"width is one of {', '.join(WIDTHS)}")
    if not (math.isfinite(estimate) and math.isfinite(se) and se > 0):
        raise ChoiceError("the fit has no estimate to report: fit other columns")
    half = analyst.Z * se * WIDTHS[width]
    answer: dict[str, object] = {
        "estimate": estimate,
        "ci_lower": estimate - half,
        "ci_upper": estimate + half,
    }
    if shrink_to is not None:
        shrunk = posterior.posterior_answer(shrink_to, estimate, se * WIDTHS[width], 2 * half)
        answer.update({k: shrunk[k] for k in ("estimate", "ci_lower", "ci_upper")})
    if family == "adjustment":
        answer["adjustment_set"] = list(columns)
    if family == "null_detect":
        if effect_probability is None:
            raise ChoiceError("null_detect needs effect_probability: how sure an effect exists")
        answer["effect_probability"] = effect_probability
    return answer


def fit_directory(directory: Path, raw: dict[str, object]) -> dict[str, object]:
    """The fit tool's output for the task staged in `directory`."""
    d = analyst.parse_readme((directory / "README.md").read_text(encoding="utf-8"))
    if d.family not in FAMILIES:
        raise ChoiceError(f"the analyst toolset answers {', '.join(FAMILIES)}")
    choice = parse_choice(raw, d)
    staged = analyst.read_staged((directory / "data.csv").read_bytes(), d)
    return {"columns": list(choice.columns), "estimator": choice.estimator,
            **fit_report(fit_choice(staged, d, choice))}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python decisions.py DIR CHOICE_JSON", file=sys.stderr)
        return 2
    try:
        raw = json.loads(args[1])
        if not isinstance(raw, dict):
            raise ChoiceError("the choice is a JSON object")
        print(json.dumps(fit_directory(Path(args[0]), raw)))
    except (ChoiceError, json.JSONDecodeError) as exc:
        print(json.dumps({"error": str(exc)}))
    except (OSError, ValueError, KeyError) as exc:
        print(json.dumps({"error": f"the fit failed: {exc}"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
