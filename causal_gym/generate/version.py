"""The generator's version: which bytes a (key, task id) pair stages.

Bumped only when a change is meant to change staged tasks; the eval-v1 manifest
records the version it was frozen with, and `manifest verify` names both versions
when they differ, so a moved split is explained rather than merely mismatched.
History (CHANGELOG.md has the why):

1. the first frozen eval-v1.
2. values respect the data dictionary: counts, integer scores and bounded scales
   for exogenous roots only, every other column placed within its unit's bounds.
"""

from typing import Final

GENERATOR_VERSION: Final = 2
