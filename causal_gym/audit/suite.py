"""One audit protocol: every audit is a suite of the same four parts, chosen by name.

- rows: what one task yields (`audit_task`: materialized task in, frozen row of plain
  floats out; the runner forks these),
- report: the rows summarized into a published model (`summarize`) and the named
  checks recomputed from that model alone (`evaluate`),
- tables: the numbers the docs and the terminal show,
- plots: PNGs beside the report.

The built-in suites are `seed` (eval-v1's families), `estimand` (eval-v2's),
`expert` (the expert tier), `design` (eval-v3's) and `real` (the real tier, by the
seed suite's protocol), each named here by an entry
string, so naming a suite imports nothing heavy; a package of its own adds one under
the entry-point group `causal_gym.audit_suites` (causal_gym.registries.Registry, like
every plug-in kind).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from causal_gym.audit.checks import Check
from causal_gym.audit.report import SuiteReport
from causal_gym.audit.tables import Table
from causal_gym.contracts.families import split_families
from causal_gym.errors import AuditSuiteError
from causal_gym.registries import Registry

#: Suite name -> "module:attribute" of its AuditSuite.
BUILTIN: dict[str, str] = {
    "seed": "causal_gym.audit.seed.suite:SUITE",
    "estimand": "causal_gym.audit.estimand.suite:SUITE",
    "expert": "causal_gym.audit.expert.suite:SUITE",
    "design": "causal_gym.audit.design.suite:SUITE",
    "real": "causal_gym.audit.real:SUITE",
}


@dataclass(frozen=True)
class AuditRun:
    """What the runner hands a suite's summarize: the rows in a fixed order, the ids
    that failed to generate by key label, and how they were drawn."""

    rows: tuple[Any, ...]
    failed: Mapping[str, list[str]]
    fingerprints: Mapping[str, str]  # key label -> key fingerprint
    namespace: str
    per_family: int
    families: tuple[str, ...]


@dataclass(frozen=True)
class AuditSuite:
    """One audit, by name: the split it audits, the committed report it is held to, and
    the four parts (rows, report, tables, plots) the runner and the CLI call."""

    name: str
    #: The frozen split whose families the suite audits (`--families SPLIT`).
    split: str
    about: str
    #: The committed report, a file of the causal_gym package (PNGs beside it).
    committed: str
    report: type[SuiteReport]
    audit_task: Callable[[Any, str], Any]
    summarize: Callable[[AuditRun], SuiteReport]
    evaluate: Callable[[dict[str, Any]], list[Check]]
    #: Table name -> drawing; the first is the one the terminal shows after a run.
    tables: Mapping[str, Callable[[Any], Table]]
    plots: Callable[[Any, list[Any], Path], list[Path]]
    #: Audits one tier ("expert", "real"): its train tasks are the tier's (a keyed
    #: share of the ids). The expert tier's frozen-split tasks are drawn at planned
    #: size under any key, past the manifest (`past_manifest`).
    tier: str | None = None
    past_manifest: bool = False

    @property
    def families(self) -> tuple[str, ...]:
        """The families the suite audits: its split's."""
        return split_families(self.split)

    @property
    def committed_path(self) -> Path:
        """Where the committed report is, inside the installed package."""
        return Path(str(resources.files("causal_gym").joinpath(self.committed)))

    def load_committed(self) -> SuiteReport:
        """The committed report, validated by the suite's own report model."""
        return self.report.model_validate_json(self.committed_path.read_text("utf-8"))

    def recheck(self, report: SuiteReport) -> list[Check]:
        """The report's checks recomputed from its numbers (not read from its flags)."""
        return self.evaluate(report.parts())


def _accept(name: str, loaded: Any) -> AuditSuite:
    if not isinstance(loaded, AuditSuite) or loaded.name != name:
        raise AuditSuiteError(f"{BUILTIN.get(name, name)} is not the AuditSuite {name!r}")
    return loaded


SUITES: Registry[AuditSuite] = Registry(
    "audit suite", "audit suites", AuditSuiteError, group="causal_gym.audit_suites",
    accept=_accept,
)  # fmt: skip
for _name, _entry in BUILTIN.items():
    SUITES.register(_name, _entry)


def suite_names() -> tuple[str, ...]:
    """Every suite's name, the built-in ones first; listing them imports no suite."""
    return SUITES.names()


def suite(name: str) -> AuditSuite:
    """The suite of a name; AuditSuiteError naming the accepted ones otherwise."""
    return SUITES.get(name)


def suite_for_split(split: str) -> AuditSuite:
    """The suite that audits a frozen split's families."""
    for name in suite_names():
        found = suite(name)
        if found.split == split:
            return found
    splits = ", ".join(suite(n).split for n in suite_names())
    raise AuditSuiteError(f"no audit suite covers {split!r}: accepted are {splits}")
