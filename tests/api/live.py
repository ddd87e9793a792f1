"""The API served by uvicorn on a free loopback port, in a thread with its own loop.

Its own thread and loop, like a separate `hitl-bot serve` process: its Redis
connections never meet the test's loop, and a test blocked in sync code does
not block the server.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.api import create_app
from bot.api.waiting import DEFAULT_MAX_WAITING
from bot.clock import wall_ms
from bot.config import Settings
from bot.core.policy import Policy
from bot.db.connection import connect
from bot.gate.runtime import Runtime
from tests.support.keys import serve_signer
from tests.support.poll import eventually_sync

TOKEN = "test-token-5b1f0c"
AGENT_TOKEN = "agent-7-token-8d2e4a9c"  # a second token, for the named identity "agent-7"


def make_runtime(
    redis: Redis,
    policy: Policy,
    token: str | None = TOKEN,
    *,
    identities: str | None = None,
    operators: str | None = None,
) -> Runtime:
    """`identities`: HITL_API_TOKENS (default: agent-7 only); `operators`: HITL_API_OPERATORS."""
    named = identities or f"agent-7={AGENT_TOKEN}"
    settings = Settings(
        hitl_api_token=SecretStr(token) if token else None,
        hitl_api_tokens=SecretStr(named) if token else None,
        hitl_api_operators=operators,
        redis_url=SecretStr("redis://unused"),
    )
    return Runtime(
        settings=settings,
        redis=redis,
        server=None,
        policy=policy,
        clock=wall_ms,
        signer=serve_signer(),  # serve's key: its request store seals every decision
    )


class LiveServer:
    def __init__(
        self,
        redis_url: str,
        policy: Policy,
        *,
        max_wait_s: float = 60.0,
        max_waiting: int = DEFAULT_MAX_WAITING,
        identities: str | None = None,
        operators: str | None = None,
    ) -> None:
        self.identities, self.operators = identities, operators
        self.redis_url = redis_url
        self.policy = policy
        self.max_wait_s = max_wait_s
        self.max_waiting = max_waiting
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: uvicorn.Server | None = None
        self.thread = threading.Thread(target=self._run, name="live-api", daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced by start()/stop()
            self.error = exc

    async def _main(self) -> None:
        # Opened as `serve` opens it (a blocking pool of the configured size): redis-py's
        # default pool fails at once past 100 connections, which a burst of polls can pass.
        redis, _ = await connect(Settings(redis_url=SecretStr(self.redis_url)))
        try:
            rt = make_runtime(
                redis, self.policy, identities=self.identities, operators=self.operators
            )
            app = create_app(rt, max_wait_s=self.max_wait_s, max_waiting=self.max_waiting)
            config = uvicorn.Config(app, log_level="warning", lifespan="off", ws="none")
            self.server = uvicorn.Server(config)
            await self.server.serve(sockets=[self.sock])
        finally:
            await redis.aclose()

    def start(self) -> None:
        self.thread.start()
        eventually_sync(self._started, what="the API server started")

    def _started(self) -> bool:
        if self.error is not None:
            raise RuntimeError(f"the API server did not start: {self.error!r}")
        return self.server is not None and self.server.started

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@contextmanager
def live_server(redis_url: str, policy: Policy, **kw: Any) -> Iterator[LiveServer]:
    server = LiveServer(redis_url, policy, **kw)
    server.start()
    try:
        yield server
    finally:
        server.stop()
