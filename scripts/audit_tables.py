"""Print the README's audit tables from a report, so the prose never drifts from it.

.venv/bin/python scripts/audit_tables.py [causal_gym/audit_report.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

from causal_gym.audit.knowledge import knowledge_table
from causal_gym.audit.report import AuditReport

DEFAULT = Path(__file__).resolve().parents[1] / "causal_gym" / "audit_report.json"


def main() -> None:
    report = AuditReport.model_validate_json(
        Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT).read_text()
    )
    keys = ", ".join(f"{k.label} ({k.fingerprint})" for k in report.keys)
    print(f"keys: {keys}; {report.per_family} tasks per family and key\n")
    print("| group | tasks | honest reward | coverage | AIPW reward | AIPW coverage |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for group, h in report.honest.items():
        third = report.third_party.get(group)
        aipw = f"{third.reward.mean:.4f} | {third.coverage:.4f}" if third else " | "
        print(f"| {group} | {h.n} | {h.mean_reward:.4f} | {h.coverage:.4f} | {aipw} |")
    print("\n| probe (pooled) | reward | minus honest | beats honest on |")
    print("| --- | ---: | ---: | ---: |")
    for name, probe in report.hack_probes.items():
        overall = probe.by_group["overall"]
        print(
            f"| {name} | {overall.mean:.4f} | {overall.diff_mean:+.4f} | "
            f"{probe.share_of_tasks_beating_honest:.1%} |"
        )
    sweep = report.width_sweep["overall"]
    cells = ", ".join(
        f"{lv:.2f}: {m:.4f}" for lv, m in zip(sweep.levels, sweep.mean_estimand_reward, strict=True)
    )
    print(f"\nwidth sweep (overall mean estimand reward): {cells}")
    narrow = report.structural_null_narrow
    print(
        f"\nstructural nulls: n={narrow.estimand.n}, narrow estimand "
        f"{narrow.estimand.mean:.4f} vs honest {narrow.honest_mean_estimand_reward:.4f}; "
        f"total with oracle probability {narrow.narrow_mean_reward_with_oracle_probability:.4f}"
        f" vs honest {narrow.honest_mean_reward:.4f}"
    )
    prior = report.prior_only_null
    print(
        f"prior-only: {prior.n} tasks, {prior.whole_blocks} whole blocks, max |block skill| "
        f"{prior.max_abs_block_brier_skill:.1e}; honest skill {prior.honest_mean_brier_skill:.4f}"
    )
    print(f"\nreward version {report.reward_version}; what knowing the generator buys:")
    print("\n".join(knowledge_table(report.bayes_prior, report.leakage, report.efficient_ols)))
    failed = [c.name for c in report.checks if not c.passed]
    print(
        f"\n{len(report.checks)} checks, failing: {failed or 'none'}; per-check level "
        f"{report.per_check_alpha:.1e}; total false-alarm {report.total_false_alarm:.3%}"
    )


if __name__ == "__main__":
    main()
