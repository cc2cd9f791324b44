"""Look at inspect_ai logs the way a person does: `inspect view` on a log folder,
opened in Debian's headless Chromium through playwright. The browser test uses the
two context managers; run as a script it takes the docs' screenshots:

    .venv/bin/python scripts/inspect_view.py LOG_DIR OUT_DIR [SAMPLE_ID]

writes OUT_DIR/inspect-view-samples.png (the log's sample table) and
OUT_DIR/inspect-view-sample.png (one sample's conversation, by default the first).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
#: Chromium as root in a closed network: no sandbox, no GPU, no calls home.
CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def inspect_view(log_dir: Path, timeout_s: float = 60.0) -> Iterator[str]:
    """`inspect view start` on 127.0.0.1 serving `log_dir`; yields its URL and stops
    it (its whole process group) afterwards."""
    port = _free_port()
    viewer = subprocess.Popen(
        [str(Path(sys.executable).with_name("inspect")), "view", "start", "--log-dir",
         str(log_dir), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if viewer.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"inspect view did not start on port {port}")
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(viewer.pid, signal.SIGTERM)
        try:
            viewer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(viewer.pid, signal.SIGKILL)
            viewer.wait()


@contextmanager
def chromium_page(width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A page of a headless Chromium (Debian's, driven by playwright)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def main() -> None:
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: python scripts/inspect_view.py LOG_DIR OUT_DIR [SAMPLE_ID]")
    from inspect_ai.log import list_eval_logs, read_eval_log

    log_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    first = read_eval_log(list_eval_logs(str(log_dir))[0].name)
    assert first.samples
    sample = sys.argv[3] if len(sys.argv) == 4 else str(first.samples[0].id)
    out.mkdir(parents=True, exist_ok=True)
    with inspect_view(log_dir) as url, chromium_page(1400, 820) as page:
        page.goto(url)
        page.get_by_text(first.eval.task, exact=False).first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "inspect-view-logs.png"))
        page.get_by_text(first.eval.task).first.click()
        page.get_by_text(sample, exact=True).first.wait_for(timeout=60_000)
        page.wait_for_timeout(1000)
        page.screenshot(path=str(out / "inspect-view-samples.png"))
        page.get_by_text(sample, exact=True).first.click()
        page.get_by_text("Messages", exact=True).first.click()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "inspect-view-sample.png"))
    print(f"wrote {out}/inspect-view-logs.png, inspect-view-samples.png, inspect-view-sample.png")


if __name__ == "__main__":
    main()
