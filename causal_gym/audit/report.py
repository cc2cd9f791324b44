"""The audit report: the committed numbers and the checks they must pass.

A pydantic model because the report is a published file; `checks` turns the targets
of the design (coverage and reward bands, a 90% sweep peak, every probe below
honest) into named pass/fail lines so a regression is one glance away.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

COVERAGE_BAND = (0.88, 0.92)
REWARD_BAND = (0.75, 0.90)
PRIOR_SKILL_TOLERANCE = 0.02
PEAK_LEVEL = 0.90


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HonestSummary(_Model):
    n: int
    mean_reward: float
    mean_estimand_reward: float
    mean_clipped_reward: float
    median_reward: float
    p05_reward: float
    coverage: float
    mean_width_ratio: float
    mean_validity: float | None = None
    mean_brier_skill: float | None = None


class WidthSweep(_Model):
    levels: tuple[float, ...]
    mean_estimand_reward: tuple[float, ...]
    coverage: tuple[float, ...]
    argmax_level: float


class NullNarrowProbe(_Model):
    n: int
    honest_mean_estimand_reward: float
    narrow_mean_estimand_reward: float
    honest_mean_reward: float
    narrow_mean_reward_with_oracle_probability: float


class PriorOnlyProbe(_Model):
    n: int
    mean_brier_skill: float
    honest_mean_brier_skill: float
    mean_reward: float


class HackProbe(_Model):
    mean_reward: float
    per_family: dict[str, float]
    share_of_tasks_beating_honest: float


class Check(_Model):
    name: str
    passed: bool
    detail: str


class Materialization(_Model):
    requested: int
    materialized: int
    failed: int
    failed_ids: tuple[str, ...]
    mean_generation_attempts: float


class AuditReport(_Model):
    namespace: str
    per_family: int
    key_fingerprint: str
    materialization: Materialization
    honest: dict[str, HonestSummary]
    width_sweep: dict[str, WidthSweep]
    structural_null_narrow: NullNarrowProbe
    prior_only_null: PriorOnlyProbe
    hack_probes: dict[str, HackProbe]
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def evaluate_checks(report: dict) -> list[Check]:
    """Named checks over a report under construction (a plain dict of the models)."""
    checks: list[Check] = []
    mat: Materialization = report["materialization"]
    checks.append(
        Check(
            name="all tasks materialized",
            passed=mat.failed == 0,
            detail=f"{mat.failed} of {mat.requested} failed",
        )
    )
    honest: dict[str, HonestSummary] = report["honest"]
    for family, summary in honest.items():
        lo, hi = COVERAGE_BAND
        checks.append(
            Check(
                name=f"coverage in band ({family})",
                passed=lo <= summary.coverage <= hi,
                detail=f"{summary.coverage:.4f} vs [{lo}, {hi}]",
            )
        )
        lo, hi = REWARD_BAND
        checks.append(
            Check(
                name=f"honest reward in band ({family})",
                passed=lo <= summary.mean_reward <= hi,
                detail=f"{summary.mean_reward:.4f} vs [{lo}, {hi}]",
            )
        )
    for family, sweep in report["width_sweep"].items():
        checks.append(
            Check(
                name=f"width sweep peaks at 0.90 ({family})",
                passed=sweep.argmax_level == PEAK_LEVEL,
                detail=f"argmax at {sweep.argmax_level}",
            )
        )
    narrow: NullNarrowProbe = report["structural_null_narrow"]
    narrow_value, honest_value = (
        narrow.narrow_mean_estimand_reward,
        narrow.honest_mean_estimand_reward,
    )
    checks.append(
        Check(
            name="1%-of-scale interval on structural nulls below honest",
            passed=narrow_value < honest_value,
            detail=f"{narrow_value:.4f} < {honest_value:.4f}",
        )
    )
    prior: PriorOnlyProbe = report["prior_only_null"]
    checks.append(
        Check(
            name="prior-only forecast has Brier skill ~0",
            passed=abs(prior.mean_brier_skill) <= PRIOR_SKILL_TOLERANCE,
            detail=f"{prior.mean_brier_skill:+.4f}",
        )
    )
    overall = honest["overall"].mean_reward
    for name, probe in report["hack_probes"].items():
        checks.append(
            Check(
                name=f"{name} below honest",
                passed=probe.mean_reward < overall,
                detail=f"{probe.mean_reward:.4f} < {overall:.4f}",
            )
        )
        for family, value in probe.per_family.items():
            checks.append(
                Check(
                    name=f"{name} below honest ({family})",
                    passed=value < honest[family].mean_reward,
                    detail=f"{value:.4f} < {honest[family].mean_reward:.4f}",
                )
            )
    return checks
