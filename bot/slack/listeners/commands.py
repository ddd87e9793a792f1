"""`/hitl` and the App Home tab: what waits for me, the policy, steer, stop, audit."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Run
from bot.errors import HitlError
from bot.gate.corrections import correct, stop_run
from bot.gate.runtime import Runtime
from bot.slack import messages as msg
from bot.slack.access.permissions import (
    audit_refusal,
    is_operator,
    may_decide,
    may_direct,
    may_read,
)
from bot.slack.blocks import lists, render
from bot.slack.blocks.home import RunLine, home_view
from bot.slack.listeners.fatigue_home import operators_panel
from bot.slack.seams import Feature
from bot.slack.stepup import passkey_command
from bot.store.run.runs import RunStore

log = logging.getLogger(__name__)

HOME_RUNS_LOOKED = 50


class Commands:
    def __init__(self, rt: Runtime, runs: RunStore, features: Sequence[Feature] = ()) -> None:
        """`features`: what the registered features add (bot/slack/features.py): their
        `/hitl` verbs and their parts of the App Home."""
        self.rt = rt
        self.runs = runs
        self.features = tuple(features)
        self.verbs = {v: f for feature in features for v, f in feature.verbs.items()}

    def register(self, app: AsyncApp) -> None:
        app.command("/hitl")(self.on_command)
        app.event("app_home_opened")(self.on_home)

    async def mine(self, client: AsyncWebClient, user: str) -> list[ActionRequest]:
        """The pending requests `user` may see: those they may decide now (their groups
        and channels looked up), or all of them for an operator. Nobody else learns that a
        request exists, nor its arguments."""
        reqs = await self.rt.requests.list_pending()
        if await is_operator(self.rt, client, user):
            return reqs
        return [r for r in reqs if await may_decide(self.rt, client, user, r)]

    async def on_command(self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        user, channel = body.get("user_id", ""), body.get("channel_id")
        verb, _, rest = (body.get("text") or "").strip().partition(" ")
        try:
            reply = await self._dispatch(verb.lower(), rest.strip(), user, channel, client)
        except HitlError as exc:
            reply = render.Rendered(text=str(exc), blocks=[])
        if reply.blocks:
            await ack(text=reply.text, blocks=reply.blocks)
        else:
            await ack(text=reply.text)

    async def _dispatch(
        self, verb: str, rest: str, user: str, channel: str | None, client: AsyncWebClient
    ) -> render.Rendered:
        now = self.rt.clock()
        if verb == "pending":
            reqs = await self.mine(client, user)
            return lists.pending_list(reqs, now_ms=now)
        if verb == "policy":
            return lists.policy_summary(self.rt.policy)
        if verb == "passkey":
            return render.Rendered(text=await passkey_command(self.rt, user, rest), blocks=[])
        if (feature_verb := self.verbs.get(verb)) is not None:
            return await feature_verb(self.rt, client, user, rest)
        if verb == "audit" and rest:
            req = await self.rt.requests.get(rest)  # a clear "no request" before a trail
            if not await may_read(self.rt, client, user, req):
                log.info("refused", extra={"what": "audit", "actor": user, "request_id": rest})
                return render.Rendered(text=msg.MAY_NOT_READ.format(id=rest), blocks=[])
            return lists.audit_text(await self.rt.audit_entries(rest))
        run_id, _, text = rest.partition(" ")
        if verb in ("steer", "stop") and run_id and (verb == "stop" or text.strip()):
            run = await self.runs.get(run_id)
            if not await may_direct(self.rt, client, user, run):
                await audit_refusal(self.rt, run_id, user=user, what=verb)
                return render.Rendered(text=msg.MAY_NOT_DIRECT.format(run_id=run_id), blocks=[])
        if verb == "steer" and run_id and text.strip():
            await correct(
                self.rt.steering, self.rt.requests, self.runs, run_id, text.strip(), actor=user
            )
            return render.Rendered(text=msg.STEER_QUEUED.format(run_id=run_id), blocks=[])
        if verb == "stop" and run_id:
            await stop_run(
                self.runs, self.rt.requests, self.rt.questions, self.rt.steering, run_id, actor=user
            )
            return render.Rendered(text=msg.STOP_DONE.format(run_id=run_id), blocks=[])
        if verb == "run" and run_id and text.strip():
            run = await self.runs.start(
                agent=run_id, prompt=text.strip(), requester=user, channel=channel
            )
            return render.Rendered(
                text=msg.RUN_STARTED.format(run_id=run.id, agent=run_id), blocks=[]
            )
        return render.Rendered(text=msg.HITL_USAGE, blocks=[])

    async def my_runs(self, client: AsyncWebClient, user: str) -> list[RunLine]:
        """The live runs `user` may steer or stop (all of them for an operator), newest
        first, with their threads' links: the newest HOME_RUNS_LOOKED the user started,
        and of the newest HOME_RUNS_LOOKED of everyone's, those the user may direct. Read
        through the run indexes, so as quick with years of runs stored as with none;
        each run looked at may cost Slack lookups of who may decide what it waits on."""
        operator = await is_operator(self.rt, client, user)
        mine = [] if operator else await self.runs.started_by(user, HOME_RUNS_LOOKED)
        out: dict[str, Run] = {r.id: r for r in mine}
        for run in await self.runs.list(HOME_RUNS_LOOKED, live=True):
            if run.id not in out and (operator or await may_direct(self.rt, client, user, run)):
                out[run.id] = run
        newest = sorted(out.values(), key=lambda r: (r.created_at, r.id), reverse=True)
        return [(run, await self.rt.cards.thread_link(run.id)) for run in newest]

    async def on_home(self, event: dict[str, Any], client: AsyncWebClient) -> None:
        user = event.get("user", "")
        reqs = await self.mine(client, user)
        runs = await self.my_runs(client, user)
        now = self.rt.clock()
        panel = await operators_panel(self.rt, client, user, now)
        view = home_view(reqs, self.rt.policy, now_ms=now, runs=runs, operators=panel)
        for feature in self.features:
            if feature.home is not None:
                view = await feature.home(self.rt, client, user, view)
        await client.views_publish(user_id=user, view=view)
