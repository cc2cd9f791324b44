"""Where episode mode's endpoint key may come from (quick tier, real files): only a
plain file of the endpoint-secrets folder, never through a link, never the stream's
key, a stream token or Ray's auth token, whatever an operator route names. The live
attack, against a running stream and a listener, is in test_stream.py."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from causal_gym.rng_keys.keys import DerivationKey
from orchestrator.errors import StreamError
from orchestrator.stream.secrets import EndpointSecrets, check_secrets_folder

KEY = secrets.token_bytes(32)
FINGERPRINT = DerivationKey(KEY, "test").fingerprint


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own, with a Ray token where Ray 2.60 keeps it."""
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text("ray-cluster-token-" + secrets.token_hex(16))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    return home


@pytest.fixture
def folder(tmp_path: Path, home: Path) -> Iterator[EndpointSecrets]:
    path = tmp_path / "secrets"
    path.mkdir(mode=0o700)
    (path / "policy.key").write_text("sk-endpoint\n")
    held = EndpointSecrets(path, FINGERPRINT)
    try:
        yield held
    finally:
        held.close()


def _refused(held: EndpointSecrets, name: str, fragment: str) -> None:
    with pytest.raises(StreamError, match=fragment) as caught:
        held.read(name)
    assert caught.value.code == "bad_request" and "\n" not in str(caught.value)


def test_a_plain_file_of_the_folder_is_read(folder: EndpointSecrets) -> None:
    assert folder.read("policy.key") == "sk-endpoint"


def test_names_that_leave_the_folder_are_refused(folder: EndpointSecrets, home: Path) -> None:
    for name in (str(home / ".ray" / "auth_token"), "../secrets/policy.key", "a/b", "..", ".x"):
        _refused(folder, name, "is not a plain file name in the endpoint-secrets folder")
    for name in ("operator.token", "stream.json", "audit.jsonl", "serve.log"):
        _refused(folder, name, "is one of the stream's own files")
    _refused(folder, "missing.key", "No such file")


def test_links_and_what_they_point_at_are_refused(folder: EndpointSecrets, home: Path) -> None:
    exported = folder.folder.parent / "exported.key"
    exported.write_text(KEY.hex())
    (folder.folder / "to-ray").symlink_to(home / ".ray" / "auth_token")
    (folder.folder / "to-key").symlink_to(exported)
    os.link(exported, folder.folder / "hard-key")
    _refused(folder, "to-ray", "is a symlink")
    _refused(folder, "to-key", "is a symlink")
    _refused(folder, "hard-key", "has other hard links")


def test_contents_that_are_secrets_of_the_head_are_refused(
    folder: EndpointSecrets, home: Path
) -> None:
    inside = folder.folder
    (inside / "copied-key").write_text(KEY.hex() + "\n")
    (inside / "copied-ray").write_text((home / ".ray" / "auth_token").read_text())
    (inside / "token").write_text("cgs_op_" + secrets.token_urlsafe(32))
    (inside / "big").write_text("k" * 5000)
    (inside / "two-lines").write_text("sk-a\nsk-b\n")
    (inside / "other-key").write_text(secrets.token_hex(32))  # a key, not the stream's
    _refused(folder, "copied-key", "holds the stream's key")
    _refused(folder, "copied-ray", "holds Ray's auth token")
    _refused(folder, "token", "holds a stream token")
    _refused(folder, "big", "is over 4096 bytes")
    _refused(folder, "two-lines", "one line")
    assert len(folder.read("other-key")) == 64
    (inside / "fifo").unlink(missing_ok=True)
    os.mkfifo(inside / "fifo")
    _refused(folder, "fifo", "is not a regular file")  # and opening it did not block


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_refused(folder: EndpointSecrets) -> None:
    planted = folder.folder / "planted"
    planted.write_text("sk-planted")
    os.chown(planted, 65534, 65534)
    _refused(folder, "planted", "is not owned by the stream's user")


def test_the_folder_must_be_private_and_not_ray_s(tmp_path: Path, home: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    link = tmp_path / "link"
    link.symlink_to(home)
    for path, fragment in (
        (shared, "is writable by others"),
        (link, "is not a directory"),
        (home / ".ray", "is Ray's"),
        (tmp_path / "none", "No such file"),
    ):
        with pytest.raises(StreamError, match=fragment):
            check_secrets_folder(path)
