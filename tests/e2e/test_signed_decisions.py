"""Through serve and the Slack emulator: people's approvals are signed and run; an approval
written into the store by anything else is refused by the claim."""

from __future__ import annotations

import httpx

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.slack.blocks import render
from bot.store import audit
from bot.store.requests import RequestStore
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}


async def test_a_quorum_approved_in_slack_is_signed_and_claimed(bot: Bot) -> None:
    rid = await bot.propose("deploy", {"service": "api", "version": "1.2.4"}, requester="api")
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    await bot.emu.click("UBOB", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)
    req = await bot.requests.get(rid)
    assert req.resolution is not None and req.resolution.seal
    assert all(a.seal for a in req.approvals)
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        claimed = await c.post(f"/v1/approvals/{rid}/claim")
    assert claimed.status_code == 200 and claimed.json()["state"] == "executing"


async def test_an_approval_written_beside_serve_is_refused(bot: Bot) -> None:
    rid = await bot.propose("deploy", {"service": "api", "version": "6.6.6"}, requester="api")
    await bot.message_of(rid)
    req = await bot.requests.get(rid)
    forger = RequestStore(bot.redis)  # same Redis, no key: as a script with REDIS_URL
    for who in ("UALICE", "UBOB"):
        d = Decision(event=Event.APPROVE, actor=who, payload_hash=req.payload_hash)
        await forger.transition(rid, d)
    assert (await bot.requests.get(rid)).state == State.APPROVED
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        resp = await c.post(f"/v1/approvals/{rid}/claim")
    assert resp.status_code == 409 and resp.json()["error"] == "forged_decision"
    last = (await audit.entries(bot.redis, rid))[-1]
    assert (last.kind, last.reason_code) == ("refused", "forged_decision")
