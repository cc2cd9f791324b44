"""The stream's bookkeeping on its own, without Ray or sockets (quick tier): caps counted
as handles are reserved and issued, whatever the interleaving of pulls; revoking ends a
pull; a name minted again is another consumer; the rate limiter, the connection caps,
the audit log's lines; which hosts count as loopback and which listeners may speak
plain HTTP. The supply workers are stood in for by coroutines that make opaque handles
(the handout never looks inside a task)."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.errors import StreamError
from orchestrator.stream.audit import AuditLog, audit_line
from orchestrator.stream.gate import serves
from orchestrator.stream.handout import Handout
from orchestrator.stream.ledger import Limits
from orchestrator.stream.limits import (
    ConnectionCaps,
    RateLimiter,
    RateLimitFilter,
    connection_budget,
)
from orchestrator.stream.options import ServeOptions, exposure, is_loopback
from orchestrator.stream.tokens import TokenStore, new_token
from orchestrator.stream.types import Made, StreamScore


class Supply:
    """Stands in for the supply workers: opaque handles, a made task every millisecond,
    and a record of what it was told to forget."""

    def __init__(self, delay_s: float = 0.001) -> None:
        self.delay_s, self.forgotten = delay_s, []

    async def make(self, worker: int) -> Made:
        await asyncio.sleep(self.delay_s)
        return Made(f"{worker:02d}{secrets.token_hex(8)}", b'{"task": 1}')

    async def extend(self, worker: int, handle: str, count: int) -> tuple[str, ...]:
        return tuple(f"{worker:02d}{secrets.token_hex(8)}" for _ in range(count))

    async def score(self, worker: int, handle: str, submission: Any) -> StreamScore:
        return StreamScore(
            valid=True, family="ate", reward_version=1, reward=0.5, clipped_reward=0.5
        )

    async def forget(self, worker: int, handles: list[str]) -> int:
        self.forgotten += handles
        return len(handles)

    def handout(self, limits: Limits) -> Handout:
        return Handout(2, self.make, self.score, self.forget, limits, self.extend)


def _held(handout: Handout, key: str) -> int:
    counts = handout.ledger.counts(key)
    return counts.outstanding + counts.reserved


async def _race(handout: Handout, keys: list[str], n: int, group: int, cap: int) -> list[Any]:
    """Pulls of n x group for each key at once; after every handle issued, the cap is
    checked for the consumer and the stream."""

    async def one(key: str) -> Any:
        try:
            pull = handout.open_pull(key, n, group)
        except StreamError as exc:
            return exc.code
        got = 0
        async for made in handout.serve(pull):
            got += len(made.handles)
            assert _held(handout, key) <= handout.ledger.counts(key).cap  # type: ignore[operator]
            totals = handout.ledger.totals
            assert totals.outstanding + totals.reserved <= cap
            await asyncio.sleep(0)  # let the other pulls run between handles
        return got

    return list(await asyncio.gather(*(one(key) for key in keys)))


def test_eight_concurrent_pulls_of_four_leave_one_consumer_four_handles() -> None:
    async def attack() -> tuple[list[Any], int]:
        handout = Supply().handout(Limits(per_consumer_outstanding=4))
        handout.ledger.register("c#1", "c")
        results = await _race(handout, ["c#1"] * 8, 4, 1, 10_000)
        return results, handout.ledger.counts("c#1").outstanding

    results, outstanding = asyncio.run(attack())
    assert sorted(results, key=str) == [4] + ["too_many"] * 7 and outstanding == 4


def test_sixteen_pulls_of_1024_never_pass_the_stream_cap() -> None:
    async def attack() -> tuple[list[Any], int]:
        handout = Supply(delay_s=0).handout(Limits(max_outstanding=4096))
        keys = [f"c{i}#{i}" for i in range(16)]
        results = await _race(handout, keys, 256, 4, 4096)  # 1,024 handles each
        return results, handout.ledger.totals.outstanding

    results, outstanding = asyncio.run(attack())
    assert results.count(1024) == 4 and results.count("too_many") == 12
    assert outstanding == 4096


def test_a_pull_that_ends_early_gives_back_its_reservation() -> None:
    async def early() -> tuple[int, int, int]:
        handout = Supply().handout(Limits(per_consumer_outstanding=4))
        pull = handout.open_pull("c#1", 4)
        lines = handout.serve(pull)
        await lines.__anext__()
        await lines.aclose()  # the consumer went away after one task
        counts = handout.ledger.counts("c#1")
        after = (counts.outstanding, counts.reserved, counts.requests)
        again = handout.open_pull("c#1", 3)  # the room is back
        handout.close_pull(again)
        return after

    # the task it was handed while going away is not delivered: 0 outstanding
    assert asyncio.run(early()) == (0, 0, 0)


def test_a_pull_refused_for_a_cap_leaves_no_request_in_flight() -> None:
    handout = Supply().handout(Limits(per_consumer_outstanding=2, per_consumer_requests=1))
    with pytest.raises(StreamError, match="may hold at most 2 unscored handles") as caught:
        handout.open_pull("c#1", 3)
    assert caught.value.code == "too_many"
    handout.close_pull(handout.open_pull("c#1", 2))
    assert handout.ledger.counts("c#1").requests == 0


def test_episode_mode_has_no_per_consumer_cap_but_the_stream_s() -> None:
    handout = Supply().handout(Limits(per_consumer_outstanding=4, max_outstanding=8))
    pull = handout.open_pull("(episodes)", 6, request=False)
    assert handout.ledger.counts("(episodes)").reserved == 6
    with pytest.raises(StreamError, match="the stream has 6"):
        handout.open_pull("(episodes)", 3, request=False)
    handout.close_pull(pull)


def test_revoking_ends_a_running_pull_and_forgets_its_handles() -> None:
    async def revoke_mid_pull() -> tuple[int, str, int, int, int]:
        supply = Supply(delay_s=0.01)
        handout = supply.handout(Limits())
        pull = handout.open_pull("c#1", 30)
        got: list[Made] = []
        code = ""
        try:
            async for made in handout.serve(pull):
                got.append(made)
                if len(got) == 2:
                    await handout.revoke("c#1")
        except StreamError as exc:
            code = exc.code
        await asyncio.sleep(0.05)  # the forget calls run
        counts = handout.ledger.counts("c#1")
        return (
            len(got),
            code,
            counts.outstanding + counts.reserved,
            len(supply.forgotten),
            (handout.ready),
        )

    got, code, held, forgotten, ready = asyncio.run(revoke_mid_pull())
    assert (got, code, held, forgotten) == (2, "unauthorized", 0, 2)
    assert ready >= 1  # what was made for it and not handed over waits for others


def test_revoking_ends_a_consumer_s_wait_for_rollouts() -> None:
    from orchestrator.stream.episodes import EpisodeMode, EpisodeSettings

    async def wait_then_revoke() -> tuple[str, float]:
        handout = Supply().handout(Limits())
        mode = EpisodeMode("s", handout)
        endpoint = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
        mode.settings = EpisodeSettings.model_validate({"endpoint": endpoint})
        waiting = asyncio.ensure_future(mode.pull("c#1", 1, 0, 60.0))
        await asyncio.sleep(0.05)
        await handout.revoke("c#1")
        mode.wake()
        started = time.monotonic()
        try:
            await asyncio.wait_for(waiting, 5)
        except StreamError as exc:
            return exc.code, time.monotonic() - started
        return "delivered", 0.0

    code, seconds = asyncio.run(wait_then_revoke())
    assert code == "unauthorized" and seconds < 1


def test_a_name_minted_again_is_another_consumer() -> None:
    async def remint() -> tuple[str, int, int]:
        store = TokenStore(new_token("operator"))
        handout = Supply().handout(Limits())
        _, first = store.mint("again")
        handout.ledger.register(first.key, "again")
        old = [m async for m in handout.pull(first.key, 2)]
        assert store.revoke("again") == first
        await handout.revoke(first.key)
        _, second = store.mint("again")
        handout.ledger.register(second.key, "again")
        with pytest.raises(StreamError, match="unknown handle") as caught:
            await handout.score(second.key, old[0].handle, {})
        view = handout.consumer_view(second.key)
        return caught.value.code, view.tasks_delivered, view.handles_outstanding

    assert asyncio.run(remint()) == ("not_found", 0, 0)


def test_the_rate_limiter_lets_one_line_a_second_per_key_through_and_counts_the_rest() -> None:
    now = [100.0]
    limiter = RateLimiter(interval_s=1.0, per_second=3, max_keys=4, clock=lambda: now[0])
    assert limiter.allow("a") == 0
    assert [limiter.allow("a") for _ in range(5)] == [None] * 5
    now[0] += 1.0
    assert limiter.allow("a") == 5  # the next line says how many were held back
    assert [limiter.allow(k) for k in "bcd"] == [0, 0, None]  # 3 a second over all keys
    for key in "efgh":  # more keys than max_keys: the oldest are forgotten, counts kept
        now[0] += 1.0
        limiter.allow(key)
    assert dict(limiter.drain()) == {None: 1}  # d's held line, evicted with d
    assert limiter.drain() == []


def test_the_log_filter_keeps_a_flood_to_a_line_a_second(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("causal_gym.test_flood")
    logger.addFilter(RateLimitFilter())
    with caplog.at_level(logging.WARNING, logger=logger.name):
        for index in range(1000):
            logger.warning("refused a connection from %s", f"10.0.0.{index % 250}")
    assert 1 <= len(caplog.records) <= 3


def test_connection_caps_count_in_all_and_per_address() -> None:
    caps = ConnectionCaps(total=5, per_address=2)
    assert [caps.admit("a") for _ in range(3)][:2] == [None, None]
    assert caps.refused == 1 and caps.of("a") == 2
    assert all(caps.admit(x) is None for x in "bcd")
    assert "5 connections are open (at most 5)" in str(caps.admit("e"))
    caps.release("a")
    assert caps.admit("e") is None and caps.open == 5
    with pytest.raises(ValueError):
        caps.release("nobody")
    assert connection_budget(4096, 1024) == 512 and connection_budget(100, 20_000) == 100


def test_the_audit_log_is_private_json_lines_and_rate_limits_refusals(tmp_path: Path) -> None:
    now = [1_800_000_000.0]
    log = AuditLog(tmp_path / "audit.jsonl", RateLimiter(clock=lambda: now[0]), lambda: now[0])
    assert stat.S_IMODE((tmp_path / "audit.jsonl").stat().st_mode) == 0o600
    log.record("mint", consumer="trainer", client="127.0.0.1")
    for _ in range(500):  # an attacker guessing tokens from one address
        log.refused("unauthorized", "POST /v1/tasks/pull" + "x" * 500, "10.1.1.1")
    log.refused("forbidden", "GET /v1/operator/status", "10.1.1.2", "trainer")
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [x["event"] for x in lines] == ["mint", "unauthorized", "forbidden", "held_back"]
    assert lines[0]["time"] == "2027-01-15T08:00:00.000Z"
    assert len(lines[1]["route"]) == 200 and lines[2]["consumer"] == "trainer"
    assert lines[3] == {**lines[3], "kind": "unauthorized", "client": "10.1.1.1", "count": 499}
    assert audit_line("stop", {"client": "signal"}, 0.0).endswith('"client": "signal"}\n')


def test_the_audit_log_is_not_written_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / "audit.jsonl").symlink_to(target)
    with pytest.raises(StreamError, match="cannot open the audit log"):
        AuditLog(tmp_path / "audit.jsonl")
    assert target.read_text() == ""


def test_the_gate_serves_each_route_on_its_own_listener() -> None:
    assert serves("consumer", "/v1/tasks/pull") and not serves("consumer", "/v1/operator/stop")
    assert serves("operator", "/v1/operator/stop") and not serves("operator", "/v1/tasks/pull")
    assert not serves("operator", "/openapi.json") and serves("consumer", "/openapi.json")
    assert all(serves(who, "/v1/health") for who in ("consumer", "operator", None))
    assert not serves(None, "/v1/tasks/pull")


def test_plain_http_off_loopback_is_refused_unless_asked_for(tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("")
    with pytest.raises(StreamError, match="cannot resolve host 'no such host'"):
        is_loopback("no such host")
    base = ServeOptions(name="s", families=("ate",), state_dir=tmp_path)
    assert exposure(base) == (False, [])
    with pytest.raises(StreamError, match=r"--host 0\.0\.0\.0 is not loopback: serve TLS"):
        exposure(ServeOptions(**{**base.__dict__, "host": "0.0.0.0"}))
    with pytest.raises(StreamError, match=r"--operator-host 0\.0\.0\.0 is not loopback"):
        exposure(ServeOptions(**{**base.__dict__, "operator_host": "0.0.0.0"}))
    tls, warnings = exposure(
        ServeOptions(**{**base.__dict__, "host": "0.0.0.0", "insecure_http": True})
    )
    assert not tls and len(warnings) == 1 and warnings[0].startswith("warning: --host 0.0.0.0")
    certs = {"ssl_certfile": "c.pem", "ssl_keyfile": "k.pem"}
    assert exposure(ServeOptions(**{**base.__dict__, **certs, "host": "0.0.0.0"})) == (False, [])
    both = {**base.__dict__, **certs, "operator_host": "0.0.0.0"}
    assert exposure(ServeOptions(**both)) == (True, [])  # TLS on the exposed operator too


def test_the_docs_quote_the_client_s_connect_timeout() -> None:
    from orchestrator.stream.client import CONNECT_TIMEOUT_S, _Base

    page = (Path(__file__).resolve().parents[1] / "docs" / "pages" / "streams.md").read_text()
    assert f"`connect_timeout_s` (default {CONNECT_TIMEOUT_S:g} s: `CONNECT_TIMEOUT_S`" in page
    options = _Base("http://127.0.0.1:1", "cgs_c_x")._options
    assert options["timeout"].connect == CONNECT_TIMEOUT_S
