"""Depth and lone surrogates, read without ever recursing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.payload import MAX_ARGS_DEPTH, canonical_args
from bot.core.plainjson import lone_surrogate, text_too_deep, too_deep
from bot.core.schema import schema_problem
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
