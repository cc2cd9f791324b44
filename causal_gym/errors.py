"""The one error root of the taskset and its leaves.

Every leaf says *when* it is raised, so a caller can decide whether the problem is
the user's input (bad id, bad key: fix the command line) or the generator's (a task
that cannot be built: a bug or a mis-tuned tier).
"""

from __future__ import annotations


class CausalGymError(Exception):
    """Root of every error this package raises on purpose."""


class TaskIdError(CausalGymError, ValueError):
    """Raised while parsing a task id that is not `<namespace>:<family>:<index>`."""


class KeyFormatError(CausalGymError, ValueError):
    """Raised while resolving a derivation key that is not usable hex."""


class GenerationError(CausalGymError):
    """Raised when every candidate SCM for a task id was rejected."""


class RealDataError(CausalGymError):
    """A real source table is missing, differs from its pin, or has no such column."""


class StagingError(CausalGymError, OSError):
    """Raised while writing staged files to a directory that cannot take them."""


class ManifestKeyError(CausalGymError):
    """Raised when verifying a manifest with a key other than the one it was frozen with."""


class GeneratorVersionError(CausalGymError):
    """Raised when verifying a manifest frozen by another version of the generator."""


class FamilyContractError(CausalGymError, ValueError):
    """Raised when a family's declarations contradict each other (at registration)."""


class UnknownFamilyError(CausalGymError, ValueError):
    """Raised when a family is named that is not registered; the message names every
    registered one."""


class FamilyConformanceError(FamilyContractError):
    """Raised by check_family: a registered family breaks the contract; the message
    names the check and the task."""


class AuditSuiteError(CausalGymError, ValueError):
    """Raised when an audit suite is named that is not registered, or a registered
    entry string does not lead to the suite it names."""
