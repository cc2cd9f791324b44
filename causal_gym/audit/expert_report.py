"""The expert tier audit's report: per-family honest and linear-OLS summaries, the
width sweep, the probes, and the checks evaluated over them.

Same statistics and 1% false-alarm budget as the other audits (report.py). What is
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
    CONSISTENCY_BUDGET,
    DEMONSTRATION_LEVEL,
    Check,
    KeyRun,
    Leakage,
    Model,
    Paired,
    WidthSweep,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
)
from causal_gym.audit.expert_audit import EXPERT_PROBES, ExpertTaskAudit
from causal_gym.audit.report import knowledge_checks
from causal_gym.audit.summary import (
    block_skill,
    family_frame,
    forecast_fields,
    null_leakage,
    paired,
    reward_fields,
)
from causal_gym.families.null_detect import NULL_BLOCK_SIZE
from causal_gym.generate.version import generator_version
from causal_gym.scoring.version import REWARD_VERSION

LINEAR_COVERAGE_LIMIT = 0.6


class ExpertSummary(Model):
    n: int
    mean_reward: float
    sd_reward: float
    mean_estimand_reward: float
    median_reward: float
    p05_reward: float
    covered: int
    coverage: float
    #: Honest interval width over the anchor r (the efficiency bound's width): how far
    #: the flexible reference is from the best an analyst can do.
    mean_width_ratio: float
    linear_covered: int
    linear_coverage: float
    linear_mean_width_ratio: float
    mean_validity: float | None = None
    mean_brier_skill: float | None = None


class PriorBlocks(Model):
    """null_detect's disclosed prior: its largest |mean Brier skill| over any key's
    whole blocks of 20 (exactly 0 by construction)."""

    whole_blocks: int
    max_abs_block_skill: float


class ExpertAuditReport(Model):
    namespace: str
    per_family: int
    keys: tuple[KeyRun, ...]
    per_check_alpha: float
    families: dict[str, ExpertSummary]
    width_sweep: dict[str, WidthSweep]
    hack_probes: dict[str, dict[str, Paired]]  # family -> probe -> probe minus honest
    prior: PriorBlocks | None
    checks: tuple[Check, ...]
    total_false_alarm: float
    #: The reward version the audit scored with (1: reports made before versions).
    reward_version: int = 1
    #: The generator version that made the audited tasks (None: reports made before
    #: audits recorded it).
    generator_version: int | None = None
    #: The bayes-prior probe minus honest, by family (audit/knowledge.py).
    bayes_prior: dict[str, Paired] = Field(default_factory=dict)
    #: Staged-only leakage of null_detect's structural nulls.
    leakage: dict[str, Leakage] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def expert_summary(rows: list[ExpertTaskAudit]) -> ExpertSummary:
    return ExpertSummary(
        **reward_fields(rows),
        **forecast_fields(rows),
        covered=int(sum(r.covered for r in rows)),
        coverage=float(np.mean([r.covered for r in rows])),
        linear_covered=int(sum(r.linear_covered for r in rows)),
        linear_coverage=float(np.mean([r.linear_covered for r in rows])),
        linear_mean_width_ratio=float(np.mean([r.linear_width_ratio for r in rows])),
    )


def prior_blocks(
    rows: list[ExpertTaskAudit], labels: list[str], per_family: int
) -> PriorBlocks | None:
    scored = [r for r in rows if r.prior_skill is not None]
    whole = per_family // NULL_BLOCK_SIZE
    if not scored or not whole:
        return None
    return PriorBlocks(
        whole_blocks=whole * len(labels),
        max_abs_block_skill=block_skill(scored, labels, per_family),
    )


def summarize_expert(
    rows: list[ExpertTaskAudit],
    failed: dict[str, list[str]],
    fingerprints: dict[str, str],
    namespace: str,
    per_family: int,
    families: tuple[str, ...],
) -> ExpertAuditReport:
    report, groups = family_frame(
        rows, failed, fingerprints, namespace, per_family, families, expert_summary,
        lambda _family: EXPERT_PROBES,
    )  # fmt: skip
    # Whole blocks of 20 consecutive ids exist only where every id is audited (the
    # frozen split's namespace); the train expert tier is a keyed fifth of the ids.
    whole = namespace != "train"
    report["prior"] = prior_blocks(rows, list(fingerprints), per_family) if whole else None
    report["reward_version"] = REWARD_VERSION
    report["generator_version"] = generator_version(namespace)
    report["bayes_prior"] = {
        f: paired([r.bayes_reward for r in g], [r.reward for r in g]) for f, g in groups.items()
    }
    report["leakage"] = null_leakage(groups.get("null_detect", []))
    consistency = 2 * len(groups) + len(report["bayes_prior"]) + len(report["leakage"])
    report["per_check_alpha"] = CONSISTENCY_BUDGET / consistency  # coverage, sweep, knowledge
    report["checks"] = tuple(evaluate_expert_checks(report))
    report["total_false_alarm"] = float(sum(c.false_alarm for c in report["checks"]))
    return ExpertAuditReport.model_validate(report)


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


def evaluate_expert_checks(report: dict[str, Any]) -> list[Check]:
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
