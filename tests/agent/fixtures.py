"""Agents for the worker tests, importable by a worker process as `tests.agent.fixtures:...`.

Side effects are counted in a file (one line per execution) so a test can see
them across processes, including one killed with kill -9.
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.agent.loader import Agent
from bot.agent.tools import tool

COUNT_FILE_ENV = "HITL_TEST_COUNT_FILE"


@tool(risk="medium")
def charge(amount: int, idempotency_key: str) -> str:
    """Charge the customer. Costs money: needs approval."""
    path = Path(os.environ[COUNT_FILE_ENV])
    with path.open("a") as f:
        f.write(f"{idempotency_key} {amount}\n")
    return f"charged {amount}"


counting_agent = Agent.of("counting", "You charge customers.", [charge])
