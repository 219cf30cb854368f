"""The token bucket's arithmetic (``ratelimit.bucket``), with the clock passed in: the
limit's text, exact counts over simulated time, a clock that goes back, the bound on
the buckets one process keeps, and the Redis store's Lua script computing the same
answers as the Python (a real ``redis-server``, when installed)."""

from __future__ import annotations

import asyncio
import random
import shutil
from pathlib import Path

import pytest

from mcpgen_runtime.ratelimit.bucket import LocalBuckets, RateLimit, retry_after_header, take


def test_the_limit_text() -> None:
    assert RateLimit.parse("10/s") == RateLimit(10.0, 1.0, 10)
    assert RateLimit.parse("600/m") == RateLimit(600.0, 60.0, 600)
    assert RateLimit.parse(" 0.5 / s ", 3) == RateLimit(0.5, 1.0, 3)
    assert RateLimit.parse("0.5/s").burst == 1  # at least one request gets through
    assert RateLimit.parse("120/m").interval == 0.5
    assert str(RateLimit.parse("1/m", 5)) == "1/m (burst 5)"
    for bad in ("10", "10/h", "ten/s", "-1/s", "0/s", "1/s/s", ""):
        with pytest.raises(ValueError):
            RateLimit.parse(bad)
    with pytest.raises(ValueError, match="positive integer"):
        RateLimit.parse("1/s", 0)


def test_a_burst_then_one_token_per_interval() -> None:
    limit = RateLimit.parse("2/s", 4)  # a token every 0.5 s, 4 at once
    tat, admitted, waits = 0.0, 0, []
    for _ in range(10):
        tat, wait = take(tat, 100.0, limit)
        admitted += wait == 0
        waits.append(wait)
    assert admitted == 4
    assert waits[4:] == [pytest.approx(0.5)] * 6  # the refused are told when the next comes
    tat, wait = take(tat, 100.49, limit)
    assert wait == pytest.approx(0.01)
    tat, wait = take(tat, 100.5, limit)
    assert wait == 0


def test_exact_counts_over_simulated_time() -> None:
    """Requests far faster than the rate: the burst, then one per interval."""
    limit = RateLimit.parse("10/s", 5)
    tat, admitted = 0.0, 0
    for step in range(10_000):  # a request every millisecond from 50.000 to 59.999
        tat, wait = take(tat, 50.0 + step / 1000, limit)
        admitted += wait == 0
    assert admitted == 5 + 99  # 5 at 50.0, then one at 50.1, 50.2, …, 59.9


def test_a_clock_that_goes_back_grants_nothing() -> None:
    limit = RateLimit.parse("1/s", 1)
    tat, wait = take(0.0, 1000.0, limit)
    assert wait == 0
    tat, wait = take(tat, 990.0, limit)  # ten seconds back
    assert wait > 0


def test_retry_after_is_whole_seconds_rounded_up() -> None:
    assert [retry_after_header(w) for w in (0.001, 0.5, 1.0, 1.2, 59.01)] == [1, 1, 1, 2, 60]


def test_local_buckets_forget_full_ones_and_stay_bounded() -> None:
    limit = RateLimit.parse("1/s", 2)
    buckets = LocalBuckets(max_callers=80)
    assert buckets.take("a", 0.0, limit) == 0 and len(buckets) == 1
    assert buckets.take("a", 0.0, limit) == 0 and buckets.take("a", 0.0, limit) > 0
    for i in range(200):  # callers seen within the refill time
        buckets.take(f"caller {i}", 0.5, limit)
    assert len(buckets) <= 80
    # once their buckets are full again, the next sweep forgets them all
    for i in range(81):
        buckets.take(f"late {i}", 10.0, limit)
    assert len(buckets) <= 80 and all(key.startswith("late") for key in buckets._tats)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_the_redis_script_computes_what_the_python_does(tmp_path: Path) -> None:
    pytest.importorskip("redis", reason="redis-py (the redis extra) is not installed")
    from fixtures.redis_server import redis_server

    from mcpgen_runtime.tasks.redis_store import RedisTaskStore

    now = [1_700_000_000.0]
    rng = random.Random(31)

    async def run(url: str) -> None:
        store = RedisTaskStore(url, key_prefix="t:", clock=lambda: now[0])
        try:
            # per-minute limits: a key lives (in Redis's real time) at least a token's
            # interval, 10 s here, longer than this test, while the clock here jumps
            for text, burst in (("3/m", 2), ("6/m", 5), ("1/m", 1)):
                limit = RateLimit.parse(text, burst)
                tat = 0.0
                for _ in range(300):
                    now[0] += rng.choice((0.0, 0.0, 0.6, 6.0, 18.0, 60.0, 150.0))
                    tat, expected = take(tat, now[0], limit)
                    got = await store.take_token(f"caller {text}", limit)
                    assert got == pytest.approx(expected, abs=1e-5), (text, now[0])
            keys = await store.redis.keys("t:rate:*")
            ttls = [await store.redis.pttl(key) for key in keys]
            assert len(keys) == 3 and all(ttl > 0 for ttl in ttls)  # every key expires
        finally:
            await store.close()

    with redis_server(tmp_path) as redis:
        asyncio.run(run(redis.url))
