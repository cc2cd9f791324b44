"""The KubeRay deployment (configs/kuberay/): its Kubernetes objects and every pod
template validated offline against the Kubernetes schemas (kubernetes-validate, strict:
an unknown or misspelt field fails), and the RayCluster's fields the runner relies on
checked against the code that relies on them."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import ray
import yaml

from orchestrator.run.config import HEAD_RESOURCE
from orchestrator.sandbox.docker_image import DOCKERFILE

REPO = Path(__file__).resolve().parents[1]
MANIFEST = REPO / "configs" / "kuberay" / "raycluster.yaml"
#: The Kubernetes release the manifests are checked against.
KUBERNETES = "1.33.0"


def _objects() -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    return {d["kind"]: d for d in docs}


def _groups() -> list[tuple[str, dict[str, Any]]]:
    spec = _objects()["RayCluster"]["spec"]
    groups = [("head", spec["headGroupSpec"])]
    return groups + [(g["groupName"], g) for g in spec["workerGroupSpecs"]]


def _containers(group: dict[str, Any]) -> list[dict[str, Any]]:
    return list(group["template"]["spec"]["containers"])


def test_the_manifest_holds_a_raycluster_its_stream_service_and_its_volume() -> None:
    objects = _objects()
    assert sorted(objects) == ["PersistentVolumeClaim", "RayCluster", "Service"]
    assert objects["RayCluster"]["apiVersion"] == "ray.io/v1"


@pytest.mark.parametrize("kind", ["Service", "PersistentVolumeClaim"])
def test_core_objects_validate_against_the_kubernetes_schema(kind: str) -> None:
    kubernetes_validate.validate(_objects()[kind], KUBERNETES, strict=True)


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
            assert volume["secret"]["defaultMode"] == 0o400, name
        for container in _containers(group):
            names = {e["name"] for e in container.get("env", [])}
            assert "CAUSAL_GYM_KEY" not in names and "RAY_ADDRESS" not in names, name
    head = _containers(dict(_groups())["head"])[0]
    mount = next(m for m in head["volumeMounts"] if m["name"] == "key")
    assert mount["readOnly"] is True


def test_every_ray_container_authenticates_with_a_token_file_and_runs_our_ray() -> None:
    spec = _objects()["RayCluster"]["spec"]
    assert spec["rayVersion"] == ray.__version__
    images = set()
    for name, group in _groups():
        ray_container = _containers(group)[0]
        env = {e["name"]: e.get("value") for e in ray_container["env"]}
        assert env["RAY_AUTH_MODE"] == "token" and env["RAY_AUTH_TOKEN_PATH"], name
        images.add(ray_container["image"])
    assert len(images) == 1  # one image, built from configs/kuberay/Dockerfile
    base = re.search(r"ARG RAY_IMAGE=rayproject/ray:([\d.]+)-py311", _dockerfile())
    assert base is not None and base.group(1) == ray.__version__


def _dockerfile() -> str:
    return (REPO / "configs" / "kuberay" / "Dockerfile").read_text()


def test_the_stream_service_reaches_the_head_s_stream_port() -> None:
    from orchestrator.cli.stream import serve_command as serve

    service = _objects()["Service"]["spec"]
    head = dict(_groups())["head"]["template"]
    assert service["selector"].items() <= head["metadata"]["labels"].items()
    target = service["ports"][0]["targetPort"]
    ports = {p["name"]: p["containerPort"] for p in _containers({"template": head})[0]["ports"]}
    default_port = inspect.signature(serve).parameters["port"].default
    assert ports[target] == 8600 == default_port


def test_the_worker_groups_can_run_their_sandboxes() -> None:
    groups = dict(_groups())
    bwrap = _containers(groups["bwrap-workers"])[0]
    assert "SYS_ADMIN" in bwrap["securityContext"]["capabilities"]["add"]
    docker = groups["docker-workers"]
    ray_container, dind = _containers(docker)
    env = {e["name"]: e.get("value") for e in ray_container["env"]}
    assert env["DOCKER_HOST"] == "tcp://127.0.0.1:2375" and "127.0.0.1:2375" in dind["args"][0]
    assert dind["securityContext"]["privileged"] is True
    # the cluster image installs bubblewrap; the sandbox image is a real Dockerfile
    assert "bubblewrap" in _dockerfile()
    assert DOCKERFILE.read_text().startswith("# The Docker sandbox's analyst image")
