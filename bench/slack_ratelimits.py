"""A burst of requests for one review channel against Slack's rate limits (issue 42, item 3).

Runs the real bot in this process (`run_serve`, as tests/e2e do) against the Slack
emulator with Slack's documented limits on (bot/sandbox/slack/api/ratelimits.py), files --n
requests for one channel at once (one requester, one tool: one digest) and times until
every request has its card in the channel. Twice: with the Web API gate (a 429 closes
the whole method for Retry-After, posts paced per channel: bot/slack/transport/ratelimit.py) and
without it (each call waits its own Retry-After while the other lanes post on, as
slack_sdk's handler does). Prints, for each, the time to the last card, the calls
answered 429, the calls made inside a Retry-After wait the emulator had announced, cards
shown twice and digests; then the ratio of the times.

Slack's limits are scaled --scale times faster (default 20: one post per 0.05 s per
channel, Retry-After a twentieth of Slack's seconds) so a run takes seconds; the times
are also printed multiplied back to Slack's pace. The outbox's retry (15 s) is scaled
the same way; the per-call way's jitter (slack_sdk adds up to a second to each wait) is
not, which favours the gate a little at a high --scale. Prints figures; not a test.
Starts its own Valkey unless REDIS_URL is set (that database is FLUSHED).

    .venv/bin/python bench/slack_ratelimits.py [--n 200] [--scale 20]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import yaml
from _common import flush, print_load, server_url
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.policy import parse_policy
from bot.sandbox.slack import SlackEmulator
from bot.server.serve import ServeOptions, run_serve
from bot.slack.transport.ratelimit import SLACK_LIMITS
from bot.store import keys
from bot.store.requests import RequestStore

SECRET, TOKEN, API_TOKEN = "bench-signing-secret", "xoxb-bench-token", "bench-api-token-0123"
CHANNEL = "#hitl-approvals"
TIERS = ("low", "medium", "high", "critical")
LEVEL = {"review_timeout": "1h", "reviewers": {"channels": [CHANNEL]}}
POLICY = {"tiers": {t: {**LEVEL, "approvers": ["*"], "approvals_required": 1} for t in TIERS}}
OUTBOX_RETRY_MS = 15_000  # serve's default HITL_OUTBOX_RETRY_MS


def is_digest(m: object) -> bool:
    blocks = getattr(m, "blocks", None) or []
    return any(b.get("block_id", "").startswith("hitl_digest") for b in blocks)


def cards_of(emu: SlackEmulator, rids: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(rids, 0)
    for m in emu.messages(CHANNEL):
        if not is_digest(m):
            text = str(m.blocks)
            for rid in rids:
                if rid in text:
                    counts[rid] += 1
    return counts


async def drained(r: Redis) -> bool:
    for stream in (keys.events(s) for s in range(keys.SHARDS)):
        for group in await r.xinfo_groups(stream):
            if group.get("lag") != 0 or group.get("pending") != 0:
                return False
    return True


async def one_run(url: str, policy_file: Path, n: int, scale: float, gate: bool) -> float:
    r = Redis.from_url(url, decode_responses=True)
    await flush(r)
    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    settings = Settings(
        slack_bot_token=SecretStr(TOKEN),
        slack_signing_secret=SecretStr(SECRET),
        slack_api_url=emu.api_url,
        redis_url=SecretStr(url),
        hitl_policy=policy_file,
        hitl_port=0,
        hitl_api_token=SecretStr(API_TOKEN),
    )
    options = ServeOptions(
        notifier_retry_ms=int(OUTBOX_RETRY_MS / scale),
        slack_limits=SLACK_LIMITS.scaled(scale),
        slack_gate=gate,
    )
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = run_serve(settings, stop, options=options, on_ready=ready.set_result)
    task = asyncio.create_task(serving)
    try:
        emu.events_url = await asyncio.wait_for(ready, 10) + "/slack/events"
        emu.ratelimits.turn_on(scale=scale)
        store, policy = RequestStore(r), parse_policy(POLICY)
        t0 = time.perf_counter()
        rids: list[str] = []
        for start in range(0, n, 25):  # at once, in rounds the connection pool holds
            made = await asyncio.gather(
                *(
                    store.create(policy, tool="refund", args={"amount": i}, requester="U0REQUEST")
                    for i in range(start, min(start + 25, n))
                )
            )
            rids += [m.request.id for m in made]
        deadline = t0 + 600
        while not all(cards_of(emu, rids).values()):
            if time.perf_counter() > deadline:
                raise TimeoutError("not every request got its card within 600 s")
            await asyncio.sleep(0.02)
        took = time.perf_counter() - t0
        while not await drained(r):
            await asyncio.sleep(0.05)
        lim = emu.ratelimits
        twice = sum(1 for c in cards_of(emu, rids).values() if c > 1)
        digests = sum(1 for m in emu.messages(CHANNEL) if is_digest(m))
        posts = emu.calls.count("chat.postMessage")
        name = "with the gate" if gate else "without (per-call Retry-After)"
        print(
            f"{name}: last card after {took:.2f} s ({took * scale:.0f} s at Slack's pace); "
            f"{posts} chat.postMessage calls, {lim.limited()} calls answered 429, "
            f"{len(lim.inside())} inside a Retry-After wait, {twice} cards twice, "
            f"{digests} digest(s)"
        )
        return took
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
        await emu.stop()
        await r.aclose()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200, help="requests filed at once")
    ap.add_argument("--scale", type=float, default=20, help="Slack's limits this many times faster")
    a = ap.parse_args()
    print_load()
    print(f"{a.n} requests for {CHANNEL}, Slack's limits x{a.scale:g}")
    with tempfile.TemporaryDirectory() as tmp, server_url() as url:
        policy_file = Path(tmp) / "policy.yaml"
        policy_file.write_text(yaml.safe_dump(POLICY))
        gated = await one_run(url, policy_file, a.n, a.scale, gate=True)
        plain = await one_run(url, policy_file, a.n, a.scale, gate=False)
    print(f"time to last card, without / with the gate: {plain / gated:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
