"""A worker's gate in a process of its own, for the kill -9 test: it runs free calls
of `slow` until one's create is sent without waiting, and that one never returns.

    python -m tests.agent.free_call_child REDIS_URL RUN_ID MARKER_FILE
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from bot.agent import filing as gate_module
from bot.agent.gate import ToolGate
from bot.agent.llm import ToolCall
from bot.agent.loader import Agent
from bot.agent.tools import ToolRegistry, tool
from bot.store.stores import StoreSet
from tests.agent.conftest import AGENT_POLICY
from tests.support.children import unawaited_creates
from tests.support.clients import open_client


async def main(url: str, run_id: str, marker: Path) -> None:
    redis = await open_client(url, socket_timeout=None)
    s = StoreSet(redis)
    hang = asyncio.Event()
    sent = unawaited_creates(gate_module)  # the calls whose create was sent without waiting

    @tool(risk="low", review=False)
    async def slow(n: int, idempotency_key: str) -> str:
        """Takes as long as it takes."""
        if idempotency_key in sent:
            marker.write_text(str(n))  # sent by the local path: now hang until killed
            await hang.wait()
        return "done"

    tools = ToolRegistry([slow])
    gate = ToolGate(
        requests=s.requests,
        questions=s.questions,
        steering=s.steering,
        run_audit=s.run_audit,
        policy=Agent.of("child", "You wait.", [slow]).merged_policy(AGENT_POLICY),
        runs=s.runs,
    )
    for i in range(10_000):
        await gate.check(ToolCall(f"c{i}", "slow", f'{{"n": {i}}}'), tools, run_id=run_id)
        await asyncio.sleep(0.01)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
