"""The honest answer to any staged task: the reference analyst (analyst.py) on the
linear tiers, flexible.py's AIPW on the expert tier (the README says relationships may
be nonlinear), the posterior on null_detect, and estimands.py for the multi-estimand
families.

Self-contained like the rest of the kit: it is copied into sandboxes beside the files
its family needs (a family's `reference_kit`) and run there as
`python answer.py /workspace`, which prints the submission JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

try:  # inside the package
    from causal_gym.reference import analyst
except ImportError:  # copied into a sandbox next to analyst.py
    import analyst  # type: ignore[no-redef]

if TYPE_CHECKING:
    import pandas as pd


def honest_fit(staged: pd.DataFrame, dictionary: analyst.DataDictionary) -> analyst.ReferenceFit:
    """The honest fit for the task: adjusted OLS, or flexible.py's AIPW when the README
    says relationships may be nonlinear."""
    if not dictionary.nonlinear:
        return analyst.fit_reference(staged, dictionary)
    try:  # inside the package
        from causal_gym.reference.flexible import fit_flexible
    except ImportError:  # copied into a sandbox next to flexible.py
        from flexible import fit_flexible  # type: ignore[no-redef,import-not-found]
    return fit_flexible(staged, dictionary)


def reference_submission(
    fit: analyst.ReferenceFit, dictionary: analyst.DataDictionary
) -> dict[str, object]:
    """The fit's 90% interval; on `null_detect` the posterior answer under the
    disclosed prior instead (posterior.py says why: with 7 in 20 effects exactly
    zero, the calibrated interval is not the optimum, the posterior is)."""
    if dictionary.family == "null_detect":
        try:  # inside the package
            from causal_gym.reference.posterior import NULL_DETECT_PRIOR, posterior_answer
        except ImportError:  # copied into a sandbox next to posterior.py
            from posterior import (  # type: ignore[import-not-found,no-redef]
                NULL_DETECT_PRIOR,
                posterior_answer,
            )
        return dict(posterior_answer(NULL_DETECT_PRIOR, fit.estimate, fit.se, fit.width))
    answer: dict[str, object] = {
        "estimate": fit.estimate,
        "ci_lower": fit.ci_lower,
        "ci_upper": fit.ci_upper,
    }
    if dictionary.family == "adjustment":
        answer["adjustment_set"] = list(dictionary.pre_treatment)
    return answer


def analyze_directory(directory: Path) -> tuple[analyst.ReferenceFit, dict[str, object]]:
    dictionary = analyst.parse_readme((directory / "README.md").read_text(encoding="utf-8"))
    staged = analyst.read_staged((directory / "data.csv").read_bytes(), dictionary)
    fit = honest_fit(staged, dictionary)
    return fit, reference_submission(fit, dictionary)


#: Families whose reference lives in estimands.py (several estimands, or two files).
MULTI_ESTIMAND_FAMILIES = ("cate", "mediation", "obs_vs_rct")


def files_answer(files: dict[str, bytes]) -> dict[str, object]:
    """The reference submission for a task's staged files (by name), any family."""
    readme = files["README.md"].decode("utf-8")
    if "\n## Design\n" in readme:  # a design family (iv, did, rdd): designs.py
        try:  # inside the package
            from causal_gym.reference import designs
        except ImportError:  # copied into a sandbox next to designs.py
            import designs  # type: ignore[no-redef,import-not-found]
        return designs.files_answer(files)
    dictionary = analyst.parse_readme(files["README.md"].decode("utf-8"))
    if dictionary.family not in MULTI_ESTIMAND_FAMILIES:
        fit = honest_fit(analyst.read_staged(files["data.csv"], dictionary), dictionary)
        return reference_submission(fit, dictionary)
    try:  # inside the package
        from causal_gym.reference.estimands import Analysis
    except ImportError:  # copied into a sandbox next to estimands.py
        from estimands import Analysis  # type: ignore[no-redef,import-not-found]
    return Analysis.parse(files).answer()


def directory_answer(directory: Path) -> dict[str, object]:
    """files_answer for the task staged in `directory`."""
    return files_answer(
        {p.name: p.read_bytes() for p in directory.iterdir() if p.suffix in (".csv", ".md")}
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python answer.py DIR  (DIR holds the staged files)", file=sys.stderr)
        return 2
    try:
        answer = directory_answer(Path(args[0]))
    except (OSError, ValueError, KeyError) as exc:
        print(f"reference analyst: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
