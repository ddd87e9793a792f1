"""Tool schemas from type hints, argument validation, policy snippets and the agent loader."""

from __future__ import annotations

import json
from typing import Annotated, Literal

import pytest
from pydantic import Field

from bot.agent.errors import AgentNotFound, InvalidArguments
from bot.agent.loader import Agent, AgentCatalog, resolve
from bot.agent.tools import ToolRegistry, ask_tool, tool
from bot.core.args.payload import stored_args
from bot.core.models import RiskTier
from bot.core.policy import DEFAULT_POLICY, ToolPolicy
from bot.demo.agents import claw, refunds
from bot.slack.blocks.escape import pretty_json


@tool(risk="medium", rules=[{"if": "amount > 10", "tier": "high"}])
def pay(
    to: str,
    amount: Annotated[int, Field(gt=0, description="in cents")],
    kind: Literal["card", "bank"] = "card",
    idempotency_key: str = "",
) -> str:
    """Pay someone.

    Longer text the model does not need.
    """
    return f"{to} {amount} {kind} {idempotency_key}"


def test_schema_comes_from_the_hints() -> None:
    fn = pay.spec()["function"]
    assert fn["name"] == "pay" and fn["description"] == "Pay someone."
    params = fn["parameters"]
    assert params["required"] == ["to", "amount"]
    assert params["additionalProperties"] is False
    assert params["properties"]["amount"]["exclusiveMinimum"] == 0
    assert params["properties"]["amount"]["description"] == "in cents"
    assert params["properties"]["kind"]["enum"] == ["card", "bank"]
    assert "idempotency_key" not in params["properties"]  # filled in by the gate


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("{", "not valid JSON"),
        ("[1]", "must be a JSON object"),
        ('{"to": "ana"}', "amount: Field required"),
        ('{"to": "ana", "amount": -1}', "amount: Input should be greater than 0"),
        ('{"to": "ana", "amount": 1, "kind": "cash"}', "kind"),
        ('{"to": "ana", "amount": 1, "idempotency_key": "mine"}', "idempotency_key: Extra"),
        ('{"to": "ana", "amount": 1, "tip": 5}', "tip: Extra inputs are not permitted"),
    ],
)
def test_malformed_arguments_are_refused(raw: str, problem: str) -> None:
    with pytest.raises(InvalidArguments, match=problem):
        pay.parse(raw)


def test_valid_arguments_are_canonical_json() -> None:
    assert pay.parse('{"amount": 5, "to": "ana"}') == {"to": "ana", "amount": 5, "kind": "card"}
    # defaults show, as `kind` above: a question without options says so
    assert ask_tool().parse('{"question": "which?"}') == {"question": "which?", "options": None}

    @tool
    def ping() -> str:
        return "pong"

    assert ping.parse("") == {} and ping.description == "ping"


async def test_numbers_reach_the_card_as_the_model_sent_them() -> None:
    sent = '{"order_id": "A1004", "amount": 4200, "currency": "USD", "reason": "broken"}'
    args = refunds.issue_refund.parse(sent)
    assert type(args["amount"]) is int and args["amount"] == 4200  # not 4200.0 (a float hint)
    # as the store keeps it and the card prints it
    assert '"amount": 4200,' in pretty_json(json.loads(stored_args(args)))
    as_float = refunds.issue_refund.parse(sent.replace("4200", "4200.0"))
    assert type(as_float["amount"]) is float  # a float stays one: shown as sent

    @tool
    def charge(amounts: list[float], total: float) -> str:
        return repr((amounts, total))

    checked = charge.parse('{"amounts": [1, 2.5], "total": 3}')
    assert json.dumps(checked) == '{"amounts": [1, 2.5], "total": 3}'
    # the function itself still gets the floats its hints ask for
    assert await charge.call(checked, idempotency_key="k", run_id="r") == "([1.0, 2.5], 3.0)"


async def test_call_injects_the_idempotency_key_and_runs_sync_tools_off_the_loop() -> None:
    out = await pay.call({"to": "ana", "amount": 5}, idempotency_key="k1", run_id="r")
    assert out == "ana 5 card k1"


def test_policy_snippet_and_merge() -> None:
    assert pay.policy() == {"tier": "medium", "rules": [{"if": "amount > 10", "tier": "high"}]}
    agent = Agent.of("payer", "p", [pay, ask_tool()])
    merged = agent.merged_policy(DEFAULT_POLICY)
    assert merged.classify("pay", {"amount": 11}).tier == RiskTier.HIGH
    assert merged.classify("pay", {"amount": 1}).tier == RiskTier.MEDIUM
    # The operator's policy file wins over what an agent asks for.
    mine = ToolPolicy(tier=RiskTier.LOW, review="none")
    relaxed = DEFAULT_POLICY.model_copy(update={"tools": {"pay": mine}})
    assert not agent.merged_policy(relaxed).classify("pay", {"amount": 11}).review


def test_shipped_agents_declare_what_the_policy_needs() -> None:
    assert claw.agent.policy_snippet() == {
        "move_claw": {"tier": "low", "review": "none"},
        "drop_claw": {"tier": "medium"},
    }
    assert [t.name for t in claw.agent.tools] == ["move_claw", "drop_claw", "ask_kid"]
    p = refunds.agent.merged_policy(DEFAULT_POLICY)
    assert not p.classify("lookup_order", {"order_id": "A1"}).review
    assert p.classify("issue_refund", {"amount": 999.0}).tier == RiskTier.MEDIUM
    assert p.classify("issue_refund", {"amount": 1000.5}).tier == RiskTier.HIGH


def test_registry_refuses_two_tools_with_one_name() -> None:
    with pytest.raises(ValueError, match="two tools are named pay"):
        ToolRegistry([pay, pay])


def test_loader_resolves_short_names_and_specs() -> None:
    assert resolve("claw") is claw.agent
    assert resolve("bot.demo.agents.refunds:agent") is refunds.agent
    assert resolve("tests.agent.fixtures:counting_agent").name == "counting"
    for bad, problem in [
        ("nope", "no ':'"),
        ("no.such.module:agent", "cannot import"),
        ("bot.demo.agents.claw:nothing", "has no nothing"),
        ("bot.demo.agents.claw:PRIZES", "not an Agent"),
    ]:
        with pytest.raises(AgentNotFound, match=problem):
            resolve(bad)


def test_catalog_runs_only_what_the_operator_allowed() -> None:
    catalog = AgentCatalog(["tests.agent.fixtures:counting_agent"])
    assert catalog.get("claw") is claw.agent
    assert catalog.get("tests.agent.fixtures:counting_agent").name == "counting"
    with pytest.raises(AgentNotFound, match="not among this worker's agents"):
        catalog.get("bot.demo.agents.claw:agent")  # importable, but nobody listed it
