"""Write causal_gym/reference/estimand_priors.json: the effect priors the public
generator induces on the multi-estimand families' estimands, for each generator
version (causal_gym/audit/effect_priors.py draws them). The `bayes-prior` probe reads
the file in the audit and as a scripted agent in a sandbox; tests/test_generator_knowledge.py
fails when the committed file differs from what the generator gives.

    .venv/bin/python scripts/estimand_priors.py
"""

from __future__ import annotations

import json
from pathlib import Path

from causal_gym.audit.effect_priors import priors_table
from causal_gym.reference.estimand_probes import PRIORS_FILE

OUT = Path(__file__).resolve().parents[1] / "causal_gym" / "reference" / PRIORS_FILE


def main() -> None:
    OUT.write_text(json.dumps(priors_table(), indent=1, sort_keys=True) + "\n", "utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
