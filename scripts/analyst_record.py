"""The analyst run's record: docs/demo/analyst/analyst_run.json gathers the
registration's digest, the warm start's gate, the GRPO and placebo curves and the
held-out evaluation, and analyst_curve.png is drawn from that file alone.

    python scripts/analyst_record.py
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from analyst_plot import plot

DOCS = Path(__file__).resolve().parent.parent / "docs" / "demo" / "analyst"


def read(name: str) -> Any:
    path = DOCS / name
    return json.loads(path.read_text()) if path.is_file() else None


def main() -> None:
    prereg = (DOCS / "preregistration.json").read_bytes()
    gate = read("gate.json")
    report = {
        "preregistration_sha256": hashlib.sha256(prereg).hexdigest(),
        "gate": {k: gate[k] for k in ("checks", "pass", "option_shares", "mean_clipped_reward")}
        if gate
        else None,
        "grpo": read("grpo/steps.json"),
        "placebo": read("placebo/steps.json"),
        "evaluation": read("evaluation.json"),
    }
    (DOCS / "analyst_run.json").write_text(json.dumps(report, indent=1) + "\n")
    plot(report, DOCS / "analyst_curve.png")
    print(f"wrote {DOCS / 'analyst_run.json'} and analyst_curve.png")


if __name__ == "__main__":
    main()
