"""Checking edited arguments: against a recorded schema, or by the call's own names."""

from __future__ import annotations

from typing import Any

from bot.core.args.schema import call_problems, problems, schema_problem

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"target": {"type": "string"}, "force": {"type": "integer", "maximum": 10}},
    "required": ["target"],
    "additionalProperties": False,
}


def test_schema_errors_name_the_argument_and_the_rule() -> None:
    found = problems(SCHEMA, {"target": "penguin", "force": 11}, current={"target": "bear"})
    assert found == ["force: 11 is greater than the maximum of 10"]
    assert any("speed" in p for p in problems(SCHEMA, {"target": "x", "speed": 1}, current={}))
    assert any("target" in p for p in problems(SCHEMA, {}, current={}))
    assert problems(SCHEMA, {"target": 5}, current={}) == ["target: 5 is not of type 'string'"]
    assert problems(SCHEMA, {"target": "duck", "force": 10}, current={}) == []


def test_json_true_is_not_an_integer() -> None:
    assert problems(SCHEMA, {"target": "x", "force": True}, current={}) != []


def test_without_a_schema_only_values_may_change() -> None:
    now = {"amount": 900, "to": "cust-1"}
    assert problems(None, {"amount": 90, "to": "cust-2"}, current=now) == []
    assert "force" in problems(None, {"amount": 9, "to": "c", "force": 1}, current=now)[0]
    assert "to" in problems(None, {"amount": 9}, current=now)[0]


def test_anything_but_an_object_is_refused_with_or_without_a_schema() -> None:
    for schema in (SCHEMA, None):
        assert "JSON object" in problems(schema, ["bear"], current={})[0]
        assert "JSON object" in problems(schema, 3, current={})[0]


def test_a_schema_that_cannot_be_applied_refuses_rather_than_passes() -> None:
    remote = {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/s"}}}
    assert problems(remote, {"a": 1}, current={"a": 0}) != []


def test_what_counts_as_an_argument_schema() -> None:
    assert schema_problem(SCHEMA) is None
    assert schema_problem({"type": "nope"}) is not None
    assert schema_problem({"type": "array"}) is not None  # arguments are always an object
    assert schema_problem(["not", "a", "schema"]) is not None
    assert schema_problem({"description": "x" * 20_000}) is not None  # too large
    assert call_problems(SCHEMA, {"target": 3}) != []
