"""A mention starts the team's agent, never the demo's toy: the one named by
HITL_DEFAULT_AGENT, else the only agent the workers offer; with none chosen, the mention
is answered with how to choose and what the workers offer, and nothing starts."""

from __future__ import annotations

from typing import Any

import pytest

from bot.store.run.agents import AgentDirectory
from tests.e2e.conftest import Bot
from tests.support.poll import eventually


@pytest.fixture
def serve_options() -> dict[str, Any]:
    return {"default_agent": None}  # serve as a team runs it: no demo agent named


async def _reply(bot: Bot, ch: str, ts: str, needle: str) -> Any:
    async def probe() -> Any:
        found = [m for m in bot.emu.replies(ch, ts) if needle in m.text]
        return found[-1] if found else None

    return await eventually(probe, what=f"a reply with {needle!r}")


async def test_with_no_agent_chosen_a_mention_says_how_and_starts_nothing(bot: Bot) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> refund order A1")
    reply = await _reply(bot, posted.channel, posted.ts, "No agent is chosen")
    assert "HITL_DEFAULT_AGENT" in reply.text and "/hitl run" in reply.text
    assert await bot.runs.by_thread(posted.channel, posted.ts) is None
    # Two workers' agents on offer: still no guess; the answer lists both.
    await AgentDirectory(bot.redis, clock=bot.clock).announce(["support", "billing"])
    again = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> refund order A2")
    listed = await _reply(bot, again.channel, again.ts, "No agent is chosen")
    assert "`billing`, `support`" in listed.text
    assert await bot.runs.by_thread(again.channel, again.ts) is None


async def test_the_one_agent_the_workers_offer_is_the_mentions(bot: Bot) -> None:
    await AgentDirectory(bot.redis, clock=bot.clock).announce(["support"])
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> refund order A1")
    run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
    run = await bot.runs.get(run_id)
    assert (run.agent, run.prompt) == ("support", "refund order A1")


class TestTheSettingNamesIt:
    @pytest.fixture
    def serve_env(self) -> dict[str, Any]:
        return {"hitl_default_agent": "support"}

    async def test_hitl_default_agent_is_started_by_a_mention(self, bot: Bot) -> None:
        await AgentDirectory(bot.redis, clock=bot.clock).announce(["support", "billing"])
        posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> refund order A1")
        run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
        assert (await bot.runs.get(run_id)).agent == "support"
