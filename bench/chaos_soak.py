"""Chaos soak: requests through create, a signed Slack click, claim and result, and agent
runs through a worker, across two `serve` and two `worker` processes, while a random
serve, worker or the Valkey server is `kill -9`'d every few seconds and the Slack
emulator fails a tenth of Web API calls (429 and 500).

    python bench/chaos_soak.py --requests 1000          # about 2 min on two cores
    python bench/chaos_soak.py --requests 10000 --kill-every 3
    python bench/chaos_soak.py --cluster --replica-acks 1 --requests 2000 --replica-lag 1
    python bench/chaos_soak.py --sentinel --replica-acks 0 --requests 2000 --replica-lag 1

`--cluster` (a 3+3 Valkey Cluster) and `--sentinel` (a primary, two replicas, three
sentinels) replace the one Valkey: serves and workers are killed as before, and the
current primary every 20-40 s (with `--replica-lag S`, after its replicas fell S seconds
behind), started again once a replica took over (bench/_replicated.py).
There an approval counts as acknowledged once its card stopped offering buttons (what
the person is told), not when a read of the primary saw it.

Every member killed is started again half a second later, as a supervisor would
(same port, same AOF). The client retries like a careful agent: the same
idempotency key on create, a click again while a card is still pending, claim once.

It prints requests, kills by kind, lost acknowledged transitions (a 2xx or a state the
API reported that the store later lacks), double executions, requests not final,
duplicated cards, and `hitl-bot audit verify`; the exit status is 1 if any is not zero.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _chaos_client import PENDING, SoakClient, cards_left
from _common import print_load
from _fleet import Fleet, Member, base_env
from _replicated import open_store, primary_chaos
from pydantic import SecretStr

from bot.config import Settings
from bot.core.states import FINAL
from bot.db.connection import connect
from bot.errors import NotFound
from bot.sandbox.model import ScriptedModel, Turn, call, say
from bot.sandbox.slack import SlackEmulator
from bot.store import audit
from bot.store.requests import RequestStore

SECRET, TOKEN, API = "soak-secret", "xoxb-soak", "soak-api-token-0123"
# Short enough that a request nobody clicked still ends inside the soak: 2 min, then
# one escalation level of 1 min, then auto-reject. The bound each request must meet.
BOUND_S = 3 * 60
POLICY = """
default_tier: medium
tiers:
  low: {review_timeout: 2m, reviewers: {channels: ["#hitl-approvals"]},
        escalation: [{channels: ["#hitl-oncall"], timeout: 1m}], on_exhausted: auto_rejected}
  medium: {review_timeout: 2m, reviewers: {channels: ["#hitl-approvals"]},
           escalation: [{channels: ["#hitl-oncall"], timeout: 1m}], on_exhausted: auto_rejected}
  high: {review_timeout: 2m, reviewers: {channels: ["#hitl-approvals"]},
         escalation: [{channels: ["#hitl-oncall"], timeout: 1m}], approvers: ["*"],
         on_exhausted: auto_rejected}
  critical: {review_timeout: 2m, reviewers: {channels: ["#hitl-approvals"]},
             escalation: [{channels: ["#hitl-oncall"], timeout: 1m}], approvers: ["*"],
             on_exhausted: auto_rejected}
tools:
  refund: {tier: medium}
  charge: {tier: medium}
"""


def responder(messages: Sequence[dict[str, Any]]) -> Turn:
    """The scripted model: charge the amount in the prompt, then say it is done."""
    last = messages[-1]
    if last.get("role") == "tool":
        return say(f"done: {last.get('content')}")
    return call("charge", amount=int(re.findall(r"\d+", str(last.get("content")))[-1]))


async def chaos(fleet: Fleet, every: float, stop: asyncio.Event, kills: Counter[str]) -> None:
    rnd = random.Random(7)
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), every * rnd.uniform(0.5, 1.5))
            return
        except TimeoutError:
            pass
        victim: Member = rnd.choice(fleet.members)
        await fleet.kill(victim)
        kills[victim.kind] += 1
        await asyncio.sleep(0.5)  # the supervisor's restart delay
        await fleet.start(victim)


async def soak(args: argparse.Namespace) -> int:
    print_load()
    tmp = Path(tempfile.mkdtemp(prefix="hitl-soak-"))
    (tmp / "policy.yml").write_text(POLICY)
    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    model = ScriptedModel(responder)
    model_url = await model.start()
    secrets = {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "HITL_API_TOKEN": API,
        "HITL_POLICY": str(tmp / "policy.yml"),
    }
    env = base_env(tmp, slack_api=emu.api_url, model_url=model_url, secrets=secrets)
    replicated = open_store(args.store) if args.store != "embedded" else None
    if replicated is not None:
        env["REDIS_URL"] = replicated.url
        env["HITL_REPLICA_ACKS"] = str(args.replica_acks)
        print(
            f"store: {args.store}, HITL_REPLICA_ACKS={args.replica_acks}, "
            f"replicas {args.replica_lag} s behind at each primary kill"
        )
    fleet = Fleet(tmp, env, valkey_dir=None if replicated else tmp / "valkey")
    await fleet.start_all()
    emu.faults.set_rate(args.fault_rate, seed=args.seed)
    kills: Counter[str] = Counter()
    stop = asyncio.Event()
    killers = [asyncio.create_task(chaos(fleet, args.kill_every, stop, kills))]
    if replicated is not None:
        every = (args.primary_kill_min, args.primary_kill_max)
        chaos_of_primaries = primary_chaos(replicated, stop, kills, every, args.replica_lag)
        killers.append(asyncio.create_task(chaos_of_primaries))
    started = time.monotonic()
    client = SoakClient(fleet, emu, API, approvals_by_card=replicated is not None)
    try:
        await client.drive(args.requests, args.runs_share, args.concurrency, stop)
    finally:
        stop.set()
        await asyncio.gather(*killers)
    soak_s = time.monotonic() - started
    print(f"soak: {soak_s:.0f} s; kills: {dict(kills)} ({sum(kills.values())} in all)")
    # Let the fleet settle with nothing killed: the last restarts, the outbox, the sweeper.
    await client.drain(timeout=60)
    failures = await report(fleet, emu, client, tmp)
    await fleet.stop_all()
    if replicated is not None:
        replicated.stop()
    await model.stop()
    await emu.stop()
    print(f"logs and data: {tmp}")
    return 1 if failures else 0


async def report(fleet: Fleet, emu: SlackEmulator, client: SoakClient, tmp: Path) -> int:
    acks = int(fleet.env.get("HITL_REPLICA_ACKS") or 0)
    redis, _ = await connect(
        Settings(redis_url=SecretStr(fleet.env["REDIS_URL"]), hitl_replica_acks=acks)
    )
    store = RequestStore(redis)
    lost, not_final, late, doubles = list(client.regressed), [], [], []
    for rid, acked in client.acked.items():
        try:
            req = await store.get(rid)
        except NotFound:
            lost.append((rid, acked, None))
            continue
        if not client.still_holds(acked, req.state.value):
            lost.append((rid, acked, req.state.value))
            continue
        trail = [e for e in await audit.entries(redis, rid) if e.kind == "transition"]
        moved = [e.at for e in trail if e.from_state in PENDING and e.to_state not in PENDING]
        left = moved[0] if moved else None
        if req.state not in FINAL:
            not_final.append(rid)
        elif left is None or (left - req.created_at) / 1000 > BOUND_S + 5:
            late.append(rid)
        moves = Counter(e.event for e in trail)
        if moves["claim"] > 1 or moves["succeed"] > 1 or client.executions[rid] > 1:
            doubles.append(rid)
    count_file = tmp / "charges.txt"
    charges = count_file.read_text().splitlines() if count_file.exists() else []
    run_doubles = [k for k, n in Counter(c.split()[0] for c in charges).items() if n > 1]
    # A decided request's card shows no buttons (one that does invites a dead click). The
    # outbox may still be retrying the last updates through Slack's 429s: give it a minute.
    settle = time.monotonic() + 60
    while True:
        cards, live = cards_left(emu)
        stale = [r for r in live if r in client.acked and client.acked[r] != "pending_review"]
        if not stale or time.monotonic() > settle:
            break
        await asyncio.sleep(1)
    dup_cards = [rid for rid, n in cards.items() if n > 1]
    verify = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "audit", "verify", env=fleet.env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await verify.communicate()
    await redis.aclose()
    print(f"requests: {len(client.acked)} through the API, {len(client.runs)} agent runs")
    print(f"runs not finished: {len(client.unfinished_runs)}")
    print(f"reads refused (4xx): {len(client.refused)} {client.refused[:3]}")
    print(f"lost acknowledged transitions: {len(lost)} {lost[:5]}")
    print(f"double executions: {len(doubles) + len(run_doubles)} {(doubles + run_doubles)[:5]}")
    print(f"requests not final: {len(not_final)} {not_final[:5]}")
    print(f"requests final later than their escalation bound ({BOUND_S} s): {len(late)}")
    print(f"cards duplicated: {len(dup_cards)} {dup_cards[:5]}")
    print(f"cards of decided requests still showing buttons: {len(stale)} {stale[:5]}")
    last = out.decode(errors="replace").strip().splitlines()
    print(f"audit verify: exit {verify.returncode}: {last[-1] if last else ''}")
    bad = [lost, doubles, run_doubles, not_final, late, dup_cards, stale, client.unfinished_runs]
    bad.append(client.refused)
    return sum(len(b) for b in bad) + (verify.returncode != 0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=1000, help="work items in all")
    p.add_argument("--runs-share", type=float, default=0.1, help="share that are agent runs")
    p.add_argument("--kill-every", type=float, default=3.0, help="mean seconds between kills")
    p.add_argument("--fault-rate", type=float, default=0.1, help="Web API calls that fail")
    p.add_argument("--concurrency", type=int, default=32, help="items in flight at once")
    p.add_argument("--seed", type=int, default=1)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cluster", dest="store", action="store_const", const="cluster")
    where.add_argument("--sentinel", dest="store", action="store_const", const="sentinel")
    p.set_defaults(store="embedded")
    p.add_argument("--replica-acks", type=int, default=1, help="HITL_REPLICA_ACKS there")
    p.add_argument("--primary-kill-min", type=float, default=20.0, help="seconds")
    p.add_argument("--primary-kill-max", type=float, default=40.0, help="seconds")
    p.add_argument(
        "--replica-lag", type=float, default=0.0, help="seconds the replicas fall behind first"
    )
    sys.exit(asyncio.run(soak(p.parse_args())))


if __name__ == "__main__":
    main()
