"""Print the README's tables for the expert tier's audit from its report.

.venv/bin/python scripts/audit_tables_expert.py [causal_gym/audit_report_expert.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

from causal_gym.audit.expert_report import ExpertAuditReport
from causal_gym.audit.knowledge import knowledge_table

DEFAULT = Path(__file__).resolve().parents[1] / "causal_gym" / "audit_report_expert.json"


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
    report = ExpertAuditReport.model_validate_json(path.read_text())
    keys = ", ".join(f"{k.label} ({k.fingerprint})" for k in report.keys)
    print(f"keys: {keys}; {report.per_family} tasks per family and key\n")
    print(
        "| family | tasks | honest reward | honest coverage | honest width / r "
        "| linear OLS reward | linear OLS coverage |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for family, s in report.families.items():
        linear = report.hack_probes[family]["linear_ols"]
        print(
            f"| {family} | {s.n:,} | {s.mean_reward:.4f} | {s.coverage:.3f} | "
            f"{s.mean_width_ratio:.3f} | {linear.mean:.4f} | {s.linear_coverage:.3f} |"
        )
    print("\n| family | probe | reward | minus honest |")
    print("| --- | --- | ---: | ---: |")
    for family, probes in report.hack_probes.items():
        for name, gap in probes.items():
            print(f"| {family} | {name} | {gap.mean:.4f} | {gap.diff_mean:.4f} |")
    for family, sweep in report.width_sweep.items():
        cells = ", ".join(
            f"{level:.2f}: {value:.4f}"
            for level, value in zip(sweep.levels, sweep.mean_estimand_reward, strict=True)
            if level in (0.80, 0.88, 0.89, 0.90, 0.91, 0.92, 0.95)
        )
        print(f"\nwidth sweep {family}: {cells}")
    print(f"\nreward version {report.reward_version}; what knowing the generator buys:")
    print("\n".join(knowledge_table(report.bayes_prior, report.leakage, {})))
    failing = [c.name for c in report.checks if not c.passed]
    print(
        f"\n{len(report.checks)} checks, failing: {', '.join(failing) or 'none'}; per-check "
        f"level {report.per_check_alpha:.1e}; total false-alarm {report.total_false_alarm:.3%}"
    )


if __name__ == "__main__":
    main()
