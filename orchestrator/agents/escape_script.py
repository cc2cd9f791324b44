"""Run inside a sandbox by the `escape` probe: try every way out, print what worked.

Standard library only (the sandbox has no causal_gym). Prints one JSON object whose
lists are empty when the sandbox holds: no network, no key, no generator package,
no readable host files.
"""

import json
import os
import socket

SECRET_NAMES = ("CAUSAL_GYM_KEY",)
HOST_FILES = (
    "/etc/shadow",
    "/root/.bashrc",
    "/root/.ssh",
    "/var/run/docker.sock",
    "/run/docker.sock",
)
SEARCH_ROOTS = ("/work", "/home", "/root", "/srv", "/opt", "/tmp", "/mnt", "/var")


#: (host, port) pairs the operator adds, e.g. a listener on the host running the sandbox;
#: the escape policy prepends a definition when it is given targets.
EXTRA_TARGETS: list[tuple[str, int]] = globals().get("EXTRA_TARGETS", [])
PUBLIC_TARGETS = [("1.1.1.1", 53), ("8.8.8.8", 53), ("pypi.org", 443), ("example.com", 80)]


def network() -> list[str]:
    found = []
    for host, port in PUBLIC_TARGETS + EXTRA_TARGETS:
        try:
            socket.create_connection((host, port), timeout=3).close()
            found.append(f"connected to {host}:{port}")
        except OSError:
            pass
    try:
        socket.getaddrinfo("pypi.org", 443)
        found.append("DNS resolves pypi.org")
    except OSError:
        pass
    return found


def key() -> list[str]:
    found = [f"env {n}" for n in SECRET_NAMES if os.environ.get(n)]
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if any(n.encode() in handle.read() for n in SECRET_NAMES):
                        found.append(f"/proc/{pid}/environ")
            except OSError:
                pass
    return found


def generator() -> list[str]:
    found = []
    try:
        __import__("causal_gym")
        found.append("import causal_gym works")
    except ImportError:
        pass
    for root in SEARCH_ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath.count("/") > 6:
                dirnames[:] = []
            if "derive.py" in filenames and "rng_keys" in dirpath:
                found.append(os.path.join(dirpath, "derive.py"))
            if os.path.basename(dirpath) in ("causal_gym", "orchestrator"):
                found.append(dirpath)
                dirnames[:] = []
    return found


def host_files() -> list[str]:
    found = []
    for path in HOST_FILES:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                with open(path, "rb") as handle:
                    handle.read(1)
            found.append(path)
        except OSError:
            pass
    for root in SEARCH_ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath.count("/") > 5:
                dirnames[:] = []
            if "pyproject.toml" in filenames:
                try:
                    with open(os.path.join(dirpath, "pyproject.toml")) as handle:
                        if "causal-gym" in handle.read():
                            found.append(os.path.join(dirpath, "pyproject.toml"))
                except OSError:
                    pass
    return found


print(
    json.dumps(
        {"network": network(), "key": key(), "generator": generator(), "host_files": host_files()}
    )
)
