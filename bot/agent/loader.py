"""What an agent is, and how a name such as `claw` or `pkg.mod:agent` becomes one.

Names come from people (`/hitl run <agent> ...`, `POST /v1/runs`), so a worker
resolves only the short names that ship and the `module:object` specs its
operator listed: importing whatever module a chat message names would run
that module's top-level code.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.agent import messages as msg
from bot.agent.errors import AgentNotFound
from bot.agent.tools import Tool, ToolRegistry
from bot.core.policy import Policy, ToolPolicy

SHORT_NAMES: dict[str, str] = {
    "claw": "bot.demo.agents.claw:agent",
    "refunds": "bot.demo.agents.refunds:agent",
}


@dataclass(frozen=True)
class Agent:
    """A system prompt, the tools the model may call, and what those tools need of the policy."""

    name: str
    system_prompt: str
    tools: ToolRegistry
    # Extra policy lines (tool -> {tier, review, rules}) beyond what the tools declare.
    policy: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    max_turns: int = 20
    # The requester of this agent's approval requests; the policy's self-approval rule
    # keeps it from approving them itself.
    requester: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.tools, ToolRegistry):
            object.__setattr__(self, "tools", ToolRegistry(self.tools))
        if not self.requester:
            object.__setattr__(self, "requester", f"agent:{self.name}")

    @classmethod
    def of(cls, name: str, system_prompt: str, tools: Iterable[Tool], **options: Any) -> Agent:
        return cls(name, system_prompt, ToolRegistry(tools), **options)

    def policy_snippet(self) -> dict[str, dict[str, Any]]:
        """tool -> its policy entry, ready to merge into a policy file's `tools:`."""
        return self.tools.policy() | {k: dict(v) for k, v in self.policy.items()}

    def merged_policy(self, base: Policy) -> Policy:
        """`base` plus this agent's tool lines; a tool `base` lists keeps the operator's line."""
        mine = {k: ToolPolicy.model_validate(v) for k, v in self.policy_snippet().items()}
        return base.model_copy(update={"tools": mine | dict(base.tools)})


def resolve(spec: str) -> Agent:
    """`claw`, `refunds` or `module:object` (object may be dotted, or a factory) -> Agent."""
    target = SHORT_NAMES.get(spec, spec)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise AgentNotFound(_bad(spec, "no ':' between module and object"))
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentNotFound(_bad(spec, f"cannot import {module_name}: {exc}")) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AgentNotFound(_bad(spec, f"{module_name} has no {attr}")) from None
    if not isinstance(obj, Agent) and callable(obj):
        obj = obj()  # a factory, like uvicorn's --factory
    if not isinstance(obj, Agent):
        raise AgentNotFound(_bad(spec, f"{target} is a {type(obj).__name__}, not an Agent"))
    return obj


def _bad(spec: str, problem: str) -> str:
    return msg.AGENT_SPEC.format(spec=spec, names=", ".join(SHORT_NAMES), problem=problem)


class AgentCatalog:
    """The agents one worker will run: the shipped short names plus the operator's specs."""

    def __init__(
        self, extra: Iterable[str] = (), *, known: Mapping[str, Agent] | None = None
    ) -> None:
        self._cache: dict[str, Agent] = dict(known or {})  # agents built in-process, by name
        # What the operator chose to run here, by the name a run gives: announced so a
        # mention can start it (bot/store/run/agents.py). The shipped demo agents are
        # reachable by name but offered only when named.
        self.offered: list[str] = sorted(self._cache)
        for spec in extra:
            # Loaded now so a typo fails at start, and reachable by its short name
            # too: a run can say "counting" instead of "module:object".
            agent = resolve(spec)
            self._cache.setdefault(spec, agent)
            self._cache.setdefault(agent.name, agent)
            if agent.name not in self.offered:
                self.offered.append(agent.name)
        self.allowed = set(SHORT_NAMES) | set(self._cache)

    def get(self, name: str) -> Agent:
        if name not in self.allowed:
            raise AgentNotFound(_bad(name, "not among this worker's agents (--agent adds one)"))
        if name not in self._cache:
            self._cache[name] = resolve(name)
        return self._cache[name]
