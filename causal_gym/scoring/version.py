"""The reward's version: which truths and which formula scored an answer.

The generator's version (generate/version.py) says which bytes a task stages; this one
says how an answer to those bytes is scored. A change to a truth the agent never sees
(an anchor width, an interval level, a weight) or to the formula moves rewards without
moving a staged byte, so it gets its own number. Every score carries it: run records,
run reports, stream scores, verifiers metrics, audit reports and baseline tables, and
a record written before the number existed reads as version 1. Rewards of different
versions are never averaged together (a run report refuses to).
History (CHANGELOG.md has the why and the measurements):

1. the first calibrated reward: the linear tiers anchored on the reference's own 90%
   width, scored at the 88% interval level.
2. the linear tiers of the seed's families anchored on OLS on the optimal valid
   adjustment set (generate/ols_anchor.py), scored at the proper 90% level as the
   expert tier is.
"""

from typing import Final

REWARD_VERSION: Final = 2
#: What a score written before reward versions existed was scored with.
UNVERSIONED = 1
