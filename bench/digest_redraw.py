"""Digest redraw cost against the backlog it lists (issue 41, finding 5).

One group (channel, requester, tool) with 200 waiting refunds, then the same with 2,000:
each time the digest is drawn once, then redrawn `--m` times, and the median of the
redraws is printed, split into what the redraw reads from Redis (the group's index and
the rows the card shows) and the whole redraw (reads, render, Slack update on the
emulator). Target: the 2,000 figure at most twice the 200 one, from the same run (a
redraw reads what it draws, never the whole backlog). Prints figures; not a test.
Starts its own Valkey unless REDIS_URL is set (that database is FLUSHED).

    .venv/bin/python bench/digest_redraw.py [--m 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _common import REFUND, create_many, flush, print_load, server_url, verdict
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox.slack import SlackEmulator
from bot.slack.batch.upkeep import DigestKeeper
from bot.slack.delivery.once import OncePoster
from bot.store.posted.digests import group_id
from bot.store.stores import StoreSet

TOKEN = "xoxb-bench"
SIZES = (200, 2000)


async def fill(rt: StoreSet, channel: str, n: int) -> str:
    """`n` waiting refunds listed in one digest group, as the notifier enrols them."""
    made = await create_many([rt.requests] * 8, n)
    group = group_id(channel, made[0].requester, "refund")
    meta = {"channel": channel, "requester": made[0].requester, "tool": "refund"}
    for req in made:
        await rt.cards.save_request_card(req.id, channel, f"1.{len(req.id)}")
        await rt.digests.join(group, req.id, req.created_at, "", meta)
    return group


async def timed(m: int, step: object) -> float:
    """Median milliseconds of `m` awaits of `step()`."""
    out = []
    for _ in range(m):
        t0 = time.perf_counter()
        await step()  # type: ignore[operator]
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


async def one_size(r: Redis, emu: SlackEmulator, n: int, m: int) -> tuple[float, float]:
    await flush(r)
    rt = StoreSet(r)
    client = AsyncWebClient(token=TOKEN, base_url=emu.api_url, retry_handlers=[])
    posted = await client.chat_postMessage(channel="#hitl-approvals", text="a card")
    group = await fill(rt, str(posted["channel"]), n)
    keeper = DigestKeeper(rt, client, OncePoster(rt, client), holder="bench")
    await keeper.redraw(group)  # the first drawing posts the digest
    reads = await timed(m, lambda: keeper._waiting(group))
    whole = await timed(m, lambda: keeper.redraw(group))
    return reads, whole


async def main(m: int) -> None:
    print_load()
    print(f"refund payload: {len(REFUND)} arguments; {m} redraws per size, median")
    with server_url() as url:
        r = Redis.from_url(url, decode_responses=True)
        async with SlackEmulator(bot_token=TOKEN) as emu:
            got = {n: await one_size(r, emu, n, m) for n in SIZES}
        await r.aclose()
    for n, (reads, whole) in got.items():
        print(f"{n:>5} waiting: redraw reads {reads:.2f} ms, whole redraw {whole:.2f} ms")
    lo, hi = SIZES
    ratio = got[hi][0] / got[lo][0]
    print(verdict(f"reads ratio {hi}/{lo}", ratio, "<= 2", ratio <= 2))
    ratio = got[hi][1] / got[lo][1]
    print(verdict(f"whole redraw ratio {hi}/{lo}", ratio, "<= 2", ratio <= 2))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=50)
    asyncio.run(main(p.parse_args().m))
