"""A real listener on the host, so a "no network" check can fail: an offline machine
cannot reach external hosts anyway, but it can always reach itself. Used by the
sandbox conformance checks and the tests."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from typing import Any


def host_addresses() -> list[str]:
    """127.0.0.1 plus every non-loopback IPv4 address of this host (docker0 included)."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True)
    found = [line.split()[3].split("/")[0] for line in out.stdout.splitlines() if " inet " in line]
    return ["127.0.0.1", *sorted({a for a in found if not a.startswith("127.")})]


class HostListener:
    """Accepts TCP connections on 0.0.0.0 and counts them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def targets(self) -> list[tuple[str, int]]:
        return [(address, self.port) for address in host_addresses()]

    def __enter__(self) -> HostListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
        self._thread.join(timeout=5)


def probe_code(targets: list[tuple[str, int]]) -> str:
    """Standard-library Python that tries each target and prints what happened."""
    return (
        "import errno, json, socket\n"
        f"targets = {targets!r}\n"
        "seen = {}\n"
        "for host, port in targets:\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=3).close()\n"
        "        seen[host] = 'connected'\n"
        "    except OSError as exc:\n"
        "        seen[host] = errno.errorcode.get(exc.errno, repr(exc))\n"
        "print(json.dumps(seen))\n"
    )


def probe_from_host(targets: list[tuple[str, int]]) -> dict[str, Any]:
    """The control: the same probe outside any sandbox connects to every target."""
    done = subprocess.run(
        [sys.executable, "-c", probe_code(targets)], capture_output=True, text=True, timeout=60
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result
