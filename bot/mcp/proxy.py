"""`hitl-bot mcp proxy`: upstream MCP servers behind the approval gate.

Lists every upstream's tools as `<upstream>__<tool>`. Each `tools/call` goes through
the gate under that name, so the policy file names them the same way
(`files__read_file: {tier: low, review: none}`): `review: none` tools run at once
(audited), the others wait for a person in Slack, and an edit is what runs. A call
that is not approved, or whose upstream fails, comes back as a tool error whose
text says why, for the model to read; the gateway itself keeps serving. The report
of every call that ran names its upstream, so the audit shows where it went.

Every call carries the gateway's run id (bot/mcp/sessions.py): a person's correction
comes back as the next call's tool error, in their words, and after a stop every call
does, saying the run was stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from bot.core.models import RiskTier
from bot.core.policy import DEFAULT_POLICY, Policy
from bot.mcp import gating
from bot.mcp import messages as msg
from bot.mcp.annotations import Hints, hinted_tier
from bot.mcp.config import ProxyConfig, exposed_name
from bot.mcp.elicit import Elicitor
from bot.mcp.sessions import SessionRuns
from bot.mcp.upstream import UpstreamLink
from bot.sdk import Gate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Route:
    link: UpstreamLink
    tool: str  # the upstream's own name for it
    schema: dict[str, Any]
    hints: Hints


def hints_of(tool: Tool) -> Hints:
    a = tool.annotations
    if a is None:
        return Hints()
    return Hints(a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)


@dataclass(frozen=True)
class Inferred:
    """What the gateway asks for one tool: the policy's tier where it names one, else
    the tier the tool's annotations suggest (`bot/mcp/annotations.py`)."""

    name: str
    hints: Hints
    tier: RiskTier
    from_policy: bool


def tool_error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _text_of(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))[:500]


class Gateway:
    def __init__(
        self,
        gate: Gate,
        config: ProxyConfig,
        runs: SessionRuns | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.gate = gate
        # The policy the gate decides by, to tell where it names a tool's tier.
        self.policy = policy or gate.policy or DEFAULT_POLICY
        self.runs = runs or SessionRuns(None, prefix="mcp-proxy")
        # An upstream's elicitation is asked of a person in Slack (bot/mcp/elicit.py).
        self.links = [
            UpstreamLink(name, spec, Elicitor(gate, name))
            for name, spec in config.upstreams.items()
        ]
        self.routes: dict[str, Route] = {}
        self._warming: asyncio.Future[list[Tool]] | None = None

    def warm(self) -> None:
        """Start every upstream and list its tools now, while the client's handshake is
        still under way. A client that starts its session as soon as it lists the tools
        (Claude Code in print mode does, and a tool listed late is then "no such tool")
        finds them ready instead of waiting for the upstreams to start."""
        self._warming = asyncio.ensure_future(self.list_tools())

    async def list_tools(self) -> list[Tool]:
        """Every upstream's tools, renamed; an upstream that is down is left out (logged)."""
        out: list[Tool] = []
        routes: dict[str, Route] = {}
        for link in self.links:
            try:
                tools = await link.tools()
            except Exception as exc:
                log.warning(msg.UPSTREAM_LIST_FAILED, link.name, exc)
                await link.reset()
                routes.update({k: r for k, r in self.routes.items() if r.link is link})
                continue
            for t in tools:
                name = exposed_name(link.name, t.name)
                routes[name] = Route(link, t.name, dict(t.input_schema), hints_of(t))
                out.append(t.model_copy(update={"name": name}))
        self.routes = routes
        return out

    def inferred(self, name: str, hints: Hints) -> Inferred:
        named = self.policy.tools.get(name)
        if named is not None and named.tier is not None:
            return Inferred(name, hints, named.tier, from_policy=True)
        return Inferred(name, hints, hinted_tier(hints, self.policy.default_tier), False)

    def inferences(self) -> list[Inferred]:
        """Each listed tool's tier and where it comes from, for `--print-policy`."""
        return [self.inferred(name, r.hints) for name, r in sorted(self.routes.items())]

    def _risk(self, name: str, route: Route) -> RiskTier | None:
        """The hint's tier, sent only where the policy names none and it raises the
        default: the gate raises a tier by `risk`, never lowers it."""
        got = self.inferred(name, route.hints)
        return None if got.from_policy or got.tier == self.policy.default_tier else got.tier

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        route = self.routes.get(name)
        return None if route is None else route.schema

    async def call(self, name: str, args: dict[str, Any]) -> CallToolResult:
        route = self.routes.get(name)
        if route is None:
            await self.list_tools()  # a client may call without listing first
            route = self.routes.get(name)
        if route is None:
            return tool_error(msg.UNKNOWN_TOOL.format(tool=name))
        upstream = route.link.name
        try:
            req = await gating.decided(
                self.gate,
                name,
                args,
                args_schema=route.schema,
                risk=self._risk(name, route),
                run_id=self.runs.run_id,
                run_title=self.runs.title,
            )
            req = await gating.claimed(self.gate, req)
        except gating.Refused as exc:
            return tool_error(str(exc))
        try:
            result = await route.link.call(route.tool, req.args)
        except Exception as exc:
            error = str(exc) or type(exc).__name__
            detail = msg.AUDIT_CRASH.format(upstream=upstream, tool=route.tool, error=error)
            await gating.report(self.gate, req, ok=False, detail=detail)
            return tool_error(
                msg.UPSTREAM_CRASHED.format(tool=name, upstream=upstream, error=error)
            )
        if result.is_error:
            text = _text_of(result)
            detail = msg.AUDIT_TOOL_ERROR.format(upstream=upstream, tool=route.tool, text=text)
        else:
            detail = msg.AUDIT_OK.format(upstream=upstream, tool=route.tool)
        await gating.report(self.gate, req, ok=not result.is_error, detail=detail)
        return result

    async def aclose(self) -> None:
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(BaseException):
                await self._warming
        for link in self.links:
            await link.aclose()


def build_proxy(gateway: Gateway, *, name: str = "hitl-proxy") -> Server[Any]:
    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=await gateway.list_tools())

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        return await gateway.call(params.name, dict(params.arguments or {}))

    return Server(
        name,
        get_tool_input_schema=gateway.input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
