"""Each example runs as written: `python examples/NAME.py "prompt"`, configured only by the
environment its docstring names, against a real `hitl-bot serve` and the scripted model.

This is what a user does, so it is what fails if `main()` is never called, if the script
reads the wrong variable, or if an infrastructure error leaves the exit status at 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.states import State
from bot.sandbox.model import ScriptedModel, after_tool, call, say
from tests.e2e.conftest import Bot
from tests.recipes.conftest import API_TOKEN, approve

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = [
    "openai_agents_refund.py",
    "langgraph_refund.py",
    "pydantic_ai_refund.py",
    "openai_refund.py",
]
PROMPT = "Order A7 arrived broken; refund 12.50 EUR."
RECEIPT = "Refunded 12.50 EUR on order A7."


def _env(api_url: str, token: str, model_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HITL_", "OPENAI_"))}
    env.pop("REDIS_URL", None)  # over HTTP only: the script must not need the store
    return env | {
        "HITL_API_URL": api_url,
        "HITL_API_TOKEN": token,
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "sk-scripted",
        "HITL_MODEL": "scripted",
    }


@contextlib.asynccontextmanager
async def _script(script: str, env: dict[str, str]) -> AsyncIterator[asyncio.subprocess.Process]:
    """The example as a user starts it; killed if the test leaves before it ends."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / script),
        PROMPT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.communicate()


async def _finish(proc: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(proc.communicate(), 90)  # imports are slow on 2 cores
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("script", SCRIPTS)
async def test_script_refunds_after_a_click_in_slack(bot: Bot, script: str) -> None:
    turns = [
        call("refund", order_id="A7", amount=12.5, currency="EUR"),
        say("Refund issued.", expect=after_tool(RECEIPT)),
    ]
    async with (
        ScriptedModel(turns) as model,
        _script(script, _env(bot.url, API_TOKEN, model.base_url)) as proc,
    ):
        req = await approve(bot)
        code, out, err = await _finish(proc)
    assert (code, out) == (0, "Refund issued.\n"), err
    assert model.sent(0)[-1] == {"role": "user", "content": PROMPT}
    done = await bot.requests.get(req.id)
    assert (done.state, done.detail) == (State.COMPLETED, RECEIPT)


async def test_agents_sdk_script_exits_non_zero_with_the_fix_on_a_wrong_token(bot: Bot) -> None:
    """The issue's case: the Agents SDK told the model "An error occurred while running the
    tool", the run exited 0 and the fix was lost. (tests/recipes/test_recipes.py shows each
    framework's run failing; a failing `run` fails any of these scripts.)"""
    turns = [call("refund", order_id="A7", amount=12.5, currency="EUR"), say("Refund issued.")]
    async with (
        ScriptedModel(turns) as model,
        _script(
            "openai_agents_refund.py", _env(bot.url, "not-the-servers-token", model.base_url)
        ) as proc,
    ):
        code, out, err = await _finish(proc)
    assert code != 0 and out == ""
    assert "fix: set HITL_API_TOKEN" in err
    assert "An error occurred while running the tool" not in err
    assert await bot.requests.list_pending() == []
