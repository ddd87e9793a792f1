"""The quick schema check may only ever agree with jsonschema when it says "fits".

It decides nothing on its own when it says "does not fit" (jsonschema then gives the
verdict and the words), so the rule is one-sided: quick(x) implies jsonschema accepts
x. Both sides are also compared exactly, so a check that grows lax shows at once.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from bot.core.args.fastschema import MAX_ANY_OF, quick_check
from bot.core.args.schema import compiled, fit_problems
from bot.sdk.schema import derive

PROFILE = settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"]
NAMES = st.sampled_from(["a", "b", "amount", "to", "x"])

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, -1, 1.0, 0.0, -0.0, 2.5, 10, True, False, "", "é", "👍x"])
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=4),
    max_leaves=12,
)


def _leaf_schema() -> st.SearchStrategy[Any]:
    typed = st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3)},
        optional={
            "minLength": st.integers(0, 4),
            "maxLength": st.integers(0, 4),
            "minimum": st.sampled_from([0, 1, -1, 2.5, 1.0]),
            "maximum": st.sampled_from([0, 1, 10, 2.5]),
            "exclusiveMinimum": st.sampled_from([0, 1.0]),
            "exclusiveMaximum": st.sampled_from([1, 10.5]),
            "title": st.text(max_size=3),
            "format": st.sampled_from(["email", "date-time"]),
        },
    )
    return typed | st.booleans() | st.just({})


schemas = st.recursive(
    _leaf_schema(),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "array"]),
            "properties": st.dictionaries(NAMES, inner, max_size=3),
            "required": st.lists(NAMES, max_size=3, unique=True),
            "additionalProperties": st.booleans() | inner,
            "items": inner,
            "anyOf": st.lists(inner, min_size=1, max_size=3),
            "description": st.text(max_size=3),
        },
    ),
    max_leaves=8,
)


def _too_big_any_of(schema: Any) -> bool:
    """Whether an anyOf in `schema` holds more objects than the quick check takes on
    (MAX_ANY_OF: past it, jsonschema alone decides)."""
    if isinstance(schema, list):
        return any(_too_big_any_of(s) for s in schema)
    if not isinstance(schema, dict):
        return False
    options = schema.get("anyOf")
    if isinstance(options, list) and _objects(options) > MAX_ANY_OF:
        return True
    return any(_too_big_any_of(v) for v in schema.values())


def _objects(value: Any) -> int:
    if isinstance(value, list):
        return sum(_objects(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(_objects(v) for v in value.values())
    return 0


@PROFILE
@given(schemas, json_values)
def test_the_quick_check_gives_jsonschemas_verdict(schema: Any, value: Any) -> None:
    if not isinstance(schema, dict):
        schema = {"anyOf": [schema]}
    value = json.loads(json.dumps(value))  # instances are what json.loads gives
    quick = quick_check(schema)
    if quick is None:  # every schema drawn here is plain, unless an anyOf is too big
        assert _too_big_any_of(schema), schema
        return
    assert quick(value) == Draft202012Validator(schema).is_valid(value), (schema, value)


EDGES: list[tuple[dict[str, Any], Any]] = [
    ({"type": "integer"}, 1.0),
    ({"type": "integer"}, 1.5),
    ({"type": "integer"}, True),
    ({"type": "number"}, False),
    ({"type": ["string", "null"]}, None),
    ({"minimum": 0}, True),
    ({"minimum": 0}, -1),
    ({"exclusiveMaximum": 1}, 1.0),
    ({"maxLength": 1}, "é"),
    ({"maxLength": 1}, "👍"),
    ({"minLength": 2}, "👍"),
    ({"type": "object", "additionalProperties": False, "properties": {"a": {}}}, {"b": 1}),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {"b": 1}),
    ({"required": ["a"]}, {"b": 1}),
    ({"required": ["a"]}, [1]),
    ({"items": {"type": "integer"}}, [1, 2.0, "3"]),
    ({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 3}]}, 2),
    ({"properties": {"a": False}}, {"a": None}),
    ({"properties": {"a": False}}, {}),
]


def test_the_quick_check_agrees_on_the_edges() -> None:
    for schema, value in EDGES:
        quick = quick_check(schema)
        assert quick is not None, schema
        assert quick(value) == Draft202012Validator(schema).is_valid(value), (schema, value)


def test_schemas_outside_the_plain_subset_go_to_jsonschema() -> None:
    for schema in (
        {"type": "object", "properties": {"a": {"enum": [1, 2]}}},
        {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
        {"type": "string", "pattern": "^a"},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"},
        {"type": "object", "x-vendor": 1, "oneOf": []},
    ):
        assert quick_check(schema) is None, schema


def test_a_call_that_does_not_fit_still_gets_jsonschemas_reasons() -> None:
    def refund(order_id: str, amount: float, notes: list[str] | None = None) -> None: ...

    schema = derive("refund", refund, set())
    assert schema is not None and quick_check(schema) is not None
    check = compiled(schema)
    assert fit_problems(check, {"order_id": "A1", "amount": 4, "notes": None}) == []
    got = fit_problems(check, {"order_id": 7, "amount": "x", "extra": True})
    assert got == fit_problems(check.validator, {"order_id": 7, "amount": "x", "extra": True})
    assert len(got) == 3 and any("order_id" in p for p in got)
