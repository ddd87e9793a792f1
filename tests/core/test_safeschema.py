"""The safe validators: jsonschema's verdicts, without its backtracking, fetching or blowups."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from bot.core.args import safeschema
from bot.core.args.schema import call_problems, problems, schema_problem
from bot.core.args.schemabounds import MAX_KEYWORDS, MAX_PATTERNS

EVIL = "^(a+)+$"

# Schemas whose verdicts must not change: the patterns are plain enough for both engines.
SAME_VERDICT: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-c]+[0-9]?$"}}},
    {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "string"}, "[0-9]$": {"type": "integer"}},
        "additionalProperties": False,
    },
    {"type": "object", "patternProperties": {"^a": {"minLength": 2}}},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}},
    {"type": "object", "propertyNames": {"pattern": "^[a-z]{1,3}$"}},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 2.5, -0.0])
    | st.sampled_from(["", "a", "ab", "abc1", "x-y", "b9", "Z", "aa"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b", "id", "x-y", "aa", "xs"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
instances = st.dictionaries(
    st.sampled_from(["a", "id", "x-1", "x-", "q1", "aa", "xs", "abc", "B"]), json_values, max_size=5
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAME_VERDICT), instances)
def test_the_verdict_is_jsonschemas(schema: dict[str, Any], instance: dict[str, Any]) -> None:
    plain = Draft202012Validator(schema).is_valid(instance)
    with safeschema.budget():
        safe = safeschema.validator(schema).is_valid(instance)
    assert safe == plain


def test_equal_items_are_found_by_json_equality() -> None:
    schema = {"type": "object", "properties": {"xs": {"uniqueItems": True}}}
    for xs, unique in [
        ([1, 1.0], False),  # one number
        ([True, 1], True),  # a boolean is not a number
        ([{"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}], False),
        ([[1, 2], [2, 1]], True),
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
        ([False, 0, None, "", [], {}], True),
    ]:
        assert (call_problems(schema, {"xs": xs}) == []) is unique, xs


# The bounds below are CPU time of this process: what the safe validators save is work,
# and wall time on a loaded machine counts other processes' turns as well.
def test_a_backtracking_pattern_takes_microseconds() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": EVIL}}}
    started = time.process_time()
    found = call_problems(schema, {"a": "a" * 10_000 + "!"})
    assert time.process_time() - started < 0.5
    assert len(found) == 1 and "does not match" in found[0]
    # additionalProperties beside the same pattern as a name: matched by RE2 too.
    named = {"type": "object", "patternProperties": {EVIL: True}, "additionalProperties": False}
    started = time.process_time()
    found = call_problems(named, {"a" * 40 + "!": 1, "aaa": 2})
    assert time.process_time() - started < 0.5
    assert len(found) == 1 and "!" in found[0]


def test_every_draft_is_made_safe() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"pattern": EVIL}},
    }
    assert schema_problem(schema) is None
    started = time.process_time()
    assert call_problems(schema, {"a": "a" * 40 + "!"}) != []
    assert time.process_time() - started < 0.5


def test_outside_a_budget_nothing_is_checked() -> None:
    validator = safeschema.validator({"type": "object"})
    with pytest.raises(safeschema.TooCostly):
        validator.is_valid({})


@pytest.mark.parametrize(
    ("pattern", "why"),
    [("(a)\\1", "escape"), ("(?=a)", "perl operator"), ("(?<!a)", "perl operator"),
     ("a{1001}", "repetition"), ("[", "missing ]")],
)  # fmt: skip
def test_a_pattern_re2_cannot_run_is_refused_with_its_reason(pattern: str, why: str) -> None:
    problem = schema_problem({"type": "object", "properties": {"a": {"pattern": pattern}}})
    assert problem is not None and ".properties.a.pattern" in problem and why in problem


def test_data_that_looks_like_a_pattern_is_not_one() -> None:
    # "pattern" as a property's name, and inside a default: neither is a regex.
    schema = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "default": {"pattern": "(?=x)"}}},
    }
    assert schema_problem(schema) is None


def test_the_keyword_bound_counts_every_subschema() -> None:
    per = 3  # keywords in each property's schema below
    n = MAX_KEYWORDS // per + 1
    props = {f"p{i}": {"type": "integer", "minimum": 0, "maximum": 9} for i in range(n)}
    problem = schema_problem({"type": "object", "properties": props})
    assert problem is not None and f"more than {MAX_KEYWORDS} keywords" in problem
    fewer = dict(list(props.items())[: n - 2])
    assert schema_problem({"type": "object", "properties": fewer}) is None


def test_a_pattern_too_large_for_re2_and_too_many_patterns_are_refused() -> None:
    heavy = {"type": "object", "properties": {"a": {"pattern": "^[\\p{L}]{1,100}$"}}}
    problem = schema_problem(heavy)
    assert problem is not None and ".properties.a.pattern" in problem and "too large" in problem
    assert (
        schema_problem({"type": "object", "properties": {"a": {"pattern": "^[\\p{L}]+$"}}}) is None
    )
    many = {f"p{i}": {"pattern": f"^a{i}$"} for i in range(MAX_PATTERNS + 1)}
    problem = schema_problem({"type": "object", "properties": many})
    assert problem is not None and f"more than {MAX_PATTERNS} distinct patterns" in problem
    many.popitem()
    assert schema_problem({"type": "object", "properties": many}) is None


def test_a_stored_schema_that_would_reach_pythons_re_refuses_every_edit() -> None:
    # Never admitted when sent (schema_problem refuses the pairing), but a schema written
    # to Redis by hand is read back as it is: the Edit check refuses, it never runs it.
    planted = {
        "type": "object",
        "patternProperties": {EVIL: True},
        "unevaluatedProperties": False,
    }
    assert schema_problem(planted) is not None
    found = problems(planted, {"a" * 40 + "!": 1}, current={})
    assert len(found) == 1 and "cannot be applied" in found[0]


def test_a_wide_any_of_over_a_long_list_is_answered_promptly() -> None:
    options = [{"type": "string", "minLength": 3 + i} for i in range(300)]
    schema = {
        "type": "object",
        "properties": {"xs": {"type": "array", "items": {"anyOf": options}}},
    }
    started = time.process_time()
    found = call_problems(schema, {"xs": list(range(20_000))})
    assert time.process_time() - started < 1.0
    assert found and "steps" in found[0]


DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    "schema",
    [
        # A subschema naming its own draft: jsonschema would switch to its plain class.
        {"type": "object", "properties": {"a": {"$schema": DRAFT_2020, "pattern": EVIL}}},
        # A $ref into the meta-schema, whose $dynamicRef comes back to this anchor.
        {
            "type": "object",
            "$defs": {"m": {"$dynamicAnchor": "meta", "pattern": EVIL}},
            "properties": {"a": {"$ref": DRAFT_2020}},
        },
    ],
)
def test_no_subschema_escapes_to_the_plain_validator(schema: dict[str, Any]) -> None:
    assert schema_problem(schema) is None
    started = time.process_time()
    found = call_problems(schema, {"a": "a" * 40 + "!"})
    found += call_problems(schema, {"a": {"type": "a" * 40 + "!"}})
    assert time.process_time() - started < 0.5
    assert found


@pytest.mark.parametrize(
    "schema",
    [
        # Draft 4's meta-schema asks enum entries to be unique: jsonschema compared these
        # pairwise, 5 s for 1,400 small objects.
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"a": {"enum": [{"": i} for i in range(1400)]}},
        },
        {"type": "object", "required": [{"": i} for i in range(1000)]},
    ],
)
def test_checking_a_schema_against_its_draft_is_prompt(schema: dict[str, Any]) -> None:
    started = time.process_time()
    schema_problem(schema)
    # The pairwise comparison took 5 s; a bound well under it, and well above a loaded
    # CI machine's 0.52 s for the linear check (bench/ holds the timings).
    assert time.process_time() - started < 2.0


def test_failing_one_long_text_many_times_over_is_cut_short() -> None:
    # Every failed keyword's message repeats the text: a $ref loop of anyOfs can build
    # 20,000 of them over 60 KB (1.2 s, 600 MB). Their characters count as steps.
    looped = {
        "type": "object",
        "$defs": {"x": {"anyOf": [{"type": "integer"}] * 100 + [{"$ref": "#/$defs/x"}]}},
        "properties": {"a": {"$ref": "#/$defs/x"}},
    }
    started = time.process_time()
    found = call_problems(looped, {"a": "x" * 60_000})
    assert time.process_time() - started < 0.5
    assert len(found) == 1 and "steps" in found[0]


def test_many_wrong_items_show_the_first_few_at_once() -> None:
    schema = {
        "type": "object",
        "properties": {"xs": {"type": "array", "items": {"type": "integer"}}},
    }
    started = time.process_time()
    found = call_problems(schema, {"xs": ["ab"] * 5000})
    assert time.process_time() - started < 0.5
    assert len(found) == 4 and all(f.endswith("'ab' is not of type 'integer'") for f in found)
    assert found[0] == "xs.0: 'ab' is not of type 'integer'"
