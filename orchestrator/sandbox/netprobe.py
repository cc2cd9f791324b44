"""A real listener on the host, so a "no network" check can fail: an offline machine
cannot reach external hosts anyway, but it can always reach itself. Used by the
sandbox conformance checks and the tests."""

from __future__ import annotations

import contextlib
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
    """Accepts TCP connections on 0.0.0.0 and counts them.

    A client's connect() returns once the kernel has queued the connection, before this
    thread accepts it, so read the count with `reached()` or `settled()`, never straight
    after a probe.
    """

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        self._peers: list[tuple[str, int]] = []
        self._sentinels: set[tuple[str, int]] = set()
        self._seen = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            conn.close()
            with self._seen:
                self._peers.append((peer[0], peer[1]))
                self._seen.notify_all()

    @property
    def accepted(self) -> int:
        """Connections accepted so far, not counting this listener's own sentinels."""
        with self._seen:
            return len(self._peers) - len(self._sentinels)

    def reached(self, count: int, timeout_s: float = 10.0) -> int:
        """The count once it reaches `count`: after a probe that connected `count`
        times, the accepts may still be on their way to this thread."""
        with self._seen:
            if not self._seen.wait_for(
                lambda: len(self._peers) - len(self._sentinels) >= count, timeout_s
            ):
                raise TimeoutError(f"{count} connections were not accepted in {timeout_s} s")
        return self.accepted

    def settled(self, timeout_s: float = 10.0) -> int:
        """The count after a sentinel connection of our own has been accepted, so a
        connection made well before it has been counted (used after a sandboxed probe,
        where a late count could only hide an escape, never invent one)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout_s) as sentinel:
            name = sentinel.getsockname()
            me = (name[0], name[1])
            with self._seen:
                if not self._seen.wait_for(lambda: me in self._peers, timeout_s):
                    raise TimeoutError(f"the listener did not accept within {timeout_s} s")
                self._sentinels.add(me)
        return self.accepted

    def targets(self) -> list[tuple[str, int]]:
        return [(address, self.port) for address in host_addresses()]

    def __enter__(self) -> HostListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # close() alone does not wake a thread blocked in accept() on Linux; shutdown does
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
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
