"""The tests' one poll-until helper: what it returns, and what its failure says."""

from __future__ import annotations

import itertools
import time

import pytest

from tests.support.poll import DEFAULT_TIMEOUT_S, eventually, eventually_sync


async def test_returns_the_first_value_that_holds_from_a_plain_or_an_async_probe() -> None:
    counts = itertools.count()
    assert await eventually(lambda: next(counts) >= 3) is True

    async def grows() -> list[int]:
        return list(range(next(counts)))

    assert await eventually(grows, lambda xs: len(xs) >= 6) == [0, 1, 2, 3, 4, 5]


async def test_a_failure_names_what_was_awaited_and_the_last_value_seen() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError) as caught:
        await eventually(
            lambda: ["not", "yet"], lambda xs: not xs, what="an empty list", timeout_s=0.1
        )
    assert time.monotonic() - started < 5
    text = str(caught.value)
    assert text.startswith("an empty list: did not hold within 0.1 s")
    assert "last seen: ['not', 'yet']" in text


async def test_without_a_name_a_lambda_is_described_by_its_source() -> None:
    with pytest.raises(AssertionError, match=r"lambda: 0 > 1"):
        await eventually(lambda: 0 > 1, timeout_s=0.05)


async def test_only_the_ignored_exceptions_count_as_not_yet() -> None:
    calls = itertools.count()

    def flaky() -> int:
        n = next(calls)
        if n < 2:
            raise ConnectionError("still starting")
        return n

    assert await eventually(flaky, ignoring=(ConnectionError,)) == 2
    with pytest.raises(ZeroDivisionError):
        await eventually(lambda: 1 / 0, ignoring=(ConnectionError,))


def test_the_sync_variant_waits_the_same_way() -> None:
    counts = itertools.count()
    assert eventually_sync(lambda: n if (n := next(counts)) >= 3 else None) == 3
    with pytest.raises(AssertionError, match="last seen: ConnectionError"):
        eventually_sync(_refused, timeout_s=0.05, ignoring=(ConnectionError,))
    assert DEFAULT_TIMEOUT_S >= 5  # long enough for a loaded machine, short next to a test


def _refused() -> bool:
    raise ConnectionError("refused")
