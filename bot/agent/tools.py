"""Tools the model may call: plain Python functions with a schema taken from their hints.

A tool says how risky it is (or leaves it to the policy), whether it ever needs
a person, and how to undo it. The model's arguments are validated against the
schema before anything else sees them: a malformed call goes back to the model
as an error and never reaches a person or the function.

Three parameter names are filled in by the gate, never by the model:
`idempotency_key` (the request id, the same on every retry of the same call),
`fence` (the claim's fencing token, bot/core/proof/fence.py: a system the tool writes to
can refuse a write from an executor whose claim was superseded) and `run_id`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from bot.agent.errors import InvalidArguments
from bot.core.candidates import candidates_problem
from bot.core.models import RiskTier

INJECTED = frozenset({"idempotency_key", "fence", "run_id"})
ASK_DESCRIPTION = (
    "Ask the person a question and wait for the answer. Use it when you are not sure what "
    "they want; never guess instead."
)

PROPOSE_DESCRIPTION = (
    "When you are not sure which of a few calls of one tool is right, propose them all: "
    "tool is the tool's name, candidates 2 to 5 argument objects for it. A person chooses "
    "one (or rejects them all); the one chosen runs and you read its result."
)

ToolFn = Callable[..., Any]


def _args_model(name: str, fn: ToolFn) -> tuple[type[BaseModel], frozenset[str]]:
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    injected = set()
    for p in inspect.signature(fn).parameters.values():
        if p.name in INJECTED:
            injected.add(p.name)
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *args and **kwargs have no schema; name each argument")
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    # Strict about unknown keys: a misspelt argument must not silently fall back to a default.
    config = ConfigDict(extra="forbid", allow_inf_nan=False)
    model = create_model(f"{name}_arguments", __config__=config, **fields)
    return model, frozenset(injected)


def _as_sent(sent: Any, checked: Any) -> Any:
    """`checked` with every number the model sent kept as it sent it. A float hint turns
    4200 into 4200.0, and the person approving must read the call as the agent made it;
    the function still gets its float, since `call` validates again."""
    if isinstance(checked, float) and type(sent) is int and checked == sent:
        return sent
    if isinstance(checked, dict) and isinstance(sent, Mapping):
        return {k: _as_sent(sent[k], v) if k in sent else v for k, v in checked.items()}
    if isinstance(checked, list) and isinstance(sent, list) and len(checked) == len(sent):
        return [_as_sent(a, b) for a, b in zip(sent, checked, strict=True)]
    return checked


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(x) for x in err['loc']) or 'arguments'}: {err['msg']}"
        for err in exc.errors()
    )


def _fit(fn: ToolFn, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments `fn` takes: a compensation may need only some of the tool's."""
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


async def _invoke(fn: ToolFn, kwargs: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(**kwargs)
    # A blocking tool in the worker's thread would freeze every other run it serves.
    result = await asyncio.to_thread(fn, **kwargs)
    return await result if inspect.isawaitable(result) else result


def _as_text(value: Any) -> str:
    if value is None:
        return "done"
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Tool:
    name: str
    fn: ToolFn
    description: str
    args_model: type[BaseModel]
    risk: RiskTier | None = None  # None: the policy's tier for this tool
    review: bool | None = None  # None: the policy decides; False: never asks a person
    rules: tuple[Mapping[str, Any], ...] = ()  # policy rules, e.g. {"if": "amount > 1000", ...}
    compensate: ToolFn | None = None  # undoes a failed call; takes any of the tool's args
    asks_person: bool = False  # the built-in ask_human: answered by a person, not run
    proposes: bool = False  # the built-in propose: a person chooses among calls of a tool
    injected: frozenset[str] = field(default=frozenset())

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments the model gives (and a person may edit)."""
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        return schema

    def spec(self) -> dict[str, Any]:
        """The entry in the `tools` list of a chat-completions request."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema(),
            },
        }

    def parse(self, raw: str) -> dict[str, Any]:
        """The model's JSON text -> validated arguments in canonical JSON form."""
        try:
            data = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidArguments(f"not valid JSON: {exc.msg} at position {exc.pos}") from None
        if not isinstance(data, dict):
            raise InvalidArguments("arguments must be a JSON object")
        return self.validate(data)

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            checked = self.args_model.model_validate(args).model_dump(mode="json")
        except ValidationError as exc:
            raise InvalidArguments(_problems(exc)) from None
        return dict(_as_sent(args, checked))

    def _kwargs(self, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return dict(self.args_model.model_validate(args))
        except ValidationError as exc:
            raise InvalidArguments(_problems(exc)) from None

    async def call(
        self,
        args: Mapping[str, Any],
        *,
        idempotency_key: str,
        run_id: str,
        fence: str | None = None,
    ) -> str:
        given = {"idempotency_key": idempotency_key, "run_id": run_id, "fence": fence}
        kwargs = self._kwargs(args) | {k: given[k] for k in self.injected}
        return _as_text(await _invoke(self.fn, kwargs))

    async def undo(
        self,
        args: Mapping[str, Any],
        *,
        idempotency_key: str,
        run_id: str,
        fence: str | None = None,
    ) -> None:
        if self.compensate is None:
            raise RuntimeError(f"{self.name} has no compensating action")
        given = {"idempotency_key": idempotency_key, "run_id": run_id, "fence": fence}
        await _invoke(self.compensate, _fit(self.compensate, self._kwargs(args) | given))

    def policy(self) -> dict[str, Any] | None:
        """What this tool asks of the policy file, in its format; None: nothing."""
        if (
            self.asks_person
            or self.proposes
            or (self.risk is None and self.review is None and not self.rules)
        ):
            return None
        out: dict[str, Any] = {}
        if self.risk is not None:
            out["tier"] = self.risk.value
        if self.review is not None:
            out["review"] = "required" if self.review else "none"
        if self.rules:
            out["rules"] = [dict(r) for r in self.rules]
        return out


@overload
def tool(fn: ToolFn, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    risk: RiskTier | str | None = None,
    review: bool | None = None,
    rules: Iterable[Mapping[str, Any]] = (),
    compensate: ToolFn | None = None,
) -> Callable[[ToolFn], Tool]: ...
def tool(
    fn: ToolFn | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    risk: RiskTier | str | None = None,
    review: bool | None = None,
    rules: Iterable[Mapping[str, Any]] = (),
    compensate: ToolFn | None = None,
) -> Tool | Callable[[ToolFn], Tool]:
    """Make a tool of a function: `@tool` or `@tool(risk="medium", compensate=undo)`.

    The description is the docstring's first paragraph unless given.
    """

    def make(f: ToolFn) -> Tool:
        tool_name = name or f.__name__
        model, injected = _args_model(tool_name, f)
        doc = description or (inspect.getdoc(f) or tool_name).split("\n\n")[0]
        return Tool(
            name=tool_name,
            fn=f,
            description=" ".join(doc.split()),
            args_model=model,
            risk=RiskTier(risk) if risk is not None else None,
            review=review,
            rules=tuple(rules),
            compensate=compensate,
            injected=injected,
        )

    return make(fn) if fn is not None else make


def ask_tool(name: str = "ask_human", description: str = ASK_DESCRIPTION) -> Tool:
    """The built-in tool that puts a question to a person; `name` lets an agent rename it."""

    def ask(question: str, options: list[str] | None = None) -> str:
        """options: the answers the person picks from (one button each); omit for free text."""
        raise RuntimeError("ask_human is answered by the gate, never called")

    model, _ = _args_model(name, ask)
    return Tool(name, ask, description, model, asks_person=True)


def propose_tool(name: str = "propose", description: str = PROPOSE_DESCRIPTION) -> Tool:
    """The built-in tool that offers a person 2 to 5 candidate calls of one of the agent's
    tools on one card (bot/core/candidates.py); the one chosen runs, and its result is
    what the model reads."""

    def propose(tool: str, candidates: list[dict[str, Any]]) -> str:
        raise RuntimeError("propose is answered by the gate, never called")

    model, _ = _args_model(name, propose)
    return Tool(name, propose, description, model, proposes=True)


def proposal_of(
    t: Tool, args: dict[str, Any], tools: ToolRegistry
) -> tuple[Tool, dict[str, Any], list[dict[str, Any]]]:
    """For a `propose` call: the tool it names, no args, and its candidates, each checked
    as a call of that tool. Any other call: itself, its args, no candidates."""
    if not t.proposes:
        return t, args, []
    name = str(args.get("tool", ""))
    target = tools.get(name)
    if target is None or target.asks_person or target.proposes:
        raise InvalidArguments(f"{name!r} is not one of the tools that can be proposed")
    candidates = list(args.get("candidates") or [])
    if (problem := candidates_problem(name, candidates)) is not None:
        raise InvalidArguments(problem)
    return target, {}, [target.validate(c) for c in candidates]


class ToolRegistry:
    """The tools of one agent, by name, in the order the model sees them."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> Tool:
        if t.name in self._tools:
            raise ValueError(f"two tools are named {t.name}")
        self._tools[t.name] = t
        return t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [t.spec() for t in self._tools.values()]

    def schemas(self) -> dict[str, dict[str, Any]]:
        """tool -> argument schema, for the tools a person may be asked to approve."""
        return {
            t.name: t.schema() for t in self._tools.values() if not (t.asks_person or t.proposes)
        }

    def policy(self) -> dict[str, dict[str, Any]]:
        """The policy snippet these tools need: tool -> {tier, review, rules}."""
        return {t.name: p for t in self._tools.values() if (p := t.policy()) is not None}
