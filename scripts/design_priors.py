"""Write causal_gym/audit/design/priors.json: the design families' truth priors as the
public generator induces them (causal_gym/audit/design/priors.py says how).

    PYTHONPATH=. python scripts/design_priors.py
"""

from __future__ import annotations

from causal_gym.audit.design.priors import DISCLOSED, PRIORS_PATH, draw_pieces, priors_json
from causal_gym.contracts.families import split_families


def main() -> None:
    table = {f: draw_pieces(f) for f in split_families("eval-v3") if f not in DISCLOSED}
    PRIORS_PATH.write_text(priors_json(table))
    print(f"wrote {PRIORS_PATH} ({', '.join(table)})")


if __name__ == "__main__":
    main()
