"""/hitl and the App Home: what waits for me, the policy, the audit, steer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.core.models import Decision, RunState
from bot.core.states import Event
from bot.slack.listeners.commands import HOME_RUNS_LOOKED
from tests.e2e.conftest import Bot, all_text
from tests.support.poll import eventually


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    """Every test here runs once with Slack over HTTP and once over Socket Mode."""
    return str(request.param)


def _said(out: Any) -> str:
    return json.dumps(out.body) if out.body is not None else ""


async def test_pending_lists_what_i_may_decide(bot: Bot) -> None:
    mine = await bot.propose("refund", {"amount": 4200, "to": "c1"})  # high: SAPPROVERS, UKID
    own = await bot.propose("refund", {"amount": 5, "to": "c2"}, requester="UKID")
    out = await bot.emu.command("UKID", "#general", "/hitl", "pending")
    assert out.status == 200
    text = _said(out)
    assert mine in text
    assert own not in text  # she may not approve her own request, so it is not "waiting for me"


async def test_policy_shows_tiers_timeouts_and_defaults(bot: Bot) -> None:
    out = await bot.emu.command("UALICE", "#general", "/hitl", "policy")
    text = _said(out)
    for word in ("low", "medium", "high", "critical", "auto_rejected"):
        assert word in text


async def test_audit_shows_the_history_and_unknown_ids_are_named(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 5, "to": "c3"})
    req = await bot.requests.get(rid)
    await bot.requests.transition(
        rid, Decision(event=Event.APPROVE, actor="UBOB", payload_hash=req.payload_hash)
    )
    text = _said(await bot.emu.command("UALICE", "#general", "/hitl", f"audit {rid}"))
    assert "approve" in text and "UBOB" in text
    text = _said(await bot.emu.command("UALICE", "#general", "/hitl", "audit nope"))
    assert "No request with id nope" in text
    text = _said(await bot.emu.command("UALICE", "#general", "/hitl", "frobnicate"))
    assert "Usage" in text


async def test_steer_by_command_queues_for_the_run(bot: Bot) -> None:
    run = await bot.runs.start(agent="claw", prompt="bear", requester="UKID", channel="#general")
    out = await bot.emu.command("UKID", "#general", "/hitl", f"steer {run.id} the penguin!")
    assert "Queued" in _said(out)
    queued = await bot.steering.pop(run.id)
    assert queued is not None and queued.text == "the penguin!" and queued.actor == "UKID"


async def test_app_home_lists_my_pending_approvals(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 4200, "to": "c4"})
    await bot.emu.open_home("UBOB")  # Bob is in SAPPROVERS

    async def home() -> Any:
        return bot.emu.home_view("UBOB")

    view = await eventually(home)
    assert rid in json.dumps(view.definition)


async def test_app_home_shows_my_live_runs_however_many_runs_others_started(bot: Bot) -> None:
    """The App Home looks at the newest live runs and at the opener's own: a run UKID
    started stays on their Home though fifty later runs of other people's are live."""
    mine = await bot.runs.start(agent="claw", prompt="my bear", requester="UKID")
    for i in range(HOME_RUNS_LOOKED):
        bot.clock.advance(1)  # each newer than UKID's
        await bot.runs.start(agent="claw", prompt=f"other {i}", requester="UOTHER")
    done = await bot.runs.start(agent="claw", prompt="my done one", requester="UKID")
    await bot.runs.update(done.id, state=RunState.FINISHED)
    await bot.emu.open_home("UKID")

    async def home() -> Any:
        return bot.emu.home_view("UKID")

    text = all_text((await eventually(home, what="UKID's App Home")).definition["blocks"])
    assert mine.id in text and "Runs you can steer: 1" in text  # not others', nor a done one
