"""Ray's token file on a fresh machine: many processes that start Ray at once must all
end up reading one token (CI once failed when parallel tests each wrote their own)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CODE = (
    "from pathlib import Path; from orchestrator.run.cluster import ensure_auth_token; "
    "ensure_auth_token(); print((Path.home() / '.ray' / 'auth_token').read_text())"
)


def test_concurrent_first_starts_agree_on_one_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH_TOKEN")}
    env["HOME"] = str(tmp_path)
    procs = [
        subprocess.Popen([sys.executable, "-c", CODE], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    tokens = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert all(proc.returncode == 0 for proc in procs)
    assert len(tokens) == 1 and len(tokens.pop()) == 64
    folder = tmp_path / ".ray"
    assert [p.name for p in folder.iterdir()] == ["auth_token"]  # no temporaries left
    assert (folder / "auth_token").stat().st_mode & 0o777 == 0o600


def test_an_existing_or_configured_token_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("operator-chosen")
    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "operator-chosen"
    other = tmp_path / "other"
    other.mkdir()
    env = {**os.environ, "HOME": str(other), "RAY_AUTH_TOKEN_PATH": str(tmp_path / "t")}
    code = (
        "from pathlib import Path; from orchestrator.run.cluster import ensure_auth_token; "
        "ensure_auth_token(); print((Path.home() / '.ray').exists())"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


STALE = """
from pathlib import Path
from ray._raylet import AuthenticationTokenLoader
from orchestrator.run.cluster import ensure_auth_token
ensure_auth_token()
loader = AuthenticationTokenLoader.instance()
first = loader.get_raw_token()
(Path.home() / ".ray" / "auth_token").write_text("rotated-by-the-operator")
stale = loader.get_raw_token()
ensure_auth_token()
print(first == stale, loader.get_raw_token())
"""


def test_a_process_reads_the_current_token_at_each_start(tmp_path: Path) -> None:
    """Ray caches the token per process; every start here re-reads the file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", STALE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "rotated-by-the-operator"]


DISABLED_FIRST = """
import os
os.environ.pop("RAY_AUTH_MODE", None)
from ray._raylet import Config
Config.initialize("")  # the process touched Ray while token mode was off
os.environ["RAY_AUTH_MODE"] = "token"  # and later something turned it on
from orchestrator.run.cluster import connect, disconnect
cluster = connect(None, num_cpus=1)
print("started", cluster.nodes)
disconnect(cluster)
"""


@pytest.mark.ray
def test_a_process_that_touched_ray_with_auth_off_still_starts_it(tmp_path: Path) -> None:
    """The failure CI saw: a local start that sent no token to its own GCS ("Failed
    to start GCS") because the process's auth mode was read before it was set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    done = subprocess.run(
        [sys.executable, "-c", DISABLED_FIRST],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["started", "1"]
