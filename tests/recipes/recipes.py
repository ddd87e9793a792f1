"""Each recipe in examples/, driven with its own functions: only the addresses differ.

The tested code is the example's code: `run` and its tools come from the example module,
and the test only passes in the gate (the API's address and token) and a model client
pointed at the scripted model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType

from bot.sdk import Gate
from examples import langgraph_refund, openai_agents_refund, openai_refund, pydantic_ai_refund

MODEL = "scripted"
KEY = "sk-scripted"  # the scripted model ignores it; the clients insist on one


async def _agents(prompt: str, gate: Gate, base_url: str) -> str:
    from openai import AsyncOpenAI

    async with AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0) as client:
        return await openai_agents_refund.run(prompt, gate, client, MODEL)


async def _langgraph(prompt: str, gate: Gate, base_url: str) -> str:
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key=KEY, max_retries=0)
    return await langgraph_refund.run(prompt, gate, llm)


async def _pydantic_ai(prompt: str, gate: Gate, base_url: str) -> str:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async with AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0) as client:
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        return await pydantic_ai_refund.run(prompt, gate, model)


async def _plain(prompt: str, gate: Gate, base_url: str) -> str:
    from openai import OpenAI

    def sync() -> str:
        with OpenAI(base_url=base_url, api_key=KEY, max_retries=0) as client:
            return openai_refund.run(prompt, gate, client, MODEL)

    # The loop is sync: it runs on a thread, as in a sync program, while this loop serves
    # the bot and the scripted model.
    return await asyncio.to_thread(sync)


@dataclass(frozen=True)
class Recipe:
    name: str
    module: ModuleType
    run: Callable[[str, Gate, str], Awaitable[str]]  # prompt, gate, the model's base URL

    def __str__(self) -> str:
        return self.name


RECIPES = [
    Recipe("openai-agents", openai_agents_refund, _agents),
    Recipe("langgraph", langgraph_refund, _langgraph),
    Recipe("pydantic-ai", pydantic_ai_refund, _pydantic_ai),
    Recipe("openai-loop", openai_refund, _plain),
]
