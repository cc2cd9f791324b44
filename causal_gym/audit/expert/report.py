"""The expert tier audit's report: per-family honest and linear-OLS summaries, the
width sweep, the probes, and the checks evaluated over them.

Same statistics and 1% false-alarm budget as the other suites (report.py, checks.py). What is
new is a second kind of demonstration: linear OLS's coverage shown below
LINEAR_COVERAGE_LIMIT with an exact one-sided binomial bound, so the report proves
the tier punishes the method that is optimal everywhere else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from causal_gym.audit import stats
from causal_gym.audit.checks import (
    DEMONSTRATION_LEVEL,
    Check,
    CoveredSummary,
    Leakage,
    Model,
    Paired,
    RewardSummary,
    WidthSweep,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
)
from causal_gym.audit.expert.rows import EXPERT_PROBES, ExpertRow
from causal_gym.audit.knowledge import knowledge_checks
from causal_gym.audit.report import SuiteReport, seal
from causal_gym.audit.suite import AuditRun
from causal_gym.audit.summary import (
    block_skill,
    family_frame,
    forecast_fields,
    null_leakage,
    reward_fields,
)
from causal_gym.contracts.families import contract_of

LINEAR_COVERAGE_LIMIT = 0.6


class ExpertSummary(RewardSummary, CoveredSummary):
    linear_covered: int
    linear_coverage: float
    linear_mean_width_ratio: float


class PriorBlocks(Model):
    """null_detect's disclosed prior: its largest |mean Brier skill| over any key's
    whole blocks of 20 (exactly 0 by construction)."""

    whole_blocks: int
    max_abs_block_skill: float


class ExpertReport(SuiteReport):
    families: dict[str, ExpertSummary]
    width_sweep: dict[str, WidthSweep]
    hack_probes: dict[str, dict[str, Paired]]  # family -> probe -> probe minus honest
    prior: PriorBlocks | None
    #: Staged-only leakage of null_detect's structural nulls.
    leakage: dict[str, Leakage] = Field(default_factory=dict)


def expert_summary(rows: list[ExpertRow]) -> ExpertSummary:
    return ExpertSummary(
        **reward_fields(rows),
        **forecast_fields(rows),
        covered=int(sum(r.covered for r in rows)),
        coverage=float(np.mean([r.covered for r in rows])),
        linear_covered=int(sum(r.linear_covered for r in rows)),
        linear_coverage=float(np.mean([r.linear_covered for r in rows])),
        linear_mean_width_ratio=float(np.mean([r.linear_width_ratio for r in rows])),
    )


def prior_blocks(rows: list[ExpertRow], labels: list[str], per_family: int) -> PriorBlocks | None:
    scored = [r for r in rows if r.prior_skill is not None]
    whole = per_family // contract_of("null_detect").block_size
    if not scored or not whole:
        return None
    return PriorBlocks(
        whole_blocks=whole * len(labels),
        max_abs_block_skill=block_skill(scored, labels, per_family),
    )


def summarize(run: AuditRun) -> ExpertReport:
    numbers, groups = family_frame(run, expert_summary, lambda _family: EXPERT_PROBES)
    # Whole blocks of 20 consecutive ids exist only where every id is audited (the
    # frozen split's namespace); the train expert tier is a keyed fifth of the ids.
    whole = run.namespace != "train"
    labels = list(run.fingerprints)
    numbers["prior"] = prior_blocks(list(run.rows), labels, run.per_family) if whole else None
    numbers["leakage"] = null_leakage(groups.get("null_detect", []))
    # coverage and sweep per family, and the knowledge checks
    consistency = 2 * len(groups) + len(numbers["bayes_prior"]) + len(numbers["leakage"])
    return seal(numbers, ExpertReport, evaluate, consistency)


def linear_coverage_check(family: str, s: ExpertSummary) -> Check:
    verdict = stats.share_shown_below(
        s.linear_covered, s.n, LINEAR_COVERAGE_LIMIT, DEMONSTRATION_LEVEL
    )
    return Check(
        name=f"linear OLS coverage below {LINEAR_COVERAGE_LIMIT} ({family})",
        test=f"one-sided exact binomial bound at {DEMONSTRATION_LEVEL} (demonstration)",
        passed=verdict.passed,
        detail=verdict.detail,
        false_alarm=verdict.false_alarm,
    )


def evaluate(report: dict[str, Any]) -> list[Check]:
    """Named checks from the report's stored statistics alone (a committed file can be
    re-checked)."""
    alpha = report["per_check_alpha"]
    checks = materialized_checks(report["keys"])
    for family, s in report["families"].items():
        checks.append(coverage_check(family, s.covered, s.n, alpha))
        checks.append(sweep_check(family, report["width_sweep"][family], alpha))
        checks.append(linear_coverage_check(family, s))
        for name, gap in report["hack_probes"][family].items():
            checks.append(below_check(f"{name} below honest ({family})", gap))
    prior: PriorBlocks | None = report["prior"]
    if prior is not None:
        checks.append(
            Check(
                name="the disclosed prior has Brier skill exactly 0 on whole blocks (null_detect)",
                test="exact",
                passed=prior.max_abs_block_skill <= 1e-9,
                detail=f"largest |mean skill| {prior.max_abs_block_skill:.1e} "
                f"over {prior.whole_blocks} blocks",
                false_alarm=0.0,
            )
        )
    checks += knowledge_checks(report, alpha)
    checks.append(powered_check(checks))
    return checks
