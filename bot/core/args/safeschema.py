"""jsonschema's validators, made safe to run a caller's schema on the event loop.

A schema an agent sends is untrusted code, and checking arguments against it runs
on the loop every agent, Slack and the sweeper share. jsonschema as it comes can be
made to take minutes or reach out to the network, so every draft's validator is
extended here:

- `pattern`, `patternProperties` and the `additionalProperties` that depends on
  them match with RE2 (`bot.core.args.saferegex`), never Python's backtracking `re`;
- every keyword it applies spends from a budget of `MAX_STEPS` (a keyword comparing
  against a list, such as `enum`, spends one step per entry): past it the check
  stops with `TooCostly`, so a schema that fans out through `$ref`s or `anyOf`s over
  a long list cannot multiply its way to a hang;
- `uniqueItems` compares in linear time (jsonschema's falls back to comparing every
  pair: minutes for a few thousand objects);
- a `$ref` resolves within the schema only: no retrieval over HTTP (jsonschema's
  default fetches remote references, on the loop, from wherever they point).

Formats stay annotations (no format checker), as they always were here. The one
keyword left that would match with `re` is `unevaluatedProperties` beside a
`patternProperties`: `bot.core.args.schemabounds` refuses that pairing up front.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from jsonschema import exceptions as js_errors
from jsonschema import validators as js_validators
from jsonschema.protocols import Validator
from referencing import Registry

from bot.core.args.saferegex import search

# One check's budget. A step is one keyword applied to one value (a `$ref`, which
# resolves, counts `REF_STEPS`; a list keyword, one more per entry). The costliest steps
# (an `anyOf` descending into each option) take about 6 us here, so a check costs the
# loop about a tenth of a second at most; a call's whole arguments against a plain schema
# take well under that (2,000 objects of two typed properties: 16,000 steps, and such
# plain schemas mostly take the quick path, bot/core/args/fastschema.py, counted nowhere).
MAX_STEPS = 20_000
REF_STEPS = 5
CHARS_PER_STEP = 8


class TooCostly(Exception):
    """The check spent its whole budget of steps."""


_budget: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "schema_budget", default=None
)


@contextlib.contextmanager
def budget(steps: int = MAX_STEPS) -> Iterator[None]:
    """Run the checks inside on a budget of `steps` (see `TooCostly`)."""
    token = _budget.set([steps])
    try:
        yield
    finally:
        _budget.reset(token)


def _spend(n: int = 1) -> None:
    left = _budget.get()
    if left is None:  # only ever used inside `budget`: outside one, refuse rather than run
        raise TooCostly
    left[0] -= n
    if left[0] < 0:
        raise TooCostly


Keyword = Callable[[Any, Any, Any, Mapping[str, Any]], Iterable[js_errors.ValidationError] | None]


def _counted(fn: Keyword, weight: int, weighed: bool) -> Keyword:
    def run(
        validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[js_errors.ValidationError]:
        _spend(weight + (len(value) if weighed and isinstance(value, list) else 0))
        for error in fn(validator, value, instance, schema) or ():
            # Each error's message holds the value's repr: a schema that fails the same
            # long text many times over (through $ref, anyOf) paid for it in time and
            # memory, 1.2 s and 600 MB. Its characters count like matched ones.
            _spend(len(error.message) // CHARS_PER_STEP)
            yield error

    return run


def _matches(pattern: str, text: str) -> bool:
    # RE2 is linear, but the worst pattern costs about 1 us a character: a step for every
    # CHARS_PER_STEP of text keeps a check of many long strings within the budget.
    _spend(len(text) // CHARS_PER_STEP)
    return search(pattern, text)


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[js_errors.ValidationError]:
    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield js_errors.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[js_errors.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            _spend()
            if _matches(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(original: Keyword) -> Keyword:
    """jsonschema's own keyword, told which names the patterns cover (matched by RE2),
    so it never runs the patterns itself."""

    def run(
        validator: Any, extra: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[js_errors.ValidationError]:
        patterns = schema.get("patternProperties")
        if patterns and isinstance(instance, dict):
            covered = {k: True for k in instance if any(_matches(p, k) for p in patterns)}
            listed = schema.get("properties")
            schema = {
                **{k: v for k, v in schema.items() if k != "patternProperties"},
                "properties": {**covered, **(listed if isinstance(listed, dict) else {})},
            }
        yield from original(validator, extra, instance, schema) or ()

    return run


def _frozen(value: Any) -> object:
    """A hashable stand-in equal for JSON values JSON Schema calls equal (1 and 1.0,
    but never true and 1)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, dict):
        return ("object", frozenset((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("array", tuple(_frozen(v) for v in value))
    return ("value", value)


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[js_errors.ValidationError]:
    if unique and validator.is_type(instance, "array"):
        _spend(len(instance))
        if len({_frozen(v) for v in instance}) < len(instance):
            yield js_errors.ValidationError(f"{instance!r} has non-unique elements")


# Keywords whose work grows with the length of their list value.
_WEIGHED = frozenset({"enum", "allOf", "anyOf", "oneOf", "prefixItems", "items", "required"})
_REFS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


def _safe(cls: type[Validator]) -> type[Validator]:
    own: dict[str, Keyword] = dict(cls.VALIDATORS)
    if "pattern" in own:
        own["pattern"] = _pattern
    if "patternProperties" in own:
        own["patternProperties"] = _pattern_properties
    if "additionalProperties" in own:
        own["additionalProperties"] = _additional_properties(own["additionalProperties"])
    if "uniqueItems" in own:
        own["uniqueItems"] = _unique_items
    counted = {
        k: _counted(fn, REF_STEPS if k in _REFS else 1, k in _WEIGHED) for k, fn in own.items()
    }
    extended: type[Validator] = js_validators.extend(  # type: ignore[no-untyped-call]
        cls, validators=counted
    )
    extended.evolve = _evolve  # type: ignore[method-assign]
    return extended


# The validator's constructor arguments, as jsonschema's own `evolve` copies them.
_FIELDS: Any = js_validators.Draft202012Validator.__attrs_attrs__  # type: ignore[attr-defined]
_INIT = [(a.name, a.alias) for a in _FIELDS if a.init]


def _evolve(self: Validator, **changes: Any) -> Validator:
    """jsonschema's `evolve`, which picks the class for a subschema that names its own
    `$schema` (a `$ref` to a meta-schema, a `$dynamicRef` back from one): the plain
    class, with Python's `re` and no budget. Here it is always the safe one."""
    schema = changes.setdefault("schema", self.schema)
    chosen = js_validators.validator_for(schema, default=type(self))
    for name, alias in _INIT:
        if alias not in changes:
            changes[alias] = getattr(self, name)
    return _safe_class(chosen)(**changes)


_DRAFTS = [
    js_validators.Draft3Validator,
    js_validators.Draft4Validator,
    js_validators.Draft6Validator,
    js_validators.Draft7Validator,
    js_validators.Draft201909Validator,
    js_validators.Draft202012Validator,
]
_SAFE: dict[type[Validator], type[Validator]] = {d: _safe(d) for d in _DRAFTS}
_SAFE_CLASSES = frozenset(_SAFE.values())


def _safe_class(cls: type[Validator]) -> type[Validator]:
    """The safe twin of a draft's class; any class not known here becomes 2020-12's."""
    if cls in _SAFE_CLASSES:
        return cls
    return _SAFE.get(cls, _SAFE[js_validators.Draft202012Validator])


_NO_RETRIEVAL: Registry[Any] = Registry()  # nothing to fetch: a remote $ref is unresolvable


def meta_validator(cls: type[Validator], format_checker: Any) -> Validator:
    """The safe validator of `cls`'s meta-schema, to check a schema against its draft:
    jsonschema's own compares `enum` entries pairwise (Draft 4 asks them unique), which
    took 5 s for 1,400 small objects."""
    meta = js_validators.validator_for(cls.META_SCHEMA, default=cls)
    return _safe_class(meta)(cls.META_SCHEMA, format_checker=format_checker)


class Unsafe(ValueError):
    """The schema pairs `unevaluatedProperties` with `patternProperties`, which jsonschema
    would match with Python's `re` (`bot.core.args.schemabounds` refuses it when sent)."""


def validator(schema: Mapping[str, Any]) -> Validator:
    """The safe validator of `schema`'s draft (2020-12 unless `$schema` names another);
    Unsafe for a schema whose check would reach Python's `re` all the same."""
    text = json.dumps(schema)
    if '"unevaluatedProperties"' in text and '"patternProperties"' in text:
        raise Unsafe("unevaluatedProperties beside patternProperties")
    cls = js_validators.validator_for(schema, default=js_validators.Draft202012Validator)
    return _safe_class(cls)(schema, registry=_NO_RETRIEVAL)


__all__ = ["MAX_STEPS", "TooCostly", "Unsafe", "budget", "validator"]
