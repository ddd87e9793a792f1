"""A Claude Agent SDK agent whose tool calls wait for a person in Slack (`can_use_tool`).

    pip install -e '.[recipes]'                                     # in a clone of hitl-bot
    export HITL_API_URL=http://127.0.0.1:3000 HITL_API_TOKEN=...    # a running `hitl-bot serve`
    export ANTHROPIC_API_KEY=...
    python examples/claude_agent_sdk_refund.py "Order A1 arrived broken; refund 40 EUR."

Claude Code asks `can_use_tool` before each call it would prompt for (here the in-process
`refund` tool, and Claude's own Write, Edit, Bash ...): the policy decides under the
tool's name, a person in Slack where it says so, and the session is a run people can
correct and stop. A rejection, a deadline or a correction is a deny whose message the
model reads; a stop denies and interrupts the session. Any other hitl-bot error (the API
unreachable, a wrong token) is raised; the SDK turns it into a deny, so nothing runs and
the model reads the error, with its fix.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from claude_agent_sdk import (
    CanUseTool,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    McpSdkServerConfig,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    create_sdk_mcp_server,
    tool,
)

from bot.sdk import Gate, Rejected, RunStopped

PROMPT = "Order A1 arrived broken; refund 40 EUR."
HANDED_OVER = "handed to Claude Code, which runs it"


async def send_refund(order_id: str, amount: float, currency: str) -> str:
    """Your payment code. This stand-in only writes the receipt."""
    return f"Refunded {amount:.2f} {currency} on order {order_id}."


def shop_server() -> McpSdkServerConfig:
    schema = {"order_id": str, "amount": float, "currency": str}

    @tool("refund", "Refund part of an order. A person approves every refund first.", schema)
    async def refund(args: dict[str, Any]) -> dict[str, Any]:
        receipt = await send_refund(args["order_id"], args["amount"], args["currency"])
        return {"content": [{"type": "text", "text": receipt}]}

    return create_sdk_mcp_server("shop", tools=[refund])


def gated(gate: Gate, run_id: str, timeout: float | None = None) -> CanUseTool:
    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        try:
            req, claimed = await gate.acquire(
                tool_name,
                tool_input,
                run_id=run_id,
                run_title="Refunds (Claude Agent SDK)",
                timeout=timeout,
                claim=True,
            )
            if not claimed:  # claimed before it is allowed: exactly once, or not at all
                req = await gate.claim(req.id)
        except RunStopped as stop:
            return PermissionResultDeny(message=str(stop), interrupt=True)
        except Rejected as no:  # also TimedOut, Cancelled and Steered
            return PermissionResultDeny(message=str(no))  # the model reads why
        # Claude runs the call and never says how it went: close it as handed over.
        await gate.report_executed(req.id, ok=True, detail=HANDED_OVER)
        return PermissionResultAllow(updated_input=req.args)  # what the person approved

    return can_use_tool


async def run(
    prompt: str,
    gate: Gate,
    *,
    run_id: str = "refunds-claude",
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> str:
    options = ClaudeAgentOptions(
        mcp_servers={"shop": shop_server()},
        can_use_tool=gated(gate, run_id, timeout),
        env=env or {},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                return message.result or ""
    return ""


async def main() -> None:
    gate = Gate.from_env()  # HITL_API_URL + HITL_API_TOKEN; or REDIS_URL, straight to Redis
    try:
        print(await run(" ".join(sys.argv[1:]) or PROMPT, gate))
    finally:
        await gate.aclose()


if __name__ == "__main__":
    asyncio.run(main())
