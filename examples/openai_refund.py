"""A plain `openai` tool loop, sync, whose refund tool waits for a person in Slack.

    pip install -e '.[recipes]'                                     # in a clone of hitl-bot
    export HITL_API_URL=http://127.0.0.1:3000 HITL_API_TOKEN=...    # a running `hitl-bot serve`
    export OPENAI_BASE_URL=... OPENAI_API_KEY=... HITL_MODEL=gpt-4o-mini
    python examples/openai_refund.py "Order A1 arrived broken; refund 40 EUR."

A person corrects the run from the refund card's thread in Slack, or with the API's
`POST /v1/runs/refunds/steer`. A correction that comes while a refund waits withdraws it:
the model reads the person's words as the tool's result (`Steered` is a `Rejected`).
Between model turns the loop also reads one queued while no call was gated. A rejection
goes back to the model as the tool's result; any other hitl-bot error (the API
unreachable, a wrong token) ends the loop with it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from openai import OpenAI

from bot.sdk import Gate, Rejected, require_approval

PROMPT = "Order A1 arrived broken; refund 40 EUR."
SCHEMA: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "refund",
            "description": "Refund part of an order. A person approves every refund first.",
            "parameters": {
                "type": "object",
                "required": ["order_id", "amount", "currency"],
                "properties": {
                    "order_id": {"type": "string"},
                    "amount": {"type": "number"},
                    "currency": {"type": "string"},
                },
            },
        },
    }
]


def send_refund(order_id: str, amount: float, currency: str) -> str:
    """Your payment code. This stand-in only writes the receipt."""
    return f"Refunded {amount:.2f} {currency} on order {order_id}."


def run(prompt: str, gate: Gate, client: OpenAI, model: str, run_id: str = "refunds") -> str:
    @require_approval(gate, run_id=run_id)
    def issue_refund(order_id: str, amount: float, currency: str) -> str:
        return send_refund(order_id, amount, currency)

    tools = {"refund": issue_refund}
    messages: list[Any] = [{"role": "user", "content": prompt}]
    while True:
        if (fix := gate.steering_sync(run_id)) is not None:  # a person's correction
            messages.append({"role": "user", "content": f"Correction from a person: {fix}"})
        completion = client.chat.completions.create(model=model, messages=messages, tools=SCHEMA)
        reply = completion.choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content or ""
        for call in reply.tool_calls:
            try:
                out = str(tools[call.function.name](**json.loads(call.function.arguments)))
            except Rejected as no:  # also TimedOut, Cancelled and Steered
                out = f"Not refunded: {no}"  # the model reads why instead of retrying blindly
            messages.append({"role": "tool", "tool_call_id": call.id, "content": out})


def main() -> None:
    gate = Gate.from_env()  # HITL_API_URL + HITL_API_TOKEN; or REDIS_URL, straight to Redis
    try:
        with OpenAI() as client:  # OPENAI_BASE_URL, OPENAI_API_KEY
            model = os.environ.get("HITL_MODEL", "gpt-4o-mini")
            print(run(" ".join(sys.argv[1:]) or PROMPT, gate, client, model))
    finally:
        gate.close()


if __name__ == "__main__":
    main()
