"""The KubeRay deployment (configs/kuberay/), read three ways:

- every Kubernetes object and every pod template validated offline against the
  Kubernetes schemas (kubernetes-validate, strict: an unknown or misspelt field fails);
- a recognised policy checker (checkov, pinned by scripts/bootstrap.sh --test in a
  venv of its own) run over the manifests and the image's Dockerfile, its failed checks
  equal to the justification table of docs/pages/kubernetes.md, no more and no fewer;
- the reviewer's structural checks the checker does not make or makes too coarsely
  (per pod, not per container): no service-account token, no privilege escalation,
  Docker over a unix socket, Ray's ports from the cluster's own pods, one Service port
  from the trainers' range, secrets readable by the user that reads them. Each check
  is a function returning its problems, and a test shows each one catching the mistake
  it exists for.

And the RayCluster's fields the runner relies on, checked against the code that
relies on them."""

from __future__ import annotations

import copy
import inspect
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import ray
import yaml

from orchestrator.run.config import HEAD_RESOURCE
from orchestrator.sandbox.docker_image import DOCKERFILE

REPO = Path(__file__).resolve().parents[1]
KUBERAY = REPO / "configs" / "kuberay"
MANIFESTS = (KUBERAY / "namespace.yaml", KUBERAY / "raycluster.yaml")
DOC = REPO / "docs" / "pages" / "kubernetes.md"
BOOTSTRAP = REPO / "scripts" / "bootstrap.sh"
#: Where scripts/bootstrap.sh --test installs the pinned checker (a venv of its own, so
#: checkov's pins never meet the project's).
CHECKOV = REPO / ".venv-policy" / "bin" / "checkov"
#: The Kubernetes release the manifests are checked against.
KUBERNETES = "1.33.0"
#: The uid and gid of the image's `ray` user (Ray's images; the Dockerfile's USER).
RAY_UID, RAY_GID = 1000, 100
#: Ray's ports a stranger must not reach: GCS, client, dashboard, the dashboard agent,
#: and both ends of the default worker port range.
RAY_PORTS = (6379, 10001, 8265, 52365, 10002, 19999)
STREAM_PORT = 8600
#: Containers allowed to escalate privileges, run as root and keep capabilities: the
#: Docker engine, which is privileged (and Kubernetes refuses allowPrivilegeEscalation
#: false beside privileged: true). docs/pages/kubernetes.md says why.
PRIVILEGED = {("docker-workers", "dind")}
#: Containers whose seccomp/AppArmor profile is not the runtime's default, and why:
#: bubblewrap's unshare/mount in its own namespaces (docs/pages/kubernetes.md).
UNCONFINED = {("bwrap-workers", "ray-worker")}

Object = dict[str, Any]


# --- reading the manifests ----------------------------------------------------------


def _load() -> list[Object]:
    return [d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d]


def _of_kind(objects: list[Object], kind: str) -> list[Object]:
    return [o for o in objects if o["kind"] == kind]


def _one(objects: list[Object], kind: str) -> Object:
    (found,) = _of_kind(objects, kind)
    return found


def _groups(objects: list[Object] | None = None) -> list[tuple[str, Object]]:
    spec = _one(objects if objects is not None else _load(), "RayCluster")["spec"]
    groups = [("head", spec["headGroupSpec"])]
    return groups + [(g["groupName"], g) for g in spec["workerGroupSpecs"]]


def _containers(group: Object) -> list[Object]:
    return list(group["template"]["spec"]["containers"])


def _all_containers(spec: Object) -> Iterator[Object]:
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def _pods(objects: list[Object]) -> list[Object]:
    """The Pods KubeRay makes of the RayCluster: each group's template, in the
    cluster's namespace, with the labels KubeRay adds (ray.io/cluster and the node
    type and group). The checker skips custom resources, so it reads these instead."""
    cluster = _one(objects, "RayCluster")
    name, namespace = cluster["metadata"]["name"], cluster["metadata"]["namespace"]
    pods = []
    for group, spec in _groups(objects):
        template = copy.deepcopy(spec["template"])
        kuberay = {
            "ray.io/cluster": name,
            "ray.io/node-type": "head" if group == "head" else "worker",
            "ray.io/group": "headgroup" if group == "head" else group,
        }
        metadata = {
            "name": f"{name}-{group}",
            "namespace": namespace,
            "labels": {**template.get("metadata", {}).get("labels", {}), **kuberay},
        }
        pods.append(
            {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
        )
    return pods


def _strings(node: Any) -> Iterator[str]:
    """Every string value in a parsed manifest (comments are not values)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _dockerfile() -> str:
    return (KUBERAY / "Dockerfile").read_text()


def _image_user() -> tuple[int, int]:
    found = re.findall(r"^USER (\d+):(\d+)$", _dockerfile(), re.MULTILINE)
    assert found, "the Dockerfile's last USER is numeric uid:gid"
    uid, gid = found[-1]
    return int(uid), int(gid)


def _effective(pod_spec: Object, container: Object, key: str) -> Any:
    """A securityContext field as the kubelet applies it: the container's, else the
    pod's."""
    own = container.get("securityContext", {})
    return own[key] if key in own else pod_spec.get("securityContext", {}).get(key)


def _process(pod_spec: Object, container: Object) -> tuple[int, set[int]]:
    """The uid and the groups a container's processes run with."""
    image_uid, image_gid = _image_user() if container["image"].startswith("REGISTRY/") else (0, 0)
    uid = _effective(pod_spec, container, "runAsUser")
    gid = _effective(pod_spec, container, "runAsGroup")
    pod_context = pod_spec.get("securityContext", {})
    groups = {image_gid if gid is None else gid, *pod_context.get("supplementalGroups", [])}
    if pod_context.get("fsGroup") is not None:
        groups.add(pod_context["fsGroup"])
    return (image_uid if uid is None else uid), groups


# --- the reviewer's checks: each returns its problems -------------------------------


def _token_problems(objects: list[Object]) -> list[str]:
    """No pod mounts a service-account token: every pod says so itself and runs under
    the manifest's own account, which has no token to mount and no role."""
    problems = []
    accounts = {a["metadata"]["name"]: a for a in _of_kind(objects, "ServiceAccount")}
    for kind in ("RoleBinding", "ClusterRoleBinding"):
        problems += [f"a {kind} gives the pods' account rights" for _ in _of_kind(objects, kind)]
    for pod in _pods(objects):
        spec, name = pod["spec"], pod["metadata"]["name"]
        if spec.get("automountServiceAccountToken") is not False:
            problems.append(f"{name}: automountServiceAccountToken is not false")
        account = accounts.get(spec.get("serviceAccountName", "default"))
        if account is None or account.get("automountServiceAccountToken") is not False:
            problems.append(f"{name}: runs under an account that mounts its token")
    return problems


def _privilege_problems(objects: list[Object]) -> list[str]:
    """Every container: no privilege escalation, no capability, not root, the runtime's
    default seccomp profile; except the listed ones, each for the reason listed."""
    problems = []
    for group, spec in _groups(objects):
        pod_spec = spec["template"]["spec"]
        for container in _all_containers(pod_spec):
            where = f"{group}/{container['name']}"
            context = container.get("securityContext", {})
            if (group, container["name"]) in PRIVILEGED:
                continue
            if context.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{where}: allowPrivilegeEscalation is not false")
            if context.get("privileged"):
                problems.append(f"{where}: privileged")
            capabilities = context.get("capabilities", {})
            if capabilities.get("drop") != ["ALL"] or capabilities.get("add"):
                problems.append(f"{where}: capabilities are not exactly drop [ALL]")
            uid, _ = _process(pod_spec, container)
            if uid == 0 or _effective(pod_spec, container, "runAsNonRoot") is not True:
                problems.append(f"{where}: may run as root")
            if context.get("readOnlyRootFilesystem") is not True:
                problems.append(f"{where}: writable root filesystem")
            profile = (_effective(pod_spec, container, "seccompProfile") or {}).get("type")
            confined = (group, container["name"]) not in UNCONFINED
            if confined and profile != "RuntimeDefault":
                problems.append(f"{where}: seccomp profile {profile}, not RuntimeDefault")
            apparmor = (_effective(pod_spec, container, "appArmorProfile") or {}).get("type")
            if confined and apparmor not in (None, "RuntimeDefault"):
                problems.append(f"{where}: AppArmor profile {apparmor}")
    return problems


def _docker_problems(objects: list[Object]) -> list[str]:
    """Docker is reached over a unix socket in a volume only the Ray container and the
    engine mount: no tcp:// anywhere, no 2375/2376, the engine started as `dockerd`
    (so the image's entrypoint adds no tcp://0.0.0.0:2375 of its own) with its socket's
    group one the Ray container's user holds."""
    problems = []
    for value in _strings(objects):
        if "tcp://" in value or re.search(r":237[56]\b", value):
            problems.append(f"a value names a TCP Docker endpoint: {value!r}")
    for pod in _pods(objects):
        spec, name = pod["spec"], pod["metadata"]["name"]
        for container in _all_containers(spec):
            for port in container.get("ports", []):
                if port["containerPort"] in (2375, 2376):
                    problems.append(f"{name}/{container['name']}: port {port['containerPort']}")
        engines = [c for c in spec["containers"] if c["image"].startswith("docker:")]
        clients = [
            c
            for c in _all_containers(spec)
            if any(e["name"] == "DOCKER_HOST" for e in c.get("env", []))
        ]
        if not engines:
            if clients:
                problems.append(f"{name}: DOCKER_HOST without an engine in the pod")
            continue
        (engine,) = engines
        args = engine.get("args", [])
        if engine.get("command") or not args or args[0] != "dockerd":
            problems.append(f"{name}: the engine is not started as `dockerd ...`")
        hosts = [a.split("=", 1)[1] for a in args if a.startswith(("--host=", "-H="))]
        if not hosts or any(not h.startswith("unix://") for h in hosts):
            problems.append(f"{name}: the engine listens on {hosts}")
            continue
        socket_dir = str(Path(hosts[0].removeprefix("unix://")).parent)
        group = next((int(a.split("=", 1)[1]) for a in args if a.startswith("--group=")), None)
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        mounts = {
            c["name"]: {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
            for c in spec["containers"]
        }
        volume = mounts[engine["name"]].get(socket_dir)
        if volume is None or "emptyDir" not in volumes[volume]:
            problems.append(f"{name}: the socket's folder is not an emptyDir of the pod")
        sharing = {c for c, m in mounts.items() if volume in m.values()}
        if sharing != {engine["name"], *(c["name"] for c in clients)}:
            problems.append(f"{name}: the socket's volume is mounted by {sorted(sharing)}")
        for client in clients:
            env = {e["name"]: e.get("value") for e in client["env"]}
            if env["DOCKER_HOST"] != hosts[0]:
                problems.append(f"{name}/{client['name']}: DOCKER_HOST {env['DOCKER_HOST']}")
            _, groups = _process(spec, client)
            if group not in groups:
                problems.append(f"{name}/{client['name']}: not in the socket's group {group}")
    return problems


def _selects(selector: Object, labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, "policies here select by matchLabels only"
    return selector.get("matchLabels", {}).items() <= labels.items()


def _admits(rule: Object, port: int, named: dict[str, int]) -> bool:
    if "ports" not in rule:
        return True
    for entry in rule["ports"]:
        value = entry.get("port")
        if value is None:
            return True
        number = named.get(value) if isinstance(value, str) else value
        if number == port or (
            number is not None and number <= port <= entry.get("endPort", number)
        ):
            return True
    return False


def _cluster_peer(peer: Object, cluster: str) -> bool:
    """A peer that is a pod of this cluster in this namespace and nothing wider."""
    return (
        set(peer) == {"podSelector"}
        and peer["podSelector"].get("matchLabels", {}).get("ray.io/cluster") == cluster
    )


def _network_problems(objects: list[Object]) -> list[str]:
    """Every pod of the cluster is selected by an ingress policy; Ray's ports admit
    only the cluster's own pods (and do admit them); the stream's port admits, beyond
    them, only the Service's trainer range."""
    problems = []
    cluster = _one(objects, "RayCluster")["metadata"]["name"]
    policies = _of_kind(objects, "NetworkPolicy")
    trainers = set(_one(objects, "Service")["spec"].get("loadBalancerSourceRanges", []))
    for pod in _pods(objects):
        name, labels = pod["metadata"]["name"], pod["metadata"]["labels"]
        named = {
            p["name"]: p["containerPort"]
            for c in pod["spec"]["containers"]
            for p in c.get("ports", [])
            if "name" in p
        }
        rules = [
            rule
            for policy in policies
            if policy["metadata"]["namespace"] == pod["metadata"]["namespace"]
            and "Ingress" in policy["spec"].get("policyTypes", ["Ingress"])
            and _selects(policy["spec"]["podSelector"], labels)
            for rule in policy["spec"].get("ingress", [])
        ]
        if not any(_selects(p["spec"]["podSelector"], labels) for p in policies):
            problems.append(f"{name}: no NetworkPolicy selects it (every port is open)")
            continue
        wanted = (
            [*RAY_PORTS, STREAM_PORT] if labels.get("ray.io/node-type") == "head" else RAY_PORTS
        )
        for port in wanted:
            admitting = [r for r in rules if _admits(r, port, named)]
            peers = [peer for r in admitting for peer in r.get("from", [{}])]
            for peer in peers:
                if _cluster_peer(peer, cluster):
                    continue
                cidr = peer.get("ipBlock", {}).get("cidr")
                if port == STREAM_PORT and set(peer) == {"ipBlock"} and cidr in trainers:
                    continue
                problems.append(f"{name}: port {port} admits {peer or 'everyone'}")
            if not any(_cluster_peer(peer, cluster) for peer in peers) and port != STREAM_PORT:
                problems.append(f"{name}: port {port} does not admit the cluster's pods")
            if port == STREAM_PORT and not any("ipBlock" in peer for peer in peers):
                problems.append(f"{name}: the stream's port does not admit the trainers")
    return problems


def _service_problems(objects: list[Object]) -> list[str]:
    """The one Service exposes the head's consumer port (named stream, 8600) and
    nothing else, to the trainers' ranges only, with their addresses kept."""
    problems = []
    (service,) = _of_kind(objects, "Service")
    spec = service["spec"]
    ports = spec.get("ports", [])
    if [(p.get("name"), p.get("targetPort")) for p in ports] != [("stream", "stream")]:
        problems.append(f"the Service exposes {ports}, not the stream port alone")
    ranges = spec.get("loadBalancerSourceRanges", [])
    if not ranges or {"0.0.0.0/0", "::/0"} & set(ranges):
        problems.append(f"loadBalancerSourceRanges is {ranges or 'missing'}")
    if spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") != "Local":
        problems.append("externalTrafficPolicy is not Local: the pod sees a node's address")
    (head,) = [p for p in _pods(objects) if p["metadata"]["labels"]["ray.io/node-type"] == "head"]
    if not spec["selector"].items() <= head["metadata"]["labels"].items():
        problems.append("the Service does not select the head")
    named = {p["name"]: p["containerPort"] for p in head["spec"]["containers"][0]["ports"]}
    if named.get("stream") != STREAM_PORT:
        problems.append(f"the head's stream port is {named.get('stream')}, not {STREAM_PORT}")
    return problems


def can_read(uid: int, groups: set[int], owner: int, group: int, mode: int) -> bool:
    """Unix permission arithmetic for a read: the owner's bits for the owner, the
    group's for a member, the others' otherwise. (Root is no exception here: the
    containers drop CAP_DAC_OVERRIDE, and the secrets are root's own files anyway.)"""
    if uid == owner:
        return bool(mode & 0o400)
    if group in groups:
        return bool(mode & 0o040)
    return bool(mode & 0o004)


def secret_file(volume: Object, fs_group: int | None) -> tuple[int, int, int]:
    """Owner, group and mode of a secret volume's files as the kubelet writes them:
    root's; with an fsGroup, that group's and at least group-readable (the kubelet ORs
    0440 into a read-only volume's modes)."""
    mode = volume["secret"].get("defaultMode", 0o644)
    if fs_group is None:
        return 0, 0, mode
    return 0, fs_group, mode | 0o440


def _secret_problems(objects: list[Object]) -> list[str]:
    """Every container that mounts a secret can read it as the user it runs as, and
    nobody else in the container can (no bits for others)."""
    problems = []
    for pod in _pods(objects):
        spec, name = pod["spec"], pod["metadata"]["name"]
        secrets = {v["name"]: v for v in spec.get("volumes", []) if "secret" in v}
        fs_group = spec.get("securityContext", {}).get("fsGroup")
        for container in _all_containers(spec):
            uid, groups = _process(spec, container)
            for mount in container.get("volumeMounts", []):
                if mount["name"] not in secrets:
                    continue
                owner, group, mode = secret_file(secrets[mount["name"]], fs_group)
                where = f"{name}/{container['name']}: {mount['name']} (mode {mode:o})"
                if not can_read(uid, groups, owner, group, mode):
                    problems.append(f"{where} is unreadable by uid {uid} groups {sorted(groups)}")
                if mode & 0o007:
                    problems.append(f"{where} is readable by others")
    return problems


CHECKS: dict[str, Callable[[list[Object]], list[str]]] = {
    "tokens": _token_problems,
    "privileges": _privilege_problems,
    "docker": _docker_problems,
    "network": _network_problems,
    "service": _service_problems,
    "secrets": _secret_problems,
}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_the_manifests_pass_the_reviewer_s_check(check: str) -> None:
    assert CHECKS[check](_load()) == []


def _head_spec(o: list[Object]) -> Object:
    return dict(_groups(o))["head"]["template"]["spec"]


def _docker_spec(o: list[Object]) -> Object:
    return dict(_groups(o))["docker-workers"]["template"]["spec"]


def _set_automount(o: list[Object]) -> None:
    _head_spec(o)["automountServiceAccountToken"] = True


def _default_account(o: list[Object]) -> None:
    del _docker_spec(o)["serviceAccountName"]


def _escalate(o: list[Object]) -> None:
    del _head_spec(o)["containers"][0]["securityContext"]["allowPrivilegeEscalation"]


def _add_capability(o: list[Object]) -> None:
    worker = dict(_groups(o))["bwrap-workers"]["template"]["spec"]["containers"][0]
    worker["securityContext"]["capabilities"]["add"] = ["SYS_ADMIN"]


def _root_init(o: list[Object]) -> None:
    _head_spec(o)["initContainers"][0]["securityContext"]["runAsUser"] = 0


def _unconfined_head(o: list[Object]) -> None:
    context = _head_spec(o)["containers"][0]["securityContext"]
    context["seccompProfile"] = {"type": "Unconfined"}


def _docker_over_tcp(o: list[Object]) -> None:
    ray_worker, dind = _docker_spec(o)["containers"]
    ray_worker["env"][-1]["value"] = "tcp://127.0.0.1:2375"
    dind["args"] = ["--host=tcp://127.0.0.1:2375"]


def _entrypoint_defaults(o: list[Object]) -> None:
    """The old shape: flags only, so docker:dind's entrypoint prepends its own
    `dockerd --host=unix://... --host=tcp://0.0.0.0:2375`."""
    _docker_spec(o)["containers"][1]["args"] = ["--host=unix:///var/run/dind/docker.sock"]


def _socket_group(o: list[Object]) -> None:
    _docker_spec(o)["containers"][1]["args"][-1] = "--group=0"


def _open_policy(o: list[Object]) -> None:
    _of_kind(o, "NetworkPolicy")[0]["spec"]["ingress"] = [{}]


def _namespace_wide(o: list[Object]) -> None:
    peer = _of_kind(o, "NetworkPolicy")[0]["spec"]["ingress"][0]["from"][0]
    peer["namespaceSelector"] = {}


def _no_policy(o: list[Object]) -> None:
    o[:] = [x for x in o if x["kind"] != "NetworkPolicy"]


def _stream_from_anywhere(o: list[Object]) -> None:
    _of_kind(o, "NetworkPolicy")[1]["spec"]["ingress"][0]["from"] = [
        {"ipBlock": {"cidr": "0.0.0.0/0"}}
    ]


def _gcs_in_service(o: list[Object]) -> None:
    _one(o, "Service")["spec"]["ports"].append({"name": "gcs", "port": 6379, "targetPort": "gcs"})


def _no_source_ranges(o: list[Object]) -> None:
    del _one(o, "Service")["spec"]["loadBalancerSourceRanges"]


def _key_0400_no_fsgroup(o: list[Object]) -> None:
    """The old shape: 0400 root-owned secrets read by the image's `ray` user."""
    spec = _head_spec(o)
    del spec["securityContext"]["fsGroup"]
    for volume in spec["volumes"]:
        if "secret" in volume:
            volume["secret"]["defaultMode"] = 0o400


def _world_readable(o: list[Object]) -> None:
    _head_spec(o)["volumes"][0]["secret"]["defaultMode"] = 0o444


MISTAKES: dict[str, tuple[str, Callable[[list[Object]], None]]] = {
    "automounted token": ("tokens", _set_automount),
    "default service account": ("tokens", _default_account),
    "privilege escalation": ("privileges", _escalate),
    "an added capability": ("privileges", _add_capability),
    "a root init container": ("privileges", _root_init),
    "an unconfined head": ("privileges", _unconfined_head),
    "docker over tcp": ("docker", _docker_over_tcp),
    "the entrypoint's tcp default": ("docker", _entrypoint_defaults),
    "a socket group ray lacks": ("docker", _socket_group),
    "ingress from anyone": ("network", _open_policy),
    "ingress from any namespace": ("network", _namespace_wide),
    "no network policy": ("network", _no_policy),
    "the stream from anywhere": ("network", _stream_from_anywhere),
    "GCS in the Service": ("service", _gcs_in_service),
    "no source ranges": ("service", _no_source_ranges),
    "0400 secrets without fsGroup": ("secrets", _key_0400_no_fsgroup),
    "a world-readable key": ("secrets", _world_readable),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_check_catches_the_mistake_it_exists_for(mistake: str) -> None:
    check, mutate = MISTAKES[mistake]
    objects = _load()
    mutate(objects)
    assert CHECKS[check](objects), f"the {check} check let {mistake!r} through"


def test_the_permission_arithmetic() -> None:
    """The helpers the secrets check stands on: 0400 of root is root's alone; 0440 of
    group 100 is readable by `ray` (group 100) and by nobody else."""
    assert not can_read(RAY_UID, {RAY_GID}, 0, 0, 0o400)
    assert can_read(RAY_UID, {RAY_GID}, 0, RAY_GID, 0o440)
    assert not can_read(2000, {2000}, 0, RAY_GID, 0o440)
    assert can_read(0, {0}, 0, 0, 0o400)
    assert secret_file({"secret": {"defaultMode": 0o400}}, RAY_GID) == (0, RAY_GID, 0o440)
    assert secret_file({"secret": {"defaultMode": 0o400}}, None) == (0, 0, 0o400)


# --- the policy checker -------------------------------------------------------------


def _pinned_checkov() -> str:
    found = re.search(r"^\s*checkov_version=(\S+)$", BOOTSTRAP.read_text(), re.MULTILINE)
    assert found, "scripts/bootstrap.sh pins checkov_version"
    return found.group(1)


def _justified() -> set[tuple[str, str]]:
    """The (check id, resource) rows of the page's justification table."""
    rows = re.findall(r"^\| `(CKV\w+)` \| `([^`]+)` \|", DOC.read_text(), re.MULTILINE)
    assert rows, "docs/pages/kubernetes.md has its justification table"
    assert len(rows) == len(set(rows)), "a row is listed twice"
    return set(rows)


#: A pod the checker must fail (the head made privileged): proof that it checks at all.
CANARY = "canary"
#: One checker run (about 10 s) serves both tests: under xdist they share a worker.
CHECKER = pytest.mark.xdist_group("checkov")


@pytest.fixture(scope="module")
def checkov_report(tmp_path_factory: pytest.TempPathFactory) -> list[Object]:
    """checkov's JSON report on configs/kuberay as the cluster sees it: every object of
    its manifests, the RayCluster's pods as KubeRay makes them, and the Dockerfile; plus
    the canary, in a file of its own."""
    if not CHECKOV.exists():
        message = (
            f"{CHECKOV.relative_to(REPO)} is missing: bash scripts/bootstrap.sh --test installs it"
        )
        if os.environ.get("CI"):
            pytest.fail(message + " (CI must run the policy checker)")
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("kuberay")
    objects = _load()
    rendered = [o for o in objects if o["kind"] != "RayCluster"] + _pods(objects)
    (folder / "manifests.yaml").write_text(yaml.safe_dump_all(rendered, sort_keys=False))
    shutil.copy(KUBERAY / "Dockerfile", folder / "Dockerfile")
    canary = copy.deepcopy(_pods(objects)[0])
    canary["metadata"]["name"] = CANARY
    canary["spec"]["containers"][0]["securityContext"]["privileged"] = True
    (folder / "canary.yaml").write_text(yaml.safe_dump(canary, sort_keys=False))
    done = subprocess.run(
        [str(CHECKOV), "--directory", str(folder), "--framework", "kubernetes", "dockerfile",
         "--output", "json", "--skip-download"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads(done.stdout)
    return report if isinstance(report, list) else [report]


def _checks(report: list[Object], outcome: str) -> set[tuple[str, str]]:
    return {
        (check["check_id"], check["resource"])
        for framework in report
        for check in framework["results"][outcome]
        if CANARY not in check["file_path"]
    }


@CHECKER
def test_the_checker_is_the_pinned_one_and_read_every_object(checkov_report: list[Object]) -> None:
    frameworks = {f["check_type"]: f["summary"] for f in checkov_report}
    assert sorted(frameworks) == ["dockerfile", "kubernetes"]
    assert {s["checkov_version"] for s in frameworks.values()} == {_pinned_checkov()}
    assert all(s["parsing_errors"] == 0 for s in frameworks.values())
    objects = _load()
    rendered = [o for o in objects if o["kind"] != "RayCluster"] + _pods(objects)
    assert frameworks["kubernetes"]["resource_count"] == len(rendered) + 1  # + the canary
    checked = {
        r
        for _, r in _checks(checkov_report, "passed_checks")
        | _checks(checkov_report, "failed_checks")
    }
    for o in rendered:
        if o["kind"] in ("Pod", "Service", "ServiceAccount"):  # the kinds checkov has checks for
            assert f"{o['kind']}.{o['metadata']['namespace']}.{o['metadata']['name']}" in checked
    # and it fails what it must: the privileged canary
    canary = {
        c["check_id"]
        for framework in checkov_report
        for c in framework["results"]["failed_checks"]
        if CANARY in c["file_path"]
    }
    assert "CKV_K8S_16" in canary


@CHECKER
def test_every_finding_is_justified_in_the_docs_and_every_justification_still_fails(
    checkov_report: list[Object],
) -> None:
    failed, listed = _checks(checkov_report, "failed_checks"), _justified()
    assert sorted(failed - listed) == [], "findings docs/pages/kubernetes.md does not justify"
    assert sorted(listed - failed) == [], "justified findings that no longer fail: drop their rows"


# --- schemas ------------------------------------------------------------------------


def test_the_manifests_hold_the_cluster_and_what_guards_it() -> None:
    kinds = sorted(o["kind"] for o in _load())
    assert kinds == [
        "Namespace", "NetworkPolicy", "NetworkPolicy", "PersistentVolumeClaim",
        "RayCluster", "Service", "ServiceAccount",
    ]  # fmt: skip
    cluster = _one(_load(), "RayCluster")
    assert cluster["apiVersion"] == "ray.io/v1"
    namespace = _one(_load(), "Namespace")["metadata"]["name"]
    assert {o["metadata"].get("namespace") for o in _load() if o["kind"] != "Namespace"} == {
        namespace
    }


@pytest.mark.parametrize("index", [i for i, o in enumerate(_load()) if o["kind"] != "RayCluster"])
def test_core_objects_validate_against_the_kubernetes_schema(index: int) -> None:
    kubernetes_validate.validate(_load()[index], KUBERNETES, strict=True)


@pytest.mark.parametrize("name", [name for name, _ in _groups()])
def test_every_pod_template_validates_against_the_kubernetes_schema(name: str) -> None:
    group = dict(_groups())[name]
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name},
        "template": group["template"],
    }
    kubernetes_validate.validate(template, KUBERNETES, strict=True)


def test_a_misspelt_field_is_caught() -> None:
    """The schema check above can fail: a typo in a container is refused."""
    group = dict(_groups())["head"]
    broken = json.loads(json.dumps(group["template"]))
    broken["spec"]["containers"][0]["volumeMount"] = []
    template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "x"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({**template, "template": broken}, KUBERNETES, strict=True)


# --- what the runner relies on ------------------------------------------------------


def _head_resources(params: dict[str, str]) -> dict[str, float]:
    """KubeRay passes `resources` to `ray start` quoted once more than JSON."""
    raw = params.get("resources")
    return json.loads(json.loads(raw)) if raw else {}


def test_only_the_head_has_the_head_resource_and_no_cpus_for_episodes() -> None:
    groups = dict(_groups())
    head = groups.pop("head")["rayStartParams"]
    assert head["num-cpus"] == "0" and _head_resources(head) == {HEAD_RESOURCE: 1}
    assert groups and all(HEAD_RESOURCE not in json.dumps(g) for g in groups.values())
    for name, group in [*groups.items(), ("head", {"rayStartParams": head})]:
        # KubeRay takes rayStartParams as strings only
        assert all(isinstance(v, str) for v in group["rayStartParams"].values()), name
    for name, group in groups.items():
        assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"], name


def test_the_key_is_a_read_only_file_on_the_head_and_nowhere_else() -> None:
    for name, group in _groups():
        spec = group["template"]["spec"]
        secrets = {v["secret"]["secretName"]: v for v in spec.get("volumes", []) if "secret" in v}
        assert ("causal-gym-key" in secrets) == (name == "head"), name
        for volume in secrets.values():
            # root's file, group fsGroup's: what the kubelet makes of any mode with an
            # fsGroup, written out (0400 would be shown as it is not)
            assert volume["secret"]["defaultMode"] == 0o440, name
        for container in _all_containers(spec):
            names = {e["name"] for e in container.get("env", [])}
            assert "CAUSAL_GYM_KEY" not in names and "RAY_ADDRESS" not in names, name
            for mount in container.get("volumeMounts", []):
                if mount["name"] in {v["name"] for v in secrets.values()}:
                    assert mount.get("readOnly") is True, (name, mount)


def test_every_ray_container_authenticates_with_a_token_file_and_runs_our_ray() -> None:
    spec = _one(_load(), "RayCluster")["spec"]
    assert spec["rayVersion"] == ray.__version__
    images = set()
    for name, group in _groups():
        ray_container = _containers(group)[0]
        env = {e["name"]: e.get("value") for e in ray_container["env"]}
        assert env["RAY_AUTH_MODE"] == "token" and env["RAY_AUTH_TOKEN_PATH"], name
        images.add(ray_container["image"])
        for init in group["template"]["spec"].get("initContainers", []):
            images.add(init["image"])
    assert len(images) == 1  # one image, built from configs/kuberay/Dockerfile
    base = re.search(r"^ARG RAY_TAG=([\d.]+)-py311", _dockerfile(), re.MULTILINE)
    assert base is not None and base.group(1) == ray.__version__
    assert re.search(r"^FROM \$\{RAY_REPOSITORY\}:\$\{RAY_TAG\}$", _dockerfile(), re.MULTILINE)


def test_the_pods_run_as_the_image_s_ray_user_which_cannot_sudo() -> None:
    assert _image_user() == (RAY_UID, RAY_GID)
    for name, group in _groups():
        context = group["template"]["spec"]["securityContext"]
        assert (context["runAsUser"], context["runAsGroup"], context["fsGroup"]) == (
            RAY_UID, RAY_GID, RAY_GID,
        ), name  # fmt: skip
    # Ray's image gives `ray` passwordless sudo; the image built here takes it away
    assert "sed -i '/^ray ALL=NOPASSWD: ALL$/d' /etc/sudoers" in _dockerfile()


def _serve_options() -> dict[str, inspect.Parameter]:
    """The options of `causal-gym-run stream serve`, as its command declares them."""
    import orchestrator.cli  # noqa: F401  (registers every command)
    from orchestrator.cli.stream import stream_app

    (command,) = [c for c in stream_app.registered_commands if c.name == "serve"]
    assert command.callback is not None
    return dict(inspect.signature(command.callback).parameters)


def test_the_stream_service_reaches_the_head_s_stream_port_and_nothing_else() -> None:
    """The Service's one port is the stream's default consumer port; the operator's
    listener stays on loopback by default, so no Service or policy names it."""
    options = _serve_options()
    assert options["port"].default == STREAM_PORT
    operator_host = options.get("operator_host")
    assert operator_host is None or operator_host.default == "127.0.0.1"
    assert _service_problems(_load()) == []


def test_each_ray_container_writes_only_to_its_volumes_and_keeps_its_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read-only root: /tmp is an emptyDir, and the private state folder's parent
    (where orchestrator/host/private_state.py looks in a container whose HOME is /home/ray)
    a subPath folder that the `state-folder` init container made 0700 as the same
    user, on the runs volume on the head (the records' head secret must outlive the
    pod) and on an emptyDir on workers."""
    from orchestrator.host.private_state import STATE_ENV_VAR, configured_root

    monkeypatch.setenv("HOME", "/home/ray")
    monkeypatch.delenv(STATE_ENV_VAR, raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    state_parent = str(configured_root().parent)
    for name, group in _groups():
        spec = group["template"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        ray_container = _containers(group)[0]
        mounts = {m["mountPath"]: m for m in ray_container["volumeMounts"]}
        assert ray_container["securityContext"]["readOnlyRootFilesystem"] is True, name
        assert "emptyDir" in volumes[mounts["/tmp"]["name"]], name
        env = {e["name"] for e in ray_container["env"]}
        assert not env & {STATE_ENV_VAR, "XDG_STATE_HOME", "HOME"}, name
        state = mounts[state_parent]
        kind = "persistentVolumeClaim" if name == "head" else "emptyDir"
        assert kind in volumes[state["name"]], name
        (init,) = [c for c in spec["initContainers"] if c["name"] == "state-folder"]
        (init_mount,) = [m for m in init["volumeMounts"] if m["name"] == state["name"]]
        folder = f"{init_mount['mountPath']}/{state['subPath']}"
        assert init["command"][-1] == f"mkdir -p {folder} && chmod 0700 {folder}", name
        assert _process(spec, init) == _process(spec, ray_container), name
        # the kubelet must not make the state folder group-writable again at each start
        assert spec["securityContext"]["fsGroupChangePolicy"] == "OnRootMismatch", name
    head = _containers(dict(_groups())["head"])[0]
    env = {e["name"]: e.get("value") for e in head["env"]}
    assert env["MPLCONFIGDIR"].startswith("/tmp/")  # the report's plots, off ~/.config


def test_the_worker_groups_can_run_their_sandboxes() -> None:
    groups = dict(_groups())
    bwrap_spec = groups["bwrap-workers"]["template"]["spec"]
    bwrap = bwrap_spec["containers"][0]["securityContext"]
    # unprivileged bubblewrap in the pod's own user namespace: an unmasked /proc (which
    # only a pod with hostUsers: false may have), no capability, the namespace syscalls
    assert bwrap_spec["hostUsers"] is False and bwrap["procMount"] == "Unmasked"
    assert bwrap["capabilities"] == {"drop": ["ALL"]}
    assert bwrap["seccompProfile"] == bwrap["appArmorProfile"] == {"type": "Unconfined"}
    assert not any(v.get("hostPath") for v in bwrap_spec["volumes"])
    docker = groups["docker-workers"]["template"]["spec"]
    ray_container, dind = docker["containers"]
    env = {e["name"]: e.get("value") for e in ray_container["env"]}
    assert env["DOCKER_HOST"] == "unix:///var/run/dind/docker.sock"
    assert dind["securityContext"]["privileged"] is True
    assert _docker_problems(_load()) == []
    # the cluster image installs bubblewrap; the sandbox image is a real Dockerfile
    assert "bubblewrap" in _dockerfile()
    assert DOCKERFILE.read_text().startswith("# The Docker sandbox's analyst image")
