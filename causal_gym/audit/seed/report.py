"""The seed suite's report (ate, adjustment, null_detect): the rows summarized per
family, per key and pooled, and the checks those numbers must pass (the shared
statistics and checks are in checks.py and knowledge.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from causal_gym.audit import stats
from causal_gym.audit.checks import (
    AT_LEAST_COVERAGE,
    THIRD_PARTY_COVERAGE_BAND,
    THIRD_PARTY_REWARD_TOLERANCE,
    Check,
    CoveredSummary,
    Leakage,
    Model,
    Paired,
    RewardSummary,
    WidthSweep,
    band_check,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
    verdict_check,
)
from causal_gym.audit.knowledge import knowledge_checks
from causal_gym.audit.policies import HACK_PROBES
from causal_gym.audit.report import SuiteReport, seal
from causal_gym.audit.seed.rows import SeedRow
from causal_gym.audit.slices import slice_check_count, slice_checks, summarize_slices
from causal_gym.audit.suite import AuditRun
from causal_gym.audit.summary import (
    block_skill,
    forecast_fields,
    key_runs,
    null_leakage,
    paired,
    reward_fields,
    width_sweep,
)
from causal_gym.contracts.families import contract_of
from causal_gym.versions import generator_version, reward_version


class HonestSummary(RewardSummary, CoveredSummary):
    mean_clipped_reward: float


class HackProbe(Model):
    by_group: dict[str, Paired]  # families and "overall"
    share_of_tasks_beating_honest: float


class NullNarrowProbe(Model):
    estimand: Paired  # oracle 0 with a 1%-of-scale interval, estimand reward
    honest_mean_estimand_reward: float
    honest_mean_reward: float
    narrow_mean_reward_with_oracle_probability: float


class PriorOnlyProbe(Model):
    n: int
    whole_blocks: int  # blocks of 20 null_detect ids, over all keys
    max_abs_block_brier_skill: float  # the largest |mean skill| of any key's whole blocks
    honest_mean_brier_skill: float
    mean_reward: float


class ThirdParty(Model):
    """The AIPW analyst (reference/aipw.py): reward paired with the reference's."""

    reward: Paired
    covered: int
    coverage: float


class SeedReport(SuiteReport):
    honest: dict[str, HonestSummary]  # "ate", "ate/default", ..., "overall"
    width_sweep: dict[str, WidthSweep]  # families and "overall", pooled over keys
    hack_probes: dict[str, HackProbe]
    structural_null_narrow: NullNarrowProbe
    prior_only_null: PriorOnlyProbe
    third_party: dict[str, ThirdParty]  # families and "overall", linear tiers only
    #: Audited tasks of the expert tier (answered by flexible.py, anchored on the
    #: efficiency bound); 0 in reports made before the tier existed.
    expert_tasks: int = 0
    #: Staged-only leakage of the hidden class, by family (null_detect's nulls).
    leakage: dict[str, Leakage] = Field(default_factory=dict)
    #: OLS without instruments and irrelevant columns minus honest (linear ate and
    #: adjustment tasks): the anchor must not punish the more efficient analyst.
    efficient_ols: dict[str, Paired] = Field(default_factory=dict)


def consistency_checks(report: dict[str, Any]) -> int:
    """How many consistency checks the report has (the Bonferroni denominator)."""
    coverage = len(report["honest"])  # every group, per key and pooled
    bands = len([g for g in report["honest"] if "/" not in g])  # pooled groups only
    sweeps = len(report["width_sweep"])
    third = 2 * len([g for g in report["third_party"] if g != "overall"])
    knowledge = sum(len(report.get(k, {})) for k in ("bayes_prior", "leakage", "efficient_ols"))
    return (
        coverage + bands + sweeps + third + knowledge + slice_check_count(report.get("slices", {}))
    )


def evaluate(report: dict[str, Any]) -> list[Check]:
    """Named checks over a report under construction (a plain dict of the models)."""
    alpha = report["per_check_alpha"]
    checks = materialized_checks(report["keys"])
    honest: dict[str, HonestSummary] = report["honest"]
    checks += [coverage_check(g, s.covered, s.n, alpha) for g, s in honest.items()]
    checks += [
        band_check(g, s.mean_reward, s.sd_reward, s.n, alpha)
        for g, s in honest.items()
        if "/" not in g
    ]
    checks += [sweep_check(g, sweep, alpha) for g, sweep in report["width_sweep"].items()]
    for name, probe in report["hack_probes"].items():
        checks += [
            below_check(f"{name} below honest ({group})", gap)
            for group, gap in probe.by_group.items()
        ]
    narrow: NullNarrowProbe = report["structural_null_narrow"]
    checks.append(
        below_check(
            "1%-of-scale oracle interval on structural nulls below honest (estimand reward)",
            narrow.estimand,
        )
    )
    prior: PriorOnlyProbe = report["prior_only_null"]
    checks.append(
        Check(
            name="prior-only forecast has Brier skill exactly 0 on whole blocks",
            test="exact",
            passed=prior.whole_blocks > 0 and prior.max_abs_block_brier_skill <= 1e-9,
            detail=f"largest |mean skill| {prior.max_abs_block_brier_skill:.1e} "
            f"over {prior.whole_blocks} blocks",
            false_alarm=0.0,
        )
    )
    for group, third in report["third_party"].items():
        if group == "overall":
            continue
        r = third.reward
        checks.append(
            verdict_check(
                f"AIPW reward within {THIRD_PARTY_REWARD_TOLERANCE} of the reference ({group})",
                "interval of the paired difference misses the tolerance",
                stats.within_of(r.diff_mean, r.diff_sd, r.n, THIRD_PARTY_REWARD_TOLERANCE, alpha),
            )
        )
        # null_detect's AIPW answer is a posterior widened to a width floor, as the
        # reference's is: it covers at least, not exactly, its nominal share.
        low, high = THIRD_PARTY_COVERAGE_BAND
        band = (low, 1.0) if group in AT_LEAST_COVERAGE else (low, high)
        checks.append(
            verdict_check(
                f"AIPW coverage in {band} ({group})",
                "exact binomial interval misses the band",
                stats.share_interval(third.covered, r.n, band, alpha),
            )
        )
    checks += knowledge_checks(report, alpha)
    checks += slice_checks(report.get("slices", {}), alpha)
    checks.append(powered_check(checks))
    return checks


def honest_summary(rows: list[SeedRow]) -> HonestSummary:
    covered = sum(r.covered for r in rows)
    return HonestSummary(
        **reward_fields(rows),
        **forecast_fields(rows),
        mean_clipped_reward=float(np.mean([r.clipped_reward for r in rows])),
        covered=int(covered),
        coverage=covered / len(rows),
    )


def efficient_gaps(families: dict[str, list[SeedRow]]) -> dict[str, Paired]:
    """Efficient OLS minus honest, per family, over the tasks that have it."""
    gaps = {}
    for family, members in families.items():
        scored = [(r.efficient_reward, r.reward) for r in members if r.efficient_reward is not None]
        if scored:
            gaps[family] = paired([e for e, _ in scored], [h for _, h in scored])
    return gaps


def summarize(run: AuditRun) -> SeedReport:
    rows: list[SeedRow] = list(run.rows)
    labels, per_family = list(run.fingerprints), run.per_family
    families = {f: [r for r in rows if r.family == f] for f in run.families}
    families = {f: g for f, g in families.items() if g}
    pooled = families | {"overall": rows}
    groups: dict[str, list[SeedRow]] = {}
    for family, members in families.items():
        groups[family] = members
        if len(labels) > 1:
            for label in labels:
                groups[f"{family}/{label}"] = [r for r in members if r.key == label]
    groups["overall"] = rows
    # The third-party analyst's models are linear: it is compared on the linear tiers
    # (the expert tier's own audit shows what linear models do there).
    linear = {g: [r for r in m if not r.expert] for g, m in pooled.items()}
    nulls = [r for r in rows if r.narrow_estimand is not None]
    nd = [r for r in rows if r.prior_skill is not None]
    numbers: dict[str, Any] = {
        "namespace": run.namespace,
        "per_family": per_family,
        "keys": key_runs(rows, run.failed, run.fingerprints, per_family * len(run.families)),
        "honest": {name: honest_summary(g) for name, g in groups.items() if g},
        "width_sweep": {name: width_sweep(g) for name, g in pooled.items()},
        "hack_probes": {
            name: HackProbe(
                by_group={
                    g: paired([r.probes[name] for r in m], [r.reward for r in m])
                    for g, m in pooled.items()
                },
                share_of_tasks_beating_honest=float(
                    np.mean([r.probes[name] > r.reward for r in rows])
                ),
            )
            for name in HACK_PROBES
        },
        "structural_null_narrow": NullNarrowProbe(
            estimand=paired(
                [r.narrow_estimand for r in nulls],  # type: ignore[misc]
                [r.estimand_reward for r in nulls],
            ),
            honest_mean_estimand_reward=float(np.mean([r.estimand_reward for r in nulls])),
            honest_mean_reward=float(np.mean([r.reward for r in nulls])),
            narrow_mean_reward_with_oracle_probability=float(
                np.mean([r.narrow_reward for r in nulls])
            ),
        ),
        "prior_only_null": PriorOnlyProbe(
            n=len(nd),
            whole_blocks=len(labels) * (per_family // contract_of("null_detect").block_size),
            max_abs_block_brier_skill=block_skill(nd, labels, per_family),
            honest_mean_brier_skill=float(np.mean([r.brier_skill or 0.0 for r in nd])),
            mean_reward=float(np.mean([r.prior_reward for r in nd])),
        ),
        "third_party": {
            g: ThirdParty(
                reward=paired([r.aipw_reward for r in m], [r.reward for r in m]),
                covered=int(sum(r.aipw_covered for r in m)),
                coverage=float(np.mean([r.aipw_covered for r in m])),
            )
            for g, m in linear.items()
        },
        "expert_tasks": sum(r.expert for r in rows),
        "reward_version": reward_version(run.namespace),
        "generator_version": generator_version(run.namespace),
        "bayes_prior": {
            g: paired([r.bayes_reward for r in m], [r.reward for r in m]) for g, m in pooled.items()
        },
        "leakage": null_leakage(nd),
        "efficient_ols": efficient_gaps(families),
        "slices": summarize_slices(rows, lambda r: {"interval": r.covered}),
    }
    return seal(numbers, SeedReport, evaluate, consistency_checks(numbers))
