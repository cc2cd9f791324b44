"""The multi-estimand families' effect priors, as the public generator draws them.

The eval-v2 audit's `bayes-prior` probe must know everything the public source
discloses about a task's truths. For cate's levels and mediation's three effects the
disclosed prior is not one formula but the distribution the generator's code induces
(a level's effect is the base effect plus a level's interaction; the indirect effect
a product of two drawn weights; the direct one a difference), so the probe asks the
generator itself: it draws SCMS_PER_PRIOR SCMs of the family at the generator
version of the audited namespace (public key, ids far past any split), computes
their exact truths, and turns each estimand's |value| into PRIOR_BINS equal-mass
uniform pieces with a random sign (reference/posterior.py's Prior).

The pieces are committed beside the sandbox kit (reference/estimand_priors.json,
written by scripts/estimand_priors.py and checked against this module by a test), so
the probe (reference/estimand_probes.py) runs the same in the audit and as the
`bayes-prior` scripted agent, which has no generator to ask.
"""

from __future__ import annotations

import dataclasses
import itertools
from functools import cache

import numpy as np

from causal_gym.generate.draw import plan_task
from causal_gym.generate.pipeline import draw_scm
from causal_gym.hooks import hooks_of
from causal_gym.reference.posterior import Prior
from causal_gym.rng_keys.derive import derive_streams
from causal_gym.rng_keys.keys import resolve_key
from causal_gym.task_id import TaskId

SCMS_PER_PRIOR = 3000
PRIOR_BINS = 40
#: Ids this far past index 0 belong to no split or stream anyone uses.
_FIRST_INDEX = 10**9


#: Each table entry: the namespace its SCMs are drawn in and the generator version
#: they are drawn at, and the families it covers. "generator-3" is what generators 3-5
#: drew (their READMEs carry the effect-size line); "generator-6" only mediation's,
#: whose indirect effect generator 6 draws from a smooth prior (families/mediation).
GENERATOR_ENTRIES: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "generator-2": ("eval-v2", 2, ("cate", "mediation", "obs_vs_rct")),
    "generator-3": ("train", 5, ("cate", "mediation", "obs_vs_rct")),
    "generator-6": ("train", 6, ("mediation",)),
}


def priors_table() -> dict[str, dict[str, dict[str, list[list[float]]]]]:
    """reference/estimand_priors.json's content: generator -> family -> kind -> pieces."""
    return {
        generator: {
            family: {
                kind: [list(piece) for piece in prior.pieces]
                for kind, prior in empirical_prior(namespace, family, version).items()
            }
            for family in families
        }
        for generator, (namespace, version, families) in GENERATOR_ENTRIES.items()
    }


@cache
def empirical_prior(namespace: str, family: str, version: int) -> dict[str, Prior]:
    """Estimand kind -> its prior ("level" for every cate level, else the estimand's
    name), as generator `version` draws the family's SCMs in `namespace`."""
    key = resolve_key(environ={})
    spec = hooks_of(family)
    values: dict[str, list[float]] = {}
    for i in range(SCMS_PER_PRIOR):
        tid = TaskId.parse(f"{namespace}:{family}:{_FIRST_INDEX + i}")
        plan = dataclasses.replace(plan_task(key, tid, staged_rows=1000), generator_version=version)
        scm, naming = draw_scm(plan, derive_streams(key, tid, 0))
        levels = naming.columns[scm.modifier].levels if scm.modifier is not None else ()
        for name, value in spec.estimand_values(scm, levels).items():
            kind = "level" if spec.contract.per_level_estimands else name
            values.setdefault(kind, []).append(value)
    return {kind: _pieces(np.abs(np.asarray(v))) for kind, v in values.items()}


def _pieces(magnitudes: np.ndarray) -> Prior:
    edges = np.quantile(magnitudes, np.linspace(0.0, 1.0, PRIOR_BINS + 1))
    pieces = []
    for low, high in itertools.pairwise(edges):
        if high > low:
            pieces.append((float(low), float(high)))
    weight = 1.0 / len(pieces)
    return Prior(0.0, tuple((weight, low, high) for low, high in pieces))
