"""The brief rendering of a task: what a small model can read in a few hundred tokens.

A 135M-parameter model cannot write the analysis itself, and the full rendering (the
task prompt and the whole README, about 2,300 tokens with the tool schemas) makes
96% of every sequence it trains on prompt (docs/demo/grpo_step_profile_base.json).
The brief keeps what decides the answer in about 200 tokens: the estimand, the
pre-treatment columns where the answer names some (adjustment), what a summary tool
run on the staged files would print (how many rows the usual cleaning keeps, the
difference in means and the regression on the treatment and every pre-treatment
column, each with its 90% interval and p-value) and the README's family-specific
submission rule (the adjustment set; the effect probability with its disclosed prior).
Everything is computed from the staged files alone, with the reference kit's own
readers, so the brief holds nothing the agent could not compute.

What is left to the policy is the decision: which of the printed fits to report, how
wide an interval to give, which columns to name as an adjustment set and what
probability to give that the effect is real. That is what the trainer's reward teaches.

The brief covers the seed families (ate, adjustment, null_detect); the others read a
different README and raise IntegrationError.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from causal_gym.wire import TaskWire
from orchestrator.errors import IntegrationError

if TYPE_CHECKING:
    import numpy as np

#: The 90% normal quantile (the kit's analyst.Z; pandas loads only when a brief is made).
Z = 1.6448536269514722

#: The families whose README the brief can read.
BRIEF_FAMILIES = ("ate", "adjustment", "null_detect")
BRIEF_SYSTEM_PROMPT = (
    "You are a careful applied statistician. Read the task and the summary of its data, "
    "then call submit_answer exactly once with your answer."
)
_RULES = re.compile(r"^## Submission\n\n(.*?)\n\nSubmit exactly one", re.MULTILINE | re.DOTALL)


def _section(pattern: re.Pattern[str], readme: str, what: str) -> str:
    found = pattern.search(readme)
    if found is None:
        raise IntegrationError(f"the brief needs README.md's {what} section")
    return found.group(1).strip()


def _fit(y: np.ndarray, design: np.ndarray) -> tuple[float, float, float]:
    """OLS of y on the design: the second coefficient, its SE and two-sided p-value."""
    from statsmodels.regression.linear_model import OLS

    fit = OLS(y, design).fit()
    return float(fit.params[1]), float(fit.bse[1]), float(fit.pvalues[1])


def _line(label: str, estimate: float, se: float, p: float) -> str:
    if not (math.isfinite(estimate) and math.isfinite(se)):
        return f"{label}: not estimable"
    low, high = estimate - Z * se, estimate + Z * se
    return f"{label}: {estimate:.4g}, 90% interval [{low:.4g}, {high:.4g}], p = {p:.2g}"


def summary_lines(files: dict[str, bytes]) -> list[str]:
    """What the summary tool prints for the staged files."""
    import numpy as np

    from causal_gym.reference import analyst

    d = analyst.parse_readme(files["README.md"].decode("utf-8"))
    staged = analyst.read_staged(files["data.csv"], d)
    cleaned = analyst.clean_rows(staged, d, d.pre_treatment)
    clean = cleaned.frame
    y = clean[d.outcome].to_numpy(float)
    t = clean["__t"].to_numpy(float)
    ones = np.ones(len(y))
    lines = [
        f"Rows: {len(y)} of {cleaned.n_staged} kept (duplicates, blanks and outcome "
        f"outliers dropped), {int(t.sum())} treated."
    ]
    naive = _fit(y, np.column_stack([ones, t])) if 0 < t.sum() < len(t) else (math.nan,) * 3
    lines.append(_line("Difference in means", *naive))
    design = np.column_stack([ones, t, *analyst.covariate_columns(clean, d.pre_treatment, d)])
    adjusted = _fit(y, design) if analyst.is_full_rank(design, len(y)) else (math.nan,) * 3
    lines.append(_line("Adjusted for every pre-treatment column", *adjusted))
    return lines


def task_brief(task: TaskWire) -> str:
    """The brief of a task, in place of its prompt and README."""
    from causal_gym.reference import analyst

    if task.family.value not in BRIEF_FAMILIES:
        raise IntegrationError(
            f"the brief rendering covers {', '.join(BRIEF_FAMILIES)}; "
            f"{task.family.value} needs the full one"
        )
    readme = task.files["README.md"].decode("utf-8")
    d = analyst.parse_readme(readme)
    lines = [
        f"Task ({d.family}): the population ATE of `{d.treatment}` on `{d.outcome}`, "
        "with a 90% interval."
    ]
    if d.family == "adjustment":  # the answer names columns: list the ones it may name
        lines.append("Pre-treatment columns: " + ", ".join(f"`{c}`" for c in d.pre_treatment))
    lines += summary_lines(task.files)
    rules = _section(_RULES, readme, "Submission").splitlines()
    lines += [line for line in rules if line.startswith("Also ")]  # the family's own fields
    return "\n".join(lines)
