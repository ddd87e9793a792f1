"""The real bot (`run_serve`) wired to the Slack emulator over real HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.config import Settings
from bot.core.policy import parse_policy
from bot.sandbox.slack import SlackEmulator
from bot.sandbox.slack.defaults import default_users
from bot.sandbox.slack.workspace import User
from bot.server.serve import ServeOptions, run_serve
from bot.slack.listeners.view_seal import ViewSeal
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.runs import RunStore
from bot.store.run.steering import SteeringStore
from bot.store.stores import StoreSet
from bot.supervise import Backoff
from tests.support.keys import serve_signer
from tests.support.poll import DEFAULT_TIMEOUT_S, eventually

SECRET = "e2e-signing-secret"
TOKEN = "xoxb-e2e-token"
APP_TOKEN = "xapp-e2e-app-token"

POLICY: dict[str, Any] = {
    "tiers": {
        tier: {
            "review_timeout": "10m",
            "reviewers": {"channels": ["#hitl-approvals"]},
            "escalation": [{"users": ["UPARENT"], "channels": ["#hitl-oncall"]}],
            "approvals_required": 2 if tier == "critical" else 1,
            # low names nobody: the members of #hitl-approvals decide (never the workspace)
            "approvers": {"high": ["SAPPROVERS", "UKID"], "low": []}.get(tier, ["*"]),
        }
        for tier in ("low", "medium", "high", "critical")
    },
    "tools": {
        "move_claw": {"tier": "low", "review": "none"},
        "drop_claw": {"tier": "medium"},
        "refund": {"tier": "medium", "rules": [{"if": "amount > 1000", "tier": "high"}]},
        "deploy": {"tier": "critical"},
        "post_note": {"tier": "low"},
    },
}


@dataclass
class Bot:
    emu: SlackEmulator
    url: str
    clock: FakeClock
    redis: Redis
    requests: RequestStore
    questions: QuestionStore
    steering: SteeringStore
    runs: RunStore

    async def propose(self, tool: str, args: dict[str, Any], **kw: Any) -> str:
        made = await self.requests.create(
            parse_policy(POLICY),
            tool=tool,
            args=args,
            requester=kw.pop("requester", "agent:test"),
            **kw,
        )
        return made.request.id

    async def message_of(self, rid: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[str, str]:
        """Wait until the notifier posted the request's message; its (channel, ts)."""

        async def posted() -> tuple[str, str] | None:
            ch, ts = await self.redis.hmget(
                f"hitl:{{s{_shard(rid):02d}}}:req:{rid}", ["msg_channel", "msg_ts"]
            )
            return (ch, ts) if ch and ts else None

        return await eventually(posted, what=f"the message of {rid}", timeout_s=timeout_s)


def _shard(rid: str) -> int:
    from bot.store.keys import shard_of

    return shard_of(rid)


def button_values(blocks: list[dict[str, Any]] | None) -> dict[str, str]:
    out = {}
    for b in blocks or []:
        for el in b.get("elements", []) if b.get("type") == "actions" else []:
            out[el["action_id"]] = el.get("value", "")
    return out


def sealed(view: dict[str, Any], user: str = "UALICE") -> dict[str, Any]:
    """`view` with its metadata sealed as serve seals a modal it opens for `user`: what a
    test that sends a submission itself must send (bot/slack/listeners/view_seal.py)."""
    signer = serve_signer()
    return ViewSeal(signer, signer.public()).seal(view, user)


def all_text(blocks: list[dict[str, Any]] | None) -> str:
    return json.dumps(blocks or [], ensure_ascii=False)


@pytest.fixture
def slack_mode() -> str:
    """How Slack reaches the bot: "http" (signed POSTs) or "socket" (Socket Mode).

    A test module that should run both ways overrides this fixture with
    `params=["http", "socket"]`."""
    return "http"


@pytest.fixture
def serve_env() -> dict[str, Any]:
    """Extra settings for the bot; a test module overrides this fixture to change them."""
    return {}


@pytest.fixture
def serve_options() -> dict[str, Any]:
    """ServeOptions fields for the bot beyond the fixture's; a test module overrides this."""
    return {}


# A stop waits for the event reads in progress: short reads keep each test's teardown
# short (a twentieth of a second, where serve's default second was most of it).
READ_BLOCK_MS = 50


@pytest.fixture
async def bot(
    redis_url: str,
    redis: Redis,
    tmp_path: Path,
    slack_mode: str,
    serve_env: dict[str, Any],
    serve_options: dict[str, Any],
) -> AsyncIterator[Bot]:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(POLICY))
    users = default_users() + [User(f"UTEAM{i}", f"team{i}", f"Team {i}") for i in range(5)]
    socket = slack_mode == "socket"
    emu = SlackEmulator(
        signing_secret=SECRET,
        bot_token=TOKEN,
        users=users,
        app_token=APP_TOKEN if socket else None,
    )
    await emu.start()
    clock = FakeClock(int(time.time() * 1000))
    settings = Settings(
        slack_bot_token=TOKEN,
        # Socket Mode runs with no signing secret at all, as docs/slack-setup.md tells users to
        slack_signing_secret=None if socket else SECRET,
        slack_app_token=APP_TOKEN if socket else None,
        slack_api_url=emu.api_url,
        redis_url=redis_url,
        hitl_policy=policy_file,
        hitl_port=0,
        hitl_api_token="api-token-0123456789",
        **serve_env,
    )
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        run_serve(
            settings,
            stop,
            clock=clock,
            on_ready=ready.set_result,
            options=ServeOptions(
                notifier_retry_ms=500,
                sweep_interval_s=0.05,
                socket_backoff=Backoff(first_s=0.05, cap_s=0.5),
                read_block_ms=READ_BLOCK_MS,
                **({"default_agent": "claw"} | serve_options),
            ),
        )
    )
    url = await asyncio.wait_for(ready, 10)
    if socket:
        await emu.socket.wait_connected()
    else:
        emu.events_url = url + "/slack/events"
    try:
        yield Bot(
            emu,
            url,
            clock,
            redis,
            RequestStore(redis, clock=clock),
            QuestionStore(redis, clock=clock),
            SteeringStore(redis, clock=clock),
            RunStore(redis, clock=clock),
        )
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
        await emu.stop()


@dataclass
class Agents:
    model: Any
    worker_task: asyncio.Task[None]


@pytest.fixture
async def agents(bot: Bot) -> AsyncIterator[Agents]:
    """A worker running the claw agent on the scripted model, beside the bot."""
    from bot.agent.llm import ChatClient
    from bot.agent.loader import AgentCatalog
    from bot.agent.loop import Stores
    from bot.agent.worker import Worker, WorkerConfig
    from bot.demo.claw_script import claw_responder
    from bot.sandbox.model import ScriptedModel

    model = ScriptedModel(claw_responder)
    base = await model.start()
    stop = asyncio.Event()
    async with ChatClient(base, "scripted") as llm:
        worker = Worker(
            Stores.on(StoreSet(bot.redis, clock=bot.clock), parse_policy(POLICY)),
            llm=llm,
            agents=AgentCatalog(),
            config=WorkerConfig(min_idle_ms=2000, block_ms=READ_BLOCK_MS),  # a prompt stop
        )
        task = asyncio.create_task(worker.run(stop))
        try:
            yield Agents(model, task)
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)
            await model.stop()
