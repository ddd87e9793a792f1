"""A Pydantic AI agent whose refund tool waits for a person in Slack.

    pip install -e '.[recipes]'                                     # in a clone of hitl-bot
    export HITL_API_URL=http://127.0.0.1:3000 HITL_API_TOKEN=...    # a running `hitl-bot serve`
    export OPENAI_BASE_URL=... OPENAI_API_KEY=... HITL_MODEL=gpt-4o-mini
    python examples/pydantic_ai_refund.py "Order A1 arrived broken; refund 40 EUR."

A rejection goes back to the model as the tool's result; any other hitl-bot error
(the API unreachable, a wrong token) fails the run: Pydantic AI re-raises whatever a
tool raises except `ModelRetry`.
"""

from __future__ import annotations

import asyncio
import os
import sys

from pydantic_ai import Agent
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel

from bot.sdk import Gate, Rejected, require_approval

PROMPT = "Order A1 arrived broken; refund 40 EUR."


async def send_refund(order_id: str, amount: float, currency: str) -> str:
    """Your payment code. This stand-in only writes the receipt."""
    return f"Refunded {amount:.2f} {currency} on order {order_id}."


def build_agent(gate: Gate, model: Model) -> Agent[None, str]:
    agent = Agent(model, instructions="Help customers with their orders.")

    @require_approval(gate)
    async def issue_refund(order_id: str, amount: float, currency: str) -> str:
        return await send_refund(order_id, amount, currency)

    @agent.tool_plain
    async def refund(order_id: str, amount: float, currency: str) -> str:
        """Refund part of an order. A person approves every refund in Slack first."""
        try:
            return await issue_refund(order_id, amount, currency)
        except Rejected as no:  # also TimedOut and Cancelled
            return f"Not refunded: {no}"  # the model reads why instead of retrying blindly

    return agent


async def run(prompt: str, gate: Gate, model: Model) -> str:
    result = await build_agent(gate, model).run(prompt)
    return result.output


async def main() -> None:
    gate = Gate.from_env()  # HITL_API_URL + HITL_API_TOKEN; or REDIS_URL, straight to Redis
    try:
        model = OpenAIChatModel(os.environ.get("HITL_MODEL", "gpt-4o-mini"))  # OPENAI_BASE_URL
        print(await run(" ".join(sys.argv[1:]) or PROMPT, gate, model))
    finally:
        await gate.aclose()


if __name__ == "__main__":
    asyncio.run(main())
