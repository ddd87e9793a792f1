"""Telling the operators of approval fatigue: every `HITL_FATIGUE_CHECK_S`, serve reads the
last two weeks of decisions (bot/store/figures/fatigue.py), finds the signals that call
for a person (bot/core/hindsight/fatigue_signals.py), and sends each to every operator's direct
messages, once a (UTC) day per signal and operator (bot/store/figures/fatigue_told.py). The same
check mines the policy suggestions the operators' App Home shows, once an hour
(suggested.py).

Only to the operators, and only in direct messages: a signal may name the approver
concerned, and a channel is no place to name them. The policy's operators are user ids,
user groups and channels (their members); `"*"` is nobody here, since the whole
workspace is no audience for a name. Without an operator nothing is claimed or sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.hindsight.fatigue import WEEK_MS
from bot.core.hindsight.fatigue_signals import Signal, Watch, signals
from bot.gate.runtime import Runtime
from bot.slack.access.groups import channel_members, is_channel, is_group, members
from bot.slack.blocks import escape as esc
from bot.slack.nudges import messages as msg
from bot.slack.nudges import suggested
from bot.store.figures import fatigue
from bot.store.figures.fatigue_told import FatigueTold

log = logging.getLogger(__name__)


def watch_of(rt: Runtime) -> Watch:
    s = rt.settings
    return Watch(
        fast_window=s.hitl_fatigue_fast_window,
        fast_share=s.hitl_fatigue_fast_share,
        carry_share=s.hitl_fatigue_carry_share,
    )


def _texts(s: Signal) -> tuple[str, str]:
    approver = esc.user(s.approver or "")
    tier = esc.mrkdwn(s.tier or "")
    head = msg.HEAD[s.kind].format(approver=approver, count=s.count, total=s.total, tier=tier)
    return head, msg.WHAT_TO_DO[s.kind].format(tier=tier)


class Teller:
    def __init__(self, rt: Runtime, client: AsyncWebClient, watch: Watch) -> None:
        self.rt, self.client, self.watch = rt, client, watch
        self.told = FatigueTold(rt.requests.redis)

    async def run(self, stop: asyncio.Event, every_s: float) -> None:
        while not stop.is_set():
            await self.check()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)

    async def operators(self) -> list[str]:
        """The operators' user ids: the policy's users, and its groups' and channels'
        members."""
        users: set[str] = set()
        for name in self.rt.policy.operators:
            if name == "*":
                continue
            if is_group(name):
                users |= await members(self.rt.slack, self.client, name)
            elif is_channel(name):
                users |= await channel_members(self.rt.slack, self.client, name)
            else:
                users.add(name)
        return sorted(users)

    async def check(self) -> list[Signal]:
        """Tell what the decisions up to now call for; the signals told."""
        now = self.rt.clock()
        decided = await fatigue.history(self.rt.requests, now - 2 * WEEK_MS, now)
        found = signals(decided, now, self.watch)
        told: list[Signal] = []
        people = await self.operators() if found else []
        for s in found if people else []:
            if await self._tell(s, people, now):
                told.append(s)
        if found and not people:
            log.warning("fatigue signals found but the policy names no operators to tell")
        if self.rt.policy.operators:  # only operators see them (fatigue_home.py)
            await suggested.refresh(self.rt, now)
        await self.told.checked(now)
        return told

    async def _tell(self, s: Signal, people: list[str], now: int) -> bool:
        """Send `s` to each operator not yet told today; whether anyone was told now.
        Each operator is claimed on their own: one whose DM Slack refuses is tried again
        at the next check, and nobody else is told twice for it."""
        head, what = _texts(s)
        blocks = [esc.section(head), esc.section(what), esc.context(msg.FOOT)]
        sent = False
        for user in people:
            mark = f"{s.key}:{user}"
            if not await self.told.claim(mark, now):
                continue  # told within the day, here or by another serve
            try:
                dm = await self.client.conversations_open(users=user)
                await self.client.chat_postMessage(
                    channel=dm["channel"]["id"], text=head, blocks=blocks, unfurl_links=False
                )
            except SlackApiError as exc:
                await self.told.give_back(mark, now)  # the next check tries again
                why = exc.response.get("error")
                log.warning("fatigue signal %s not sent to %s: %s", s.key, user, why)
                continue
            sent = True
        return sent
