"""Memory per pending request: what one request waiting for review holds in Redis.

Fills a fresh Valkey with --n pending refund requests through the store's own
CREATE script (the shared pipelined filler, bench/_common.py), with the embedded
Valkey's encoding settings (bot/db/valkey/embedded.py MEMORY_SETTINGS), then does with
the events stream what a running `serve` does (the notifier's and the metrics
collector's groups read and acknowledge every entry, the trim of
bot/store/stream/events_trim.py runs once), and prints:
the used_memory delta per request; MEMORY USAGE of each of a request's own keys
(the hash, field by field; the audit list; a wake stream if any) and each
shard-wide key's share (the due and pending indexes, the events stream, the review
terms requests share; `all` holds a request only once it leaves review); what the
compactions made save, measured by writing the older form beside the real one; and
what the compactions not made would save, measured by writing the compacted form
beside it. Then the same fill on a server left at Valkey's defaults, the baseline
the embedded settings are judged against.
Prints figures; not a test. Starts its own Valkey unless REDIS_URL is set (FLUSHED).

    .venv/bin/python bench/memory_per_request.py [--n 50000] [--samples 200]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
from dataclasses import dataclass

from _common import Filler, flush, print_load, server_url, used_memory, verdict
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.core.policy import DEFAULT_POLICY
from bot.core.proof.chain import expand
from bot.db.valkey.embedded import MEMORY_SETTINGS
from bot.slack.listeners.replies import CARDS_TTL_S
from bot.store import keys
from bot.store.figures.metrics import MetricsCollector
from bot.store.stream.events import NOTIFIER_GROUP, EventBus, Notice
from bot.store.stream.events_trim import EventTrimmer

TARGET = 1200  # bytes per pending request (docs/performance.md)
OWN = ("req", "audit", "wake", "posts")  # per-request key kinds: hitl:{sNN}:KIND:ID


async def usage(r: Redis, key: str) -> int:
    return int(await r.memory_usage(key, samples=0) or 0)


async def mean_usage(r: Redis, names: list[str]) -> float:
    return statistics.fmean([await usage(r, k) for k in names]) if names else 0.0


async def sample_ids(r: Redis, k: int) -> list[str]:
    per = max(1, k // keys.SHARDS)
    ids: list[str] = []
    for s in range(keys.SHARDS):
        ids += await r.zrange(keys.pending(s), 0, per - 1)
    return ids


async def events_held(r: Redis) -> int:
    return sum([await usage(r, keys.events(s)) for s in range(keys.SHARDS)])


async def read_like_serve(r: Redis) -> int:
    """The events' path through a running `serve`: the Slack notifier acknowledges each
    entry once posted (the post itself is not made here, so the hash lacks the card's
    msg_channel and msg_ts), the metrics collector counts and acknowledges it, then
    the trim drops what every group acknowledged. Returns the entries trimmed."""
    slack = EventBus(r, NOTIFIER_GROUP)
    collector = MetricsCollector(r, consumer="bench")
    for bus in (slack, collector.bus):
        await bus.ensure_group()
    while got := await slack.read("bench", count=1000, block_ms=1):
        for stream in {n.stream for n in got}:
            await r.xack(stream, NOTIFIER_GROUP, *[n.entry_id for n in got if n.stream == stream])
    while got := await collector.bus.read("bench", count=1000, block_ms=1):

        async def count(stream: str, batch: list[Notice] = got) -> None:
            for n in batch:
                if n.stream == stream:
                    await collector.count(n)

        await asyncio.gather(*(count(s) for s in {n.stream for n in got}))
    expected = (NOTIFIER_GROUP, collector.bus.group)
    return (await EventTrimmer(r, expected).trim_once()).trimmed


@dataclass
class Fill:
    per: float  # used_memory delta per request, as a running serve holds them
    unread: float  # the same before serve's readers and the trim
    events_unread: float  # the events streams' share before them (MEMORY USAGE / n)


async def fill(r: Redis, url: str, n: int, settings: dict[str, str]) -> Fill:
    """n pending requests with these encoding settings, then serve's readers and trim."""
    await flush(r)
    for name, value in settings.items():
        await r.config_set(name, value)
    empty, now = await used_memory(r), wall_ms()
    await Filler(DEFAULT_POLICY).fill(url, n, lambda i: now + i)
    unread, events_unread = await used_memory(r), await events_held(r)
    trimmed = await read_like_serve(r)
    assert trimmed >= n, f"the trim dropped {trimmed} of {n} acknowledged events"
    return Fill((await used_memory(r) - empty) / n, (unread - empty) / n, events_unread / n)


async def kinds(r: Redis) -> dict[str, int]:
    """How many keys of each kind the store holds."""
    count: dict[str, int] = {}
    async for k in r.scan_iter(match=f"{keys.PREFIX}*", count=1000):
        name = k.split("}:", 1)[-1].split(":", 1)[0]
        count[name] = count.get(name, 0) + 1
    return count


async def hash_fields(r: Redis, rid: str) -> None:
    h = await r.hgetall(keys.request(rid))
    print(
        f"\n  the request hash, {len(h)} fields ({await r.object('encoding', keys.request(rid))})"
    )
    print(f"    {'field':<16}{'name B':>8}{'value B':>9}  value while pending")
    for name, value in h.items():
        shown = "(empty)" if value == "" else (value if len(value) <= 40 else value[:37] + "...")
        print(f"    {name:<16}{len(name):>8}{len(value.encode()):>9}  {shown}")
    names = sum(len(k) for k in h)
    values = sum(len(v.encode()) for v in h.values())
    empty = [k for k, v in h.items() if v == ""]
    print(f"    {'all fields':<16}{names:>8}{values:>9}  {len(empty)} empty: {' '.join(empty)}")
    if "terms" in h:  # the review terms the hash names, one copy per shard and set
        copy = await r.hget(keys.terms(keys.shard_of(rid)), h["terms"]) or ""
        print(f"  its review terms, kept once per shard ({len(copy)} B): {copy}")


async def whatif(r: Redis, ids: list[str]) -> dict[str, float]:
    """Bytes per request each compaction would save, measured on copies of real hashes."""

    async def short_names(rid: str) -> int:
        """The hash with a 1-2 byte name per field instead of its readable one."""
        h = await r.hgetall(keys.request(rid))
        key = f"{keys.request(rid)}:whatif"
        await r.hset(key, mapping={f"{i:x}": v for i, v in enumerate(h.values())})
        got = await usage(r, key) - len(":whatif")
        await r.delete(key)
        return await usage(r, keys.request(rid)) - got

    async def audit_in_hash(rid: str) -> int:
        """The create entry as a hash field instead of its own list key."""
        lines = await r.lrange(keys.audit(rid), 0, -1)
        h = await r.hgetall(keys.request(rid))
        key = f"{keys.request(rid)}:whatif"
        await r.hset(key, mapping=h | {"audit": "\n".join(lines)})
        got = await usage(r, key) - len(":whatif") - await usage(r, keys.request(rid))
        await r.delete(key)
        return await usage(r, keys.audit(rid)) - got

    out = {"hash: 1-2 byte field names": statistics.fmean([await short_names(i) for i in ids])}
    out["audit: keep the first entry in the hash, no list key yet"] = statistics.fmean(
        [await audit_in_hash(i) for i in ids]
    )
    return out


def full(line: str) -> str:
    """An entry as stored before: its empty values and a first entry's zero prev."""
    return json.dumps(expand(json.loads(line)), separators=(",", ":"))


async def made(r: Redis, ids: list[str]) -> dict[str, float]:
    """Bytes per request each compaction made saves, the older form written on copies."""

    async def audit_full(rid: str) -> int:
        key = f"{keys.audit(rid)}:whatif"
        await r.rpush(key, *[full(line) for line in await r.lrange(keys.audit(rid), 0, -1)])
        got = await usage(r, key) - len(":whatif") - await usage(r, keys.audit(rid))
        await r.delete(key)
        return got

    async def terms_inline(rid: str) -> int:
        h = await r.hgetall(keys.request(rid))
        copy = await r.hget(keys.terms(keys.shard_of(rid)), h.pop("terms"))
        key = f"{keys.request(rid)}:whatif"
        await r.hset(key, mapping=h | json.loads(copy or "{}"))
        got = await usage(r, key) - len(":whatif") - await usage(r, keys.request(rid))
        await r.delete(key)
        return got

    return {
        "hash: review terms kept once per shard, by reference": statistics.fmean(
            [await terms_inline(i) for i in ids]
        ),
        "audit: entries without empty values and zero prev": statistics.fmean(
            [await audit_full(i) for i in ids]
        ),
    }


async def with_cards(r: Redis, n: int) -> float:
    """used_memory per request added by what the notifier writes once a card is posted:
    `_save_card`'s fields and `remember_card`'s set (bot/slack/delivery/notifier.py, replies.py).
    Not in the issue's figure, which is the store's; printed beside it."""
    before, ids = await used_memory(r), await sample_ids(r, n)
    for start in range(0, len(ids), 1000):
        pipe = r.pipeline(transaction=False)
        for i, rid in enumerate(ids[start : start + 1000], start):
            ts, view = f"1796090549.{i:06d}", hashlib.sha256(rid.encode()).hexdigest()
            card = {"msg_channel": "C0APPROVALS", "msg_ts": ts, "msg_view": view}
            pipe.hset(keys.request(rid), mapping=card)
            pipe.sadd(keys.thread_cards("C0APPROVALS", ts), rid)
            pipe.expire(keys.thread_cards("C0APPROVALS", ts), CARDS_TTL_S)
        await pipe.execute()
    return (await used_memory(r) - before) / len(ids)


async def breakdown(r: Redis, n: int, k: int) -> tuple[dict[str, float], dict[str, float]]:
    ids = await sample_ids(r, k)
    own = {
        kind: await mean_usage(r, [f"{keys.tag(keys.shard_of(i))}{kind}:{i}" for i in ids])
        for kind in OWN
    }
    shares: dict[str, float] = {}
    for s in range(keys.SHARDS):
        for name in ("due", "pending", "all", "events", "metrics", "terms"):
            shares[name] = shares.get(name, 0.0) + await usage(r, f"{keys.tag(s)}{name}") / n
    return own, shares


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=50_000, help="pending requests")
    ap.add_argument("--samples", type=int, default=200, help="requests whose keys are measured")
    a = ap.parse_args()
    print_load()
    with server_url() as url:
        r = Redis.from_url(url, decode_responses=True)
        defaults = {k: v for name in MEMORY_SETTINGS for k, v in (await r.config_get(name)).items()}
        filled = await fill(r, url, a.n, MEMORY_SETTINGS)
        per = filled.per
        own, shares = await breakdown(r, a.n, a.samples)
        count = await kinds(r)
        settings = " ".join(f"{k} {v}" for k, v in MEMORY_SETTINGS.items())
        print(f"\nmemory per pending request, n={a.n:,}, embedded Valkey settings: {settings}")
        print(f"  keys in the store: {', '.join(f'{v:,} {k}' for k, v in count.items())}")
        print(
            "  (MEMORY USAGE SAMPLES 0: a request's own keys averaged over "
            f"{a.samples}; shard-wide keys, all {keys.SHARDS} shards, divided by n)"
        )
        rows = [(f"{kind} (own key)", v) for kind, v in own.items() if v]
        rows += [(f"{name} (shard-wide), share", v) for name, v in shares.items()]
        for name, v in rows:
            print(f"    {name:<40}{v:>7.0f} B")
        parts = sum(v for _, v in rows)
        print(f"    {'sum of the above':<40}{parts:>7.0f} B")
        print(f"    {'the keyspace and allocator (the rest)':<40}{per - parts:>7.0f} B")
        print(f"    {'used_memory delta / n':<40}{per:>7.0f} B")
        print(
            f"  events: read and acknowledged by the {NOTIFIER_GROUP} and metrics groups, then "
            "trimmed (bot/store/stream/events_trim.py): the stream's share "
            f"{filled.events_unread:.0f} "
            f"B before, {shares['events']:.1f} B after; used_memory delta / n "
            f"{filled.unread:,.0f} B before, {per:,.0f} B after"
        )
        ids = await sample_ids(r, a.samples)
        await hash_fields(r, ids[0])
        audit = await r.lrange(keys.audit(ids[0]), 0, -1)
        print(
            f"\n  the audit list, {len(audit)} entry of {len(audit[0])} B"
            f" ({len(full(audit[0]))} B in the older form): {audit[0]}"
        )
        done = await made(r, ids)
        done["events: trimmed once every group acknowledged (used_memory)"] = filled.unread - per
        print("\n  compactions made (the older form measured on copies)")
        for name, v in done.items():
            print(f"    {name:<62}{v:>6.0f} B saved")
        before = per + sum(done.values())
        print(f"    {'before them':<62}{before:>6,.0f} B = {per:,.0f} B now")
        saves = await whatif(r, ids)
        print("\n  compactions (not made: measured on copies)")
        for name, v in saves.items():
            print(f"    {name:<62}{v:>6.0f} B saved")
        total = sum(saves.values())
        print(f"    {'all of them':<62}{total:>6.0f} B saved = {per - total:,.0f} B left")
        card = await with_cards(r, a.n)
        print(
            f"\n  with its Slack card posted, as the notifier records it: +{card:,.0f} B"
            f" = {per + card:,.0f} B per pending request in a running bot with Slack"
            " (the card's channel, ts and view hash in the hash; the thread's card set,"
            " with its TTL, bot/slack/listeners/replies.py)"
        )
        ext = (await fill(r, url, a.n, defaults)).per
        await r.flushdb()
        await r.aclose()
    ext_settings = " ".join(f"{k} {v}" for k, v in defaults.items())
    print(f"\n  the same on a server left at its defaults ({ext_settings}): {ext:,.0f} B")
    print()
    print(
        verdict(
            "bytes per pending request, embedded Valkey",
            per,
            f"<= {TARGET:,}",
            per <= TARGET,
            ",.0f",
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
