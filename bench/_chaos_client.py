"""The chaos soak's client side: a careful agent and a person clicking, against a fleet
whose members die at any moment.

What it was told is recorded as it goes (`acked`: the furthest state a 2xx or a read
confirmed; `executions`: how often it ran the action), so the report can hold the store
to every acknowledgement.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from _fleet import Fleet

from bot.sandbox.cards import cards_per_request, live_cards_per_request
from bot.sandbox.slack import SlackEmulator
from bot.slack.blocks import render

# How far along each state is, for "the store still holds what it acknowledged".
ORDER = {"pending_review": 0, "escalated": 0, "approved": 1, "executing": 2, "completed": 3}
PENDING = ("pending_review", "escalated")
Send = Callable[[httpx.AsyncClient, str], Awaitable[httpx.Response]]


def _approve_values(blocks: Any) -> list[str]:
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            return []
    found = []
    for block in blocks or []:
        if isinstance(block, dict) and block.get("type") == "actions":
            for el in block.get("elements", []):
                if el.get("action_id") == render.ACTION_APPROVE:
                    found.append(render.ButtonValue.decode(el["value"])[0])
    return found


def cards_left(emu: SlackEmulator) -> tuple[Counter[str], Counter[str]]:
    """request id -> its cards in the workspace, and -> those still showing buttons."""
    state = emu.state()
    return cards_per_request(state), live_cards_per_request(state)


class SoakClient:
    def __init__(
        self, fleet: Fleet, emu: SlackEmulator, token: str, *, approvals_by_card: bool = False
    ) -> None:
        """`approvals_by_card`: an approval counts as acknowledged once its card stopped
        offering buttons (what the person is told), not when a read of the store saw it:
        on a replicated store a read may see a step the replicas do not hold yet."""
        self.fleet, self.emu = fleet, emu
        self.approvals_by_card = approvals_by_card
        self.refused: list[tuple[str, int, str]] = []  # reads the fleet answered with a 4xx
        # Acknowledged approvals seen gone while the soak ran (then decided again).
        self.regressed: list[tuple[str, str, str]] = []
        self.headers = {"Authorization": f"Bearer {token}"}
        self.acked: dict[str, str] = {}
        self.executions: Counter[str] = Counter()
        self.runs: list[str] = []
        self.unfinished_runs: list[str] = []
        self.cards: dict[str, tuple[str, str]] = {}  # request id -> (channel, ts)
        self._seen: dict[str, int] = {}
        self._scanned = 0.0
        self._rnd = random.Random(3)

    @staticmethod
    def still_holds(acked: str, now: str) -> bool:
        if now in ("cancelled", "auto_rejected", "rejected"):
            return ORDER.get(acked, 0) == 0  # only a request still pending may end this way
        return ORDER.get(now, 3) >= ORDER.get(acked, 0)

    # --- talking to whichever serve is up ---------------------------------------------

    async def send(self, http: httpx.AsyncClient, make: Send, deadline_s: float = 120) -> Any:
        """Retry on a dead serve, a 5xx or a 503 until a 2xx or 4xx answer."""
        deadline = time.monotonic() + deadline_s
        while True:
            serve = self._rnd.choice(self.fleet.live_serves())
            try:
                r = await make(http, serve.url)
                if r.status_code < 500:
                    return r
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("no serve answered for two minutes")
            await asyncio.sleep(0.2)

    # --- the person: finds cards, clicks them -----------------------------------------

    def scan_cards(self) -> None:
        # Skipping to the unseen messages walks the seen ones: at most ten scans a second
        # for every flow together, or the soak's own CPU becomes what it measures.
        now = time.monotonic()
        if now - self._scanned < 0.1:
            return
        self._scanned = now
        for channel in list(self.emu.workspace.channels.values()):
            start = self._seen.get(channel.id, 0)
            messages = list(itertools.islice(channel.messages.values(), start, None))
            self._seen[channel.id] = start + len(messages)
            for m in messages:
                for rid in _approve_values(m.blocks):
                    self.cards.setdefault(rid, (channel.id, m.ts))

    async def card_decided(self, rid: str, within_s: float = 30) -> bool:
        """Whether the request's card stops offering buttons within `within_s`."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            self.scan_cards()
            if rid in self.cards:
                # Only this card, looked up by its ts: the whole workspace is large.
                channel, ts = self.cards[rid]
                card = self.emu.workspace.channels[channel].messages.get(ts)
                if card is not None and rid not in _approve_values(card.blocks):
                    return True
            await asyncio.sleep(0.2)
        return False

    async def click(self, rid: str) -> None:
        self.scan_cards()
        where = self.cards.get(rid)
        if where is None:
            return
        serve = self._rnd.choice(self.fleet.live_serves())
        self.emu.events_url = serve.url + "/slack/events"
        # A click into a dead serve fails; the caller's loop clicks again.
        with contextlib.suppress(Exception):
            await self.emu.click("UALICE", render.ACTION_APPROVE, channel=where[0], ts=where[1])

    # --- one request through the API, one run through a worker -------------------------

    async def request(self, http: httpx.AsyncClient, i: int) -> None:
        body = {
            "tool": "refund",
            "args": {"amount": i + 1, "order": f"ord_{i}"},
            "idempotency_key": f"soak-{i}",
            "channel": "#hitl-approvals",
        }
        r = await self.send(http, lambda h, u: h.post(f"{u}/v1/approvals", json=body))
        assert r.status_code in (200, 201), r.text
        rid = r.json()["id"]
        self.acked.setdefault(rid, "pending_review")
        state: str | None = r.json()["state"]
        token = {"claim_token": f"soak{i:06d}"}  # one for every try of this claim
        while True:
            state = await self._decided(http, rid, state)
            if state != "approved":
                return
            claimed, state, fence = await self._claim(http, rid, token)
            if claimed:
                break
            if state not in PENDING:
                return
        done = {"ok": True, "detail": "refunded", "fence": fence}
        r = await self.send(http, lambda h, u: h.post(f"{u}/v1/approvals/{rid}/result", json=done))
        if r.status_code == 200:
            self._ack(rid, "completed")

    async def _decided(self, http: httpx.AsyncClient, rid: str, state: str | None) -> str | None:
        """Click and wait until the request leaves review; its state (None: gone)."""
        while state in PENDING:
            await self.click(rid)
            r = await self.send(http, lambda h, u: h.get(f"{u}/v1/approvals/{rid}?wait=2"))
            if r.status_code != 200:  # a 404: the store lost what it acknowledged
                self.refused.append((rid, r.status_code, r.text[:200]))
                return None
            state = r.json()["state"]
        told = not self.approvals_by_card or (state == "approved" and await self.card_decided(rid))
        if told and state is not None:
            self._ack(rid, state)
        return state

    async def _claim(
        self, http: httpx.AsyncClient, rid: str, token: dict[str, str]
    ) -> tuple[bool, str | None, str | None]:
        """Claim, then (claimed, state, fence). The token makes a retry after a lost answer
        or a 503 the replicas caused get the same claim back."""
        r = await self.send(http, lambda h, u: h.post(f"{u}/v1/approvals/{rid}/claim", json=token))
        if r.status_code == 200:
            self._execute(rid)
            return True, "executing", r.json().get("fence")
        # Refused: the claim went through but its answer was lost with the serve, or the
        # approval itself is gone (a failover before the replicas had it).
        got = await self.send(http, lambda h, u: h.get(f"{u}/v1/approvals/{rid}"))
        if got.status_code != 200:
            self.refused.append((rid, got.status_code, got.text[:200]))
            return False, None, None
        now = got.json()
        if now["state"] in PENDING:  # the person decides again: the card still asks
            if ORDER.get(self.acked.get(rid, ""), 0) > 0:  # it had been acknowledged
                self.regressed.append((rid, self.acked[rid], now["state"]))
            return False, now["state"], None
        if now["state"] != "executing":
            self._ack(rid, now["state"])
            return False, now["state"], None
        if self.executions[rid] == 0:
            self._execute(rid)
        return True, "executing", now.get("fence")

    def _execute(self, rid: str) -> None:
        self._ack(rid, "executing")
        self.executions[rid] += 1

    def _ack(self, rid: str, state: str) -> None:
        if ORDER.get(state, 3) > ORDER.get(self.acked.get(rid, ""), -1):
            self.acked[rid] = state

    async def run(self, http: httpx.AsyncClient, i: int) -> None:
        body = {"agent": "counting", "prompt": f"charge {i + 1}"}
        r = await self.send(http, lambda h, u: h.post(f"{u}/v1/runs", json=body))
        assert r.status_code == 201, r.text
        self.runs.append(r.json()["run_id"])

    async def click_run_cards(self, stop: asyncio.Event) -> None:
        """Approve every card that is not one of the API's (those are the runs')."""
        clicked: dict[str, float] = {}
        while not stop.is_set():
            self.scan_cards()
            now = time.monotonic()
            for rid in [r for r in self.cards if r not in self.acked]:
                if now - clicked.get(rid, 0) > 3:  # again, in case the serve died
                    clicked[rid] = now
                    await self.click(rid)
            await asyncio.sleep(0.3)

    # --- the whole soak -----------------------------------------------------------------

    async def drive(self, n: int, runs_share: float, concurrency: int, stop: asyncio.Event) -> None:
        limit = asyncio.Semaphore(concurrency)
        every = round(1 / runs_share) if runs_share > 0 else 0
        clicking = asyncio.Event()
        clicker = asyncio.create_task(self.click_run_cards(clicking))
        async with httpx.AsyncClient(timeout=30, headers=self.headers) as http:

            async def item(i: int) -> None:
                async with limit:
                    if every and i % every == every - 1:
                        await self.run(http, i)
                    else:
                        await self.request(http, i)

            await asyncio.gather(*(item(i) for i in range(n)))
            self.clicking = (clicking, clicker)

    async def drain(self, timeout: float) -> None:
        """Wait (with nothing being killed) until every run has ended."""
        clicking, clicker = self.clicking
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=30, headers=self.headers) as http:
            todo = list(self.runs)
            while todo and time.monotonic() < deadline:
                left = []
                for run_id in todo:
                    r = await self.send(http, lambda h, u, i=run_id: h.get(f"{u}/v1/runs/{i}"))
                    if r.status_code != 200:  # a 404: the store lost a run it acknowledged
                        self.refused.append((run_id, r.status_code, r.text[:200]))
                        continue
                    if r.json()["state"] not in ("finished", "stopped", "failed", "turn_limit"):
                        left.append(run_id)
                todo = left
                if todo:
                    await asyncio.sleep(1)
        self.unfinished_runs = todo
        clicking.set()
        await clicker
