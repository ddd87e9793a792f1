"""A LangGraph agent whose refund tool waits for a person in Slack.

    pip install -e '.[recipes]'                                     # in a clone of hitl-bot
    export HITL_API_URL=http://127.0.0.1:3000 HITL_API_TOKEN=...    # a running `hitl-bot serve`
    export OPENAI_BASE_URL=... OPENAI_API_KEY=... HITL_MODEL=gpt-4o-mini
    python examples/langgraph_refund.py "Order A1 arrived broken; refund 40 EUR."

No `interrupt()` and no checkpointer are needed: the tool node just awaits the person.
A rejection goes back to the model as the tool's result; any other hitl-bot error
(the API unreachable, a wrong token) fails the run: ToolNode re-raises what it does not
handle.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from bot.sdk import Gate, Rejected, require_approval

PROMPT = "Order A1 arrived broken; refund 40 EUR."


async def send_refund(order_id: str, amount: float, currency: str) -> str:
    """Your payment code. This stand-in only writes the receipt."""
    return f"Refunded {amount:.2f} {currency} on order {order_id}."


def refund_tool(gate: Gate) -> BaseTool:
    @require_approval(gate)
    async def issue_refund(order_id: str, amount: float, currency: str) -> str:
        return await send_refund(order_id, amount, currency)

    @tool
    async def refund(order_id: str, amount: float, currency: str) -> str:
        """Refund part of an order. A person approves every refund in Slack first."""
        try:
            return await issue_refund(order_id, amount, currency)
        except Rejected as no:  # also TimedOut and Cancelled
            return f"Not refunded: {no}"  # the model reads why instead of retrying blindly

    return refund


def build_graph(gate: Gate, llm: ChatOpenAI) -> Any:
    refund = refund_tool(gate)
    model = llm.bind_tools([refund])

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode([refund]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


async def run(prompt: str, gate: Gate, llm: ChatOpenAI) -> str:
    graph = build_graph(gate, llm)
    state = await graph.ainvoke({"messages": [("user", prompt)]})
    return str(state["messages"][-1].content)


async def main() -> None:
    gate = Gate.from_env()  # HITL_API_URL + HITL_API_TOKEN; or REDIS_URL, straight to Redis
    try:
        llm = ChatOpenAI(model=os.environ.get("HITL_MODEL", "gpt-4o-mini"))  # OPENAI_BASE_URL
        print(await run(" ".join(sys.argv[1:]) or PROMPT, gate, llm))
    finally:
        await gate.aclose()


if __name__ == "__main__":
    asyncio.run(main())
