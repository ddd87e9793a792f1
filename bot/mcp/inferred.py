"""`hitl-bot mcp proxy --print-policy`: what tier each upstream tool gets, and why.

Printed as the `tools:` of a policy file, so an operator who disagrees with a hint
copies the entry into the policy and sets the tier there (the policy always wins).
"""

from __future__ import annotations

import yaml

from bot.mcp import messages as msg
from bot.mcp.proxy import Gateway, Inferred


def _why(got: Inferred, default: str) -> str:
    if got.from_policy:
        return msg.INFERRED_FROM_POLICY
    return msg.INFERRED_FROM_HINTS.format(hints=got.hints.words(), default=default)


def render(gateway: Gateway) -> str:
    default = gateway.policy.default_tier.value
    lines = [msg.INFERRED_HEADER.format(default=default), "tools:"]
    for got in gateway.inferences():
        entry = yaml.safe_dump({got.name: {"tier": got.tier.value}}, default_flow_style=True)
        lines.append(f"  {entry.strip()[1:-1]}  # {_why(got, default)}")
    return "\n".join(lines) + "\n"


async def print_inferred(gateway: Gateway) -> None:
    try:
        await gateway.list_tools()
        print(render(gateway), end="")
    finally:
        await gateway.aclose()
