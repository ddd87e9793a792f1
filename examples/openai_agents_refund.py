"""An OpenAI Agents SDK agent whose refund tool waits for a person in Slack.

    pip install -e '.[recipes]'                                     # in a clone of hitl-bot
    export HITL_API_URL=http://127.0.0.1:3000 HITL_API_TOKEN=...    # a running `hitl-bot serve`
    export OPENAI_BASE_URL=... OPENAI_API_KEY=... HITL_MODEL=gpt-4o-mini
    python examples/openai_agents_refund.py "Order A1 arrived broken; refund 40 EUR."

A rejection goes back to the model as the tool's result; any other hitl-bot error
(the API unreachable, a wrong token) fails the run with the fix in its message.
"""

from __future__ import annotations

import asyncio
import os
import sys

from agents import (
    Agent,
    FunctionTool,
    Runner,
    function_tool,
    set_default_openai_api,
    set_default_openai_client,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from bot.sdk import Gate, Rejected, require_approval

PROMPT = "Order A1 arrived broken; refund 40 EUR."


async def send_refund(order_id: str, amount: float, currency: str) -> str:
    """Your payment code. This stand-in only writes the receipt."""
    return f"Refunded {amount:.2f} {currency} on order {order_id}."


def refund_tool(gate: Gate) -> FunctionTool:
    @require_approval(gate)
    async def issue_refund(order_id: str, amount: float, currency: str) -> str:
        return await send_refund(order_id, amount, currency)

    # failure_error_function=None: an error that is not a Rejected fails the run, instead
    # of reaching the model as "An error occurred while running the tool".
    @function_tool(failure_error_function=None)
    async def refund(order_id: str, amount: float, currency: str) -> str:
        """Refund part of an order. A person approves every refund in Slack first."""
        try:
            return await issue_refund(order_id, amount, currency)
        except Rejected as no:  # also TimedOut and Cancelled
            return f"Not refunded: {no}"  # the model reads why instead of retrying blindly

    return refund


async def run(prompt: str, gate: Gate, client: AsyncOpenAI, model: str) -> str:
    set_default_openai_client(client, use_for_tracing=False)
    set_default_openai_api("chat_completions")  # what OpenAI-compatible providers serve
    set_tracing_disabled(True)  # else a non-OpenAI key spends seconds failing to upload traces
    agent = Agent(
        name="Support",
        instructions="Help customers with their orders.",
        tools=[refund_tool(gate)],
        model=model,
    )
    result = await Runner.run(agent, prompt)
    return str(result.final_output)


async def main() -> None:
    gate = Gate.from_env()  # HITL_API_URL + HITL_API_TOKEN; or REDIS_URL, straight to Redis
    try:
        async with AsyncOpenAI() as client:  # OPENAI_BASE_URL, OPENAI_API_KEY
            model = os.environ.get("HITL_MODEL", "gpt-4o-mini")
            print(await run(" ".join(sys.argv[1:]) or PROMPT, gate, client, model))
    finally:
        await gate.aclose()


if __name__ == "__main__":
    asyncio.run(main())
