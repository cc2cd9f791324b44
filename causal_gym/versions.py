"""The two versions every task and score carries, on the ground floor: everything
that generates or scores reads them, and they read nothing but the namespaces.

GENERATOR_VERSION: which bytes a (key, task id) pair stages. Bumped only when a change
is meant to change staged tasks. A frozen split keeps the version it was frozen with
forever: its manifest records it, FROZEN_VERSIONS declares it, and the generator keeps
every version a frozen split uses, so `manifest verify` reproduces the split byte for
byte. Train tasks (fresh-key streams, the audits) use the newest. History
(CHANGELOG.md has the why):

1. the first frozen eval-v1.
2. values respect the data dictionary: counts, integer scores and bounded scales
   for exogenous roots only, every other column placed within its unit's bounds.
   eval-v1, eval-v2 and eval-expert-v1 are frozen at this version.
3. effect sizes from a keyed hyperprior (plan/effects.py): the ATE uniform on
   [-A, A], A log-uniform on [1, 3], where version 2 had |ATE| uniform on
   [0.10, 1.50]; the README of an ate or adjustment task says so. obs_vs_rct's
   confounding bias uniform between 0.5 and 4 combined SEs, its confounder adding no
   outcome variance, and the README saying so; every obs_vs_rct extract has an
   unobserved cause of its treatment (a confounder only in the confounded class), so
   treatment assignment and generation attempts do not tell the classes; cate's and
   mediation's READMEs disclose their effect sizes too. eval-v3 (the design families
   iv, did, rdd) is frozen at this version.
4. the real tier (causal_gym/realdata/): a disclosed share of the train tasks of the
   families with a real tier resample their pre-treatment columns from a real table;
   every other task stages the bytes version 3 staged. eval-real-v1 is frozen at this
   version.
5. the real tier in the design families with a real table: rdd's running variable
   from PANES (Manacorda, Miguel and Vigorito 2011), did's state panel from the
   castle-doctrine data (Cheng and Hoekstra 2013); every other train task stages the
   bytes version 4 staged.
6. mediation's indirect effect drawn uniformly between -B and B, B log-uniform on
   [0.2, 0.8], the README saying so (families/mediation/hooks.py): version 3-5's
   product of two weights bounded away from zero left a gap around zero with sharp
   edges that a posterior under the disclosure exploited on the hard tier (issue 41).
   Every other train task stages the bytes version 5 staged.

Version 7 is written but not yet the train generator: iv's confounding drawn through
what OLS reports (families/iv/confounding.py, issue 54). `build_task(...,
generator_version=7)` replays it for measurement; GENERATOR_VERSION moves to 7 with
the design audit's re-run on it, so no committed report is left describing a
generator the train tasks no longer run.

REWARD_VERSION: which truths and which formula scored an answer. A change to a truth
the agent never sees (an anchor width, an interval level, a weight) or to the formula
moves rewards without moving a staged byte, so it gets its own number. Every score
carries it: run records, run reports, stream scores, verifiers metrics, audit reports
and baseline tables, and a record written before the number existed reads as version
1. Rewards of different versions are never averaged together (a run report refuses
to). History (CHANGELOG.md has the why and the measurements):

1. the first calibrated reward: the linear tiers anchored on the reference's own 90%
   width, scored at the 88% interval level.
2. the linear tiers of the seed's families anchored on OLS on the optimal valid
   adjustment set (generate/ols_anchor.py), scored at the proper 90% level as the
   expert tier is.
3. cate (per level), mediation (per effect) and obs_vs_rct anchored on a property of
   the task, the 90% width of the efficient linear estimator computed from the hidden
   SCM at the staged size (generate/estimand_anchor.py and each family's anchor.py),
   scored at the proper 90% level; every other family's truths are version 2's,
   unchanged. Train tasks and streams only: a frozen split keeps the reward version
   its baseline tables were made with (FROZEN_REWARD_VERSIONS), truths and all, so
   its numbers stay comparable across releases.
"""

from __future__ import annotations

from typing import Final

from causal_gym.namespaces import Namespace

GENERATOR_VERSION: Final = 6
#: The version each frozen split was frozen with (its manifest records the same).
FROZEN_VERSIONS: Final = {
    Namespace.EVAL_V1: 2,
    Namespace.EVAL_V2: 2,
    Namespace.EVAL_EXPERT_V1: 2,
    Namespace.EVAL_V3: 3,
    Namespace.EVAL_REAL_V1: 4,
}


#: The first generator version whose iv draws confounding through what OLS reports
#: (families/iv/confounding.py): iv's generator and the audit's iv probe both read it.
IV_NEUTRAL_CONFOUNDING_VERSION: Final = 7


def generator_version(namespace: str) -> int:
    """The version that generates a namespace's tasks: a frozen split's own, else the
    newest."""
    return FROZEN_VERSIONS.get(Namespace(namespace), GENERATOR_VERSION)


#: The newest reward version: train tasks' and streams'.
REWARD_VERSION: Final = 3
#: The reward version each frozen split is scored with (its baseline tables say so).
FROZEN_REWARD_VERSIONS: Final = {
    Namespace.EVAL_V1: 2,
    Namespace.EVAL_V2: 2,
    Namespace.EVAL_EXPERT_V1: 2,
    Namespace.EVAL_V3: 2,
    Namespace.EVAL_REAL_V1: 2,
}
#: The first reward version whose multi-estimand families anchor on the task.
TASK_ANCHOR_REWARD_VERSION: Final = 3
#: What a score written before reward versions existed was scored with.
UNVERSIONED = 1


def reward_version(namespace: str) -> int:
    """The reward version that scores a namespace's tasks: a frozen split's own, else
    the newest."""
    return FROZEN_REWARD_VERSIONS.get(Namespace(namespace), REWARD_VERSION)


def task_reward_version(task_id: str) -> int:
    """The reward version of the namespace a task id names (its first part)."""
    return reward_version(task_id.split(":", 1)[0])
