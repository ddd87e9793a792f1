"""Depth and lone surrogates, read without ever recursing."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.args.payload import MAX_ARGS_DEPTH, canonical_args
from bot.core.args.plainjson import (
    MAX_EXACT_INT,
    inexact_number,
    lone_surrogate,
    text_too_deep,
    too_deep,
)
from bot.core.args.schema import schema_problem
from bot.errors import PayloadError

values = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\ ab'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\ ab', max_size=4), inner, max_size=3)
    ),
    max_leaves=20,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@given(values, st.integers(0, 8))
def test_parsed_and_text_depth_agree_with_the_definition(value: Any, limit: int) -> None:
    # brackets and quotes inside strings must not count in the text
    assert too_deep(value, limit) == (depth(value) > limit)
    assert text_too_deep(json.dumps(value), limit) == (depth(value) > limit)


def test_a_hundred_thousand_levels_are_refused_without_recursion() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert text_too_deep(text, 64)
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    assert too_deep(value, 64) and not too_deep([[1]], 2) and too_deep([[1]], 1)


def test_lone_surrogates_anywhere_but_never_a_valid_pair() -> None:
    assert lone_surrogate({"a": ["x", "\ud800"]})
    assert lone_surrogate({"\udfff": 1})
    assert not lone_surrogate(json.loads('{"smile": "\\ud83d\\ude00"}'))  # a pair: one code point
    assert lone_surrogate(json.loads('{"half": "\\ud83d"}'))


def test_the_store_refuses_what_the_api_refuses() -> None:
    """Callers that skip the API (the worker, the SDK's direct mode) meet the same limits."""

    def nested(levels: int) -> dict[str, Any]:
        value: Any = 1
        for _ in range(levels - 1):
            value = [value]
        return {"x": value}

    canonical_args(nested(MAX_ARGS_DEPTH))
    with pytest.raises(PayloadError, match="deeper than 32"):
        canonical_args(nested(MAX_ARGS_DEPTH + 1))
    with pytest.raises(PayloadError, match="surrogate"):
        canonical_args({"note": "\ud800"})
    # jsonschema recurses on a schema: 5,000 levels would be a RecursionError, not a refusal
    assert "deeper than 64" in str(schema_problem({"type": "object", **nested(5000)}))


# Integers on both sides of ±2**53, nested in lists and in objects whose keys need quoting
# in a path (empty, `.`, `[`, `"`, a space), which the path a refusal names must survive.
near_limit = st.integers(-(2**53) - 3, -(2**53) + 3) | st.integers(2**53 - 3, 2**53 + 3)
numbers = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | near_limit,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text('ab_ .["', max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)


def _ints(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ints(v)]
    if isinstance(value, list):
        return [i for v in value for i in _ints(v)]
    return [value] if isinstance(value, int) and not isinstance(value, bool) else []


def _follow(value: Any, path: str) -> Any:
    """The item at a path as `inexact_number` names it: `a.b[0]["c d"]`."""
    for name, index, quoted in re.findall(
        r'\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]', path
    ):
        value = value[name] if name else value[int(index)] if index else value[json.loads(quoted)]
    return value


@settings(derandomize=True, max_examples=300)
@given(numbers)
def test_an_integer_json_cannot_carry_exactly_is_found_and_named(value: Any) -> None:
    args = {"x": value}
    inexact = [i for i in _ints(args) if abs(i) > 2**53]
    where = inexact_number(args)
    assert (where is not None) == bool(inexact)
    if where is not None:
        found = _follow(args, where)
        assert isinstance(found, int) and abs(found) > MAX_EXACT_INT
        with pytest.raises(PayloadError, match=f"argument {re.escape(where)} is an integer"):
            canonical_args(args)


def test_the_limit_is_what_a_double_holds_exactly_and_floats_pass() -> None:
    assert float(MAX_EXACT_INT) == MAX_EXACT_INT and float(MAX_EXACT_INT + 1) == MAX_EXACT_INT
    canonical_args({"n": MAX_EXACT_INT, "m": -MAX_EXACT_INT, "f": 1e300, "b": True})
    for n in (MAX_EXACT_INT + 1, -MAX_EXACT_INT - 1, -(10**400)):
        with pytest.raises(PayloadError, match=r"argument a\[1\]\.n is an integer beyond"):
            canonical_args({"a": [0, {"n": n}]})
    with pytest.raises(PayloadError, match="not plain JSON"):  # NaN and Infinity stay out
        canonical_args({"x": float("inf")})
    with pytest.raises(PayloadError, match="not plain JSON"):
        canonical_args({"x": float("nan")})


def test_a_path_quotes_keys_that_are_not_names_and_never_runs_long() -> None:
    assert inexact_number({"": [{"a b": 2**60}]}) == '[""][0]["a b"]'
    assert inexact_number([{"x": 1}, {"y": {"z": 2**60}}]) == "[1].y.z"
    assert inexact_number(2**60) == "(the value)"
    where = inexact_number({"k" * 5000: 2**60})
    assert where is not None and len(where) == 200 and where.endswith("…")
