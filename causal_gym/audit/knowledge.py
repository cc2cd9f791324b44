"""What knowing the generator is worth: the Bayes probe's gain and the leakage check,
shared by the three audits.

The reward is meant to pay for causal inference, not for knowing how tasks are made.
Two things could pay for the latter, and each audit measures both:

- the prior: the `bayes-prior` probe (reference/probes.py, estimand_probes.py) answers
  with the posterior under every effect size the README and the public source
  disclose. Its paired gain over the honest reference, with its standard error, is
  reported per family with its SE, and the check fails when the gain is shown to
  exceed BAYES_GAIN_TARGET a task (one-sided, at the audit's per-check level: a
  reward whose true gain is at most the target fails it with at most that
  probability).
- leakage: whether what is staged, but is not data (file sizes, row and column
  counts, column kinds, blanks, the generation attempts a task reports), tells a
  task's hidden class (null vs non-null, confounded vs clean). A logistic model on
  those features, five-fold cross-validated over the audit's tasks in their fixed
  order, gives an AUC; the check fails when it exceeds chance by more than
  z_(1 - alpha) standard errors of the AUC of an uninformative score
  (Mann-Whitney: sqrt((n0 + n1 + 1) / (12 n0 n1))). Cross-validated AUCs of noise
  sit slightly below 0.5, so the stated false-alarm rate is an upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import norm

from causal_gym.audit.checks import Check, Leakage, Paired
from causal_gym.audit.tables import Table, table
from causal_gym.task import PublicTask

#: The most a staged-only strategy may gain over the honest reference, per task.
BAYES_GAIN_TARGET = 0.005
LEAKAGE_FOLDS = 5
#: The staged-only features of the leakage check, in the order `staged_features` gives.
LEAKAGE_FEATURES = (
    "data.csv bytes",
    "README.md bytes",
    "staged rows",
    "columns",
    "pre-treatment columns",
    "post-treatment columns",
    "blank cells",
    "generation attempts",
    "other staged files' bytes",  # trial.csv (obs_vs_rct)
)


def staged_features(task: PublicTask) -> tuple[float, ...]:
    """LEAKAGE_FEATURES of one task, from its public side only."""
    data = task.files["data.csv"]
    cells = data.count(b",,") + data.count(b",\n") + data.count(b"\n,")
    post = len(task.columns) - len(task.pre_treatment_columns)
    return (
        float(len(data)),
        float(len(task.files["README.md"])),
        float(task.n_rows),
        float(len(task.columns)),
        float(len(task.pre_treatment_columns)),
        float(post),
        float(cells),
        float(task.generation_attempts),
        float(sum(len(v) for k, v in task.files.items() if k not in ("data.csv", "README.md"))),
    )


def cross_validated_auc(features: Sequence[Sequence[float]], labels: Sequence[bool]) -> float:
    """The AUC of out-of-fold logistic scores (standardized features, fixed folds)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import KFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = np.asarray(features, dtype=float), np.asarray(labels, dtype=bool)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    scores = cross_val_predict(model, x, y, cv=KFold(LEAKAGE_FOLDS), method="predict_proba")[:, 1]
    return float(roc_auc_score(y, scores))


def leakage(what: str, features: Sequence[Sequence[float]], labels: Sequence[bool]) -> Leakage:
    positive = int(sum(labels))
    return Leakage(
        what=what,
        n_positive=positive,
        n_negative=len(labels) - positive,
        auc=cross_validated_auc(features, labels),
    )


def gain_check(group: str, gain: Paired, alpha: float) -> Check:
    """Fails when the probe's gain over honest is shown above BAYES_GAIN_TARGET: its
    one-sided (1 - alpha) lower bound is over the target.

    (Not a demonstration that the gain is below the target: the interval score's miss
    penalty makes the paired differences heavy-tailed, a few tasks near an interval's
    end carrying most of the variance, and at the audits' sizes such a test would spend
    the whole 1% budget on its power shortfall. The report gives the gain and its SE
    beside the check.)"""
    se = gain.diff_sd / math.sqrt(gain.n) if gain.n else math.inf
    low = gain.diff_mean - float(norm.isf(alpha)) * se
    return Check(
        name=f"knowing the generator gains at most {BAYES_GAIN_TARGET} a task ({group})",
        test="one-sided paired z-test of the bayes-prior probe's gain against the target",
        passed=low <= BAYES_GAIN_TARGET,
        detail=f"{gain.diff_mean:+.4f} +- {se:.4f} (lower bound {low:+.4f})",
        false_alarm=alpha,
    )


def leakage_check(group: str, found: Leakage, alpha: float) -> Check:
    """Fails when the staged-only AUC is above chance by more than z_(1-alpha) SEs."""
    limit = 0.5 + float(norm.isf(alpha)) * found.chance_se
    return Check(
        name=f"staged metadata does not tell {found.what} ({group})",
        test=f"cross-validated AUC ({LEAKAGE_FOLDS} folds) against chance, one-sided",
        passed=found.auc <= limit,
        detail=f"AUC {found.auc:.3f} (limit {limit:.3f}; {found.n_positive} vs {found.n_negative})",
        false_alarm=alpha,
    )


def efficiency_check(group: str, gap: Paired, alpha: float) -> Check:
    """Fails when the efficient analyst (OLS without instruments and irrelevant
    columns, its own 90% interval) is shown to score below the honest reference:
    an anchor taken from the reference's own width did that (issue 24)."""
    se = gap.diff_sd / math.sqrt(gap.n) if gap.n else math.inf
    high = gap.diff_mean + float(norm.isf(alpha)) * se
    return Check(
        name=f"a more efficient analyst is not punished ({group})",
        test="one-sided paired z-test of efficient OLS minus honest against 0",
        passed=high >= 0.0,
        detail=f"{gap.diff_mean:+.4f} +- {se:.4f} (upper bound {high:+.4f})",
        false_alarm=alpha,
    )


def knowledge_table(
    bayes: dict[str, Paired], found: dict[str, Leakage], efficient: dict[str, Paired]
) -> Table:
    """What knowing the generator buys, per group: the docs' and the terminal's table."""

    def cell(gap: Paired | None) -> str:
        if gap is None:
            return ""
        return f"{gap.diff_mean:+.4f} ({gap.diff_sd / math.sqrt(gap.n):.4f})"

    rows = []
    for group, gain in bayes.items():
        leak = found.get(group)
        auc = f"{leak.auc:.3f} ({leak.n_positive} vs {leak.n_negative})" if leak else ""
        rows.append((group, f"{gain.n:,}", cell(gain), cell(efficient.get(group)), auc))
    header = (
        "group",
        "tasks",
        "bayes-prior minus honest (SE)",
        "efficient OLS minus honest (SE)",
        "staged-metadata AUC",
    )
    return table(header, "lrrrr", rows)


def knowledge_checks(report: dict[str, Any], alpha: float) -> list[Check]:
    """The Bayes probe's gain and the leakage checks (knowledge.py), any audit."""
    checks = [gain_check(g, gain, alpha) for g, gain in report.get("bayes_prior", {}).items()]
    checks += [leakage_check(g, found, alpha) for g, found in report.get("leakage", {}).items()]
    checks += [
        efficiency_check(g, gap, alpha) for g, gap in report.get("efficient_ols", {}).items()
    ]
    return checks
