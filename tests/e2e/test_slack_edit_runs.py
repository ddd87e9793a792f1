"""A worker run whose drop_claw a person edits: the model is told what really ran."""

from __future__ import annotations

import json
from typing import Any

from bot.core.models import RunState
from bot.core.states import State
from bot.slack.blocks import render
from tests.e2e.conftest import Agents, Bot, all_text, button_values
from tests.support.poll import eventually


async def _drop_card(bot: Bot, ch: str, home: str) -> Any:
    found = [
        m
        for m in bot.emu.replies(ch, home)
        if render.ACTION_EDIT in button_values(m.blocks) and "drop_claw" in all_text(m.blocks)
    ]
    return found[-1] if found else None


def _tool_results(agents: Agents) -> list[str]:
    """Every tool result the scripted model was sent, in the last request it received."""
    return [str(m.get("content")) for m in agents.model.sent() if m.get("role") == "tool"]


async def test_an_edited_drop_runs_the_edit_and_the_model_is_told(bot: Bot, agents: Agents) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))

    async def asked() -> bool:
        return any("Is this the one?" in m.text for m in bot.emu.replies(ch, home))

    await eventually(asked, timeout_s=15)
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)
    card = await eventually(lambda: _drop_card(bot, ch, home), timeout_s=15)
    rid = (await bot.runs.get(run_id)).waiting_on
    assert rid is not None
    await bot.emu.click("UPARENT", render.ACTION_EDIT, channel=ch, ts=card.ts)
    view = await eventually(lambda: _view(bot, "UPARENT"))
    box = next(b for b in view.definition["blocks"] if b.get("block_id") == render.ARGS_BLOCK)
    assert json.loads(box["element"]["initial_value"]) == {"target": "bear"}

    def args(text: str) -> dict[str, Any]:
        return {render.ARGS_BLOCK: {render.ARGS_ACTION: text}}

    # An edit the tool cannot take: drop_claw has no `force`, so it is refused here,
    # in the modal, instead of being approved and then cancelled behind the kid's back.
    bad = await bot.emu.submit("UPARENT", view.id, args('{"target": "penguin", "force": 11}'))
    assert bad.view_action == "errors" and "force" in json.dumps(bad.errors), bad
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    good = await bot.emu.submit("UPARENT", view.id, args('{"target": "penguin"}'))
    assert good.view_action == "closed", good

    async def finished() -> Any:
        run = await bot.runs.get(run_id)
        return run if run.state in (RunState.FINISHED, RunState.FAILED) else None

    run = await eventually(finished, timeout_s=15)
    req = await bot.requests.get(rid)
    assert req.state == State.COMPLETED and req.args == {"target": "penguin"}
    # The tool ran with the edited target (the claw sat over the bear, as first proposed).
    assert req.detail == "Grabbed the bear, not the penguin."
    told = next(t for t in _tool_results(agents) if "Grabbed" in t)
    assert "edited" in told and '"penguin"' in told and "UPARENT" in told, told
    assert run.state == RunState.FINISHED and "came up empty" not in (run.result or "")


async def _view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)
