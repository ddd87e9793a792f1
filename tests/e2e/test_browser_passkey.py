"""Step-up with a passkey, end to end: the real bot behind the Slack emulator, and each
person in headless Chromium with a virtual authenticator (Chrome DevTools' WebAuthn
domain: CTAP2, internal, with user verification and resident keys).

Without /usr/bin/chromium they skip locally and fail under CI=true (tests/support/chromium.py).
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import yaml

from bot.core.policy import parse_policy
from bot.core.states import State
from bot.gate.stepup_audit import stepup_findings
from bot.slack.batch import card
from bot.slack.blocks import render
from bot.slack.blocks.proposals import ACTION_CHOOSE
from bot.store import audit
from bot.store.passkeys import Credential, PasskeyStore
from tests.e2e.conftest import POLICY, Bot, all_text
from tests.e2e.test_browser import ARGS, CHROMIUM
from tests.support import chromium
from tests.support.poll import eventually

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(90)

AUTH = {"Authorization": "Bearer api-token-0123456789"}
# A whole link: a token of 22 characters (16 random bytes), not a cut one.
LINK = re.compile(r"(http://localhost:\d+/passkey/(?:enroll|confirm)/[\w-]{22})(?![\w-])")
# high (refund > 1000: SAPPROVERS and UKID decide) and critical (deploy: two of anyone)
STEP_UP = copy.deepcopy(POLICY)
for _tier in ("high", "critical"):
    STEP_UP["tiers"][_tier]["step_up"] = "passkey"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def serve_env(tmp_path: Path) -> dict[str, Any]:
    """serve on a port known before it starts, so HITL_PUBLIC_URL can name it: localhost,
    which browsers treat as a secure origin (WebAuthn takes no IP address as its RP id)."""
    port = _free_port()
    policy = tmp_path / "step-up-policy.yaml"
    policy.write_text(yaml.safe_dump(STEP_UP))
    return {"hitl_policy": policy, "hitl_port": port, "hitl_public_url": f"http://localhost:{port}"}


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


@dataclass
class Person:
    user: str
    page: Page


@contextlib.asynccontextmanager
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        except BaseException:
            for i, ctx in enumerate(b.contexts):
                for page in ctx.pages:
                    with contextlib.suppress(Exception):
                        await page.screenshot(path=str(tmp_path / f"failure-{i}.png"))
            raise
        finally:
            await b.close()


async def person(b: Browser, user: str) -> Person:
    """`user` with their own browser profile and their own platform authenticator."""
    context = await b.new_context()
    page = await context.new_page()
    page.set_default_timeout(15_000)
    cdp = await context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable")
    options = {
        "protocol": "ctap2",
        "transport": "internal",
        "hasResidentKey": True,
        "hasUserVerification": True,
        "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }
    await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})
    return Person(user, page)


def _link(text: str) -> str:
    found = LINK.search(text)
    assert found, f"no passkey link in {text!r}"
    return found[1]


async def enroll(bot: Bot, p: Person) -> str:
    """`/hitl passkey`, then the page: the credential id enrolled."""
    out = await bot.emu.command(p.user, "#general", "/hitl", "passkey")
    await p.page.goto(_link(json.dumps(out.body)))
    await p.page.click("#go")
    await p.page.locator("#result.ok", has_text="Passkey enrolled").wait_for()
    creds = await PasskeyStore(bot.redis).of(p.user)
    assert len(creds) == 1
    return creds[0].id


async def click_approve(bot: Bot, user: str, rid: str) -> str:
    """`user` clicks Approve on the card: the confirmation link Slack shows them alone."""
    ch, ts = await bot.message_of(rid)
    seen = {id(e) for e in bot.emu.ephemerals(user)}
    await bot.emu.click(user, render.ACTION_APPROVE, channel=ch, ts=ts)

    def told() -> str | None:
        new = [e.text for e in bot.emu.ephemerals(user) if id(e) not in seen]
        return next((t for t in new if rid in t), None)

    return _link(await eventually(told, what="the step-up link"))


async def confirm(p: Person, url: str) -> str:
    await p.page.goto(url)
    await p.page.click("#go")
    result = p.page.locator("#result:not(:empty):not(:text('Waiting'))")
    await result.wait_for()
    return await result.inner_text()


async def answer_for(p: Person, url: str) -> dict[str, Any]:
    """What the person's authenticator answers on the page at `url`, not sent."""
    await p.page.goto(url)
    return dict(await p.page.evaluate("hitlAnswer()"))


async def post(url: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient() as c:
        return await c.post(url, json=body)


async def refusals(bot: Bot, rid: str) -> list[tuple[str, str | None]]:
    return [
        (e.actor, e.reason_code)
        for e in await audit.entries(bot.redis, rid)
        if e.kind == "refused" and (e.reason_code or "").startswith("step_up")
    ]


async def test_enroll_then_approve_with_the_passkey(bot: Bot, tmp_path: Path) -> None:
    rid = await bot.propose("refund", {"amount": 4200, "to": "cust-7"}, requester="api")
    async with browser(tmp_path) as b:
        kid = await person(b, "UKID")
        cred = await enroll(bot, kid)
        url = await click_approve(bot, "UKID", rid)
        # The click alone approved nothing, and says so in the audit.
        assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
        assert await refusals(bot, rid) == [("UKID", "step_up_required")]

        await kid.page.goto(url)
        shown = await kid.page.inner_text("dl")
        req = await bot.requests.get(rid)
        for part in ("refund", '"amount": 4200', '"to": "cust-7"', req.payload_hash, "api"):
            assert part in shown
        await kid.page.click("#go")
        await kid.page.locator("#result.ok", has_text="Approved with your passkey").wait_for()

    req = await bot.requests.get(rid)
    assert req.state == State.APPROVED
    assert req.resolution is not None and req.resolution.reason_code == f"passkey:{cred}"
    approve = [e for e in await audit.entries(bot.redis, rid) if e.event == "approve"][-1]
    assert (approve.kind, approve.actor, approve.via) == ("transition", "UKID", f"passkey:{cred}")
    ch, ts = await bot.message_of(rid)

    def card_text() -> str:
        return next(all_text(m.blocks) for m in bot.emu.messages(ch) if m.ts == ts)

    await eventually(card_text, lambda t: "(passkey)" in t, what="the card says (passkey)")
    found = stepup_findings(bot.requests, PasskeyStore(bot.redis), parse_policy(STEP_UP))
    assert [f async for f in found] == []  # what `audit verify` checks of step-ups
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        claimed = await c.post(f"/v1/approvals/{rid}/claim")  # serve's seal, checked
    assert claimed.status_code == 200 and claimed.json()["state"] == "executing"


async def test_without_a_passkey_a_click_approves_nothing(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 5000, "to": "cust-8"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UKID", render.ACTION_APPROVE, channel=ch, ts=ts)

    def told() -> str | None:
        return next((e.text for e in bot.emu.ephemerals("UKID") if rid in e.text), None)

    assert "/hitl passkey" in await eventually(told)
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    # A thread reply is a click too.
    await bot.emu.post("UKID", ch, "approve", thread_ts=ts)
    await eventually(lambda: len([e for e in bot.emu.ephemerals("UKID") if rid in e.text]) > 1)
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    assert await refusals(bot, rid) == [("UKID", "step_up_required")] * 2


async def test_each_refusal_is_explained_and_audited(bot: Bot, tmp_path: Path) -> None:
    r1 = await bot.propose("refund", {"amount": 4300, "to": "cust-1"})
    r2 = await bot.propose("refund", {"amount": 4400, "to": "cust-2"})
    async with browser(tmp_path) as b:
        kid, bob = await person(b, "UKID"), await person(b, "UBOB")
        await enroll(bot, kid)
        await enroll(bot, bob)
        link1 = await click_approve(bot, "UKID", r1)
        link2 = await click_approve(bot, "UKID", r2)

        # An answer made for one request's link, sent to another's: refused.
        made_for_1 = await answer_for(kid, link1)
        resp = await post(link2, made_for_1)
        assert resp.status_code == 403 and "another link" in resp.json()["message"]
        # Replayed: link 2 was used (and refused) once already.
        resp = await post(link2, made_for_1)
        assert resp.status_code == 409 and "used already" in resp.json()["message"]

        # Another person's passkey on UKID's link.
        bobs_link = await click_approve(bot, "UBOB", r1)
        resp = await post(link1, await answer_for(bob, bobs_link))
        assert resp.status_code == 403 and "someone else's" in resp.json()["message"]

        # A passkey revoked since the link was made.
        link3 = await click_approve(bot, "UKID", r1)
        answer = await answer_for(kid, link3)
        await PasskeyStore(bot.redis).remove("UKID", None, by="UOPS")
        resp = await post(link3, answer)
        assert resp.status_code == 403 and "removed or revoked" in resp.json()["message"]

        # An expired link: the card's deadline passed.
        link4 = await click_approve(bot, "UBOB", r2)
        answer = await answer_for(bob, link4)
        bot.clock.advance(11 * 60_000)
        resp = await post(link4, answer)
        assert resp.status_code == 410 and "expired" in resp.json()["message"]

    assert (await bot.requests.get(r1)).approvals == ()
    assert ("UKID", "step_up_other_request") in await refusals(bot, r2)
    assert ("UKID", "step_up_replayed") in await refusals(bot, r2)
    assert ("UKID", "step_up_other_person") in await refusals(bot, r1)
    assert ("UKID", "step_up_revoked") in await refusals(bot, r1)
    assert ("UBOB", "step_up_expired") in await refusals(bot, r2)
    for rid in (r1, r2):  # each refusal joined the request's chain, in order
        assert await audit.verify_request(bot.redis, rid) is None
        assert await audit.disorder_request(bot.redis, rid) == []


async def test_a_quorum_of_two_takes_each_ones_passkey(bot: Bot, tmp_path: Path) -> None:
    rid = await bot.propose("deploy", {"service": "api", "version": "2.0"}, requester="api")
    async with browser(tmp_path) as b:
        alice, bob = await person(b, "UALICE"), await person(b, "UBOB")
        await enroll(bot, alice)
        await enroll(bot, bob)
        stale = await click_approve(bot, "UBOB", rid)
        bobs_answer = await answer_for(bob, stale)  # his device answered; not sent yet
        said = await confirm(alice, await click_approve(bot, "UALICE", rid))
        assert "1 of 2" in said
        # Bob's link was made before Alice's approval moved the request on: its page
        # no longer shows the call, and his answer for it approves nothing.
        await bob.page.goto(stale)
        assert "changed since" in await bob.page.inner_text("body")
        resp = await post(stale, bobs_answer)
        assert resp.status_code == 409 and "changed since" in resp.json()["message"]
        assert ("UBOB", "step_up_other_version") in await refusals(bot, rid)
        assert len((await bot.requests.get(rid)).approvals) == 1
        said = await confirm(bob, await click_approve(bot, "UBOB", rid))
        assert "Approved with your passkey" in said

    req = await bot.requests.get(rid)
    assert req.state == State.APPROVED
    assert [a.actor for a in req.approvals] == ["UALICE", "UBOB"]
    entries = await audit.entries(bot.redis, rid)
    vias = [e.via or "" for e in entries if e.event == "approve" and e.kind == "transition"]
    assert [v.startswith("passkey:") for v in vias] == [True, True]


async def test_an_edit_waits_for_the_passkey_and_runs_as_edited(bot: Bot, tmp_path: Path) -> None:
    rid = await bot.propose("refund", {"amount": 4200, "to": "cust-9"}, requester="api")
    ch, ts = await bot.message_of(rid)
    async with browser(tmp_path) as b:
        kid = await person(b, "UKID")
        cred = await enroll(bot, kid)
        await bot.emu.click("UKID", render.ACTION_EDIT, channel=ch, ts=ts)
        view = await eventually(lambda: _open_view(bot, "UKID"))
        edited = '{"amount": 4000, "to": "cust-9"}'
        out = await bot.emu.submit(
            "UKID", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: edited}}
        )
        assert out.view_action == "errors"  # the modal stays, with the link in it
        assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
        url = _link(json.dumps(out.errors))
        await kid.page.goto(url)
        shown = await kid.page.inner_text("dl")
        assert "as you edited them" in shown and '"amount": 4000' in shown
        assert "Approved with your passkey" in await confirm(kid, url)

    req = await bot.requests.get(rid)
    assert req.state == State.APPROVED and req.args == {"amount": 4000, "to": "cust-9"}
    assert req.resolution is not None and req.resolution.reason_code == f"passkey:{cred}"

    def card_text() -> str:
        return next(all_text(m.blocks) for m in bot.emu.messages(ch) if m.ts == ts)

    await eventually(card_text, lambda t: "Edited and approved by" in t and "(passkey)" in t)


async def test_approve_all_approves_none_of_a_step_up_tier(bot: Bot, tmp_path: Path) -> None:
    rids = [
        await bot.propose("refund", {"amount": 2000 + i, "to": f"c-{i}"}, requester="api")
        for i in range(3)
    ]
    ch, _ = await bot.message_of(rids[0])

    def digest() -> Any:
        for m in bot.emu.messages(ch):
            if f"Approve all {len(rids)}" in all_text(m.blocks):
                return m
        return None

    found = await eventually(digest, what="the digest")
    async with browser(tmp_path) as b:
        await enroll(bot, await person(b, "UKID"))
    await bot.emu.click("UKID", card.ACTION_APPROVE_ALL, channel=ch, ts=found.ts)

    def told() -> str | None:
        return next((e.text for e in bot.emu.ephemerals("UKID") if "Approved 0" in e.text), None)

    said = await eventually(told, what="the batch's answer")
    assert len(LINK.findall(said)) == 3  # each call's own link
    assert [(await bot.requests.get(r)).state for r in rids] == [State.PENDING_REVIEW] * 3
    for rid in rids:
        assert await refusals(bot, rid) == [("UKID", "step_up_required")]


def _open_view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)


async def test_a_chosen_candidate_waits_for_the_passkey(bot: Bot, tmp_path: Path) -> None:
    cands = [{"amount": 1500, "to": "c-1"}, {"amount": 2500, "to": "c-2"}]
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        made = await api.post("/v1/approvals", json={"tool": "refund", "candidates": cands})
    rid = made.json()["id"]
    ch, ts = await bot.message_of(rid)
    async with browser(tmp_path) as b:
        kid = await person(b, "UKID")
        await enroll(bot, kid)
        seen = {id(e) for e in bot.emu.ephemerals("UKID")}
        await bot.emu.click("UKID", f"{ACTION_CHOOSE}_1", channel=ch, ts=ts)

        def told() -> str | None:
            new = [e.text for e in bot.emu.ephemerals("UKID") if id(e) not in seen]
            return next((t for t in new if rid in t), None)

        url = _link(await eventually(told, what="the step-up link"))
        assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
        await kid.page.goto(url)
        shown = await kid.page.inner_text("dl")
        assert "the candidate you chose" in shown and '"amount": 2500' in shown
        assert "Approved with your passkey" in await confirm(kid, url)

    req = await bot.requests.get(rid)
    assert req.state == State.APPROVED and req.args == cands[1]


async def test_a_person_lists_and_removes_only_their_own_passkeys(bot: Bot) -> None:
    store = PasskeyStore(bot.redis)
    for user, cid in (("UKID", "kid-key"), ("UBOB", "bob-key")):
        await store.add(Credential(id=cid, user=user, public_key="pk", created_at=1))
    said = json.dumps((await bot.emu.command("UKID", "#general", "/hitl", "passkey")).body)
    assert "kid-key" in said and "bob-key" not in said and "/passkey/enroll/" in said
    said = json.dumps(
        (await bot.emu.command("UKID", "#general", "/hitl", "passkey remove bob-key")).body
    )
    assert "no passkey" in said
    assert [c.id for c in await store.of("UBOB")] == ["bob-key"]
    said = json.dumps(
        (await bot.emu.command("UKID", "#general", "/hitl", "passkey remove kid-key")).body
    )
    assert "Removed" in said
    assert await store.of("UKID") == [] and await store.revoked("kid-key")
