"""A connection to one upstream MCP server that survives the server's crashes.

The SDK's client runs on anyio task groups, whose scopes must be left by the task
that entered them, while the gateway calls from many request tasks. So each
upstream's client lives in an owner task of its own; callers only use it. When
the upstream dies, its calls fail (the gateway turns that into a tool error) and
the next call starts it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Tool

from bot.mcp.config import Upstream

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 30.0
HTTP_READ_TIMEOUT_S = 300.0  # the SDK's own default: a tool may stream for a while


class UpstreamLink:
    def __init__(self, name: str, spec: Upstream, elicit: ElicitationFnT | None = None) -> None:
        """`elicit`: how this upstream's elicitations are answered (bot/mcp/elicit.py);
        None: refused, as a client without the capability does."""
        self.name = name
        self.spec = spec
        self.elicit = elicit
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._lock = asyncio.Lock()

    async def _target(self, stack: AsyncExitStack) -> StdioServerParameters | str | Transport:
        spec = self.spec.resolved(os.environ)
        if spec.url is not None and spec.headers:
            http = httpx2.AsyncClient(
                headers=spec.headers, timeout=httpx2.Timeout(30, read=HTTP_READ_TIMEOUT_S)
            )
            await stack.enter_async_context(http)  # the SDK leaves a given client open
            return streamable_http_client(spec.url, http_client=http)
        if spec.url is not None:
            return spec.url
        assert spec.command is not None
        return StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
        )

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with AsyncExitStack() as stack:
                # No response cache: a listing must show the upstream as it is now.
                client = Client(
                    await self._target(stack),
                    cache=None,
                    elicitation_callback=self.elicit,
                    mode=self.spec.protocol,
                )
                await stack.enter_async_context(client)
                ready.set_result(client)
                await self._closing.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.warning("upstream_lost", extra={"upstream": self.name, "error": repr(exc)})
        finally:
            self._client = None

    async def client(self) -> Client:
        """The live client, (re)starting the upstream when it is down."""
        async with self._lock:
            if self._client is not None and self._owner is not None and not self._owner.done():
                return self._client
            await self._stop_owner()
            self._closing = asyncio.Event()
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._owner = asyncio.create_task(self._own(ready), name=f"mcp-upstream-{self.name}")
            try:
                self._client = await asyncio.wait_for(asyncio.shield(ready), CONNECT_TIMEOUT_S)
            except BaseException:
                await self._stop_owner()
                raise
            return self._client

    async def tools(self) -> list[Tool]:
        client = await self.client()
        found: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            found.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return found

    async def call(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        client = await self.client()
        try:
            return await client.call_tool(tool, args)
        except Exception:
            # Whatever broke (a crash, a closed pipe), start afresh on the next call.
            await self.reset()
            raise

    async def reset(self) -> None:
        async with self._lock:
            await self._stop_owner()

    async def _stop_owner(self) -> None:
        owner, self._owner = self._owner, None
        self._client = None
        if owner is None:
            return
        self._closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), 10)
        except (TimeoutError, Exception):
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner

    async def aclose(self) -> None:
        await self.reset()
