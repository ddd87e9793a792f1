"""`bot.api.fastjson.loads`: orjson's speed, `json.loads`'s answers (values and errors)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.api.fastjson import loads

EDGES = [
    b"1e400",  # inf from json.loads; orjson refuses
    b"-1e400",
    b"123456789012345678901234567890",  # orjson would give a float
    b"-9223372036854775809",
    b"18446744073709551616",
    b'"\\ud800"',  # a lone surrogate: kept by json.loads, refused later with its own message
    b"\xef\xbb\xbf{}",  # a BOM
    '{"a": "é"}'.encode("utf-16"),  # json.loads detects UTF-16
    b"NaN",
    b"[Infinity, -Infinity]",
    b'{"a":1,"a":2}',
    b"[1,]",
    b"{'a': 1}",
    b'"\xff"',  # not UTF-8
    b"0.1e-400",
    b"5E-324",
    b" {} ",
    b'"\\u0000"',
    b"[" * 5000 + b"]" * 5000,  # deeper than orjson goes
]


def _outcome(parse: Any, text: bytes) -> tuple[str, Any]:
    try:
        value = parse(text)
    except Exception as exc:  # the same type and message, or the same value
        return type(exc).__name__, str(exc)
    return "value", json.dumps(value, allow_nan=True)


@pytest.mark.parametrize("text", EDGES, ids=lambda t: repr(t[:24]))
def test_loads_answers_as_json_loads(text: bytes) -> None:
    assert _outcome(loads, text) == _outcome(json.loads, text)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans())
def test_loads_answers_as_json_loads_on_any_json(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert _outcome(loads, text) == _outcome(json.loads, text)
