"""One task as a Harbor task folder: every file's relative path, bytes and mode.

The folder is a pure function of the task, its manifest entry and the versions, so
two exports of one split are byte-identical (Harbor's digests equal). What goes where:

- `environment/` is the agent's image: the analyst toolchain (the pinned wheels every
  sandbox installs), the staged files in /workspace, a non-root user, no network.
- `solution/` is the honest reference kit of the task's family (the files the
  `reference` agent copies into its sandbox) and `solve.sh`, which runs it on the
  staged files and writes its answer where an agent would.
- `tests/` is the verifier's image (Harbor's separate mode, so the agent's sandbox
  never holds it): causal-gym itself, the task's id and staged digests, `test.sh`.
  The truth is not in it: the verifier regenerates the task under the public key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata, resources

from causal_gym.contracts.families import contract_of
from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.harbor import layout
from causal_gym.splits.manifest import ManifestEntry
from causal_gym.task import PublicTask
from causal_gym.versions import reward_version

FILE, SCRIPT = 0o644, 0o755
#: The default base image of both Dockerfiles: the analyst toolchain's Python. Not
#: pinned by digest unless the exporter is given one (`--base-image NAME@sha256:...`):
#: this machine cannot look the digest up (docs/pages/protocols.md).
BASE_IMAGE = "python:3.11-slim"


@dataclass(frozen=True)
class FolderFile:
    """A file's bytes and mode (scripts are executable)."""

    data: bytes
    mode: int = FILE


@dataclass(frozen=True)
class ExportVersions:
    """What a folder's metadata names: the split's frozen generator version, the
    reward version, the sha256 of the committed manifest and this package's version;
    and the base image its Dockerfiles start from."""

    generator: int
    reward: int
    manifest_sha256: str
    package: str
    base_image: str = BASE_IMAGE


def export_versions(
    split: str, generator: int, manifest_sha256: str, base_image: str = BASE_IMAGE
) -> ExportVersions:
    """The versions of this causal-gym, for `split`, frozen at `generator`."""
    return ExportVersions(
        generator,
        reward_version(split),
        manifest_sha256,
        metadata.version("causal-gym"),
        base_image,
    )


def toml_value(value: object) -> str:
    """A TOML value for the few types the folders use (JSON strings are TOML strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(f"no TOML for {type(value).__name__}")


def task_toml(public: PublicTask, entry: ManifestEntry, split: str, v: ExportVersions) -> str:
    """Harbor's task config: the separate verifier, a non-root agent, no network, and
    the metadata that pins what was exported (family, versions, manifest hash)."""
    name = layout.folder_name(entry.task_id)
    lines = [
        "# A causal-gym task for Harbor, written by `causal-gym export harbor`.",
        'schema_version = "1.4"',
        f"artifacts = {toml_value([layout.ANSWER_PATH])}",
        "",
        "[task]",
        f"name = {toml_value(f'{layout.ORG}/{name}')}",
        f"description = {toml_value(f'{entry.family.value} task {entry.task_id} of {split}')}",
        f"keywords = {toml_value(['causal-inference', 'observational-data', entry.family.value])}",
        "",
        "[metadata]",
        f"task_id = {toml_value(entry.task_id)}",
        f"split = {toml_value(split)}",
        f"family = {toml_value(entry.family.value)}",
        f"tier = {toml_value(entry.tier.value)}",
        f"generator_version = {v.generator}",
        f"reward_version = {v.reward}",
        f"manifest_sha256 = {toml_value(v.manifest_sha256)}",
        f"causal_gym_version = {toml_value(v.package)}",
        f"staged_sha256 = {toml_value(dict(sorted(entry.sha256.items())))}",
        "",
        "[verifier]",
        'environment_mode = "separate"',
        f"timeout_sec = {layout.VERIFIER_TIMEOUT_S}",
        "",
        "[agent]",
        f"timeout_sec = {layout.AGENT_TIMEOUT_S}",
        f"user = {toml_value(layout.AGENT_USER)}",
        "",
        "[environment]",
        'network_mode = "no-network"',
        f"workdir = {toml_value(layout.WORKSPACE)}",
        "cpus = 1",
        "memory_mb = 2048",
        "",
    ]
    return "\n".join(lines)


def instruction(public: PublicTask) -> str:
    """The task prompt and README every agent gets, and where the answer goes here
    (a terminal agent has no submit_answer tool)."""
    readme = public.files["README.md"].decode()
    schema = json.dumps(submission_json_schema(public.family), indent=2)
    staged = ", ".join(public.staged_files)
    return (
        f"{public.prompt}\n\nHere is README.md:\n\n{readme.rstrip()}\n\n"
        "## Answering here\n\n"
        f"The staged files ({staged}) are in {layout.WORKSPACE}. Python 3.11 with numpy, "
        "pandas, scipy, statsmodels and scikit-learn is installed; there is no network. "
        "There is no `submit_answer` tool in this environment: write the one JSON object "
        f"you would submit to `{layout.ANSWER_PATH}`. It must follow this JSON schema:\n\n"
        f"```json\n{schema}\n```\n\n"
        f"The file as it stands when you finish is your answer. No file, a file that is "
        "not JSON, or one that does not follow the schema, scores -1.\n"
    )


def agent_dockerfile(v: ExportVersions) -> str:
    """The agent's image: the analyst toolchain, a non-root user, the staged files."""
    return (
        "# The agent's environment: the pinned analyst toolchain and the staged files.\n"
        f"FROM {v.base_image}\n"
        f'LABEL {layout.ROLE_LABEL}="{layout.AGENT_ROLE}"\n'
        "COPY analyst-requirements.txt /tmp/analyst-requirements.txt\n"
        "RUN python3 -m pip install --no-cache-dir -r /tmp/analyst-requirements.txt"
        " && rm /tmp/analyst-requirements.txt\n"
        f"RUN useradd --create-home --uid 1000 {layout.AGENT_USER}"
        f" && mkdir -p {layout.WORKSPACE}\n"
        f"COPY {layout.STAGED_DIR}/ {layout.WORKSPACE}/\n"
        f"RUN chown -R {layout.AGENT_USER}:{layout.AGENT_USER} {layout.WORKSPACE}\n"
        f"WORKDIR {layout.WORKSPACE}\n"
    )


def verifier_dockerfile(v: ExportVersions) -> str:
    """The verifier's image (Harbor builds it from tests/): causal-gym and tests/."""
    return (
        "# The verifier's environment (Harbor's separate mode): causal-gym's scorer.\n"
        f"FROM {v.base_image}\n"
        f'LABEL {layout.ROLE_LABEL}="{layout.VERIFIER_ROLE}"\n'
        "COPY requirements.txt /tmp/verifier-requirements.txt\n"
        "RUN python3 -m pip install --no-cache-dir -r /tmp/verifier-requirements.txt\n"
        f"COPY . {layout.TESTS_DIR}/\n"
        f"WORKDIR {layout.TESTS_DIR}\n"
    )


def solve_sh(family_kit: tuple[str, ...]) -> str:
    """The oracle: the family's reference kit (copied to /solution) run on the staged
    files, its answer moved into place whole."""
    answer = family_kit[-1]
    return (
        "#!/bin/bash\n"
        "# The honest reference: the family's analyst kit on the staged files.\n"
        "set -euo pipefail\n"
        f"python3 /solution/{answer} {layout.WORKSPACE} > /tmp/answer.json\n"
        f"mv /tmp/answer.json {layout.ANSWER_PATH}\n"
    )


def test_sh() -> str:
    """The verifier's entry: verify.py, which always writes a finite reward."""
    return (
        "#!/bin/bash\n"
        "# Scores the agent's answer file with causal-gym's schema and scorer; it writes\n"
        "# a finite reward.json on every path (no file, bad JSON, a crash).\n"
        f"exec python3 -m causal_gym.harbor.verify {layout.TESTS_DIR}/task.json"
        f" {layout.ANSWER_PATH} {layout.VERIFIER_LOGS}\n"
    )


def kit_source(name: str) -> bytes:
    """A reference-kit file as the package ships it."""
    return resources.files("causal_gym.reference").joinpath(name).read_bytes()


def task_files(
    public: PublicTask, entry: ManifestEntry, split: str, v: ExportVersions
) -> dict[str, FolderFile]:
    """The folder's files by relative path."""
    kit = contract_of(public.family).reference_kit
    check = {
        "task_id": entry.task_id,
        "split": split,
        "family": entry.family.value,
        "generator_version": v.generator,
        "reward_version": v.reward,
        "staged_sha256": dict(sorted(entry.sha256.items())),
    }
    files = {
        "task.toml": FolderFile(task_toml(public, entry, split, v).encode()),
        "instruction.md": FolderFile(instruction(public).encode()),
        "environment/Dockerfile": FolderFile(agent_dockerfile(v).encode()),
        "environment/analyst-requirements.txt": FolderFile(
            resources.files("causal_gym").joinpath("analyst-requirements.txt").read_bytes()
        ),
        **{
            f"environment/{layout.STAGED_DIR}/{name}": FolderFile(public.files[name])
            for name in public.staged_files
        },
        "solution/solve.sh": FolderFile(solve_sh(kit).encode(), SCRIPT),
        **{f"solution/{name}": FolderFile(kit_source(name)) for name in kit},
        "tests/Dockerfile": FolderFile(verifier_dockerfile(v).encode()),
        "tests/requirements.txt": FolderFile(f"causal-gym=={v.package}\n".encode()),
        "tests/test.sh": FolderFile(test_sh().encode(), SCRIPT),
        "tests/task.json": FolderFile((json.dumps(check, indent=2) + "\n").encode()),
    }
    return files
